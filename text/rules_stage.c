/* See text/rules_stage.h. A batch slot is one document: the reader's
 * fields, the verdict, and the lines to write; slots are filled by the
 * batcher's reading thread, run by the team, written in order. */
#include "text/rules_stage.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/batch.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/read.h"

#define MAX_BATCH_DOCS 4096
#define PARALLEL_MIN_BYTES ((uint64_t)16 << 10)
#define BIG_SLOT ((size_t)1 << 20)

typedef struct {
    sl_textdoc doc;
    sl_buf line, rej, sig, tmp;
    int rule;
    char reason[48];
    int rewritten;
} item;

typedef struct {
    const sl_rules *r;
    const sl_rules_stage_opts *o;
    sl_rules_work **work; /* per thread, made at first use */
    sl_docreader *rd;
    sl_output *out, *rej;
    sl_rules_stats *st;
    sl_progress *pg;
    char **names; /* the signal names (annotate), and "text" when the field is another */
    size_t n_names;
} stage;

static void add_name(void *ctx, const char *name)
{
    stage *s = ctx;
    s->names = sl_xrealloc(s->names, (s->n_names + 1) * sizeof *s->names);
    s->names[s->n_names++] = sl_xstrdup(name);
}

/* meta without the fields the output sets (our signals; "text" when the
 * text came from another field), spliced: ",..." or "" */
