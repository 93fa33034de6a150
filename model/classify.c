/* The `classify` stage (model/classify.h). A batch slot is one document:
 * the reader's fields, the prepared text, the predictions and the formatted
 * output line; `encode` (in parallel) prepares, predicts and formats,
 * `write` (in order) writes the line. */
#include "model/classify.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "stream/batch.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/read.h"
#include "base/utf8.h"

#define MAX_BATCH_DOCS 4096
/* A batch of less text is classified by the thread that writes it. */
#define PARALLEL_MIN_BYTES ((uint64_t)16 << 10)
#define LABEL_PREFIX "__label__"

/* Python's str.isspace() (Unicode White_Space as Python 3 defines it:
 * bidirectional class WS, B or S, or category Zs). */
static int py_isspace(uint32_t c)
{
    if (c < 0x80)
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

void sl_classify_prepare(int prepare, const char *text, size_t len, sl_buf *out)
{
    sl_buf_clear(out);
    size_t s = 0, e = len;
    if (prepare == SL_CLASSIFY_PREP_CLASSIFIER) {
        /* str.strip(): leading and trailing white space (the text is valid
         * UTF-8; a byte that does not decode is not space) */
        while (s < e) {
            uint32_t cp = 0;
            size_t n = sl_utf8_decode((const uint8_t *)text + s, e - s, &cp, NULL);
            if (!n || !py_isspace(cp))
                break;
            s += n;
        }
        while (e > s) {
            size_t b = e - 1;
            while (b > s && ((unsigned char)text[b] & 0xC0) == 0x80 && e - b < 4)
                b--;
            uint32_t cp = 0;
            size_t n = sl_utf8_decode((const uint8_t *)text + b, e - b, &cp, NULL);
            if (n != e - b || !py_isspace(cp))
                break;
            e = b;
        }
    }
    sl_buf_reserve(out, e - s);
    for (size_t i = s; i < e;) {
        const char *nl = memchr(text + i, '\n', e - i);
        size_t run = nl ? (size_t)(nl - (text + i)) : e - i;
        sl_buf_append(out, text + i, run);
        i += run;
        if (nl) {
            if (prepare == SL_CLASSIFY_PREP_LANGID)
                sl_buf_putc(out, ' ');
            i++;
        }
    }
    if (!out->data)
        sl_buf_reserve(out, 1);
}

typedef struct {
    sl_textdoc doc;
    char *source; /* copy: the reader's name is valid only until the next call */
    sl_buf text;  /* prepared */
    sl_buf line;  /* the output line */
    sl_buf tmp;
    size_t held;
    int rc;
    sl_err err;
} item;

typedef struct {
    const sl_ft_model *m;
    const sl_classify_opts *o;
    sl_ft_state **states; /* per thread, made at first use */
    sl_ft_pred **preds;   /* per thread */
    size_t npred;
    sl_docreader *r;
    sl_output *out;
    sl_progress *pg;
    char *names[4];    /* P, P_score, P_labels, P_scores */
    sl_slot_keep keep; /* what the idle slots keep */
} pipe;

static void put_label(sl_buf *b, const sl_ft_model *m, int32_t label)
{
    size_t n;
    const char *s = sl_ft_label(m, label, &n);
    size_t pl = sizeof LABEL_PREFIX - 1;
    if (n >= pl && !memcmp(s, LABEL_PREFIX, pl))
        s += pl, n -= pl;
    sl_json_put_str(b, s, n);
}

/* Copies the metadata object's fields except the ones this stage writes. */
static void put_meta(const pipe *p, item *it)
{
    const sl_buf *meta = &it->doc.meta;
    if (meta->len <= 2)
        return;
    int clash = 0;
    for (int i = 0; i < 4 && !clash; i++) {
        sl_buf_clear(&it->tmp);
        sl_json_put_cstr(&it->tmp, p->names[i]);
        clash = strstr(meta->data, it->tmp.data) != NULL;
    }
    sl_json_doc *jd = clash ? sl_json_parse(meta->data, meta->len, NULL, NULL) : NULL;
    if (!jd) {
        sl_buf_putc(&it->line, ',');
        sl_buf_append(&it->line, meta->data + 1, meta->len - 2);
        return;
    }
    const sl_json *o = sl_json_root(jd);
    for (size_t i = 0; i < o->n; i++) {
        int ours = 0;
        for (int j = 0; j < 4 && !ours; j++)
            ours = o->keys[i]->str_len == strlen(p->names[j]) &&
                   !memcmp(o->keys[i]->str, p->names[j], o->keys[i]->str_len);
        if (ours)
            continue;
        sl_buf_putc(&it->line, ',');
        sl_json_put_str(&it->line, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(&it->line, ':');
        sl_json_put_value(&it->line, o->kids[i]);
    }
    sl_json_free(jd);
}

static void encode_item(void *ctx, int thread, void *slot)
{
    const pipe *p = ctx;
    item *it = slot;
    if (!p->states[thread]) { /* a thread number is used by one thread at a time */
        p->states[thread] = sl_ft_state_new(p->m);
        p->preds[thread] = sl_xmalloc(p->npred * sizeof *p->preds[thread]);
    }
    sl_ft_pred *pr = p->preds[thread];
    sl_classify_prepare(p->o->prepare, it->doc.text.data ? it->doc.text.data : "", it->doc.text.len, &it->text);
    int n = sl_ft_predict(p->m, p->states[thread], it->text.data, it->text.len, p->o->k, p->o->threshold, pr, &it->err);
    it->rc = n < 0;
    if (n < 0)
        return;
    sl_buf *b = &it->line;
    const sl_textdoc *d = &it->doc;
    sl_buf_clear(b);
    sl_buf_reserve(b, d->id.len + d->text.len + d->meta.len + 64 + 48 * (size_t)n);
    sl_buf_puts(b, "{\"id\":");
    sl_read_put_id(b, d);
    sl_buf_puts(b, ",\"text\":");
    sl_json_put_str(b, d->text.data ? d->text.data : "", d->text.len);
    put_meta(p, it);
    sl_buf_putc(b, ',');
    sl_json_put_cstr(b, p->names[0]);
    sl_buf_putc(b, ':');
    if (n)
        put_label(b, p->m, pr[0].label);
    else
        sl_buf_puts(b, "null");
    sl_buf_putc(b, ',');
    sl_json_put_cstr(b, p->names[1]);
    sl_buf_putc(b, ':');
    if (n)
        sl_json_put_num(b, (double)pr[0].prob);
    else
        sl_buf_puts(b, "null");
    if (p->o->k != 1) {
        sl_buf_putc(b, ',');
        sl_json_put_cstr(b, p->names[2]);
        sl_buf_puts(b, ":[");
        for (int i = 0; i < n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            put_label(b, p->m, pr[i].label);
        }
        sl_buf_puts(b, "],");
        sl_json_put_cstr(b, p->names[3]);
        sl_buf_puts(b, ":[");
        for (int i = 0; i < n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_num(b, (double)pr[i].prob);
        }
        sl_buf_putc(b, ']');
    }
    sl_buf_puts(b, "}\n");
}

static size_t held(const item *it)
{
    return it->doc.text.cap + it->doc.id.cap + it->doc.meta.cap + it->text.cap + it->line.cap + it->tmp.cap;
}

/* Memory stays bounded by the batch (sl_slot_keep_settle; a slot holds the
 * text three times: as read, normalized, and in its line). */
static void shrink(pipe *p, item *it)
{
    if (sl_slot_keep_settle(&p->keep, &it->held, held(it), it->doc.text.len)) {
        sl_textdoc_free(&it->doc);
        sl_buf_free(&it->text);
        sl_buf_free(&it->line);
        sl_buf_free(&it->tmp);
    }
}

static int write_item(void *ctx, void *slot, sl_err *err)
{
    pipe *p = ctx;
    item *it = slot;
    if (it->rc) {
        *err = it->err;
        if (it->doc.line)
            sl_err_prefix(err, "%s:%llu", it->source, (unsigned long long)it->doc.line);
        else
            sl_err_prefix(err, "%s", it->source);
        return -1;
    }
    if (sl_output_write(p->out, it->line.data, it->line.len, err) < 0)
        return -1;
    sl_progress_add(p->pg, 1, it->doc.text.len);
    shrink(p, it);
    return 0;
}

static int fill_item(void *ctx, void *slot, uint64_t *cost, sl_err *err)
{
    pipe *p = ctx;
    item *it = slot;
    int got = sl_docreader_next(p->r, &it->doc, err);
    if (got <= 0)
        return got;
    free(it->source);
    it->source = sl_xstrdup(it->doc.source ? it->doc.source : "-");
    *cost = it->doc.text.len + 64;
    return 1;
}

static void free_item(void *ctx, void *slot)
{
    (void)ctx;
    item *it = slot;
    sl_textdoc_free(&it->doc);
    sl_buf_free(&it->text);
    sl_buf_free(&it->line);
    sl_buf_free(&it->tmp);
    free(it->source);
}

int sl_classify_run(const sl_ft_model *m, sl_docreader *r, const sl_classify_opts *o, sl_output *out, uint64_t *docs,
                    sl_err *err)
{
    size_t batch_bytes = o->batch_bytes ? o->batch_bytes : sl_mem_budget_split(0).work_batch;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    batch_bytes = sl_docs_batch_cap(batch_bytes, threads);
    sl_ft_info info;
    sl_ft_get_info(m, &info);
    pipe p = {
        .m = m, .o = o, .r = r, .out = out, .keep = {.keep = 4 * batch_bytes, .big = (size_t)64 << 10, .copies = 3}};
    p.npred = (size_t)(o->k < 0 || o->k > info.nlabels ? info.nlabels : o->k) + 1;
    p.states = sl_xcalloc((size_t)threads, sizeof *p.states);
    p.preds = sl_xcalloc((size_t)threads, sizeof *p.preds);
    const char *pre = o->field_prefix ? o->field_prefix : "lang";
    static const char *const suffix[4] = {"", "_score", "_labels", "_scores"};
    for (int i = 0; i < 4; i++) {
        p.names[i] = sl_xmalloc(strlen(pre) + strlen(suffix[i]) + 1);
        strcpy(p.names[i], pre);
        strcat(p.names[i], suffix[i]);
    }
    p.pg = sl_progress_start("classify", "docs", o->progress);
    sl_progress_track(p.pg, sl_docreader_position, r);
    static const sl_batch_ops ops = {sizeof(item), encode_item, write_item, free_item};
    sl_batch_opts bo = {.max_items = MAX_BATCH_DOCS,
                        .max_cost = batch_bytes,
                        .parallel_min_cost = PARALLEL_MIN_BYTES,
                        .threads = threads};
    sl_batcher *b = sl_batcher_new(&ops, &p, &bo);
    int rc = sl_batcher_run(b, fill_item, err);
    sl_batcher_free(b);
    sl_progress_done(p.pg);
    for (int i = 0; i < threads; i++) {
        sl_ft_state_free(p.states[i]);
        free(p.preds[i]);
    }
    free(p.states);
    free(p.preds);
    for (int i = 0; i < 4; i++)
        free(p.names[i]);
    if (docs)
        *docs = p.keep.docs;
    return rc;
}
