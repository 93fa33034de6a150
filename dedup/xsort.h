/* External sort of fixed-size records of 64-bit words, for the dedup stage:
 * records are appended in any order and come back in lexicographic order of
 * their words. Up to `budget` bytes of records are held in memory; beyond
 * that, they are sorted and written as runs to an unnamed temporary file
 * under $TMPDIR (dedup/spool.h: it vanishes with the process however it
 * ends), and merged when read back (a heap over the runs, one read buffer
 * each; when there are more runs than the budget gives 64 KiB buffers to,
 * they are first merged in passes into longer runs). Peak memory is about
 * `budget` whatever the number of records.
 *
 * Older than the shared spill module (stream/spill.h), which does the same
 * for records of any size; dedup has not been moved onto it yet. */
#ifndef SLUICE_DEDUP_XSORT_H
#define SLUICE_DEDUP_XSORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct sl_xsort sl_xsort;

/* words: record size in 64-bit words (1..64); budget: bytes (>= 64 KiB is
 * sensible; smaller is raised to hold a few records). */
sl_xsort *sl_xsort_new(int words, size_t budget, const char *what);
int sl_xsort_add(sl_xsort *s, const uint64_t *rec, sl_err *err);
/* Ends appending; prepares the merge. */
int sl_xsort_done(sl_xsort *s, sl_err *err);
/* The next record in order: 1 (*rec valid until the next call), 0 at the end, -1 error. */
int sl_xsort_next(sl_xsort *s, const uint64_t **rec, sl_err *err);
uint64_t sl_xsort_count(const sl_xsort *s);
size_t sl_xsort_runs(const sl_xsort *s); /* runs written (0: everything stayed in memory) */
void sl_xsort_free(sl_xsort *s);         /* NULL is a no-op */

/* Lexicographic comparison of n words. */
static inline int sl_words_cmp(const uint64_t *a, const uint64_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

#endif
