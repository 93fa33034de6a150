/* The `read` stage (stream/read.h). */
#include "stream/read.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/log.h"
#include "stream/batch.h"
#include "stream/progress.h"

/* With another text field, an input field called "text" would clash with the
 * output's "text": it is dropped from the metadata (with one warning). */
static void drop_text_field(const sl_docreader_opts *opts, sl_textdoc *d, sl_buf *tmp, int *warned)
{
    if (!strstr(d->meta.data, "\"text\""))
        return;
    /* the fields may hold NaN, Infinity and -Infinity (a JSON Lines line's,
     * a Parquet or Arrow float's) */
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_REPLACE, .nonfinite = SL_JSON_NONFINITE_WORDS};
    sl_json_doc *jd = sl_json_parse(d->meta.data, d->meta.len, &jo, NULL);
    if (!jd)
        return;
    const sl_json *o = sl_json_root(jd);
    sl_buf_clear(tmp);
    sl_buf_putc(tmp, '{');
    int dropped = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (o->keys[i]->str_len == 4 && !memcmp(o->keys[i]->str, "text", 4)) {
            dropped = 1;
            continue;
        }
        if (tmp->len > 1)
            sl_buf_putc(tmp, ',');
        sl_json_put_str(tmp, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(tmp, ':');
        sl_json_put_value(tmp, o->kids[i]);
    }
    sl_buf_putc(tmp, '}');
    sl_json_free(jd);
    if (!dropped)
        return;
    sl_buf_clear(&d->meta);
    sl_buf_append(&d->meta, tmp->data, tmp->len);
    if (!*warned && !opts->quiet) {
        char at[32] = ""; /* a line of JSON Lines; no line number for a table's row */
        if (d->line)
            snprintf(at, sizeof at, ":%llu", (unsigned long long)d->line);
        sl_log(SL_LOG_WARNING, "read", "%s%s: input field \"text\" dropped: \"text\" is the --field value", d->source,
               at);
    }
    *warned = 1;
}

void sl_read_put_id(sl_buf *b, const sl_textdoc *d)
{
    if (d->id_is_string)
        sl_json_put_str(b, d->id.data ? d->id.data : "", d->id.len);
    else if (d->id.len)
        sl_buf_append(b, d->id.data, d->id.len);
    else
        sl_buf_puts(b, "null");
}

void sl_read_put_doc(sl_buf *b, const sl_textdoc *d)
{
    sl_buf_puts(b, "{\"id\":");
    sl_read_put_id(b, d);
    sl_buf_puts(b, ",\"text\":");
    sl_json_put_str(b, d->text.data ? d->text.data : "", d->text.len);
    if (d->meta.len > 2) { /* "{...}" with fields: splice them in */
        sl_buf_putc(b, ',');
        sl_buf_append(b, d->meta.data + 1, d->meta.len - 2);
    }
    sl_buf_puts(b, "}\n");
}

/* The loop runs on stream/batch.h, as the tokenizing stages do: a slot is
 * one document and its output line; one thread reads the next documents
 * (parsing JSON Lines where they lie) and writes the lines before them in
 * order while the others format the batch between (escaping the text is a
 * fifth of the work). A batch holds a quarter of the memory budget in
 * documents, capped per thread as the reader's (sl_docs_batch_cap); the
 * three batches in flight share it. */
#define MAX_BATCH_DOCS 4096
/* A batch of less text is formatted by the thread that writes it. */
#define PARALLEL_MIN_BYTES ((uint64_t)64 << 10)

typedef struct {
    sl_textdoc doc;
    sl_buf line;
    size_t held; /* bytes of buffers this slot kept after its last write */
} read_item;

typedef struct {
    sl_docreader *r;
    const sl_docreader_opts *o;
    sl_output *out;
    sl_progress *pg;
    sl_buf tmp;
    int rename, warned;
    int failed; /* the reader's error, given after the documents before it are written */
    sl_err err;
    uint64_t bytes_seen; /* the reader's input bytes counted in the progress */
    sl_slot_keep keep;   /* what the idle slots keep */
} read_ctx;

