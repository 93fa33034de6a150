/* Length-aware mixing of token streams (`sluice mix`; docs/longctx.md
 * section 1.1 specifies the selection exactly). Several sources, each a
 * token stream with a weight, are mixed into one stream of about `tokens`
 * tokens: each source gets the share weight / sum(weights) of the budget,
 * and within a source each document is selected a number of times whose
 * expectation is proportional to its length weight (Fu et al. 2024's
 * per-source length up-sampling, or a target length histogram). Documents
 * are whole: repeated ones come back in later epochs of their source.
 *
 * Memory: two passes over each input (lengths, then the selected documents,
 * re-read once per epoch); 6 bytes per input document (length, copy count;
 * 8 more while planning, a sort key) and one document per source, never the
 * corpus. */
#ifndef SLUICE_SHARD_MIX_H
#define SLUICE_SHARD_MIX_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/io.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_MIX_NONE = 0, SL_MIX_UPSAMPLE = 1, SL_MIX_TARGET = 2 };

/* A bin of a length target: documents with lo <= tokens < hi (hi
 * UINT64_MAX: no upper end) should make `share` of a source's tokens. */
typedef struct sl_mix_bin {
    uint64_t lo, hi;
    double share;
} sl_mix_bin;

typedef struct sl_mix_opts {
    uint64_t tokens; /* budget, > 0 */
    uint64_t seed;
    double max_epochs;      /* no document is selected more often than this (> 0) */
    int policy;             /* SL_MIX_* */
    uint64_t long_len;      /* SL_MIX_UPSAMPLE: documents of >= long_len tokens ... */
    double factor;          /* ... weigh factor (> 0) times more */
    const sl_mix_bin *bins; /* SL_MIX_TARGET: sorted, disjoint; shares >= 0, sum > 0 */
    size_t n_bins;
    int source_ids; /* output ids NAME/ID: ids unique within each source stay unique across them */
} sl_mix_opts;

typedef struct sl_mix_source {
    const char *name; /* non-empty, unique */
    const char *path; /* token stream, or a directory of part files */
    double weight;    /* > 0 */
} sl_mix_source;

typedef struct sl_mix sl_mix;

/* Checks the options (messages name fields in backquotes: `tokens`,
 * `max_epochs`, `factor`, `weight`, ...) and copies them. */
sl_mix *sl_mix_new(const sl_mix_opts *o, const sl_mix_source *src, size_t n, sl_err *err);
/* A length target as JSON: {"bins":[{"lo":L,"hi":H|null,"share":S},...]}
 * (sorted by lo, disjoint). *bins is allocated; `name` is used in messages. */
int sl_mix_parse_target(const char *json, size_t len, const char *name, sl_mix_bin **bins, size_t *n, sl_err *err);
/* Pass 1 and the plan: reads every source's document lengths (headers must
 * match the first source's), computes each document's number of copies.
 * A source that cannot give its share within `max_epochs` is an error naming
 * it and the shortfall. */
int sl_mix_plan(sl_mix *m, sl_err *err);
/* The output header (the first source's). */
const sl_ts_header *sl_mix_header(const sl_mix *m);
/* Pass 2: hands every output document, in output order, to fn. The document
 * is valid during the call; its metadata has "source" set to the source name. */
typedef int (*sl_mix_doc_fn)(void *ctx, const sl_doc *d, sl_err *err);
int sl_mix_each(sl_mix *m, sl_mix_doc_fn fn, void *ctx, sl_err *err);
/* After sl_mix_each: the JSON report, a text summary (one line per source), and
 * an SVG of the length distributions per source, before and after. */
void sl_mix_report_json(const sl_mix *m, sl_buf *b);
void sl_mix_summary_text(const sl_mix *m, sl_buf *b);
void sl_mix_plot_svg(const sl_mix *m, sl_buf *b);
void sl_mix_free(sl_mix *m);

/* The whole `mix` stage: the length target read from target_path when
 * o->policy is SL_MIX_TARGET, the plan, the mixed stream written to out
 * (finished, not committed: the caller commits or aborts out), then the
 * report (JSON) and plot (SVG) files when named. *done receives the planned
 * mix (for sl_mix_summary_text; free it) on success. progress: sl_progress
 * mode. */
int sl_mix_run(const sl_mix_opts *o, const sl_mix_source *src, size_t n, const char *target_path, sl_output *out,
               const char *report, const char *plot, int progress, sl_mix **done, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