static void put_meta(const stage *s, sl_buf *b, const sl_buf *meta, sl_buf *tmp)
{
    if (meta->len <= 2)
        return;
    int clash = 0;
    for (size_t i = 0; i < s->n_names && !clash; i++) {
        char q[64];
        snprintf(q, sizeof q, "\"%s\"", s->names[i]);
        clash = strstr(meta->data, q) != NULL;
    }
    sl_json_doc *jd = clash ? sl_json_parse(meta->data, meta->len, NULL, NULL) : NULL;
    if (!jd) {
        sl_buf_putc(b, ',');
        sl_buf_append(b, meta->data + 1, meta->len - 2);
        return;
    }
    const sl_json *o = sl_json_root(jd);
    sl_buf_clear(tmp);
    for (size_t i = 0; i < o->n; i++) {
        int drop = 0;
        for (size_t k = 0; k < s->n_names && !drop; k++)
            drop = o->keys[i]->str_len == strlen(s->names[k]) &&
                   !memcmp(o->keys[i]->str, s->names[k], o->keys[i]->str_len);
        if (drop)
            continue;
        sl_buf_putc(tmp, ',');
        sl_json_put_str(tmp, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(tmp, ':');
        sl_json_put_value(tmp, o->kids[i]);
    }
    sl_json_free(jd);
    sl_buf_append(b, tmp->data ? tmp->data : "", tmp->len);
}

static void run_item(void *ctx, int thread, void *slot)
{
    stage *s = ctx;
    item *it = slot;
    if (!s->work[thread])
        s->work[thread] = sl_rules_work_new(s->r);
    sl_rules_verdict v;
    sl_buf_clear(&it->sig);
    const char *text = it->doc.text.data ? it->doc.text.data : "";
    sl_rules_apply(s->r, s->work[thread], text, it->doc.text.len, s->o->annotate, &it->sig, &v);
    it->rule = v.rule;
    snprintf(it->reason, sizeof it->reason, "%s", v.reason);
    it->rewritten = v.rewritten;
    sl_buf_clear(&it->line);
    sl_buf_clear(&it->rej);
    if (v.rule >= 0 && !s->o->annotate) {
        if (s->rej) {
            sl_buf_puts(&it->rej, "{\"id\":");
            sl_read_put_id(&it->rej, &it->doc);
            sl_buf_puts(&it->rej, ",\"rule\":");
            sl_json_put_cstr(&it->rej, sl_rules_name(s->r, (size_t)v.rule));
            sl_buf_puts(&it->rej, ",\"reason\":");
            sl_json_put_cstr(&it->rej, v.reason);
            sl_buf_puts(&it->rej, "}\n");
        }
        return;
    }
    sl_buf_puts(&it->line, "{\"id\":");
    sl_read_put_id(&it->line, &it->doc);
    sl_buf_puts(&it->line, ",\"text\":");
    sl_json_put_str(&it->line, v.text, v.text_len);
    put_meta(s, &it->line, &it->doc.meta, &it->tmp);
    sl_buf_append(&it->line, it->sig.data ? it->sig.data : "", it->sig.len);
    sl_buf_puts(&it->line, "}\n");
}

static void count_reason(sl_rules_stats *st, int rule, const char *reason)
{
    st->rule_dropped[rule]++;
    sl_rules_reason *v = st->reasons[rule];
    for (size_t i = 0; i < st->n_reasons[rule]; i++)
        if (!strcmp(v[i].name, reason)) {
            v[i].n++;
            return;
        }
    st->reasons[rule] = v = sl_xrealloc(v, (st->n_reasons[rule] + 1) * sizeof *v);
    snprintf(v[st->n_reasons[rule]].name, sizeof v->name, "%s", reason);
    v[st->n_reasons[rule]++].n = 1;
}

static void shrink(item *it)
{
    size_t held = it->doc.text.cap + it->doc.meta.cap + it->line.cap + it->sig.cap + it->tmp.cap;
    if (held > BIG_SLOT) {
        sl_textdoc_free(&it->doc);
        sl_buf_free(&it->line);
        sl_buf_free(&it->sig);
        sl_buf_free(&it->tmp);
    }
}

static int write_item(void *ctx, void *slot, sl_err *err)
{
    stage *s = ctx;
    item *it = slot;
    sl_rules_stats *st = s->st;
    st->docs++;
    if (it->rule >= 0) {
        st->dropped++;
        count_reason(st, it->rule, it->reason);
    }
    if (it->rule < 0 || s->o->annotate) {
        st->kept += it->rule < 0;
        st->rewritten += it->rewritten;
        if (sl_output_write(s->out, it->line.data, it->line.len, err) < 0)
            return -1;
    }
    if (it->rej.len && sl_output_write(s->rej, it->rej.data, it->rej.len, err) < 0)
        return -1;
    sl_progress_add(s->pg, 1, it->doc.text.len);
    shrink(it);
    return 0;
}

static int fill_item(void *ctx, void *slot, uint64_t *cost, sl_err *err)
{
    stage *s = ctx;
    item *it = slot;
    int got = sl_docreader_next(s->rd, &it->doc, err);
    if (got <= 0)
        return got;
    *cost = it->doc.text.len + 64;
    return 1;
}

static void free_item(void *ctx, void *slot)
{
    (void)ctx;
    item *it = slot;
    sl_textdoc_free(&it->doc);
    sl_buf_free(&it->line);
    sl_buf_free(&it->rej);
    sl_buf_free(&it->sig);
    sl_buf_free(&it->tmp);
}

void sl_rules_stats_free(sl_rules_stats *s)
{
    for (size_t i = 0; i < s->n_rules; i++)
        free(s->reasons[i]);
    free(s->reasons);
    free(s->n_reasons);
    free(s->rule_dropped);
    memset(s, 0, sizeof *s);
}

int sl_rules_run(const sl_rules *r, sl_docreader *rd, const sl_rules_stage_opts *o, sl_output *out, sl_output *rejected,
                 sl_rules_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    st->n_rules = sl_rules_count(r);
    st->rule_dropped = sl_xcalloc(st->n_rules, sizeof *st->rule_dropped);
    st->reasons = sl_xcalloc(st->n_rules, sizeof *st->reasons);
    st->n_reasons = sl_xcalloc(st->n_rules, sizeof *st->n_reasons);
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    stage s = {.r = r, .o = o, .rd = rd, .out = out, .rej = rejected, .st = st};
    s.work = sl_xcalloc((size_t)threads, sizeof *s.work);
    if (o->annotate)
        sl_rules_signal_names(r, add_name, &s);
    if (o->field && strcmp(o->field, "text"))
        add_name(&s, "text");
    s.pg = sl_progress_start("filter", "docs", o->progress);
    sl_progress_track(s.pg, sl_docreader_position, rd);
    size_t batch_bytes = sl_docs_batch_cap((size_t)8 << 20, threads);
    static const sl_batch_ops ops = {sizeof(item), run_item, write_item, free_item};
    sl_batch_opts bo = {.max_items = MAX_BATCH_DOCS,
                        .max_cost = batch_bytes,
                        .parallel_min_cost = PARALLEL_MIN_BYTES,
                        .threads = threads};
    sl_batcher *b = sl_batcher_new(&ops, &s, &bo);
    int rc = sl_batcher_run(b, fill_item, err);
    sl_batcher_free(b);
    sl_progress_done(s.pg);
    for (int i = 0; i < threads; i++)
        sl_rules_work_free(s.work[i]);
    free(s.work);
    for (size_t i = 0; i < s.n_names; i++)
        free(s.names[i]);
    free(s.names);
    return rc;
}

void sl_rules_stats_json(const sl_rules *r, const sl_rules_stats *st, int annotate, sl_buf *b)
{
    sl_buf_printf(b, "{\"documents\":%llu,\"kept\":%llu,\"%s\":%llu,\"rewritten\":%llu,\"annotate\":%s,\"rules\":[",
                  (unsigned long long)st->docs, (unsigned long long)(annotate ? st->docs : st->kept),
                  annotate ? "would_drop" : "dropped", (unsigned long long)st->dropped,
                  (unsigned long long)st->rewritten, annotate ? "true" : "false");
    for (size_t i = 0; i < st->n_rules; i++) {
        sl_buf_printf(b, "%s{\"rule\":", i ? "," : "");
        sl_json_put_cstr(b, sl_rules_name(r, i));
        sl_buf_puts(b, ",\"params\":");
        sl_rules_params_json(r, i, b);
        sl_buf_printf(b, ",\"%s\":%llu,\"reasons\":{", annotate ? "would_drop" : "dropped",
                      (unsigned long long)st->rule_dropped[i]);
        for (size_t k = 0; k < st->n_reasons[i]; k++) {
            if (k)
                sl_buf_putc(b, ',');
            sl_json_put_cstr(b, st->reasons[i][k].name);
            sl_buf_printf(b, ":%llu", (unsigned long long)st->reasons[i][k].n);
        }
        sl_buf_puts(b, "}}");
    }
    sl_buf_puts(b, "]}\n");
}

void sl_rules_stats_text(const sl_rules *r, const sl_rules_stats *st, int annotate, sl_buf *b)
{
    sl_buf_printf(b, "%llu documents, %llu %s", (unsigned long long)st->docs,
                  (unsigned long long)(annotate ? st->dropped : st->kept),
                  annotate ? "would be dropped (annotated, none dropped)" : "kept");
    if (!annotate)
        sl_buf_printf(b, ", %llu dropped", (unsigned long long)st->dropped);
    for (size_t i = 0; i < st->n_rules; i++) {
        sl_buf_printf(b, "%s%s %llu", i ? "; " : " (", sl_rules_name(r, i), (unsigned long long)st->rule_dropped[i]);
        for (size_t k = 0; k < st->n_reasons[i]; k++)
            sl_buf_printf(b, "%s%s %llu", k ? ", " : ": ", st->reasons[i][k].name,
                          (unsigned long long)st->reasons[i][k].n);
    }
    sl_buf_puts(b, st->n_rules ? ")\n" : "\n");
}
