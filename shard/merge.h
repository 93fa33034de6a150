/* `sluice merge` as library calls: concatenating shard directories into a
 * shard directory, and Megatron datasets into one (as Megatron's
 * IndexedDatasetBuilder.add_index / tools/merge_datasets.py do). */
#ifndef SLUICE_SHARD_MERGE_H
#define SLUICE_SHARD_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "shard/stage.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Merging shard directories. */
typedef struct sl_merge_opts {
    int force;               /* replace an existing dst */
    uint64_t max_file_bytes; /* cap token files; 0 = the sources' cap (the rows of
                              * the first file of a source with several files
                              * in a split), one file per split when none shows
                              * one (always with concat_rows) */
    int concat_rows;         /* concatenate the rows as they are (below) */
} sl_merge_opts;

/* Every source must have the same seq_len, dtype, vocab, tokenizer
 * fingerprint, special ids, layout, memory slots and warmup spec; each is
 * verified (checksums) first.
 *
 * By default the sources are merged as one stream: the documents of each
 * (in ordinal order, rebuilt from the pieces in the rows of both splits)
 * are packed again, one source after the other, with the packing options,
 * shuffle (seed, window) and val_fraction the manifests record (which must
 * be equal too), so that dst is byte for byte the directory `sl_shard_run`
 * writes from the concatenated token streams with those options. A source
 * packed with no_split by a version that did not record it in the manifest
 * (found by its padded rows or truncated/dropped documents) is refused.
 *
 * With concat_rows the rows of each split are concatenated in order (each
 * source keeps its own last padded row; no shuffle), document ordinals
 * renumbered after the previous sources, warmup stages resolved again.
 *
 * A source directory without a manifest.json stands for the part shard
 * directories in it (names with <R>-of-<N>, stream/parts.h), in part order;
 * a missing or repeated part is an error naming it.
 *
 * Either way documents.jsonl keeps every line's metadata, documents.idx is
 * rebuilt and dst is written atomically. st: duplicate ids across sources
 * (counted, not an error), truncated and dropped documents. */
int sl_merge_run(const char *const *srcs, size_t n, const char *dst, const sl_merge_opts *o, sl_stage_stats *st,
                 sl_err *err);

/* Megatron prefixes (PREFIX.bin + PREFIX.idx): the .bin files concatenated
 * and sizes, pointers and document indices rebased; dtypes must match. The
 * sidecars PREFIX.documents.jsonl are merged (documents renumbered) when
 * every source has one; otherwise dst gets none. */
int sl_merge_megatron_run(const char *const *srcs, size_t n, const char *dst, sl_err *err);
/* The first source without a sidecar when some have one (the merged dataset
 * then gets none: worth a warning), else -1. */
int sl_mega_merge_missing_docs(const char *const *srcs, size_t n);

#ifdef __cplusplus
}
#endif

#endif
