/* The `dedup` stage (docs/dedup.md): documents in (stream/docreader.h), the
 * kept ones out as JSON Lines in input order, the others listed.
 *
 *   exact    documents whose text is identical (bytes, or after
 *            simplify_text with `normalize`); the first one is kept
 *   lines    CCNet's paragraph dedup: a line whose normalized text occurs in
 *            an earlier document is removed; documents left empty are dropped
 *   minhash  datatrove 0.10.1's MinHash LSH (dedup/minhash.h); the document
 *            datatrove keeps in each cluster (its union-find root) is kept
 *
 * Empty documents are counted and kept (datatrove's readers skip them).
 * The documents are spooled to a temporary file under $TMPDIR while their
 * keys are computed, then written from it. */
#ifndef SLUICE_DEDUP_DEDUP_H
#define SLUICE_DEDUP_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "dedup/minhash.h"
#include "stream/docreader.h"
#include "base/err.h"
#include "stream/io.h"

enum { SL_DEDUP_EXACT = 0, SL_DEDUP_LINES = 1, SL_DEDUP_MINHASH = 2 };

typedef struct sl_dedup_opts {
    int mode;              /* SL_DEDUP_* */
    int normalize;         /* exact: compare simplify_text of the texts */
    size_t min_line_chars; /* lines: a line whose normalized form has fewer code points is never removed (default 1:
                              blank lines stay) */
    sl_minhash_config mh;  /* minhash */
    int annotate;          /* keep every document, with dup_cluster and dup_count in its metadata */
    const char *removed;   /* JSON Lines of the removed documents, or NULL */
    const char *summary;   /* JSON summary, or NULL */
    const char *plot;      /* SVG of the cluster sizes, or NULL */
    int jaccard_on;        /* minhash: verify candidate pairs by the Jaccard similarity of their shingle sets */
    double jaccard;        /* the threshold (0..1) */
    int progress;          /* sl_progress mode */
} sl_dedup_opts;

#define SL_DEDUP_OPTS_INIT                                                                                             \
    {                                                                                                                  \
        .min_line_chars = 1, .mh = SL_MINHASH_CONFIG_INIT, .progress = 0                                               \
    }

typedef struct sl_dedup_stats {
    uint64_t docs, empty, kept, removed; /* removed: documents dropped (annotate: would be dropped) */
    uint64_t clusters;                   /* groups of two or more documents */
    uint64_t no_signature;               /* minhash: documents with fewer words than the n-gram */
    uint64_t lines, lines_removed;       /* lines */
    uint64_t hist[65];                   /* clusters by size: hist[k] of size k (k < 64), hist[64] larger */
} sl_dedup_stats;

/* Reads every document of r, writes the kept ones to out (not committed),
 * the removed list and the summary (committed when all went well). */
int sl_dedup_run(sl_docreader *r, const sl_docreader_opts *ro, const sl_dedup_opts *o, sl_output *out,
                 sl_dedup_stats *st, sl_err *err);

/* Writes o->summary (JSON) and o->plot (SVG) when set. */
int sl_dedup_report(const sl_dedup_opts *o, const sl_dedup_stats *st, sl_err *err);
/* The SVG: documents by the size of their cluster. */
void sl_dedup_plot_svg(sl_buf *b, const sl_dedup_stats *st);

#endif
