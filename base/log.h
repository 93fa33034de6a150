/* Messages that are not errors: warnings, notes, progress.
 *
 * The library never writes to stderr or stdout. What it has to say besides
 * an error (a skipped input line, an index it builds, the progress line) goes
 * to one process-wide callback set with sl_log_set, as ggml_log_set does;
 * with none set, such messages are dropped. The sluice command installs one
 * in cli/main.c that writes them to stderr as
 *   "sluice: [STAGE: ][warning: |note: ]MSG\n"
 * and progress lines as a terminal or a log file wants them.
 *
 * A message is one line without its newline. stage, when not NULL, names the
 * stage the message is about ("read", or the name set with
 * sl_io_set_reporter); warnings and notes name the file and position the way
 * error messages do. Set the callback before work starts: it is called from
 * any thread (progress from the thread that advanced it), one message at a
 * time per call but not serialized between threads.
 *
 * Stable API (sluice.h): all but sl_log, which the library calls. */
#ifndef SLUICE_BASE_LOG_H
#define SLUICE_BASE_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sl_log_level {
    SL_LOG_ERROR,        /* fatal: the process aborts after it (out of memory in the sl_x* allocators) */
    SL_LOG_WARNING,      /* input was skipped or changed; the run goes on */
    SL_LOG_NOTE,         /* a choice made for the caller (no usable index: loading into memory) */
    SL_LOG_INFO,         /* an action taken for the caller (a stale temporary removed) */
    SL_LOG_PROGRESS,     /* a progress line; a later one replaces it */
    SL_LOG_PROGRESS_END, /* the final progress line (a summary) */
} sl_log_level;

typedef void (*sl_log_fn)(sl_log_level level, const char *stage, const char *msg, void *user);

/* Installs fn (NULL: drop every message) with user passed back to it. */
void sl_log_set(sl_log_fn fn, void *user);
/* The callback now installed (NULL when none) and its user pointer. */
sl_log_fn sl_log_get(void **user);

#ifdef SLUICE_UNSTABLE_API
/* Formats a message and hands it to the callback; does nothing (not even the
 * formatting) when none is set. stage may be NULL. */
void sl_log(sl_log_level level, const char *stage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif

#ifdef __cplusplus
}
#endif

#endif
