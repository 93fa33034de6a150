/* Score summaries: a small, mergeable sketch of each score's distribution,
 * written by `sluice score --summary` and combined by `sluice filter
 * --cutoffs-from` to get percentile cutoffs without reading the scores
 * again (docs/scale-out.md).
 *
 * The sketch of one field is a histogram over the value's bit pattern: a
 * double maps to a 64-bit key that orders like the value (sign flipped for
 * positives, all bits flipped for negatives); its bucket is the top
 * 12 + SL_SUMMARY_BITS bits of the key (sign, exponent and the first
 * SL_SUMMARY_BITS bits of the mantissa). Per bucket the sketch keeps the
 * exact count and, while every value in it has the same bits, that value
 * ("single"); per field the exact count, the count of unscored (NaN)
 * values and the exact minimum and maximum. Every part of that state is a
 * function of the multiset of values, and merging adds counts and takes
 * min/max, so merging parts in any order or grouping gives the same
 * sketch, and the same bytes.
 *
 * Error bound. A percentile is computed as sl_percentile (numpy's linear
 * interpolation: i = floor(p/100*(n-1)), f = the fraction, c = s_i + (s_{i+1}
 * - s_i) * f) with each order statistic s_r replaced by an estimate e_r
 * from its bucket (ranks are exact: counts are exact). e_r = s_r exactly
 * when the bucket is single (ties, isolated values, ±inf) or r is 0 or
 * n-1; else e_r lies in the bucket, whose values share sign, exponent and
 * the first SL_SUMMARY_BITS mantissa bits, so |e_r - s_r| < 2^-BITS * |s_r|
 * (for normal numbers; below 2^-1022 the difference is < 2^(-1022-BITS)).
 * Hence |c' - c| <= 2^-BITS * ((1-f)|s_i| + f|s_{i+1}|), which is
 * 2^-BITS * |c| when s_i and s_{i+1} have the same sign (plus the rounding
 * of the interpolation, a few ulp). When both buckets are single the
 * cutoff is bit for bit the exact one.
 *
 * File format (all integers little-endian; varint = unsigned LEB128):
 *   "SLSUMMRY"  magic (8 bytes)
 *   u32 version (1), u32 bits (SL_SUMMARY_BITS)
 *   u64 documents
 *   u32 fields, then per field in strictly increasing byte order of names:
 *     u16 name length (1..64), name (printable ASCII, no space)
 *     u64 n (values that are not NaN), u64 unscored (NaN); 1 <= n+unscored <= documents
 *     when n > 0: u64 key of the minimum, u64 key of the maximum,
 *       varint buckets, then per bucket in increasing order:
 *       varint (bucket - previous bucket (0 before the first)) << 1 | single,
 *       varint count (>= 1; >= 2 unless single),
 *       when single: varint the low bits of the value's key
 *   u64 XXH64 (seed 0) of every byte before it.
 * A field a document does not have (bpb without source bytes) counts as
 * missing: documents - n - unscored.
 *
 * Messages name the source ("FILE: ...") and fields in backquotes. */
#ifndef SLUICE_MODEL_SUMMARY_H
#define SLUICE_MODEL_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mantissa bits kept per bucket: relative error < 2^-10 (about 0.1%). */
#define SL_SUMMARY_BITS 10
#define SL_SUMMARY_VERSION 1

typedef struct sl_score_summary sl_score_summary;

sl_score_summary *sl_score_summary_new(void);
void sl_score_summary_free(sl_score_summary *s);

/* Building: one call to _doc per document, then its values. A NaN value is
 * unscored (a null score); -0 counts as 0; ±inf are values. */
void sl_score_summary_doc(sl_score_summary *s);
void sl_score_summary_add(sl_score_summary *s, const char *field, double v);

/* dst += src (the summary of the concatenation). */
void sl_score_summary_merge(sl_score_summary *dst, const sl_score_summary *src);

/* Canonical bytes (the same summary always gives the same bytes). */
void sl_score_summary_write(sl_buf *b, const sl_score_summary *s);
/* Parses and checks a summary; errors are one line "src: ...". */
sl_score_summary *sl_score_summary_read(const void *data, size_t len, const char *src, sl_err *err);
/* Reads paths[0..n) and merges them (n >= 1). */
sl_score_summary *sl_score_summary_load(const char *const *paths, size_t n, sl_err *err);
/* Writes the canonical bytes to path ("-": standard output), atomically. */
int sl_score_summary_save(const sl_score_summary *s, const char *path, sl_err *err);

uint64_t sl_score_summary_docs(const sl_score_summary *s);
/* The names of the fields, sorted; *n set. Pointers stay valid until the
 * summary changes. */
const char **sl_score_summary_fields(const sl_score_summary *s, size_t *n);
/* Counts of one field: 1 when present, 0 when no document has it. */
int sl_score_summary_count(const sl_score_summary *s, const char *field, uint64_t *n, uint64_t *unscored,
                           uint64_t *missing);
/* The p-th percentile (0..100) of the field's non-NaN values, as
 * sl_percentile computes it, within the bound above; NAN when there are
 * none or the field is absent. */
double sl_score_summary_percentile(const sl_score_summary *s, const char *field, double p);
/* The number of non-empty buckets (file size is about 3 bytes each). */
size_t sl_score_summary_buckets(const sl_score_summary *s, const char *field);

#ifdef __cplusplus
}
#endif

#endif
