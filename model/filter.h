/* The `filter` stage: keep the documents of a token stream whose score (a
 * numeric metadata field such as ppl, a field of separate score files, or the
 * record's own token or source-byte count) passes thresholds, percentile
 * bands or a CCNet bucket.
 *
 * One call runs the stage (sl_filter_run); its pieces are public so that a
 * caller can compute the cutoffs elsewhere, e.g. across the parts of a
 * partitioned corpus:
 *
 *   sl_filter_dist    the score distribution: a mergeable summary (the scored
 *                     values; merging the parts' distributions gives the
 *                     distribution of their concatenation exactly)
 *   sl_filter_resolve opts + distribution -> sl_filter_cuts (the thresholds)
 *   sl_filter_select  one pass over a stream with given cuts -> the kept
 *                     documents and an sl_filter_result
 *
 * Messages name fields and values ("min", "bucket"), never command-line
 * flags; the CLI maps them to its options. */
#ifndef SLUICE_MODEL_FILTER_H
#define SLUICE_MODEL_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "model/summary.h"
#include "base/buf.h"
#include "base/err.h"
#include "stream/io.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CCNet bucket of a perplexity given the head/tail cutoffs (p30, p60):
 * 0 head (pp < c_head), 1 middle (pp < c_tail), 2 tail. */
enum { SL_BUCKET_NONE = -1, SL_BUCKET_HEAD = 0, SL_BUCKET_MIDDLE = 1, SL_BUCKET_TAIL = 2 };
int sl_ccnet_bucket(double pp, double c_head, double c_tail);
extern const char *const sl_bucket_names[3];

/* Built-in fields: the record's own values, as `sluice cat` prints them
 * (never read from the metadata nor from score files). */
#define SL_FILTER_FIELD_TOKENS "tokens"       /* the record's token count */
#define SL_FILTER_FIELD_SRC_BYTES "src_bytes" /* its source bytes (0 = unknown = unscored) */

typedef struct sl_filter_opts {
    const char *field;         /* the score to select on (default "ppl") */
    double min, max;           /* keep min <= score <= max; NAN = no bound */
    double pct_lo, pct_hi;     /* keep between these percentiles (0..100) of the distribution; NAN = none */
    int bucket;                /* SL_BUCKET_*: keep one CCNet bucket */
    double cut_head, cut_tail; /* percentiles of the head/middle and middle/tail cuts (default 30, 60) */
    int keep_unscored;         /* keep documents whose score is null (NaN); default drop */
    int bins;                  /* histogram bins of the result (default 20) */
    /* Score files (JSON Lines with "id" and the field), joined by id; when
     * n_scores is 0 the score comes from each record's metadata. The
     * distribution for percentiles comes from these files when given. */
    const char *const *scores;
    size_t n_scores;
    /* Score summaries (model/summary.h, written by score --summary): when
     * n_cutoffs_from > 0 the percentiles come from these files, merged,
     * instead of the exact distribution (within the bound of summary.h);
     * needs a percentile selection. */
    const char *const *cutoffs_from;
    size_t n_cutoffs_from;
    /* Categorical keep: keep documents whose field is a JSON string equal to
     * one of in[0..n_in) (null = unscored); excludes the numeric selections. */
    const char *const *in;
    size_t n_in;
    const char *tmpdir; /* where a first pass over standard input spools it; NULL = $TMPDIR, else /tmp */
    int progress;       /* progress lines (base/log.h): -1 auto (a terminal), 0 off, 1 on */
} sl_filter_opts;

/* Defaults: field ppl, no bounds, no bucket, cuts 30/60, 20 bins. */
void sl_filter_opts_init(sl_filter_opts *o);
/* Checks the options' values: 0, or -1 with a message naming the field
 * ("pct_lo/pct_hi: 90:10 is not 0 <= lo <= hi <= 100"). */
int sl_filter_opts_check(const sl_filter_opts *o, sl_err *err);
/* Whether the selection needs the score distribution (percentiles, bucket). */
int sl_filter_needs_dist(const sl_filter_opts *o);

/* The score distribution: the values that are not NaN (NaN = unscored:
 * counted out) go through a spill (stream/spill.h: sorted runs in $TMPDIR
 * past SL_FILTER_DIST_BUDGET), so memory does not grow with the number of
 * documents; percentiles and the histogram are read in passes over the
 * sorted values. Zero-initialise; sl_filter_dist_free. */
struct sl_spill;
#define SL_FILTER_DIST_BUDGET ((size_t)16 << 20)
typedef struct sl_filter_dist {
    struct sl_spill *sp;
    size_t n;                /* values that are not NaN */
    double min_pos, max_pos; /* the smallest and largest finite value > 0 (0 when none) */
    int failed;              /* an append failed (the disk): err says why */
    sl_err err;
} sl_filter_dist;
void sl_filter_dist_add(sl_filter_dist *d, double v);
/* The values at percentiles ps[0..k) of the sorted values (linear
 * interpolation, numpy's default, as sl_percentile; NaN when there are
 * none): one pass. 0, or -1 with err (the disk). */
