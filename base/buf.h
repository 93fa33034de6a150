/* Growable byte buffer.
 *
 * Stable API (sluice.h): the sl_buf structure and sl_buf_free. A zeroed
 * sl_buf ({0}) is empty; calls that append to one (sl_tokenizer_decode)
 * grow it with malloc, and the caller frees it with sl_buf_free. */
#ifndef SLUICE_BASE_BUF_H
#define SLUICE_BASE_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_buf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
} sl_buf;

/* Frees b's bytes and leaves it empty ({0}), ready for reuse. */
void sl_buf_free(sl_buf *b);

#ifdef SLUICE_UNSTABLE_API
void sl_buf_reserve(sl_buf *b, size_t extra);
/* n bytes (inline: normalizers and parsers call it per run of text) */
static inline void sl_buf_append(sl_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap)
        sl_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}
/* one byte (inline: tokenizers call it per character) */
static inline void sl_buf_putc(sl_buf *b, char c)
{
    if (b->len + 2 > b->cap)
        sl_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}
void sl_buf_puts(sl_buf *b, const char *s);
void sl_buf_printf(sl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_buf_clear(sl_buf *b);
/* Empties b for about `need` bytes: a buffer that grew for an earlier,
 * larger document (over 4 KiB and more than twice `need`) is released, so
 * a buffer reused document after document holds at most twice the largest
 * one it holds now, plus 4 KiB. */
void sl_buf_fit(sl_buf *b, size_t need);

/* Splits a comma-separated list into *items (malloc'd copies; free them with
 * sl_list_free) and returns their count. keep_empty 0 drops empty items
 * ("a,,b" -> a b, "" -> none); keep_empty 1 keeps them ("a,,b" -> a "" b,
 * "" -> one empty item). s NULL: no items. */
size_t sl_list_split(const char *s, int keep_empty, char ***items);
void sl_list_free(char **items, size_t n);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
