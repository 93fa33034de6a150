/* See docpipe.h. The loop runs on stream/batch.h: a slot is one document
 * (the reader's fields, the encoded ids with the begin/end ids around them,
 * and the encode result); `write` hands the slot's buffers to the token
 * stream writer without copying them. */
#include "tokenize/docpipe.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/batch.h"
#include "stream/io.h"

#define MAX_BATCH_DOCS 4096
/* A batch of less text is encoded by the thread that writes it. */
#define PARALLEL_MIN_BYTES ((uint64_t)64 << 10)

typedef struct {
    sl_textdoc doc;
    char *source;        /* copy: the reader's name is valid only until the next call */
    sl_ids ids;          /* prepend id, the text's ids, append id */
    size_t held;         /* bytes of buffers this slot kept after its last write */
    const char *special; /* the first special token written in the text (o->specials), or NULL */
    size_t special_at;
    int rc;
    sl_err err;
} item;

typedef struct {
    const sl_tokenizer *t;
    sl_tok_state **states; /* per encoding thread, made at first use */
    const sl_docpipe_opts *o;
    sl_ts_writer *w;
    sl_docreader *r; /* read by one thread at a time (sl_batcher_run's fill) */
    sl_progress *pg;
    sl_slot_keep keep; /* what the idle slots keep */
} pipe;

static void where(sl_err *err, const item *it)
{
    if (it->doc.line)
        sl_err_prefix(err, "%s:%llu", it->source, (unsigned long long)it->doc.line);
    else
        sl_err_prefix(err, "%s", it->source);
}

static void encode_item(void *ctx, int thread, void *slot)
{
    const pipe *p = ctx;
    item *it = slot;
    /* a thread number is used by one thread at a time */
    if (!p->states[thread])
        p->states[thread] = sl_tok_state_new(p->t);
    it->ids.n = 0;
    if (p->o->prepend >= 0)
        sl_ids_push(&it->ids, (uint32_t)p->o->prepend);
    const char *text = it->doc.text.data ? it->doc.text.data : "";
    it->rc = sl_tokenizer_encode(p->t, p->states[thread], text, it->doc.text.len, &it->ids, &it->err);
    it->special = p->o->specials ? sl_tokenizer_find_special(p->t, text, it->doc.text.len, &it->special_at) : NULL;
    if (p->o->append >= 0)
        sl_ids_push(&it->ids, (uint32_t)p->o->append);
}

static size_t held(const item *it)
{
    return it->doc.text.cap + it->doc.id.cap + it->doc.meta.cap + it->ids.cap * sizeof *it->ids.v;
}

/* Memory stays bounded by the batch (sl_slot_keep_settle). */
static void shrink(pipe *p, item *it)
{
    if (sl_slot_keep_settle(&p->keep, &it->held, held(it), it->doc.text.len)) {
        sl_textdoc_free(&it->doc);
        sl_ids_free(&it->ids);
    }
}

static int write_item(void *ctx, void *slot, sl_err *err)
{
    pipe *p = ctx;
    item *it = slot;
    if (it->rc) {
        *err = it->err;
        where(err, it);
        return -1;
    }
    sl_doc d = {
        .id = it->doc.id.data ? it->doc.id.data : "",
        .id_len = it->doc.id.len,
        .src_bytes = it->doc.text.len,
        .tokens = it->ids.v,
        .n_tokens = it->ids.n,
        .meta = it->doc.meta.len > 2 ? it->doc.meta.data : NULL,
        .meta_len = it->doc.meta.len > 2 ? it->doc.meta.len : 0,
    };
    if (sl_ts_write_doc(p->w, &d, err)) {
        where(err, it);
        return -1;
    }
    sl_docpipe_specials *sp = p->o->specials;
    if (it->special && !sp->docs++) {
        snprintf(sp->token, sizeof sp->token, "%s", it->special);
        snprintf(sp->source, sizeof sp->source, "%s", it->source);
        sp->line = it->doc.line;
        sp->at = it->special_at;
    }
    sl_progress_add(p->pg, 1, it->doc.text.len);
    sl_progress_add_tokens(p->pg, it->ids.n);
    shrink(p, it);
    return 0;
}

/* The next document into a slot (the batcher's fill: it runs beside the
 * encoding of the batch before, on one thread at a time, as does write). */
