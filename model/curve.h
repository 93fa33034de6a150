/* Per-position loss curves (docs/longctx.md section 3): the negative
 * log-likelihood of the tokens a scorer predicts, summed by token position
 * in log-spaced bins, over a corpus and per group of documents.
 *
 * Position: the number of tokens of context before the predicted token,
 * i.e. its index in the scored sequence (the document's tokens, with the
 * prepended context token at index 0 when one is used). Without a prepended
 * token a document's first prediction (its second token) has position 1;
 * with one, its first token has position 1. Bin k (k = 0, 1, ...) holds the
 * positions [2^k, 2^(k+1) - 1]: 1, 2-3, 4-7, 8-15, ...
 *
 * Per bin the curve keeps sums only, so curves of several runs or parts
 * merge by adding them: count, sum_nll (nats), sum_sq (sum of nll^2), and
 * for the predictions whose document records its source bytes:
 * bytes_count, bytes_nll and bytes (each prediction is given its document's
 * source bytes / predicted tokens). Derived: mean = sum_nll / count; a 95%
 * confidence interval mean +- 1.96 sd / sqrt(count) with the sample
 * standard deviation from sum_sq; bits per byte = bytes_nll / ln 2 / bytes.
 * Over all bins the bpb is the documents' total NLL in bits over their
 * total source bytes.
 *
 * Groups: the group "all" holds every prediction; with a group-by field,
 * each document also goes to the group named by that metadata field's value
 * (a string as is, another JSON value as its JSON text), or to "(none)"
 * when its metadata has no such field. Groups keep the order in which they
 * were first seen ("all" first). */
#ifndef SLUICE_MODEL_CURVE_H
#define SLUICE_MODEL_CURVE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_CURVE_BINS 64
#define SL_CURVE_NONE "(none)" /* the group of documents without the group-by field */

typedef struct sl_curve_bin {
    uint64_t count, bytes_count;
    double sum_nll, sum_sq, bytes_nll, bytes;
} sl_curve_bin;

typedef struct sl_curve_group {
    char *name;
    uint64_t documents;
    int nbins; /* bins [0, nbins) used: the longest position seen is < 2^nbins */
    sl_curve_bin bins[SL_CURVE_BINS];
} sl_curve_group;

typedef struct sl_curve {
    char *group_by;       /* metadata field, or NULL */
    int64_t max_position; /* 0, or the position limit the scorer used (recorded) */
    int64_t train_length; /* 0, or a training length to mark (recorded) */
    sl_curve_group *groups;
    size_t n_groups, cap;
} sl_curve;

/* A new empty curve (group "all" only); group_by may be NULL. */
sl_curve *sl_curve_new(const char *group_by);
void sl_curve_free(sl_curve *c);

/* The bin of a position (>= 1). */
static inline int sl_curve_bin_of(int64_t pos)
{
    return 63 - __builtin_clzll((unsigned long long)pos);
}

/* The group named name (created when new). */
sl_curve_group *sl_curve_group_get(sl_curve *c, const char *name, size_t len);

/* Adds one document: logp[0..n) are the log-probabilities of the
 * predictions at positions 1..n; src_bytes is the document's source bytes
 * (0: unknown); to "all" and, when g is not NULL, to group g. */
void sl_curve_add_doc(sl_curve *c, sl_curve_group *g, const float *logp, int64_t n, uint64_t src_bytes);

/* The group of a document from its metadata (JSON object text, may be
 * empty): the group-by field's value, or SL_CURVE_NONE. NULL without a
 * group-by field. Errors: metadata that is not a JSON object. */
int sl_curve_doc_group(sl_curve *c, const char *meta, size_t meta_len, sl_curve_group **g, sl_err *err);

/* Adds b's sums into a (groups by name, bins by index). group_by,
 * max_position and train_length must be equal (else an error naming the
 * field): curves of different settings do not add up. */
int sl_curve_merge(sl_curve *a, const sl_curve *b, sl_err *err);

/* Derived values of a bin: mean NLL, the 95% interval half-width (NaN with
 * fewer than 2 predictions), bits per byte (NaN without bytes). */
double sl_curve_mean(const sl_curve_bin *b);
double sl_curve_ci95(const sl_curve_bin *b);
double sl_curve_bpb(const sl_curve_bin *b);

/* Where the group's curve turns up: the lowest bin position lo of a bin
 * after the bin with the lowest mean NLL whose interval lies wholly above
 * that bin's interval; 0 when none. */
int64_t sl_curve_turn_up(const sl_curve_group *g);

/* JSON (format "sluice-position-curve", version 1): sums and derived values,
 * numbers written to round trip; sl_curve_read takes the sums back (the
 * derived values are ignored). src names the text in messages. */
void sl_curve_json(sl_buf *b, const sl_curve *c);
sl_curve *sl_curve_read(const char *text, size_t len, const char *src, sl_err *err);

/* The sum of the curve JSON files paths[0..n) (n >= 1; sl_curve_merge in
 * order): `sluice score --merge-curves`. Errors name the file. */
sl_curve *sl_curve_load(const char *const *paths, size_t n, sl_err *err);

/* Writes the curve's JSON (sl_curve_json) to json_path and its SVG
 * (sl_curve_svg) to svg_path, each skipped when NULL ("-": standard
 * output): both files or neither (a failed write leaves no file). */
int sl_curve_save(const sl_curve *c, const char *json_path, const char *svg_path, sl_err *err);

/* stats-style text, one line per bin per group; and a self-contained SVG:
 * mean NLL against position (log scale), one line per group with its 95%
 * interval, the training length marked. */
void sl_curve_text(sl_buf *b, const sl_curve *c);
void sl_curve_svg(sl_buf *b, const sl_curve *c);

#ifdef __cplusplus
}
#endif

#endif