int sl_filter_dist_percentiles(sl_filter_dist *d, const double *ps, size_t k, double *out, sl_err *err);
/* The log-scale histogram of the finite values > 0, as sl_histogram_log. */
int sl_filter_dist_histogram(sl_filter_dist *d, int bins, uint64_t *counts, double *edges, sl_err *err);
void sl_filter_dist_free(sl_filter_dist *d);
/* Resolved thresholds: keep lo <= v <= hi (NaN = no bound) and, with a
 * bucket, its CCNet cuts. */
typedef struct sl_filter_cuts {
    double lo, hi;
    double c_head, c_tail; /* the cut_head-th and cut_tail-th percentiles */
} sl_filter_cuts;
/* Combines opts' bounds with the percentiles of d; -1 with err when d could
 * not be read (the disk). */
int sl_filter_resolve(const sl_filter_opts *o, sl_filter_dist *d, sl_filter_cuts *c, sl_err *err);
/* The same from a score summary (the merged summaries of the parts): -1
 * with a message naming the field when the summary has no values of it,
 * or some of its documents lack it (src names the summary). */
int sl_filter_resolve_summary(const sl_filter_opts *o, const sl_score_summary *s, const char *src, sl_filter_cuts *c,
                              sl_err *err);
/* Whether a score passes (v NaN = unscored). */
int sl_filter_keep(const sl_filter_opts *o, const sl_filter_cuts *c, double v);

/* Scores joined by id from score files. */
typedef struct sl_scoremap sl_scoremap;
/* Loads the files in order; an id in two places is an error naming the
 * second. An empty set of files gives an empty map. */
sl_scoremap *sl_scoremap_load(const char *const *paths, size_t n, const char *field, sl_err *err);
/* Every score of the map into d (in no particular order). */
void sl_scoremap_dist(const sl_scoremap *m, sl_filter_dist *d);
void sl_scoremap_free(sl_scoremap *m);

/* The score of one document: from m when not NULL, else from the record
 * (built-in fields) or its metadata. 0, or -1 with err "<src>: document
 * '<id>' ...". *missing is set to 1 when the failure is a score that is
 * absent (as opposed to malformed), so that a caller can suggest a source. */
int sl_filter_score(const sl_filter_opts *o, const sl_scoremap *m, const sl_doc *d, const char *src, double *v,
                    int *missing, sl_err *err);

typedef struct sl_filter_result {
    uint64_t docs, kept, unscored, tokens, kept_tokens;
    sl_filter_cuts cuts;
    sl_filter_dist seen; /* every score of the selection pass (NaNs counted out) */
    double pcts[7];      /* its percentiles 0, 10, 30, 50, 60, 90, 100 (for the summary) */
    uint64_t *counts;    /* histogram of the scores: bins counts, bins+1 edges (log scale) */
    double *edges;
    int bins;
    int missing;   /* the run failed on an absent score */
    int docs_mode; /* the input was JSON Lines documents (no tokens) */
} sl_filter_result;
void sl_filter_result_free(sl_filter_result *r);

/* One selection pass: every document of r whose score passes c is written
 * to w; counts, scores and the histogram go to res. src names the input in
 * messages (NULL: the file being read). */
int sl_filter_select(const sl_filter_opts *o, const sl_filter_cuts *c, const sl_scoremap *m, sl_ts_reader *r,
                     const char *src, sl_ts_writer *w, sl_filter_result *res, sl_err *err);

/* The value of the selection's field in a JSON object (a document's
 * metadata, or a JSON Lines document): 1 with *v set (NaN for null; with a
 * categorical keep 1 when the string is one of the values, else 0), 0 when
 * the field is absent, -1 when it is not a number (not a string, with a
 * categorical keep). */
struct sl_json;
int sl_filter_json_value(const sl_filter_opts *o, const struct sl_json *obj, double *v);

/* The selection over JSON Lines documents (what `read` and `classify`
 * write): each line of the inputs whose field passes is written unchanged
 * (first: paths[0] already opened, or NULL). Numeric bounds and categorical
 * keeps only (no percentiles, no score files). */
int sl_filter_docs(const sl_filter_opts *o, sl_input *first, const char *const *paths, size_t n, sl_output *out,
                   sl_filter_result *res, sl_err *err);

/* The stage: reads paths[0..n) as one token stream ("-" = stdin, alone),
 * loads the score files, computes the distribution when the selection
 * needs one (from the score files, else a first pass over the input; stdin
 * is spooled to tmpdir for it), and writes the kept documents to out as a
 * token stream (out is written, not committed: the caller commits or
 * aborts it). */
int sl_filter_run(const sl_filter_opts *o, const char *const *paths, size_t n, sl_output *out, sl_filter_result *res,
                  sl_err *err);

/* Reports of a result. Text: "kept N of M documents ..." and the text
 * histogram (the lines the CLI prints after "sluice: filter: "). JSON: the
 * summary object, one line. SVG: the histogram with the thresholds. */
void sl_filter_report_text(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *res);
void sl_filter_summary_json(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *res);
void sl_filter_plot_svg(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *res);

#ifdef __cplusplus
}
#endif

#endif
