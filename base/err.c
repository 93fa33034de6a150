#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

#include <sys/mman.h>

/* sl_xzalloc_touched: tables from this size on are laid on 2 MiB pages */
#define HUGE_MIN ((size_t)2 << 20)

/* A message is one line: a control byte that came in with a name from a
 * file (a Parquet column, a JSON key, ...) is written as \xNN
 * (sl_err_quote), whatever the caller quoted. */
static void one_line(sl_err *err)
{
    size_t n = strlen(err->msg);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)err->msg[i];
        if (ch < 0x20 || ch == 0x7f) {
            char buf[SL_ERR_MAX];
            sl_err_quote(err->msg, n, buf, sizeof buf);
            memcpy(err->msg, buf, sizeof err->msg < sizeof buf ? sizeof err->msg : sizeof buf);
            err->msg[sizeof err->msg - 1] = 0;
            return;
        }
    }
}

static void set_field(sl_err *err, const char *field)
{
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
}

int sl_errf(sl_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err);
    err->code = SL_E_FAILED;
    err->field[0] = 0;
    return -1;
}

int sl_err_set(sl_err *err, sl_errcode code, const char *field, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err);
    err->code = code;
    set_field(err, field);
    return -1;
}

int sl_err_tag(sl_err *err, sl_errcode code, const char *field)
{
    if (!err)
        return -1;
    err->code = code;
    set_field(err, field);
    return -1;
}

const char *sl_errcode_name(sl_errcode code)
{
    static const char *const names[] = {"none",     "failed", "io",    "format",      "option",
                                        "mismatch", "exists", "limit", "unsupported", "nomem"};
    return (unsigned)code < sizeof names / sizeof names[0] ? names[code] : "unknown";
}

int sl_err_prefix(sl_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char pre[SL_ERR_MAX], old[SL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(pre);
    if (n > sizeof err->msg - 3)
        n = sizeof err->msg - 3;
    memcpy(err->msg, pre, n);
    memcpy(err->msg + n, ": ", 2);
    size_t m = strlen(old);
    if (m > sizeof err->msg - n - 3)
        m = sizeof err->msg - n - 3;
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = 0;
    one_line(err);
    return -1;
}

static void oom(size_t n)
{
    sl_log(SL_LOG_ERROR, NULL, "out of memory (allocating %zu bytes)", n);
    abort();
}

void *sl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *sl_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *sl_xzalloc_touched(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        oom(SIZE_MAX);
    size_t bytes = (n * size + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of the alignment */
    if (bytes < n * size)
        oom(SIZE_MAX);
    size_t align = 64;
    if (bytes >= HUGE_MIN) { /* whole 2 MiB pages the kernel may back with huge pages */
        align = (size_t)2 << 20;
        bytes = (bytes + align - 1) & ~(align - 1);
    }
    void *p = aligned_alloc(align, bytes ? bytes : 64);
    if (!p)
        oom(n * size);
#ifdef MADV_HUGEPAGE
    if (align > 64)
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: no huge pages is fine */
#endif
    memset(p, 0, bytes);
    return p;
}

void *sl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *sl_xstrdup(const char *s)
{
    return sl_xstrndup(s, strlen(s));
}

char *sl_xstrndup(const char *s, size_t n)
{
    char *p = sl_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

const char *sl_err_quote(const char *s, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    if (!cap)
        return buf;
    for (size_t i = 0; i < n && s; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (o + 8 >= cap) {
            if (o + 4 <= cap)
                memcpy(buf + o, "...", 3), o += 3;
            break;
        }
        if (ch < 0x20 || ch == 0x7f)
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", ch);
        else
            buf[o++] = (char)ch;
    }
    buf[o < cap ? o : cap - 1] = 0;
    return buf;
}
