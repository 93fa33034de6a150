/* Progress lines, one implementation for every stage:
 *   "tokenize bpe: 12,345 docs  4.2M tokens  1.1M tokens/s  45%  ETA 0:12"
 *   "read: 1,024 docs  1.2 GB  45.6 MB/s  12%  ETA 3:05"
 * Each goes to the log callback (base/log.h) as an SL_LOG_PROGRESS message
 * with the stage as its stage and the rest as its text; sl_progress_done
 * sends a final summary line (SL_LOG_PROGRESS_END). Shown when enabled (mode
 * -1: file descriptor 2 is a terminal; 1: --progress; 0: off). When fd 2 is
 * a terminal a line comes at most every 200 ms (the sluice command redraws
 * it in place); else every SLUICE_PROGRESS_INTERVAL seconds (default 5; the
 * command writes plain newline-terminated lines, for a Slurm log or a file). The rate is in the stage's natural unit:
 * tokens/s when the stage counts tokens (sl_progress_add_tokens), bytes/s otherwise. Percent and ETA appear whenever
 * the amount of input is known: the tracked input file's position, a position callback (several inputs), or a total set
 * with sl_progress_set_total. The update calls are thread-safe. */
#ifndef SLUICE_STREAM_PROGRESS_H
#define SLUICE_STREAM_PROGRESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_progress sl_progress;

/* mode: -1 = auto (isatty(2)), 0 = off, 1 = on. unit: "docs", "rows", ... */
sl_progress *sl_progress_start(const char *stage, const char *unit, int mode);
/* Percent and ETA from an input's position in its file (compressed bytes
 * read / file size): for stages that read one file. in may be NULL (stop
 * tracking); it must stay open while tracked. */
struct sl_input;
void sl_progress_track_input(sl_progress *p, const struct sl_input *in);
/* Percent and ETA from a callback that reports how much of the input is done
 * and its total (any unit, e.g. bytes over several files); it returns 0 when
 * it knows, -1 when it does not. Called from the thread that updates. */
typedef int (*sl_progress_pos_fn)(void *ctx, double *done, double *total);
void sl_progress_track(sl_progress *p, sl_progress_pos_fn fn, void *ctx);
/* total_bytes: expected total of the bytes passed to sl_progress_add, for
 * the percent and ETA, or -1 when unknown. */
void sl_progress_set_total(sl_progress *p, int64_t total_bytes);
void sl_progress_add(sl_progress *p, uint64_t items, uint64_t bytes);
/* Tokens produced or consumed: the line then shows tokens and tokens/s. */
void sl_progress_add_tokens(sl_progress *p, uint64_t tokens);
void sl_progress_done(sl_progress *p);

#ifdef __cplusplus
}
#endif

#endif
