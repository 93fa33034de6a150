/* The `read` stage (stream/read.h). */
#include "stream/read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/log.h"
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
    if (!*warned && !opts->quiet)
        sl_log(SL_LOG_WARNING, "read", "%s:%llu: input field \"text\" dropped: \"text\" is the --field value",
               d->source, (unsigned long long)d->line);
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

int sl_read_run(sl_docreader *r, const sl_docreader_opts *o, sl_output *out, int progress, sl_err *err)
{
    sl_progress *pg = sl_progress_start("read", "docs", progress);
    sl_progress_track(pg, sl_docreader_position, r); /* percent and ETA when the inputs are files */
    /* Documents are formatted in batches by OpenMP threads (escaping the
     * text is a fifth of the work) and written in order. A batch holds a
     * quarter of the memory budget in documents (the reader's batch holds
     * another quarter, the formatted lines about one more), capped per
     * thread as the reader's (sl_docs_batch_cap). */
    enum { BATCH = 1024 };
    size_t batch_limit = sl_docs_batch_cap(sl_mem_budget_split(o->mem_budget).read_batch, 0);
    sl_textdoc *docs = sl_xcalloc(BATCH, sizeof *docs);
    sl_buf *lines = sl_xcalloc(BATCH, sizeof *lines);
    sl_buf tmp = {0};
    uint64_t bytes_seen = 0;
    int rc = 1, warned = 0, rename = strcmp(o->field ? o->field : "text", "text") != 0;
    while (rc == 1) {
        int n = 0;
        size_t batch_bytes = 0;
        while (n < BATCH && batch_bytes < batch_limit && (rc = sl_docreader_next(r, &docs[n], err)) == 1) {
            if (rename)
                drop_text_field(o, &docs[n], &tmp, &warned);
            batch_bytes += docs[n].text.len;
            n++;
        }
#pragma omp parallel for schedule(dynamic, 4) if (n > 16)
        for (int i = 0; i < n; i++) {
            const sl_textdoc *d = &docs[i];
            sl_buf_fit(&lines[i], d->id.len + d->text.len + d->meta.len + 16);
            sl_read_put_doc(&lines[i], d);
        }
        /* the documents before a read error are written too: on standard
         * output they are what a stream consumer has seen */
        for (int i = 0; i < n; i++)
            if (sl_output_write(out, lines[i].data, lines[i].len, err) < 0) {
                rc = -1;
                break;
            }
        /* Buffers that grew for a large document are released: the slots
         * keep about the batch, not the largest document each ever held. */
        for (int i = 0; i < BATCH; i++) {
            sl_buf_fit(&docs[i].id, 0);
            sl_buf_fit(&docs[i].text, 0);
            sl_buf_fit(&docs[i].meta, 0);
            if (i >= n)
                sl_buf_fit(&lines[i], 0);
        }
        const sl_docreader_stats *st = sl_docreader_stats_get(r);
        sl_progress_add(pg, (uint64_t)n, st->bytes - bytes_seen);
        bytes_seen = st->bytes;
    }
    sl_progress_done(pg);
    for (int i = 0; i < BATCH; i++) {
        sl_textdoc_free(&docs[i]);
        sl_buf_free(&lines[i]);
    }
    free(docs);
    free(lines);
    sl_buf_free(&tmp);
    return rc < 0 ? -1 : 0;
}
