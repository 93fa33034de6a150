/* The packed stream: a token stream whose records are rows (docs/shards.md
 * section 2.1), and the resolution of packing options against a stream
 * header (defaults for EOS and padding, ids checked against the vocab). */
#ifndef SLUICE_SHARD_PACKED_H
#define SLUICE_SHARD_PACKED_H

#include "shard/pack.h"
#include "base/buf.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h): packing options of the shard stage ------------- */

/* Packing options as given on the command line; -1 / 0 = not given. Start
 * from SL_PACK_USER_INIT. */
typedef struct sl_pack_user {
    int64_t seq_len, eos, bos, pad; /* -1 = not given */
    int no_eos;
    int layout;    /* SL_LAYOUT_* */
    int64_t batch; /* -1 = not given */
    int no_split;
    int long_mode; /* -1 = not given */
    const char *warmup;
    int64_t mem_tokens, mem_id; /* -1 = not given */
    int mem_write;
    /* --eos append|keep|none: SL_EOS_APPEND, SL_EOS_KEEP, or SL_PACK_EOS_NONE
     * (= no_eos); -1 = not given: append where a document does not end in
     * eos already, when the header records that documents end in it
     * (doc_eos), else to every document */
    int eos_mode;
} sl_pack_user;
#define SL_PACK_EOS_NONE 3

#define SL_PACK_USER_INIT                                                                                              \
    {                                                                                                                  \
        -1, -1, -1, -1, 0, SL_LAYOUT_SEQUENTIAL, -1, 0, -1, NULL, -1, -1, 0, -1                                        \
    }

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

/* 1 when any packing option was given (a packed input must not get any). */
int sl_pack_user_any(const sl_pack_user *u);
/* The checks that need no input: a given seq_len follows the row-length
 * rule, no_eos with eos, long_mode without no_split, warmup with the
 * recurrent layout, the recurrent layout without batch, batch without it.
 * Messages name the fields in backquotes ("`layout` recurrent needs `batch`
 * B"); a command maps them to its flags. */
int sl_pack_user_check(const sl_pack_user *u, sl_err *err);
/* Fills o from u and the input header h: EOS defaults to the stream's eos,
 * appended only where missing when h->doc_eos says the documents end in it
 * (eos_mode), pad to the stream's pad, else the EOS; a warmup spec sets
 * seq_len to its longest stage. Runs sl_pack_user_check first; errors name
 * the field. */
int sl_pack_resolve(const sl_pack_user *u, const sl_ts_header *h, sl_pack_opts *o, sl_err *err);

/* Header of a packed stream: h plus extra.packed (and pad = o->pad). */
void sl_packed_header(const sl_ts_header *h, const sl_pack_opts *o, const char *warmup, sl_ts_header *out);
/* 1 = h describes a packed stream (o and *warmup filled; free *warmup),
 * 0 = a document stream, -1 = malformed "packed" object. */
int sl_packed_detect(const sl_ts_header *h, sl_pack_opts *o, char **warmup, sl_err *err);
/* For a stage that needs a document stream (export, pack): 0 when h is one;
 * else -1 with err "SRC: a packed stream (rows of L tokens): STAGE needs a
 * document stream", or "SRC: " and the message of a malformed "packed"
 * object. src names the stream in messages. */
int sl_packed_need_docs(const sl_ts_header *h, const char *src, const char *stage, sl_err *err);

/* A row as a token-stream record. */
void sl_packed_encode(const sl_row *r, uint32_t seq_len, sl_doc *d, sl_buf *scratch);
/* Adds the document records of a row to its encoded metadata:
 * `,"docs":[` + recs + `]` before the closing brace; recs is the text of
 * comma-separated objects {"doc":N,"id":"…"[,"long":"…"][,"meta":{…}]}
 * (docs/shards.md section 2.1). */
void sl_packed_add_docs(sl_doc *d, const char *recs, size_t n, sl_buf *scratch);
/* Appends one such record to recs (comma-separated). */
void sl_packed_put_docrec(sl_buf *recs, uint64_t doc, const char *id, size_t id_len, int long_status, const char *meta,
                          size_t meta_len);

/* The document records of one packed row. */
typedef struct sl_packed_docrec {
    uint64_t doc;
    int long_status;                           /* SL_DOC_PLACED / TRUNCATED / DROPPED */
    size_t id_off, id_len, meta_off, meta_len; /* in text; meta_len 0: none */
} sl_packed_docrec;
typedef struct sl_packed_docs {
    int present; /* the row has a "docs" array (streams of older packers have none) */
    size_t n, cap;
    sl_packed_docrec *recs;
    sl_buf text;
} sl_packed_docs;
/* Reads the "docs" array of a row record (checked: ordinals increasing, id a
 * string, long a known value, meta an object). */
int sl_packed_decode_docs(const sl_doc *d, sl_packed_docs *out, const char *src, sl_err *err);
void sl_packed_docs_free(sl_packed_docs *p);

/* Storage for decoded rows. */
typedef struct sl_packed_row {
    sl_piece *pieces;
    size_t cap;
    sl_buf ids;
    uint64_t *offs;
} sl_packed_row;
/* A record back to a row; checks the row length and every piece. `src` names
 * the stream in messages. */
int sl_packed_decode(const sl_doc *d, uint32_t seq_len, sl_packed_row *st, sl_row *out, const char *src, sl_err *err);
void sl_packed_row_free(sl_packed_row *st);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
