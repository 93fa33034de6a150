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

#ifdef __cplusplus
extern "C" {
#endif

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

/* A window of L bases anchored at `start` (may be negative or run past the
 * end), moved inside the chromosome without changing its length, as
 * Caduceus' FastaInterval does (kuleshov-group/caduceus
 * src/dataloaders/datasets/hg38_dataset.py): a window past the end is moved
 * back to end there, one before 0 moved up to start at 0; a chromosome
 * shorter than L gives the whole chromosome. */
static inline void dna_shift_into(uint64_t chrom_len, int64_t start, uint64_t L, uint64_t *out_start, uint64_t *out_end)
{
    int64_t clen = (int64_t)chrom_len, end = start + (int64_t)L;
    if (end > clen) {
        start -= end - clen;
        end = clen;
    }
    if (start < 0) {
        end -= start;
        start = 0;
    }
    if (end > clen) {
        start = clen - (int64_t)L;
        end = clen;
    }
    if (start < 0)
        start = 0;
    *out_start = (uint64_t)start;
    *out_end = (uint64_t)end;
}

/* How BED intervals become training windows of L bases.
 *  HYENA:    one window per interval (dna_hyena_interval).
 *  MAMBA:    the Mamba paper's hg38 setup (arXiv 2312.00752, E.3.1): an
 *            interval of len >= L is split into len / L non-overlapping
 *            pieces; a shorter one gives two windows, one starting at its
 *            start and one ending at its end.
 *  CADUCEUS: every interval is re-extended to start + 2^20 and split into
 *            2^20 / L pieces (L must divide 2^20).
 * MAMBA and CADUCEUS windows are moved inside the chromosome with
 * dna_shift_into, so they always have L bases when the chromosome does. */
enum { DNA_BED_HYENA = 0, DNA_BED_MAMBA = 1, DNA_BED_CADUCEUS = 2 };
#define DNA_CADUCEUS_SPAN (1u << 20)

static inline uint64_t dna_bed_window_count(int mode, uint64_t start, uint64_t end, uint64_t L)
{
    uint64_t len = end - start;
    if (mode == DNA_BED_MAMBA)
        return len >= L ? len / L : 2;
    if (mode == DNA_BED_CADUCEUS)
        return DNA_CADUCEUS_SPAN / L;
    return 1;
}

static inline void dna_bed_window(int mode, uint64_t chrom_len, uint64_t start, uint64_t end, uint64_t L, uint64_t k,
                                  uint64_t *out_start, uint64_t *out_end)
{
    if (mode == DNA_BED_HYENA) {
        dna_hyena_interval(chrom_len, start, end, L, out_start, out_end);
        return;
    }
    int64_t a = (int64_t)(start + k * L);
    if (mode == DNA_BED_MAMBA && end - start < L && k == 1)
        a = (int64_t)end - (int64_t)L;
    dna_shift_into(chrom_len, a, L, out_start, out_end);
}

#ifdef __cplusplus
}
#endif

#endif
