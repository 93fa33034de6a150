/* Spill: per-record state that does not fit the memory budget goes to
 * sorted runs in $TMPDIR and comes back merged. One mechanism for every
 * stage whose state grows with the number of documents (shard's and
 * merge's document index, stats over a shard directory, the percentiles of
 * filter --keep-pct, mix, export) and for dedup.
 *
 * Records are byte strings, of one fixed size or each of its own length.
 * They are appended in any order; once sl_spill_sort is called they come
 * back in the order of the comparison function, ties in the order they were
 * appended (the sort is stable, so a result never depends on the budget or
 * on where runs were cut). Order "none" (cmp NULL) gives them back in the
 * order appended: a FIFO spooled to disk.
 *
 *   sl_spill_opts o = {.budget = 64 << 20, .rec_size = 16, .cmp = by_key};
 *   sl_spill *s = sl_spill_new(&o, &err);
 *   for (...) sl_spill_add(s, &rec, sizeof rec, &err);
 *   sl_spill_sort(s, &err);
 *   const void *r; size_t n;
 *   while ((k = sl_spill_next(s, &r, &n, &err)) == 1) use(r, n);
 *   sl_spill_free(s);
 *
 * Memory: the records held before a run is written (budget / 2 of record
 * bytes, their index and the sort's scratch included: 16 bytes per record)
 * and a write buffer (budget / 16), then one read buffer per run being
 * merged (256 KiB, less when there are more runs than budget / 256 KiB);
 * never more than `budget` whatever the number of records (budget at most
 * 4 GiB). More runs than the budget can give a useful buffer each
 * (SL_SPILL_MIN_READ) are merged in passes, each pass writing fewer, longer
 * runs. Records up to budget / 4 bytes are accepted (longer: an error).
 *
 * Disk: one unlinked temporary file (sl_tmpfile) holds every run, a second
 * one exists during a pass of an intermediate merge; both vanish with the
 * process however it ends (SIGKILL included), so a killed stage leaves no
 * spool. A record is stored as it is (fixed size) or after its length as a
 * 4-byte little-endian number. Errors (a full disk) name the directory. */
#ifndef SLUICE_STREAM_SPILL_H
#define SLUICE_STREAM_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* < 0, 0, > 0 as a sorts before, with, or after b. */
typedef int (*sl_spill_cmp)(const void *a, size_t alen, const void *b, size_t blen, void *ctx);

typedef struct {
    size_t budget;       /* bytes of memory for records, buffers and index; 0 = 64 MiB */
    size_t rec_size;     /* every record has this size; 0 = each record has its own length */
    sl_spill_cmp cmp;    /* NULL: records come back in the order appended */
    void *ctx;           /* passed to cmp */
    const char *tmpdir;  /* where runs go; NULL = $TMPDIR, else /tmp */
    const char *purpose; /* named in messages ("document index"); NULL = "records" */
} sl_spill_opts;

#define SL_SPILL_MIN_READ (64u << 10) /* smallest read buffer per run in a merge */

typedef struct sl_spill sl_spill;

sl_spill *sl_spill_new(const sl_spill_opts *o, sl_err *err);
/* Appends one record (len == rec_size for fixed records). Before sl_spill_sort only. */
int sl_spill_add(sl_spill *s, const void *rec, size_t len, sl_err *err);
/* Ends appending: sorts what is held and, when runs were written, prepares
 * their merge (merging in passes when there are too many). */
int sl_spill_sort(sl_spill *s, sl_err *err);
/* The next record in order: 1 (*rec valid until the next call), 0 at the end, -1 error. */
int sl_spill_next(sl_spill *s, const void **rec, size_t *len, sl_err *err);
/* Starts the records over from the first (after sl_spill_sort). */
int sl_spill_rewind(sl_spill *s, sl_err *err);
uint64_t sl_spill_count(const sl_spill *s); /* records appended */
size_t sl_spill_runs(const sl_spill *s);    /* runs cut while appending (0: all in memory) */
uint64_t sl_spill_disk_bytes(const sl_spill *s);
void sl_spill_free(sl_spill *s); /* NULL is a no-op */

/* An unlinked temporary file in dir (NULL: $TMPDIR, else /tmp), open for
 * reading and writing: nothing to clean up, however the process ends.
 * Returns the descriptor, or -1 with err naming the directory. */
int sl_tmpfile(const char *dir, sl_err *err);

#endif
