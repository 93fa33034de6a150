/* `dedup minhash`: datatrove's four MinHash stages (signatures, buckets,
 * cluster, filter), in one process or as separate steps over files for
 * scale-out (docs/dedup.md, docs/scale-out.md).
 *
 * Documents are numbered in input order. A step that signs part r of N
 * numbers its documents from 0; the steps after it add the document counts
 * of the parts before r, so every number, pair, cluster and kept document is
 * that of the one-process run whatever N (parts in order read the documents
 * in input order) and whatever the number of bucket steps M.
 *
 *   signatures  DIR/sigs/sig-R-of-N.mhsig: a header recording the
 *               configuration (n-gram, buckets, rows, seed, hash and its
 *               width, language, tokenizer and normalization), the
 *               documents' ids, with --jaccard their sorted shingle sets,
 *               then per band the (band values, document) records sorted;
 *               a trailer with the counts, offsets and an XXH64 of the body
 *   buckets     DIR/pairs/pairs-R-of-M.mhpair: bands [B*R/M, B*(R+1)/M):
 *               the N files' records merged, each equal neighbour a pair
 *               (verified by Jaccard with --jaccard)
 *   cluster     DIR/clusters.mhclu: union-find over the pairs in band
 *               order; per signature part, the documents that are in a
 *               cluster, with their cluster (the kept document's number), its
 *               size and the kept document's id
 *   filter      part R of N again: the documents of that part, kept or
 *               annotated, and the removed list
 *
 * Every file is written atomically; a file that is truncated, of another
 * version, or made with another configuration or from other signature files
 * is an error naming it. Memory: the signature records, pairs and cluster
 * entries go through external sorts (dedup/xsort.h) within the budget; the
 * union-find keeps about 24 bytes per document that is in a candidate pair. */
#ifndef SLUICE_DEDUP_LSH_H
#define SLUICE_DEDUP_LSH_H

#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"

/* The whole dedup in one process. */
int sl_lsh_dedup(sl_docreader *r, const sl_dedup_opts *o, size_t budget, sl_output *out, sl_dedup_stats *st,
                 sl_err *err);

/* Step 1: the signatures of part (r of n) of the input, to path. */
int sl_lsh_signatures(sl_docreader *r, const sl_dedup_opts *o, size_t budget, uint64_t part, uint64_t nparts,
                      const char *path, sl_err *err);
/* Step 2: the pairs of bucket part (part of nparts) from the signature
 * files in sigdir, to path. */
int sl_lsh_buckets(const sl_dedup_opts *o, size_t budget, const char *sigdir, uint64_t part, uint64_t nparts,
                   const char *path, sl_err *err);
/* Step 3: the clusters from the pair files in pairdir (and the ids in the
 * signature files of sigdir), to path; st: the counts of the whole corpus
 * (kept and removed as the filters will find them). */
int sl_lsh_cluster(const sl_dedup_opts *o, size_t budget, const char *sigdir, const char *pairdir, const char *path,
                   sl_dedup_stats *st, sl_err *err);
/* Step 4: part (part of nparts) of the input again, filtered with the
 * clusters file; o->removed (this part's) when set. */
int sl_lsh_filter(sl_docreader *r, const sl_dedup_opts *o, const char *clusters, uint64_t part, uint64_t nparts,
                  sl_output *out, sl_dedup_stats *st, sl_err *err);

/* The steps run one at a time, each with its files under one directory
 * (the layout above). */
enum { SL_LSH_SIGNATURES = 0, SL_LSH_BUCKETS = 1, SL_LSH_CLUSTER = 2, SL_LSH_FILTER = 3 };
/* The file of a step under dir (allocated): SL_LSH_SIGNATURES and
 * SL_LSH_BUCKETS the one part (part of nparts) writes, SL_LSH_CLUSTER the
 * clusters file it writes, SL_LSH_FILTER the clusters file it reads. */
char *sl_lsh_step_file(const char *dir, int step, uint64_t part, uint64_t nparts);
/* Runs one step (SL_LSH_*) with its files under dir: r is the documents of
 * the part (signatures, filter; NULL otherwise), out the kept documents
 * (filter; written, not committed), st the counts (cluster: of the whole
 * corpus, and the summary and plot of o are written; filter: of the part). */
int sl_lsh_step(int step, const sl_dedup_opts *o, size_t budget, const char *dir, uint64_t part, uint64_t nparts,
                sl_docreader *r, sl_output *out, sl_dedup_stats *st, sl_err *err);

/* Whether path is a whole file of one of the steps (magic, version, size,
 * checksum): 0, or -1 with err saying why (for --skip-existing). */
int sl_lsh_verify(const char *path, sl_err *err);

#endif
