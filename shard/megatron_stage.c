/* `sluice export megatron` and `sluice import megatron` as library calls
 * (see megatron_stage.h). */
#include "shard/megatron_stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/megatron.h"
#include "shard/pack.h"
#include "shard/packed.h"
#include "stream/io.h"
#include "stream/progress.h"

/* The name for messages: the path given when there is one input, else the
 * file being read now. */
static const char *src_name(const sl_ts_reader *r, const char *path)
{
    return !r || sl_ts_reader_n_inputs(r) == 1 ? path : sl_input_name(sl_ts_reader_input(r));
}

int sl_export_megatron_run(const sl_export_megatron_opts *o, const char *const *inputs, size_t n, const char *prefix,
                           sl_err *err)
{
    const char *path = n ? inputs[0] : "-";
    sl_meta_sel all = {0};
    const sl_meta_sel *sel = o->keep ? o->keep : &all;
    sl_ts_reader *r = sl_ts_reader_open_paths((char *const *)inputs, n, err);
    sl_mega_writer *w = NULL;
    sl_output *side = NULL;
    sl_buf line = {0}, meta = {0};
    sl_doc d = {0};
    sl_progress *pg = NULL;
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    if (sl_packed_need_docs(h, src_name(r, path), "export", err))
        goto done;
    int64_t e = o->no_eos ? SL_TS_NO_ID : o->eos >= 0 ? o->eos : h->eos;
    if (!o->no_eos && e == SL_TS_NO_ID) {
        sl_errf(err, "%s: the stream has no eos: give `eos` ID (or `no_eos`)", src_name(r, path));
        goto done;
    }
    /* where the header says documents end in e already, append it only where
     * it is missing (docs/formats.md, "doc_eos") */
    int missing = o->eos_mode < 0 && e != SL_TS_NO_ID && h->doc_eos == e;
    int keep = o->eos_mode == SL_EOS_KEEP;
    if (e != SL_TS_NO_ID && (uint64_t)e >= h->vocab_size) {
        sl_err_set(err, SL_E_OPTION, "eos", "`eos` %lld: not below the vocab size %u", (long long)e, h->vocab_size);
        goto done;
    }
    if (h->vocab_size > (uint64_t)INT32_MAX + 1) {
        sl_errf(err, "%s: vocab size %u does not fit Megatron's int32 tokens", src_name(r, path), h->vocab_size);
        goto done;
    }
    w = sl_mega_writer_open(prefix, sl_mega_dtype_for_vocab(h->vocab_size), err);
    if (!w)
        goto done;
    if (!o->no_documents) {
        char *sp = sl_mega_docs_path(prefix);
        side = sl_output_open(sp, err);
        free(sp);
        if (!side)
            goto done;
    }
    pg = sl_progress_start(o->progress ? o->progress : "export", "docs", o->progress_mode);
    if (sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(pg, sl_ts_reader_input(r));
    int k;
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        int ends = e != SL_TS_NO_ID && d.n_tokens && d.tokens[d.n_tokens - 1] == (uint32_t)e;
        if (d.n_tokens == 0 || (missing && d.n_tokens == 1 && ends))
            continue; /* Megatron drops empty documents (and gives them no EOD) */
        if (side) {
            sl_buf_clear(&line);
            sl_buf_clear(&meta);
            if (sl_meta_select(sel, d.meta, d.meta_len, &meta, err)) {
                char q[96];
                sl_err_prefix(err, "%s: document '%s'", src_name(r, path), sl_err_quote(d.id, d.id_len, q, sizeof q));
                goto done;
            }
            sl_meta_doc_line(&line, sl_mega_writer_docs(w), d.id, d.id_len, "train", SL_DOC_PLACED, meta.data,
                             meta.len);
            if (sl_output_write(side, line.data, line.len, err))
                goto done;
        }
        if (e != SL_TS_NO_ID && !keep && !(missing && ends))
            sl_doc_push(&d, (uint32_t)e);
        if (sl_mega_add_doc(w, d.tokens, d.n_tokens, err)) {
            sl_err_prefix(err, "%s: document '%s'", src_name(r, path), d.id);
            goto done;
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (k < 0)
        goto done;
    rc = sl_mega_finish_with_docs(w, side, prefix, err);
    w = NULL;
    side = NULL;
done:
    sl_progress_done(pg);
    sl_mega_writer_abort(w);
    sl_output_abort(side);
    sl_buf_free(&line);
    sl_buf_free(&meta);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return rc ? -1 : 0;
}

int sl_import_megatron_run(const sl_import_megatron_opts *o, const char *prefix, const char *output, sl_err *err)
{
    sl_mega_reader *r = sl_mega_open(prefix, err);
    if (!r)
        return -1;
    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    sl_ts_header h;
    sl_doc d = {0};
    sl_mega_docs *docs = NULL;
    sl_progress *pg = NULL;
    int rc = -1;
    uint32_t mx = 0;
    int64_t eos = o->eos, vocab = o->vocab_size;
    if (sl_mega_max_token(r, &mx, err))
        goto done;
    if (!o->no_documents && sl_mega_docs_open(prefix, sl_mega_n_docs(r), &docs, err) < 0)
        goto done;
    if (vocab < 0)
        vocab = (int64_t)mx + 1;
    if (eos >= vocab)
        vocab = eos + 1;
    if ((int64_t)mx >= vocab) {
        sl_errf(err, "%s.bin: token id %u is not below `vocab_size` %lld", prefix, mx, (long long)vocab);
        goto done;
    }
    sl_ts_header_init(&h, o->modality, (uint32_t)vocab);
    if (eos >= 0)
        h.eos = eos;
    snprintf(h.tokenizer, sizeof h.tokenizer, "megatron:%s", prefix);
    out = sl_output_open(output ? output : "-", err);
    w = out ? sl_ts_writer_open(out, &h, err) : NULL;
    if (!w)
        goto done;
    pg = sl_progress_start(o->progress ? o->progress : "import", "docs", o->progress_mode);
    uint64_t n = sl_mega_n_docs(r);
    for (uint64_t k = 0; k < n; k++) {
        if (docs) {
            const char *id, *meta;
            size_t il, ml;
            sl_mega_docs_get(docs, k, &id, &il, &meta, &ml);
            sl_doc_set_id(&d, id, il);
            sl_doc_set_meta(&d, meta, ml);
        } else {
            char id[24];
            sl_doc_set_id(&d, id, (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)k));
        }
        int bad = sl_mega_read_doc(r, k, &d.tokens, &d.n_tokens, &d.cap_tokens, err);
        if (!bad && eos >= 0 && d.n_tokens && d.tokens[d.n_tokens - 1] == (uint32_t)eos)
            d.n_tokens--; /* the EOD appended by --append-eod */
        if (bad || sl_ts_write_doc(w, &d, err))
            goto done;
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    sl_progress_done(pg);
    pg = NULL;
    rc = sl_ts_writer_finish(w, err);
    w = NULL;
    if (!rc) {
        rc = sl_output_commit(out, err);
        out = NULL;
    }
done:
    sl_progress_done(pg);
    sl_ts_writer_abort(w);
    sl_output_abort(out);
    sl_doc_free(&d);
    sl_mega_docs_close(docs);
    sl_mega_close(r);
    return rc ? -1 : 0;
}
