/* The pack and shard stages (shard/stage.h). */
#include "shard/stage.h"

#include <stdlib.h>
#include <string.h>

#include "shard/shard.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

void sl_stage_opts_default(sl_stage_opts *o)
{
    memset(o, 0, sizeof *o);
    o->pack = (sl_pack_user)SL_PACK_USER_INIT;
    o->progress = -1;
}

int sl_stage_opts_check(const sl_stage_opts *o, sl_err *err)
{
    if (sl_pack_user_check(&o->pack, err))
        return -1;
    if (o->shuffle && o->pack.layout == SL_LAYOUT_RECURRENT)
        return sl_errf(err, "`shuffle` would break the row continuity of `layout` recurrent");
    if (o->shuffle_window && !o->shuffle)
        return sl_errf(err, "`shuffle_window` needs `shuffle`");
    return 0;
}

/* The name for messages: the path given when there is one input, else the
 * file being read now. */
static const char *src_name(const sl_ts_reader *r, const char *path)
{
    return !r || sl_ts_reader_n_inputs(r) == 1 ? path : sl_input_name(sl_ts_reader_input(r));
}

/* Opens the inputs and the progress line; percent and ETA follow the input's
 * position when there is one input. */
static sl_ts_reader *open_inputs(const char *const *inputs, size_t n, const char **path, sl_err *err)
{
    *path = n ? inputs[0] : "-";
    return sl_ts_reader_open_paths((char *const *)inputs, n, err);
}

