/* The Megatron-LM / GPT-NeoX memory-mapped indexed dataset (PREFIX.bin +
 * PREFIX.idx), byte-compatible with megatron-core's _IndexWriter and
 * _IndexReader. Layout: docs/shards.md section 5 and the reference note
 * shards-packing-warmup.md section 1.2. */
#ifndef SLUICE_SHARD_MEGATRON_H
#define SLUICE_SHARD_MEGATRON_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_MEGA_MAGIC "MMIDIDX\0\0" /* 9 bytes */
#define SL_MEGA_HEADER 34
enum { SL_MEGA_INT32 = 4, SL_MEGA_UINT16 = 8 };

typedef struct sl_mega_index {
    uint8_t dtype_code; /* SL_MEGA_UINT16 or SL_MEGA_INT32 */
    int itemsize;       /* 2 or 4 */
    uint64_t n_seq, n_doc_idx;
    int32_t *sizes;    /* n_seq */
    int64_t *pointers; /* n_seq, bytes */
    int64_t *doc_idx;  /* n_doc_idx; documents = n_doc_idx - 1 */
    uint64_t total_tokens;
} sl_mega_index;

/* The dtype code Megatron picks for a vocabulary (uint16 below 65500). */
int sl_mega_dtype_for_vocab(uint64_t vocab_size);

/* Parses and checks an .idx image: magic, version 1, dtype, counts against
 * the length, sizes >= 0, pointers = prefix sums of sizes, document indices
 * from 0 to S non-decreasing, and (bin_size != UINT64_MAX) the .bin size.
 * `name` is used in messages. */
int sl_mega_parse_idx(const unsigned char *buf, size_t len, uint64_t bin_size, const char *name, sl_mega_index *ix,
                      sl_err *err);
void sl_mega_index_free(sl_mega_index *ix);

typedef struct sl_mega_reader sl_mega_reader;
sl_mega_reader *sl_mega_open(const char *prefix, sl_err *err);
const sl_mega_index *sl_mega_index_of(const sl_mega_reader *r);
uint64_t sl_mega_n_docs(const sl_mega_reader *r);
/* Reads document k (its sequences concatenated) into *tok (grown as needed). */
int sl_mega_read_doc(sl_mega_reader *r, uint64_t k, uint32_t **tok, size_t *n, size_t *cap, sl_err *err);
/* Largest token id in the .bin (for an import without --vocab); -1 on error. */
int sl_mega_max_token(sl_mega_reader *r, uint32_t *max, sl_err *err);
void sl_mega_close(sl_mega_reader *r);

typedef struct sl_mega_writer sl_mega_writer;
/* Writes PREFIX.bin and PREFIX.idx atomically (sl_output). */
sl_mega_writer *sl_mega_writer_open(const char *prefix, int dtype_code, sl_err *err);
/* Appends one sequence that is one whole document (add_item + end_document). */
int sl_mega_add_doc(sl_mega_writer *w, const uint32_t *tok, size_t n, sl_err *err);
/* Appends a whole dataset as Megatron's add_index does (dtypes must match). */
int sl_mega_add_index(sl_mega_writer *w, sl_mega_reader *r, sl_err *err);
int sl_mega_writer_finish(sl_mega_writer *w, sl_err *err);
void sl_mega_writer_abort(sl_mega_writer *w);
uint64_t sl_mega_writer_docs(const sl_mega_writer *w);

/* PREFIX.documents.jsonl, the sidecar `sluice export megatron` writes beside
 * .bin/.idx (Megatron's format has no room for ids or metadata): line k is
 * Megatron document k, in the documents.jsonl line format of shard
 * directories (docs/shards.md section 5). */
char *sl_mega_docs_path(const char *prefix); /* free() it */
typedef struct sl_mega_docs sl_mega_docs;
/* Loads the sidecar of PREFIX when it exists: 1 loaded, 0 absent, -1 error
 * (a line that is not document k of n_docs, a wrong line count, a "meta" that
 * is not an object; the message names the file and line). */
int sl_mega_docs_open(const char *prefix, uint64_t n_docs, sl_mega_docs **out, sl_err *err);
/* Document k's id and metadata (meta_len 0: none); valid until close. */
void sl_mega_docs_get(const sl_mega_docs *d, uint64_t k, const char **id, size_t *id_len, const char **meta,
                      size_t *meta_len);
void sl_mega_docs_close(sl_mega_docs *d);
/* Finishes w (PREFIX.bin and .idx), then commits the sidecar `side` written
 * beside it; with side NULL an old PREFIX.documents.jsonl is removed (it
 * would describe other documents). On failure side is discarded. Frees w
 * and side. */
int sl_mega_finish_with_docs(sl_mega_writer *w, sl_output *side, const char *prefix, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
