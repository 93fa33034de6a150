/* Growable byte buffer. */
#ifndef SLUICE_STREAM_BUF_H
#define SLUICE_STREAM_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_buf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
} sl_buf;

void sl_buf_reserve(sl_buf *b, size_t extra);
void sl_buf_append(sl_buf *b, const void *p, size_t n);
void sl_buf_putc(sl_buf *b, char c);
void sl_buf_puts(sl_buf *b, const char *s);
void sl_buf_printf(sl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_buf_clear(sl_buf *b);
void sl_buf_free(sl_buf *b);

#endif
