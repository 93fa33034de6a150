/* `sluice merge` as library calls: concatenating shard directories into a
 * shard directory, and Megatron datasets into one (as Megatron's
 * IndexedDatasetBuilder.add_index / tools/merge_datasets.py do). */
#ifndef SLUICE_SHARD_MERGE_H
#define SLUICE_SHARD_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "stream/err.h"

/* Every source must have the same seq_len, dtype, vocab, tokenizer
 * fingerprint, special ids, layout, memory slots and warmup spec; each is
 * verified (checksums) first. Rows of each split are concatenated in order,
 * document ordinals renumbered after the previous sources, warmup stages
 * resolved again; documents.jsonl keeps every line's metadata and
 * documents.idx is rebuilt. dst is written atomically (force: replace an
 * existing one; max_file_bytes: cap token files, 0 = none). */
int sl_shard_merge(const char *const *srcs, size_t n, const char *dst, int force, uint64_t max_file_bytes, sl_err *err);

/* Megatron prefixes (PREFIX.bin + PREFIX.idx): the .bin files concatenated
 * and sizes, pointers and document indices rebased; dtypes must match. The
 * sidecars PREFIX.documents.jsonl are merged (documents renumbered) when
 * every source has one; otherwise dst gets none. */
int sl_mega_merge(const char *const *srcs, size_t n, const char *dst, sl_err *err);
/* The first source without a sidecar when some have one (the merged dataset
 * then gets none: worth a warning), else -1. */
int sl_mega_merge_missing_docs(const char *const *srcs, size_t n);

#endif
