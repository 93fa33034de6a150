/* `sluice head` as a library call (see head.h). */
#include "stream/head.h"

#include <string.h>

#include "base/json.h"
#include "stream/tokstream.h"

/* 1 when the header's extra object has "packed" (docs/shards.md 2.1). */
static int is_packed(const sl_ts_header *h)
{
    if (!h->extra_json || !*h->extra_json)
        return 0;
    sl_json_doc *jd = sl_json_parse(h->extra_json, strlen(h->extra_json), NULL, NULL);
    sl_json *root = jd ? sl_json_root(jd) : NULL;
    int p = root && root->type == SL_JSON_OBJECT && sl_json_get(root, "packed");
    sl_json_free(jd);
    return p;
}

int sl_head_run(const sl_head_opts *o, const char *const *inputs, size_t n, sl_output *out, sl_head_stats *st,
                sl_err *err)
{
    memset(st, 0, sizeof *st);
    sl_ts_reader *r = sl_ts_reader_open_paths((char *const *)inputs, n, err);
    if (!r)
        return -1;
    const sl_ts_header *h = sl_ts_reader_header(r);
    if (o->tokens != UINT64_MAX && is_packed(h)) {
        sl_errf(err, "%s: a packed stream: its rows cannot be cut (take whole rows with `docs`)",
                sl_input_name(sl_ts_reader_input(r)));
        sl_ts_reader_close(r);
        return -1;
    }
    sl_ts_writer *w = sl_ts_writer_open(out, h, err);
    sl_doc d = {0};
    int rc = w ? 0 : -1;
    while (!rc && st->docs < o->docs && st->tokens < o->tokens) {
        int k = sl_ts_read_doc(r, &d, err);
        if (k <= 0) {
            rc = k;
            break;
        }
        if (d.n_tokens > o->tokens - st->tokens) {
            d.n_tokens = (size_t)(o->tokens - st->tokens);
            st->cut = 1;
        }
        rc = sl_ts_write_doc(w, &d, err);
        st->docs++;
        st->tokens += d.n_tokens;
    }
    if (!rc)
        rc = sl_ts_writer_finish(w, err);
    else
        sl_ts_writer_abort(w);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return rc ? -1 : 0;
}
