/* Progress line on stderr: "<stage>: 12,345 docs  1.2 GB  45.6 MB/s  ETA 0:12".
 * Shown when enabled (stderr is a terminal, or --progress) and not --quiet;
 * redrawn at most every 200 ms; sl_progress_done prints a final summary line
 * when enabled. Thread-safe for the update calls (atomics). */
#ifndef SLUICE_STREAM_PROGRESS_H
#define SLUICE_STREAM_PROGRESS_H

#include <stdint.h>

typedef struct sl_progress sl_progress;

/* mode: -1 = auto (isatty(2)), 0 = off, 1 = on. unit: "docs", "rows", ... */
sl_progress *sl_progress_start(const char *stage, const char *unit, int mode);
/* ETA and percent from an input's position in its file (compressed bytes
 * read / file size): for stages that read one file. in may be NULL (stop
 * tracking); it must stay open while tracked. */
struct sl_input;
void sl_progress_track_input(sl_progress *p, const struct sl_input *in);
/* total_bytes: expected total of the bytes passed to sl_progress_add, for
 * the ETA, or -1 when unknown. */
void sl_progress_set_total(sl_progress *p, int64_t total_bytes);
void sl_progress_add(sl_progress *p, uint64_t items, uint64_t bytes);
void sl_progress_done(sl_progress *p);

#endif
