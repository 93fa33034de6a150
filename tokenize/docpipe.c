/* See docpipe.h. The loop runs on stream/batch.h: a slot is one document
 * (the reader's fields, the encoded ids with the begin/end ids around them,
 * and the encode result); `write` hands the slot's buffers to the token
 * stream writer without copying them. */
#include "tokenize/docpipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/batch.h"

#define MAX_BATCH_DOCS 4096
/* A batch of less text is encoded by the thread that writes it. */
#define PARALLEL_MIN_BYTES ((uint64_t)64 << 10)

typedef struct {
    sl_textdoc doc;
    char *source; /* copy: the reader's name is valid only until the next call */
    sl_ids ids;   /* prepend id, the text's ids, append id */
    size_t held;  /* bytes of buffers this slot kept after its last write */
    int rc;
    sl_err err;
} item;

typedef struct {
    sl_encode_fn fn;
    void *ctx;
    const sl_docpipe_opts *o;
    sl_ts_writer *w;
    sl_progress *pg;
    size_t keep;      /* the most buffer bytes all idle slots keep together */
    size_t kept;      /* what they keep now */
    size_t big;       /* a slot holding more than this gives it back after its write */
    uint64_t written; /* documents and bytes written, for the typical size */
    uint64_t bytes;
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
    it->ids.n = 0;
    if (p->o->prepend >= 0)
        sl_ids_push(&it->ids, (uint32_t)p->o->prepend);
    it->rc = p->fn(p->ctx, thread, it->doc.text.data ? it->doc.text.data : "", it->doc.text.len, &it->ids, &it->err);
    if (p->o->append >= 0)
        sl_ids_push(&it->ids, (uint32_t)p->o->append);
}

static size_t held(const item *it)
{
    return it->doc.text.cap + it->doc.id.cap + it->doc.meta.cap + it->ids.cap * sizeof *it->ids.v;
}

/* Memory stays bounded by the batch: a slot gives its buffers back after a
 * document much larger than the typical one, and when the idle slots
 * together keep more than a few batches' worth (documents of mixed sizes
 * would otherwise leave each of the slots with the capacity of the largest
 * document it ever held). */
static void shrink(pipe *p, item *it)
{
    p->kept -= it->held;
    size_t h = held(it);
    uint64_t typical = p->written ? p->bytes / p->written : 0;
    size_t big = p->big > 8 * typical ? p->big : (size_t)(8 * typical);
    if (h > big || p->kept + h > p->keep) {
        sl_textdoc_free(&it->doc);
        sl_ids_free(&it->ids);
        h = 0;
    }
    it->held = h;
    p->kept += h;
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
    sl_progress_add(p->pg, 1, it->doc.text.len);
    p->written++;
    p->bytes += it->doc.text.len;
    shrink(p, it);
    return 0;
}

static void free_item(void *ctx, void *slot)
{
    (void)ctx;
    item *it = slot;
    sl_textdoc_free(&it->doc);
    sl_ids_free(&it->ids);
    free(it->source);
}

int sl_docpipe_run(sl_docreader *r, sl_ts_writer *w, sl_encode_fn fn, void *ctx, const sl_docpipe_opts *o,
                   sl_progress *pg, sl_err *err)
{
    size_t batch_bytes = o->batch_bytes ? o->batch_bytes : (size_t)8 << 20;
    pipe p = {.fn = fn, .ctx = ctx, .o = o, .w = w, .pg = pg, .keep = 4 * batch_bytes, .big = (size_t)64 << 10};
    static const sl_batch_ops ops = {sizeof(item), encode_item, write_item, free_item};
    sl_batch_opts bo = {.max_items = MAX_BATCH_DOCS, .max_cost = batch_bytes, .parallel_min_cost = PARALLEL_MIN_BYTES};
    sl_batcher *b = sl_batcher_new(&ops, &p, &bo);
    int rc = 0;
    for (;;) {
        item *it = sl_batcher_next(b);
        int got = sl_docreader_next(r, &it->doc, err);
        if (got <= 0) {
            rc = got < 0 ? -1 : sl_batcher_flush(b, err);
            break;
        }
        free(it->source);
        it->source = sl_xstrdup(it->doc.source ? it->doc.source : "-");
        if (sl_batcher_push(b, it->doc.text.len, err)) {
            rc = -1;
            break;
        }
    }
    sl_batcher_free(b);
    return rc;
}
