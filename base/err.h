/* Error reporting shared by every module.
 *
 * Convention: a function that can fail returns int (0 = success, -1 =
 * failure) or a pointer (NULL = failure) and fills an sl_err, which holds
 *   - msg: one line "<file>:<line or offset>: what is wrong", for people.
 *     Option fields are named in backquotes, never as command-line flags
 *     ("`seq_len` 12: must be a positive multiple of 8"); the sluice command
 *     says each as its flag ("--seq-len 12: ...") from a table of its own
 *     (cli/cli.h: sl_cli_map_fields) and prefixes "sluice: <stage>: ".
 *   - code: what kind of failure, for programs (sl_errcode below);
 *     SL_E_FAILED when the call site has not classified it.
 *   - field: the option field at fault ("part", "prepend_eos", "force"),
 *     empty when the failure is not about one option. A program can tell
 *     "this option is wrong" from "this input is bad" without parsing msg.
 * sl_errf sets msg with code SL_E_FAILED and no field; sl_err_set sets all
 * three. sl_err_prefix adds context to msg and keeps code and field.
 * Library code never prints or exits: warnings, notes and progress go to the
 * callback of base/log.h; the sl_x* allocators abort on out-of-memory (a
 * message to that callback first).
 *
 * Stable API (sluice.h): sl_err, sl_errcode and sl_errcode_name. The helpers
 * that set an error are unstable (SLUICE_UNSTABLE_API). */
#ifndef SLUICE_BASE_ERR_H
#define SLUICE_BASE_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_ERR_MAX 1024

#define SL_ERR_FIELD_MAX 48

typedef enum sl_errcode {
    SL_E_NONE = 0,    /* no error (a zeroed sl_err) */
    SL_E_FAILED,      /* not classified (sl_errf) */
    SL_E_IO,          /* a file could not be opened, read, written or renamed (the system's reason in msg) */
    SL_E_FORMAT,      /* input data is malformed: bad JSON, a corrupt or truncated file, a bad header */
    SL_E_OPTION,      /* an option value is invalid or options conflict: field names it */
    SL_E_MISMATCH,    /* inputs valid alone do not fit together (vocabularies, tokenizers, models) */
    SL_E_EXISTS,      /* the output exists (field: the option that replaces it, "force") */
    SL_E_LIMIT,       /* a size limit was exceeded (a line over max_doc_bytes) */
    SL_E_UNSUPPORTED, /* valid input or a request this build does not handle */
    SL_E_NOMEM,       /* memory could not be had for a size the caller asked for */
} sl_errcode;

/* One anonymous member, code first: `sl_err e = {{0}}` (the idiom of the
 * tree) then zeroes all of it without a -Wextra warning. */
typedef struct sl_err {
    struct {
        sl_errcode code;
        char msg[SL_ERR_MAX];
        char field[SL_ERR_FIELD_MAX];
    };
} sl_err;

/* A short lowercase name of the code ("io", "format", "option", ...). */
const char *sl_errcode_name(sl_errcode code);

#ifdef SLUICE_UNSTABLE_API

/* Sets the message (printf-style), code SL_E_FAILED, no field. Always
 * returns -1 so callers can write `return sl_errf(err, "...")`. err may be
 * NULL. */
int sl_errf(sl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets code, field (NULL or "" for none) and the message; returns -1. */
int sl_err_set(sl_err *err, sl_errcode code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Sets code and field of an error whose message is already set (a message
 * passed up from a callee that did not classify it); returns -1. */
int sl_err_tag(sl_err *err, sl_errcode code, const char *field);

/* Prepends "prefix: " to an existing message (used to add a file name). */
int sl_err_prefix(sl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies s[0..n) into buf as a one-line, printable string for messages:
 * control bytes become \xNN and long strings are cut with "...". Returns buf. */
const char *sl_err_quote(const char *s, size_t n, char *buf, size_t cap);
#define SL_QUOTE_MAX 160

/* Allocation helpers that never return NULL: on out-of-memory they pass a
 * message to the log callback (base/log.h, level SL_LOG_ERROR) and abort
 * the process (there is no sensible recovery). */
void *sl_xmalloc(size_t n);
void *sl_xcalloc(size_t n, size_t size);
/* Zeroed like sl_xcalloc, but written now and on a cache line (64-byte)
 * boundary: for a large table that is read before it is written (a cache),
 * or data each thread writes on lines of its own. calloc's fresh pages map
 * the zero page on the first read and fault again at the first write, with
 * a TLB flush on every other core of a threaded process. A table of 2 MiB
 * or more is rounded up to whole 2 MiB pages and offered to the kernel as
 * huge pages (madvise; transparent huge pages in "madvise" mode, Debian's
 * default): one fault and one TLB entry for 2 MiB of random lookups
 * instead of 512. Freed by free(). */
void *sl_xzalloc_touched(size_t n, size_t size);
void *sl_xrealloc(void *p, size_t n);
char *sl_xstrdup(const char *s);
char *sl_xstrndup(const char *s, size_t n);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
