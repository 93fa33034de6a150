/* `sluice cat DIR` as a library call (see cat.h). */
#include "shard/cat.h"

#include <stdint.h>
#include <stdlib.h>

#include "shard/shard.h"
#include "shard/view.h"
#include "base/buf.h"
#include "stream/io.h"
#include "base/json.h"

typedef struct {
    sl_output *out;
    sl_buf b;
    long stage;
    const char *split;
    const sl_shard *s;
} cat_ctx;

static int put_piece(void *vc, uint64_t view_row, const sl_piece *p, const uint32_t *tok, sl_err *err)
{
    cat_ctx *c = vc;
    sl_buf *b = &c->b;
    sl_buf_clear(b);
    sl_buf_puts(b, "{\"id\":");
    sl_json_put_str(b, p->id, p->id_len);
    sl_buf_puts(b, ",\"ids\":[");
    for (uint32_t i = 0; i < p->length; i++)
        sl_buf_printf(b, i ? ",%u" : "%u", tok[i]);
    sl_buf_puts(b, "],\"stage\":");
    if (c->stage >= 0)
        sl_buf_printf(b, "%ld", c->stage);
    else
        sl_buf_puts(b, "null");
    sl_buf_printf(b, ",\"row\":%llu,\"offset\":%u,\"doc\":%llu,\"doc_offset\":%llu,\"split\":\"%s\"",
                  (unsigned long long)view_row, p->offset, (unsigned long long)p->doc,
                  (unsigned long long)p->doc_offset, c->split);
    /* the document's metadata, as in documents.jsonl */
    size_t i = sl_shard_doc_find(c->s, p->doc);
    if (i != SIZE_MAX && sl_shard_doc(c->s, i, NULL)->has_meta) {
        sl_buf_puts(b, ",\"meta\":");
        if (sl_shard_doc_meta(c->s, i, b, err))
            return -1;
    }
    sl_buf_puts(b, "}\n");
    return sl_output_write(c->out, b->data, b->len, err);
}

int sl_cat_shard_run(const char *dir, long stage, const char *output, sl_err *err)
{
    sl_shard *s = sl_shard_open(dir, 1, err);
    if (!s)
        return -1;
    const sl_warmup *wu = sl_shard_get_warmup(s);
    size_t n_stages = wu->n;
    if (stage >= (long)n_stages) {
        sl_shard_close(s);
        sl_err_set(err, SL_E_OPTION, "stage", "`stage` %ld: the shard has %zu stage(s)", stage, n_stages);
        return SL_SHARD_CAT_NO_STAGE;
    }
    if (stage < 0)
        stage = (long)n_stages - 1;
    uint32_t L = sl_shard_get_info(s)->seq_len;
    cat_ctx c = {.out = sl_output_open(output ? output : "-", err), .stage = stage, .s = s};
    int rc = c.out ? 0 : -1;
    for (int k = 0; k < SL_SPLIT_N && !rc; k++) {
        if (!sl_shard_get_split(s, k)->present)
            continue;
        sl_shard_iter *it = sl_shard_iter_open(s, k, err);
        if (!it) {
            rc = -1;
            break;
        }
        /* the val split has no stages: it is read at the stored length */
        uint32_t l = k == SL_SPLIT_TRAIN ? wu->stages[stage].seq_len : L;
        c.stage = k == SL_SPLIT_TRAIN ? stage : -1;
        c.split = sl_shard_split_names[k];
        sl_row row;
        int n;
        while ((n = sl_shard_iter_next(it, &row, err)) == 1)
            if (sl_view_row(&row, L, l, put_piece, &c, err)) {
                n = -1;
                break;
            }
        if (n < 0)
            rc = -1;
        sl_shard_iter_close(it);
    }
    sl_buf_free(&c.b);
    sl_shard_close(s);
    if (rc) {
        sl_output_abort(c.out);
        return -1;
    }
    return sl_output_commit(c.out, err) ? -1 : 0;
}
