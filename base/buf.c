#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void sl_buf_reserve(sl_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap * 2;
    b->data = sl_xrealloc(b->data, cap);
    b->cap = cap;
}

void sl_buf_puts(sl_buf *b, const char *s)
{
    sl_buf_append(b, s, strlen(s));
}

void sl_buf_printf(sl_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sl_buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void sl_buf_clear(sl_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = 0;
}

void sl_buf_fit(sl_buf *b, size_t need)
{
    if (b->cap > ((size_t)4 << 10) && b->cap / 2 > need) {
        sl_buf_free(b);
        return;
    }
    sl_buf_clear(b);
}

void sl_buf_free(sl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

size_t sl_list_split(const char *s, int keep_empty, char ***items)
{
    size_t n = 0;
    *items = NULL;
    while (s && (*s || keep_empty)) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len || keep_empty) {
            *items = sl_xrealloc(*items, (n + 1) * sizeof **items);
            (*items)[n++] = sl_xstrndup(s, len);
        }
        s = c ? c + 1 : NULL;
    }
    return n;
}

void sl_list_free(char **items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
}
