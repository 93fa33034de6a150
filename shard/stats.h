/* `sluice stats` as a library call: counts and length histograms of a token
 * stream (documents or packed rows) or of a shard directory, and their JSON.
 *
 * Token streams: inputs[0..n) are read as one stream (stream/tokstream.h;
 * none = standard input). A document stream gives the documents' lengths
 * (sl_len_stats); a packed stream (`sluice pack`, shard/packed.h) gives its
 * rows, pieces, document starts, padding and memory positions.
 *
 * A shard directory (exactly one input, sl_shard_has_manifest) is verified
 * (checksums) first, then read keeping nothing per document: per split its
 * rows, tokens, padding, pieces and the length of every document (the sum of
 * its pieces in that split and those before it, EOS/BOS included; dropped
 * documents are not counted); per warmup stage the batch, steps, tokens per
 * step and the rows, pieces and document starts of one epoch of its view. */
#ifndef SLUICE_SHARD_STATS_H
#define SLUICE_SHARD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "shard/shard.h"
#include "base/buf.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bucket 0: length 0; bucket k (1..64): lengths [2^(k-1), 2^k). */
#define SL_LEN_BUCKETS 65

/* Lengths of documents: count, sum, empty ones, min, max, histogram. */
typedef struct sl_len_stats {
    uint64_t n, tokens, empty, min, max;
    uint64_t hist[SL_LEN_BUCKETS];
} sl_len_stats;

/* Adds one length. */
void sl_len_stats_add(sl_len_stats *s, uint64_t len);

/* What `stats` found. */
enum { SL_STATS_DOCUMENTS = 0, SL_STATS_PACKED = 1, SL_STATS_SHARDS = 2 };

typedef struct sl_stats_split {
    int present; /* 0: the split is empty (nothing else is set) */
    uint64_t rows, tokens, pad_tokens, mem_tokens, pieces;
    size_t files;
    sl_len_stats docs;
} sl_stats_split;

typedef struct sl_stats_stage {
    uint32_t seq_len;
    uint64_t batch, tokens_per_step, start_token;
    int64_t steps; /* -1: open-ended */
    /* one epoch of the stage's view of the train split */
    uint64_t epoch_rows, epoch_pieces, epoch_document_starts;
} sl_stats_stage;

typedef struct sl_stats {
    int kind;        /* SL_STATS_* */
    char **inputs;   /* the inputs as given ("-" for standard input) */
    size_t n_inputs; /* >= 1 */
    uint32_t vocab_size;
    int modality;      /* token streams: SL_MODALITY_* */
    sl_len_stats docs; /* SL_STATS_DOCUMENTS */
    /* SL_STATS_PACKED and SL_STATS_SHARDS: the row length and layout with
     * its memory-token slots (mem_tokens 0: none) */
    uint32_t seq_len;
    int layout; /* SL_LAYOUT_* */
    uint32_t mem_tokens;
    int64_t mem_id;
    int mem_write;
    /* SL_STATS_PACKED: tokens = rows * seq_len; pad_tokens excludes memory
     * positions (mem_tokens_total) */
    uint64_t rows, tokens, pieces, document_starts, pad_tokens, mem_tokens_total;
    /* SL_STATS_SHARDS */
    int dtype_bytes; /* 2 or 4 */
    size_t documents;
    sl_stats_split splits[SL_SPLIT_N];
    char *warmup; /* the warmup SPEC, or NULL */
    sl_stats_stage *stages;
    size_t n_stages;
} sl_stats;

/* Statistics of inputs[0..n): one shard directory, or token streams read as
 * one. *st is filled (free it with sl_stats_free, also after an error). */
int sl_stats_run(const char *const *inputs, size_t n, sl_stats *st, sl_err *err);
void sl_stats_free(sl_stats *st);

/* st as one pretty-printed JSON object (the output of `sluice stats`,
 * fields in docs/formats.md), ending with a newline. */
void sl_stats_json(sl_buf *b, const sl_stats *st);

#ifdef __cplusplus
}
#endif

#endif