static int fill_item(void *ctx, void *slot, uint64_t *cost, sl_err *err)
{
    pipe *p = ctx;
    item *it = slot;
    int got = sl_docreader_next(p->r, &it->doc, err);
    if (got <= 0)
        return got;
    const char *name = it->doc.source ? it->doc.source : "-";
    if (!it->source || strcmp(it->source, name)) { /* a copy per source, not per document */
        free(it->source);
        it->source = sl_xstrdup(name);
    }
    *cost = it->doc.text.len;
    return 1;
}

static void free_item(void *ctx, void *slot)
{
    (void)ctx;
    item *it = slot;
    sl_textdoc_free(&it->doc);
    sl_ids_free(&it->ids);
    free(it->source);
}

int sl_docpipe_run(const sl_tokenizer *t, sl_docreader *r, sl_ts_writer *w, const sl_docpipe_opts *o, sl_progress *pg,
                   sl_err *err)
{
    size_t batch_bytes = o->batch_bytes ? o->batch_bytes : (size_t)8 << 20;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    batch_bytes = sl_docs_batch_cap(batch_bytes, threads);
    pipe p = {.t = t, .o = o, .w = w, .r = r, .pg = pg, .keep = {.keep = 4 * batch_bytes, .big = (size_t)64 << 10}};
    p.states = sl_xcalloc((size_t)threads, sizeof *p.states);
    static const sl_batch_ops ops = {sizeof(item), encode_item, write_item, free_item};
    sl_batch_opts bo = {.max_items = MAX_BATCH_DOCS,
                        .max_cost = batch_bytes,
                        .parallel_min_cost = PARALLEL_MIN_BYTES,
                        .threads = threads};
    sl_batcher *b = sl_batcher_new(&ops, &p, &bo);
    int rc = sl_batcher_run(b, fill_item, err);
    sl_batcher_free(b);
    for (int i = 0; i < threads; i++)
        sl_tok_state_free(p.states[i]);
    free(p.states);
    return rc;
}

/* The stage on an opened reader (NULL: opening failed, err set), which it
 * closes. */
static int tokenize_reader(const sl_tokenizer *t, sl_docreader *r, const sl_docpipe_opts *o, const char *output,
                           sl_docreader_stats *stats, sl_err *err)
{
    sl_ts_header h;
    sl_tokenizer_header(t, &h);
    if (o->append >= 0)
        h.eos = h.doc_eos = o->append; /* every document ends in it: later stages append no other */
    if (o->prepend >= 0)
        h.bos = o->prepend;
    int rc = -1;
    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    if (r && (out = sl_output_open(output ? output : "-", err)) && (w = sl_ts_writer_open(out, &h, err))) {
        sl_progress *pg = sl_progress_start(o->progress ? o->progress : "tokenize", "docs", o->progress_mode);
        sl_progress_track(pg, sl_docreader_position, r); /* percent and ETA when the inputs are files */
        rc = sl_docpipe_run(t, r, w, o, pg, err);
        sl_progress_done(pg);
        if (rc == 0) {
            rc = sl_ts_writer_finish(w, err);
            w = NULL;
            if (rc == 0) {
                rc = sl_output_commit(out, err);
                out = NULL;
            }
        }
    }
    if (stats)
        *stats = r ? *sl_docreader_stats_get(r) : (sl_docreader_stats){0};
    if (w)
        sl_ts_writer_abort(w);
    if (out)
        sl_output_abort(out);
    sl_docreader_close(r);
    sl_ts_header_free(&h);
    return rc;
}

int sl_tokenize_text(const sl_tokenizer *t, const char *const *inputs, int n_inputs, const sl_docreader_opts *ro,
                     const sl_docpipe_opts *o, const char *output, sl_docreader_stats *stats, sl_err *err)
{
    return tokenize_reader(t, sl_docreader_open(inputs, n_inputs, ro, err), o, output, stats, err);
}

int sl_tokenize_slices(const sl_tokenizer *t, const sl_slice *pieces, size_t n, const sl_docreader_opts *ro,
                       const sl_docpipe_opts *o, const char *output, sl_docreader_stats *stats, sl_err *err)
{
    return tokenize_reader(t, sl_docreader_open_slices(pieces, n, ro, err), o, output, stats, err);
}
