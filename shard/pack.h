/* Packing documents into fixed-length rows with a boundary index.
 * Specification: docs/shards.md sections 1-2. The packer is push-based: the
 * caller adds documents in order and receives complete rows through a
 * callback, so a stream is packed in bounded memory (one row, plus one
 * document per slot in the recurrent layout). */
#ifndef SLUICE_SHARD_PACK_H
#define SLUICE_SHARD_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h): the row a shard reader gives -------------------- */

#define SL_NO_TOKEN (-1) /* same value as SL_TS_NO_ID */

/* One document piece inside a row. */
typedef struct sl_piece {
    uint64_t doc;        /* document ordinal */
    uint64_t doc_offset; /* offset of the piece in the document sequence ([BOS] tokens [EOS]) */
    uint32_t offset;     /* offset in the row */
    uint32_t length;
    const char *id; /* document id (not NUL-terminated), valid during the callback; may be NULL */
    uint32_t id_len;
} sl_piece;

typedef struct sl_row {
    uint64_t index;         /* row number, from 0 */
    const uint32_t *tokens; /* seq_len tokens */
    size_t n_pieces;
    const sl_piece *pieces; /* sorted by offset */
} sl_row;

enum { SL_LAYOUT_SEQUENTIAL = 0, SL_LAYOUT_RECURRENT = 1 };
enum { SL_LONG_TRUNCATE = 0, SL_LONG_DROP = 1, SL_LONG_SPLIT = 2 };
enum { SL_DOC_PLACED = 0, SL_DOC_TRUNCATED = 1, SL_DOC_DROPPED = 2, SL_DOC_EMPTY = 3 };
/* How eos ends a document: appended to every one (the default, and what
 * earlier versions did), appended only to a document whose last token is
 * not eos already (the stream's header records that documents end in it),
 * or never appended (the documents are stored as they are; eos is still
 * recorded as the documents' end marker). */
enum { SL_EOS_APPEND = 0, SL_EOS_MISSING = 1, SL_EOS_KEEP = 2 };

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

/* Receives each complete row; returns 0, or -1 with err set to stop packing. */
typedef int (*sl_row_fn)(void *ctx, const sl_row *row, sl_err *err);

/* "truncate", "drop", "split" (manifests and packed headers), and back (-1:
 * none of them). */
const char *sl_long_mode_name(int long_mode);
int sl_long_mode_parse(const char *name);

typedef struct sl_pack_opts {
    uint32_t seq_len;      /* > 0, multiple of 8 */
    int64_t eos, bos, pad; /* SL_NO_TOKEN when none */
    int eos_mode;          /* SL_EOS_*: where eos is appended (0: to every document) */
    int layout;            /* SL_LAYOUT_* */
    uint32_t batch;        /* recurrent layout: rows per step */
    int no_split;          /* sequential layout: a document that does not fit starts a fresh row */
    int long_mode;         /* with no_split: SL_LONG_* for documents longer than a row */
    /* recurrent layout, memory-token slots (docs/shards.md section 2.2):
     * mem_tokens K > 0 fills positions [0, K) of every row with mem_id (RMT's
     * read memory) and, with mem_write, also [seq_len - K, seq_len); pieces
     * and padding lie between. 0 = none. */
    uint32_t mem_tokens;
    int64_t mem_id; /* SL_NO_TOKEN when mem_tokens is 0 */
    int mem_write;
} sl_pack_opts;

/* Memory positions at the start (read) and at the end (write) of every row. */
static inline uint32_t sl_pack_mem_read(const sl_pack_opts *o)
{
    return o->layout == SL_LAYOUT_RECURRENT ? o->mem_tokens : 0;
}
static inline uint32_t sl_pack_mem_write(const sl_pack_opts *o)
{
    return o->layout == SL_LAYOUT_RECURRENT && o->mem_write ? o->mem_tokens : 0;
}

typedef struct sl_pack_stats {
    uint64_t docs, rows, pieces;
    uint64_t doc_tokens; /* tokens of document sequences placed (markers included) */
    uint64_t pad_tokens;
    uint64_t mem_tokens; /* memory positions (not counted in pad_tokens) */
    uint64_t truncated, dropped, cut_tokens;
} sl_pack_stats;

typedef struct sl_packer sl_packer;

/* Checks the options (message without a file name; fields in backquotes,
 * "`seq_len` 12: ..."). */
int sl_pack_opts_check(const sl_pack_opts *o, sl_err *err);
/* The one row-length rule: a positive multiple of 8, at most 2^31. */
int sl_pack_check_seq_len(int64_t seq_len, sl_err *err);
sl_packer *sl_packer_new(const sl_pack_opts *o, sl_row_fn fn, void *ctx, sl_err *err);
/* Adds one document (its tokens, without markers). *status (may be NULL)
 * receives SL_DOC_*. Returns 0 or -1 (error from the callback, or a row that
 * needs padding when there is no pad id). */
int sl_packer_add(sl_packer *p, uint64_t ordinal, const char *id, size_t id_len, const uint32_t *tokens, size_t n,
                  int *status, sl_err *err);
/* What sl_packer_add will report for the document tok[0..n) (SL_DOC_*),
 * known before it is added. */
int sl_pack_doc_status(const sl_pack_opts *o, const uint32_t *tok, size_t n);
/* 1 when packing appends eos to the document tok[0..n) (eos_mode). */
int sl_pack_appends_eos(const sl_pack_opts *o, const uint32_t *tok, size_t n);
/* Emits the last (padded) row(s). */
int sl_packer_finish(sl_packer *p, sl_err *err);
const sl_pack_stats *sl_packer_stats(const sl_packer *p);
void sl_packer_free(sl_packer *p);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
