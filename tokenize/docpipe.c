/* See docpipe.h. */
#include "tokenize/docpipe.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BATCH_DOCS 4096

typedef struct {
    sl_textdoc doc;
    char *source; /* copy: the reader's name is valid only until the next call */
    sl_ids ids;
    int rc;
    sl_err err;
} item;

static void where(sl_err *err, const item *it)
{
    if (it->doc.line)
        sl_err_prefix(err, "%s:%llu", it->source, (unsigned long long)it->doc.line);
    else
        sl_err_prefix(err, "%s", it->source);
}

int sl_docpipe_run(sl_docreader *r, sl_ts_writer *w, sl_encode_fn fn, void *ctx, const sl_docpipe_opts *o,
                   sl_progress *pg, sl_err *err)
{
    size_t batch_bytes = o->batch_bytes ? o->batch_bytes : (size_t)8 << 20;
    item *items = sl_xcalloc(MAX_BATCH_DOCS, sizeof *items);
    sl_doc d = {0};
    int rc = 0, more = 1;
    while (more && rc == 0) {
        size_t n = 0, bytes = 0;
        while (n < MAX_BATCH_DOCS && bytes < batch_bytes) {
            int got = sl_docreader_next(r, &items[n].doc, err);
            if (got < 0) {
                rc = -1;
                break;
            }
            if (got == 0) {
                more = 0;
                break;
            }
            free(items[n].source);
            items[n].source = sl_xstrdup(items[n].doc.source ? items[n].doc.source : "-");
            bytes += items[n].doc.text.len;
            n++;
        }
        if (rc)
            break;
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t i = 0; i < n; i++) {
            item *it = &items[i];
            it->ids.n = 0;
            it->rc = fn(ctx, omp_get_thread_num(), it->doc.text.data ? it->doc.text.data : "", it->doc.text.len,
                        &it->ids, &it->err);
        }
        for (size_t i = 0; i < n; i++) {
            item *it = &items[i];
            if (it->rc) {
                *err = it->err;
                where(err, it);
                rc = -1;
                break;
            }
            sl_doc_clear(&d);
            sl_doc_set_id(&d, it->doc.id.data ? it->doc.id.data : "", it->doc.id.len);
            if (it->doc.meta.len > 2)
                sl_doc_set_meta(&d, it->doc.meta.data, it->doc.meta.len);
            else
                sl_doc_set_meta(&d, "", 0);
            d.src_bytes = it->doc.text.len;
            sl_doc_reserve(&d, it->ids.n + 2);
            if (o->prepend >= 0)
                d.tokens[d.n_tokens++] = (uint32_t)o->prepend;
            if (it->ids.n)
                memcpy(d.tokens + d.n_tokens, it->ids.v, it->ids.n * sizeof *it->ids.v);
            d.n_tokens += it->ids.n;
            if (o->append >= 0)
                d.tokens[d.n_tokens++] = (uint32_t)o->append;
            if (sl_ts_write_doc(w, &d, err)) {
                where(err, it);
                rc = -1;
                break;
            }
            sl_progress_add(pg, 1, it->doc.text.len);
        }
        /* Slots keep their buffers between batches, except very large ones:
         * memory stays bounded by the batch, not by the largest documents
         * ever seen in each of the 4096 slots. */
        for (size_t i = 0; i < n; i++)
            if (items[i].doc.text.cap > ((size_t)4 << 20) || items[i].ids.cap > ((size_t)1 << 20)) {
                sl_textdoc_free(&items[i].doc);
                sl_ids_free(&items[i].ids);
            }
    }
    for (size_t i = 0; i < MAX_BATCH_DOCS; i++) {
        sl_textdoc_free(&items[i].doc);
        sl_ids_free(&items[i].ids);
        free(items[i].source);
    }
    free(items);
    sl_doc_free(&d);
    return rc;
}