static sl_progress *start_progress(const char *stage, const char *unit, int mode, const sl_ts_reader *r)
{
    sl_progress *pg = sl_progress_start(stage, unit, mode);
    if (sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(pg, sl_ts_reader_input(r));
    return pg;
}

/* The packing options for a document stream: SL_STAGE_USAGE without a row
 * length, -1 for other errors. */
static int resolve(const sl_pack_user *u, const sl_ts_header *h, sl_pack_opts *po, sl_err *err)
{
    if (u->seq_len < 0 && !u->warmup) {
        sl_errf(err, "`seq_len` L is required (or `warmup` SPEC)");
        return SL_STAGE_USAGE;
    }
    return sl_pack_resolve(u, h, po, err) ? -1 : 0;
}

static void docmeta_init(sl_docmeta *m, const sl_stage_opts *o)
{
    memset(m, 0, sizeof *m);
    m->unique_ids = o->unique_ids;
    m->sel.mode = o->fields.mode;
    m->sel.n = o->fields.n;
    m->sel.names = o->fields.names; /* borrowed: not freed with m */
}

static void docmeta_done(sl_docmeta *m, sl_stage_stats *st)
{
    st->dup_ids = m->dups;
    st->first_dup_doc = m->first_dup_doc;
    if (m->first_dup)
        snprintf(st->first_dup, sizeof st->first_dup, "%s", m->first_dup);
    m->sel = (sl_meta_sel){0}; /* the caller's */
    sl_docmeta_free(m);
}

/* ---- pack --------------------------------------------------------------- */

/* Rows are written one row late: a row carries the records of the documents
 * added before it is written (so a record never comes after its document's
 * first piece), and the last row also those of documents after it (dropped or
 * empty ones that have no piece). */
typedef struct {
    sl_ts_writer *w;
    sl_doc *d; /* the held row */
    int held;
    sl_buf *b;
    sl_buf recs; /* records not yet written */
    uint32_t L;
} pack_ctx;

static int flush_held(pack_ctx *ctx, sl_err *e)
{
    if (!ctx->held)
        return 0;
    sl_packed_add_docs(ctx->d, ctx->recs.data ? ctx->recs.data : "", ctx->recs.len, ctx->b);
    sl_buf_clear(&ctx->recs);
    ctx->held = 0;
    return sl_ts_write_doc(ctx->w, ctx->d, e);
}

/* Row callback: one record per row. */
static int pack_on_row(void *vc, const sl_row *row, sl_err *e)
{
    pack_ctx *ctx = vc;
    if (flush_held(ctx, e))
        return -1;
    sl_packed_encode(row, ctx->L, ctx->d, ctx->b);
    ctx->held = 1;
    return 0;
}

int sl_pack_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, sl_output *out, sl_stage_stats *st,
                sl_err *err)
{
    memset(st, 0, sizeof *st);
    const char *path;
    sl_ts_reader *r = open_inputs(inputs, n_inputs, &path, err);
    sl_ts_header oh = {0};
    sl_ts_writer *w = NULL;
    sl_packer *pk = NULL;
    sl_doc d = {0}, rowdoc = {0};
    sl_buf scratch = {0};
    sl_progress *pg = NULL;
    pack_ctx ctx = {0};
    sl_docmeta meta;
    docmeta_init(&meta, o);
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    char *prev_warmup = NULL;
    int packed = sl_packed_detect(h, &po, &prev_warmup, err);
    free(prev_warmup);
    if (packed) {
        if (packed > 0)
            sl_errf(err, "%s: the stream is already packed (rows of %u tokens)", src_name(r, path), po.seq_len);
        else
            sl_err_prefix(err, "%s", src_name(r, path));
        goto done;
    }
    if ((rc = resolve(&o->pack, h, &po, err)) != 0)
        goto done;
    rc = -1;
    sl_packed_header(h, &po, o->pack.warmup, &oh);
    w = sl_ts_writer_open(out, &oh, err);
    if (!w)
        goto done;
    ctx = (pack_ctx){.w = w, .d = &rowdoc, .b = &scratch, .L = po.seq_len};
    pk = sl_packer_new(&po, pack_on_row, &ctx, err);
    if (!pk)
        goto done;
    pg = start_progress("pack", "docs", o->progress, r);
    uint64_t ord = 0;
    int k;
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        const char *src = src_name(r, path);
        if (sl_docmeta_id(&meta, d.id, d.id_len, ord, src, err) ||
            sl_docmeta_select(&meta, d.meta, d.meta_len, src, d.id, d.id_len, err))
            goto done;
        int ds = sl_pack_doc_status(&po, d.tokens, d.n_tokens);
        sl_packed_put_docrec(&ctx.recs, ord, d.id, d.id_len, ds, meta.buf.data, meta.buf.len);
        if (sl_packer_add(pk, ord++, d.id, d.id_len, d.tokens, d.n_tokens, NULL, err)) {
            sl_err_prefix(err, "%s: document '%s'", src, d.id);
            goto done;
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (k < 0 || sl_packer_finish(pk, err) || flush_held(&ctx, err) || sl_docmeta_finish(&meta, err) ||
        sl_ts_writer_finish(w, err))
        goto done;
    w = NULL;
    const sl_pack_stats *ps = sl_packer_stats(pk);
    st->docs = ord;
    st->truncated = ps->truncated;
    st->dropped = ps->dropped;
    st->cut_tokens = ps->cut_tokens;
    rc = 0;
done:
    sl_progress_done(pg);
    sl_packer_free(pk);
    sl_ts_writer_abort(w);
    sl_ts_header_free(&oh);
    sl_doc_free(&d);
    sl_doc_free(&rowdoc);
    sl_buf_free(&scratch);
    sl_buf_free(&ctx.recs);
    docmeta_done(&meta, st);
    sl_ts_reader_close(r);
    return rc;
}

/* ---- shard -------------------------------------------------------------- */

typedef struct {
    sl_shard_writer *w;
    int split;
} row_ctx;

static int shard_on_row(void *vc, const sl_row *row, sl_err *err)
{
    row_ctx *c = vc;
    return sl_shard_writer_row(c->w, c->split, row, err);
}

/* A packed input: documents.jsonl from the rows' document records (every
 * document, with its metadata); a stream of an older packer has none: then a
 * document is new when its ordinal is beyond every ordinal seen so far (first
 * pieces come in order). */
static int shard_packed_rows(sl_ts_reader *r, const char *path, uint32_t seq_len, sl_shard_writer *w, sl_docmeta *meta,
                             sl_progress *pg, sl_err *err)
{
    sl_doc d = {0};
    sl_packed_row prow = {0};
    sl_packed_docs pdocs = {0};
    uint64_t next = 0;
    int k, rc = -1;
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        sl_row row;
        const char *src = src_name(r, path);
        if (sl_ts_reader_streams(r) > 1) {
            /* each packed stream numbers its documents from 0 */
            sl_errf(err,
                    "%s: several packed streams: their document numbers restart, so they cannot be "
                    "sharded as one; shard the document streams (or merge shard directories)",
                    src);
            goto done;
        }
        if (sl_packed_decode(&d, seq_len, &prow, &row, src, err) || sl_packed_decode_docs(&d, &pdocs, src, err))
            goto done;
        for (size_t i = 0; i < pdocs.n; i++) {
            const sl_packed_docrec *pr = &pdocs.recs[i];
            const char *id = pdocs.text.data + pr->id_off;
            if (pr->doc < next) {
                sl_errf(err, "%s: row '%s': document %llu is recorded twice or out of order", src, d.id,
                        (unsigned long long)pr->doc);
                goto done;
            }
            if (sl_docmeta_id(meta, id, pr->id_len, pr->doc, src, err) ||
                sl_docmeta_select(meta, pr->meta_len ? pdocs.text.data + pr->meta_off : NULL, pr->meta_len, src, id,
                                  pr->id_len, err) ||
                sl_shard_writer_doc_meta(w, pr->doc, id, pr->id_len, SL_SPLIT_TRAIN, pr->long_status, meta->buf.data,
                                         meta->buf.len, err))
                goto done;
            next = pr->doc + 1;
        }
        for (size_t i = 0; i < row.n_pieces; i++) {
            const sl_piece *p = &row.pieces[i];
            if (p->doc >= next) {
                if (pdocs.present) {
                    sl_errf(err, "%s: row '%s': document %llu has a piece but no record before it", src, d.id,
                            (unsigned long long)p->doc);
                    goto done;
                }
                if (p->doc_offset != 0) {
                    sl_errf(err, "%s: row '%s': document %llu first appears at document offset %llu", src, d.id,
                            (unsigned long long)p->doc, (unsigned long long)p->doc_offset);
                    goto done;
                }
                if (sl_docmeta_id(meta, p->id, p->id_len, p->doc, src, err) ||
                    sl_shard_writer_doc(w, p->doc, p->id, p->id_len, SL_SPLIT_TRAIN, SL_DOC_PLACED, err))
                    goto done;
                next = p->doc + 1;
            }
        }
        if (sl_shard_writer_row(w, SL_SPLIT_TRAIN, &row, err))
            goto done;
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    rc = k < 0 ? -1 : 0;
done:
    sl_doc_free(&d);
    sl_packed_row_free(&prow);
    sl_packed_docs_free(&pdocs);
    return rc;
}

/* A document input: packed here, train and val split by id. */
static int shard_documents(sl_ts_reader *r, const char *path, const sl_pack_opts *po, double val_fraction,
                           sl_shard_writer *w, sl_docmeta *meta, sl_progress *pg, sl_stage_stats *st, sl_err *err)
{
    sl_packer *pk[SL_SPLIT_N] = {0};
    row_ctx rcx[SL_SPLIT_N];
    sl_doc d = {0};
    int k, rc = -1;
    for (int s = 0; s < SL_SPLIT_N; s++) {
        rcx[s] = (row_ctx){w, s};
        if (!(pk[s] = sl_packer_new(po, shard_on_row, &rcx[s], err)))
            goto done;
    }
    uint64_t ord = 0;
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        int split = sl_split_of(d.id, d.id_len, val_fraction), ds;
        const char *src = src_name(r, path);
        if (sl_docmeta_id(meta, d.id, d.id_len, ord, src, err) ||
            sl_docmeta_select(meta, d.meta, d.meta_len, src, d.id, d.id_len, err))
            goto done;
        if (sl_packer_add(pk[split], ord, d.id, d.id_len, d.tokens, d.n_tokens, &ds, err)) {
            sl_err_prefix(err, "%s: document '%s'", src, d.id);
            goto done;
        }
        /* every document gets its line, also an empty one (no tokens in any row) */
        if (sl_shard_writer_doc_meta(w, ord, d.id, d.id_len, split, ds == SL_DOC_EMPTY ? SL_DOC_PLACED : ds,
                                     meta->buf.data, meta->buf.len, err))
            goto done;
        ord++;
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (k < 0)
        goto done;
    for (int s = 0; s < SL_SPLIT_N; s++)
        if (sl_packer_finish(pk[s], err))
            goto done;
    st->docs = ord;
    for (int s = 0; s < SL_SPLIT_N; s++) {
        st->truncated += sl_packer_stats(pk[s])->truncated;
        st->dropped += sl_packer_stats(pk[s])->dropped;
        st->cut_tokens += sl_packer_stats(pk[s])->cut_tokens;
    }
    rc = 0;
done:
    for (int s = 0; s < SL_SPLIT_N; s++)
        sl_packer_free(pk[s]);
    sl_doc_free(&d);
    return rc;
}

int sl_shard_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, const char *dir,
                 sl_stage_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    if (sl_stage_opts_check(o, err))
        return -1;
    const char *path;
    sl_ts_reader *r = open_inputs(inputs, n_inputs, &path, err);
    sl_shard_writer *w = NULL;
    sl_progress *pg = NULL;
    char *warmup = NULL;
    sl_docmeta meta;
    docmeta_init(&meta, o);
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    int packed = sl_packed_detect(h, &po, &warmup, err);
    if (packed < 0) {
        sl_err_prefix(err, "%s", src_name(r, path));
        goto done;
    }
    if (packed) {
        if (sl_pack_user_any(&o->pack)) {
            sl_errf(err, "%s: the input is already packed (rows of %u tokens): packing options do not apply",
                    src_name(r, path), po.seq_len);
            goto done;
        }
        if (o->val_fraction > 0) {
            sl_errf(err, "%s: `val_fraction` splits documents, so it needs a document stream, not packed rows",
                    src_name(r, path));
            goto done;
        }
        if (o->shuffle && po.layout == SL_LAYOUT_RECURRENT) {
            sl_errf(err, "%s: `shuffle` would break the row continuity of the recurrent layout", src_name(r, path));
            goto done;
        }
    } else {
        if ((rc = resolve(&o->pack, h, &po, err)) != 0)
            goto done;
        rc = -1;
        warmup = o->pack.warmup ? sl_xstrdup(o->pack.warmup) : NULL;
    }
    sl_shard_info info;
    memset(&info, 0, sizeof info);
    info.seq_len = po.seq_len;
    info.vocab_size = h->vocab_size;
    info.dtype_bytes = o->dtype_bytes ? (uint32_t)o->dtype_bytes : h->vocab_size <= 65536 ? 2 : 4;
    if (info.dtype_bytes == 2 && h->vocab_size > 65536) {
        sl_errf(err, "%s: vocab size %u does not fit `dtype` uint16 (ids up to 65535)", src_name(r, path),
                h->vocab_size);
        goto done;
    }
    info.modality = h->modality;
    memcpy(info.fingerprint, h->fingerprint, sizeof info.fingerprint);
    memcpy(info.tokenizer, h->tokenizer, sizeof info.tokenizer);
    info.eos = po.eos;
    info.bos = po.bos;
    info.pad = po.pad;
    info.layout = po.layout;
    info.batch = po.batch;
    info.warmup = warmup;
    info.mem_tokens = sl_pack_mem_read(&po);
    info.mem_id = info.mem_tokens ? po.mem_id : SL_NO_TOKEN;
    info.mem_write = sl_pack_mem_write(&po) != 0;
    info.no_split = po.layout == SL_LAYOUT_SEQUENTIAL && po.no_split;
    info.long_mode = info.no_split ? po.long_mode : 0;
    info.shuffle = o->shuffle;
    info.seed = o->seed;
    info.shuffle_window = o->shuffle_window ? o->shuffle_window : (256ull << 20) / ((uint64_t)po.seq_len * 4) + 1;
    info.val_fraction = o->val_fraction;
    w = sl_shard_writer_open(dir, &info, o->max_file_bytes, o->force, err);
    if (!w)
        goto done;
    pg = start_progress("shard", packed ? "rows" : "docs", o->progress, r);
    if (packed ? shard_packed_rows(r, path, po.seq_len, w, &meta, pg, err)
               : shard_documents(r, path, &po, o->val_fraction, w, &meta, pg, st, err))
        goto done;
    if (sl_docmeta_finish(&meta, err))
        goto done;
    rc = sl_shard_writer_finish(w, err);
    w = NULL;
done:
    sl_progress_done(pg);
    sl_shard_writer_abort(w);
    docmeta_done(&meta, st);
    free(warmup);
    sl_ts_reader_close(r);
    return rc;
}
