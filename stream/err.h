/* Error reporting shared by every module.
 *
 * Convention: a function that can fail returns int (0 = success, -1 = failure)
 * or a pointer (NULL = failure) and fills an sl_err. The message is one line
 * of the form "<file>:<line or offset>: what is wrong"; the CLI prefixes it
 * with "sluice: <stage>: " and exits non-zero.
 *
 * Stable API (sluice.h): the sl_err structure. The helpers below it are
 * unstable (SLUICE_UNSTABLE_API). */
#ifndef SLUICE_STREAM_ERR_H
#define SLUICE_STREAM_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_ERR_MAX 1024

typedef struct sl_err {
    char msg[SL_ERR_MAX];
} sl_err;

#ifdef SLUICE_UNSTABLE_API

/* Sets the message (printf-style). Always returns -1 so callers can write
 * `return sl_errf(err, "...")`. err may be NULL. */
int sl_errf(sl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends "prefix: " to an existing message (used to add a file name). */
int sl_err_prefix(sl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies s[0..n) into buf as a one-line, printable string for messages:
 * control bytes become \xNN and long strings are cut with "...". Returns buf. */
const char *sl_err_quote(const char *s, size_t n, char *buf, size_t cap);
#define SL_QUOTE_MAX 160

/* Allocation helpers that never return NULL: on out-of-memory they print a
 * message and abort the process (there is no sensible recovery). */
void *sl_xmalloc(size_t n);
void *sl_xcalloc(size_t n, size_t size);
/* Zeroed like sl_xcalloc, but written now and on a cache line (64-byte)
 * boundary: for a large table that is read before it is written (a cache),
 * or data each thread writes on lines of its own. calloc's fresh pages map
 * the zero page on the first read and fault again at the first write, with
 * a TLB flush on every other core of a threaded process. Freed by free(). */
void *sl_xzalloc_touched(size_t n, size_t size);
void *sl_xrealloc(void *p, size_t n);
char *sl_xstrdup(const char *s);
char *sl_xstrndup(const char *s, size_t n);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