static int fill_doc(void *ctx, void *slot, uint64_t *cost, sl_err *err)
{
    (void)err;
    read_ctx *c = ctx;
    read_item *it = slot;
    int got = sl_docreader_next(c->r, &it->doc, &c->err);
    if (got < 0) { /* the batcher writes what came before; the error is returned then */
        c->failed = 1;
        return 0;
    }
    if (got == 0)
        return 0;
    if (c->rename)
        drop_text_field(c->o, &it->doc, &c->tmp, &c->warned);
    /* the line's room is made here, on the thread that frees it too: a
     * buffer a team thread grows and this one frees goes back to the other
     * thread's malloc arena, which then shrinks and grows again (faults,
     * and the two threads queue on its lock) */
    const sl_textdoc *d = &it->doc;
    sl_buf_clear(&it->line);
    sl_buf_reserve(&it->line, d->id.len + d->text.len + d->text.len / 16 + d->meta.len + 32);
    *cost = it->doc.text.len;
    return 1;
}

static void format_doc(void *ctx, int thread, void *slot)
{
    (void)ctx;
    (void)thread;
    read_item *it = slot;
    sl_read_put_doc(&it->line, &it->doc); /* (room made by fill_doc) */
}

/* Memory stays bounded by the batch (sl_slot_keep_settle): the idle slots
 * keep at most four batches' worth. A slot holds a document and its line,
 * in buffers as large as the largest document it held since it last gave
 * them back, so a thousand slots hold two to four times their text: kept
 * to two batches, 13k of the first 20k documents on two threads gave their
 * buffers back and grew them again (at four, 5.5k; the run 0.94-0.95 of
 * the time, docs/performance.md, twenty-first round). */
static size_t item_held(const read_item *it)
{
    return it->doc.text.cap + it->doc.id.cap + it->doc.meta.cap + it->line.cap;
}

static int write_doc(void *ctx, void *slot, sl_err *err)
{
    read_ctx *c = ctx;
    read_item *it = slot;
    if (sl_output_write(c->out, it->line.data, it->line.len, err) < 0)
        return -1;
    sl_docreader_progress(c->r, c->pg, &c->bytes_seen);
    if (sl_slot_keep_settle(&c->keep, &it->held, item_held(it), it->doc.text.len)) {
        sl_textdoc_free(&it->doc);
        sl_buf_free(&it->line);
    }
    return 0;
}

static void free_doc(void *ctx, void *slot)
{
    (void)ctx;
    read_item *it = slot;
    sl_textdoc_free(&it->doc);
    sl_buf_free(&it->line);
}

int sl_read_run(sl_docreader *r, const sl_docreader_opts *o, sl_output *out, int progress, sl_err *err)
{
    sl_progress *pg = sl_progress_start("read", "docs", progress);
    sl_progress_track(pg, sl_docreader_position, r); /* percent and ETA when the inputs are files */
    int threads = omp_get_max_threads();
    size_t batch_bytes = sl_docs_batch_cap(sl_mem_budget_split(o->mem_budget).read_batch, threads);
    read_ctx c = {.r = r,
                  .o = o,
                  .out = out,
                  .pg = pg,
                  .rename = strcmp(o->field ? o->field : "text", "text") != 0,
                  .keep = {.keep = 4 * batch_bytes, .big = (size_t)64 << 10}};
    static const sl_batch_ops ops = {sizeof(read_item), format_doc, write_doc, free_doc};
    sl_batch_opts bo = {.max_items = MAX_BATCH_DOCS,
                        .max_cost = batch_bytes,
                        .parallel_min_cost = PARALLEL_MIN_BYTES,
                        .threads = threads};
    sl_batcher *b = sl_batcher_new(&ops, &c, &bo);
    int rc = sl_batcher_run(b, fill_doc, err);
    sl_batcher_free(b);
    sl_progress_done(pg);
    sl_buf_free(&c.tmp);
    if (rc == 0 && c.failed) {
        *err = c.err;
        rc = -1;
    }
    return rc < 0 ? -1 : 0;
}
