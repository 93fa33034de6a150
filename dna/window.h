/* Where windows fall on a sequence.
 *
 * HyenaDNA's interval rule (FastaInterval.__call__ in hazyresearch/hyena-dna
 * src/dataloaders/datasets/hg38_dataset.py): an interval shorter than L is
 * extended by (L - len) // 2 bases on the left and the rest on the right; then
 * start is clipped to 0 and end to the chromosome length (so near the ends
 * the result is shorter, not shifted); an interval longer than L keeps its
 * first L bases. */
#ifndef SLUICE_DNA_WINDOW_H
#define SLUICE_DNA_WINDOW_H

#include <stdint.h>

static inline void dna_hyena_interval(uint64_t chrom_len, uint64_t start, uint64_t end, uint64_t L, uint64_t *out_start,
                                      uint64_t *out_end)
{
    uint64_t len = end - start;
    int64_t s = (int64_t)start, e = (int64_t)end;
    if (len < L) {
        uint64_t extra = L - len;
        s -= (int64_t)(extra / 2);
        e += (int64_t)(extra - extra / 2);
    }
    if (s < 0)
        s = 0;
    if ((uint64_t)e > chrom_len)
        e = (int64_t)chrom_len;
    if (len > L)
        e = s + (int64_t)L;
    if ((uint64_t)e > chrom_len) /* a slice stops at the chromosome end */
        e = (int64_t)chrom_len;
    if (e < s)
        e = s;
    *out_start = (uint64_t)s;
    *out_end = (uint64_t)e;
}

/* Sliding windows [start, start + L) at start = 0, S, 2S, ... that fit in
 * `len`; then, unless drop_last, one shorter window [k S, len) when bases
 * at the end are not yet covered and the next start k S is inside the
 * sequence. Returns the number of windows; window i is
 * [i S, min(i S + L, len)). */
static inline uint64_t dna_window_count(uint64_t len, uint64_t L, uint64_t S, int drop_last)
{
    uint64_t full = len >= L ? (len - L) / S + 1 : 0;
    uint64_t covered = full ? (full - 1) * S + L : 0;
    if (!drop_last && covered < len && full * S < len)
        return full + 1;
    return full;
}

#endif
