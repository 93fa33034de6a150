/* The score stage (see score_stage.h): batching documents from token
 * streams or shard directories, the tokenizer check, and the output. */
#include "model/score_stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/score.h"
#include "shard/shard.h"
#include "base/json.h"
#include "stream/progress.h"
#include "tokenize/sha256.h"

void sl_score_opts_default(sl_score_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "auto";
    o->chunk = 2048;
    o->batch_tokens = 16384;
    o->prepend = -1;
    o->progress = -1;
}

int sl_score_check(const sl_score_opts *o, sl_err *err)
{
    if (!o->model_dir)
        return sl_errf(err, "model_dir is required");
    if (o->per_token && o->to_stream)
        return sl_errf(err, "per_token writes JSON Lines; it cannot be combined with to_stream");
    if (o->chunk < 1 || o->batch_tokens < 1 || o->max_tokens < 0 || o->long_context < 0)
        return sl_errf(err, "chunk and batch_tokens must be >= 1, max_tokens and long_context >= 0");
    if (o->max_position < 0 || o->max_position == 1)
        return sl_err_set(err, SL_E_OPTION, "max_position",
                          "`max_position` %lld: must be >= 2 (positions start at 1) or 0 (no limit)",
                          (long long)o->max_position);
    if (!o->prepend_eos && o->prepend > (int64_t)UINT32_MAX)
        return sl_errf(err, "prepend = %lld is not a token id", (long long)o->prepend);
    return 0;
}

int sl_score_is_shard_dir(const char *path)
{
    return sl_shard_has_manifest(path);
}

int sl_score_check_tokenizer(const sl_ts_header *h, const sl_model_info *c, const char *model_dir, const char *src,
                             sl_err *err)
{
    uint64_t padded = ((uint64_t)h->vocab_size + (uint64_t)c->pad_multiple - 1) / (uint64_t)c->pad_multiple *
                      (uint64_t)c->pad_multiple;
    if ((uint64_t)h->vocab_size > (uint64_t)c->vocab || (padded != (uint64_t)c->vocab && h->vocab_size != c->vocab))
        return sl_err_set(err, SL_E_MISMATCH, "force",
                          "%s: the stream's vocabulary (%u ids, tokenizer '%s') does not match the model's (%lld, "
                          "padded %lld): use the model's tokenizer, or `force`",
                          src, h->vocab_size, h->tokenizer, (long long)c->vocab_size, (long long)c->vocab);
    if (!h->fingerprint[0] || !model_dir)
        return 0;
    size_t n = strlen(model_dir) + 32;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/tokenizer.json", model_dir);
    char *text = NULL;
    size_t len;
    sl_err e2;
    int rc = 0;
    if (sl_read_file(p, &text, &len, &e2) == 0) {
        char fp[72];
        sl_sha256_fingerprint(text, len, fp);
        if (strcmp(fp, h->fingerprint))
            rc = sl_err_set(err, SL_E_MISMATCH, "force",
                            "%s: the stream's tokenizer fingerprint %s differs from %s (%s): use the model's "
                            "tokenizer, or `force`",
                            src, h->fingerprint, p, fp);
        free(text);
    }
    free(p);
    return rc;
}

/* The context token put before each document (-1: none), with prepend_eos
 * resolved to the input's eos id. */
static int prepend_id(const sl_score_opts *o, int64_t eos, const char *src, int64_t *id, sl_err *err)
{
    *id = o->prepend;
    if (!o->prepend_eos)
        return 0;
    if (eos < 0)
        return sl_err_set(err, SL_E_OPTION, "prepend_eos",
                          "%s: `prepend_eos`, but the stream has no eos id (give the id: `prepend` ID)", src);
    *id = eos;
    return 0;
}

/* What one scoring pass needs besides the model. */
typedef struct stage {
    const sl_score_opts *o;
    int64_t prepend; /* resolved */
    sl_output *out;
    sl_ts_writer *w; /* to_stream */
    const char *src; /* for messages */
    sl_progress *pg;
} stage;

/* Appends the score fields (without braces, each preceded by a comma). */
static void put_scores(sl_buf *b, const sl_score_item *it, const sl_doc *d, const sl_score_opts *o,
                       const sl_score_item *lc, int meta)
{
    sl_buf_printf(b, ",\"%s\":%lld,\"nll\":", meta ? "scored_tokens" : "tokens", (long long)it->n_pred);
    sl_json_put_num(b, it->nll);
    sl_buf_puts(b, ",\"ppl\":");
    sl_json_put_num(b, it->n_pred ? exp(it->nll / (double)it->n_pred) : NAN);
    if (d->src_bytes) {
        sl_buf_puts(b, ",\"bpb\":");
        sl_json_put_num(b, it->n_pred ? it->nll / M_LN2 / (double)d->src_bytes : NAN);
    }
    if (lc) {
        sl_buf_puts(b, ",\"long_context\":");
        sl_json_put_num(b, it->n_pred ? (lc->nll - it->nll) / (double)it->n_pred : NAN);
        sl_buf_puts(b, ",\"nll_reset\":");
        sl_json_put_num(b, lc->nll);
    }
    if (o->per_token && !meta) {
        sl_buf_puts(b, ",\"logprobs\":[");
        for (int64_t t = 0; t < it->n_pred; t++)
            sl_buf_printf(b, "%s%.9g", t ? "," : "", (double)it->logp[t]);
        sl_buf_putc(b, ']');
    }
}

/* A score as `filter` reads it back: JSON writes a non-finite number as
 * null (unscored). */
static double as_written(double v)
{
    return isfinite(v) ? v : NAN;
}

/* The document's values into the score summary (the fields put_scores
 * writes, plus filter's built-in fields). */
static void summary_add(sl_score_summary *s, const sl_score_item *it, const sl_doc *d, const sl_score_item *lc)
{
    double n = (double)it->n_pred;
    sl_score_summary_doc(s);
    sl_score_summary_add(s, "scored_tokens", n);
    sl_score_summary_add(s, "nll", as_written(it->nll));
    sl_score_summary_add(s, "ppl", as_written(it->n_pred ? exp(it->nll / n) : NAN));
    if (d->src_bytes)
        sl_score_summary_add(s, "bpb", as_written(it->n_pred ? it->nll / M_LN2 / (double)d->src_bytes : NAN));
    if (lc) {
        sl_score_summary_add(s, "long_context", as_written(it->n_pred ? (lc->nll - it->nll) / n : NAN));
        sl_score_summary_add(s, "nll_reset", as_written(lc->nll));
    }
    sl_score_summary_add(s, "tokens", (double)d->n_tokens);
    sl_score_summary_add(s, "src_bytes", d->src_bytes ? (double)d->src_bytes : NAN);
}

/* The record's metadata with the score fields set (replacing old ones). */
static int merged_meta(sl_buf *b, const sl_doc *d, const sl_buf *scores, const char *src, sl_err *err)
{
    static const char *const ours[] = {"scored_tokens", "nll", "ppl", "bpb", "long_context", "nll_reset", NULL};
    sl_buf_clear(b);
    sl_buf_putc(b, '{');
    int first = 1;
    if (d->meta && d->meta_len) {
        sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
        if (!jd)
            return sl_err_prefix(err, "%s: document '%s': metadata", src, d->id);
        const sl_json *o = sl_json_root(jd);
        if (o->type != SL_JSON_OBJECT) {
            sl_json_free(jd);
            return sl_errf(err, "%s: document '%s': metadata is not a JSON object", src, d->id);
        }
        for (size_t i = 0; i < o->n; i++) {
            int skip = 0;
            for (int k = 0; ours[k]; k++)
                skip |=
                    strlen(ours[k]) == o->keys[i]->str_len && !memcmp(ours[k], o->keys[i]->str, o->keys[i]->str_len);
            if (skip)
                continue;
            if (!first)
                sl_buf_putc(b, ',');
            first = 0;
            sl_json_put_str(b, o->keys[i]->str, o->keys[i]->str_len);
            sl_buf_putc(b, ':');
            sl_json_put_value(b, o->kids[i]);
        }
        sl_json_free(jd);
    }
    sl_buf_append(b, scores->data + (first ? 1 : 0), scores->len - (first ? 1 : 0)); /* drop the leading comma */
    sl_buf_putc(b, '}');
    return 0;
}

typedef struct batch {
    sl_doc *docs;
    const char **split; /* per document, or NULL (token streams) */
    size_t n, cap;
    int64_t tokens;
} batch;

/* Returns the next free document slot of the batch (cleared). */
static sl_doc *batch_slot(batch *bt)
{
    if (bt->n == bt->cap) {
        bt->cap = bt->cap ? 2 * bt->cap : 64;
        bt->docs = sl_xrealloc(bt->docs, bt->cap * sizeof *bt->docs);
        bt->split = sl_xrealloc(bt->split, bt->cap * sizeof *bt->split);
        memset(bt->docs + bt->n, 0, (bt->cap - bt->n) * sizeof *bt->docs);
    }
    sl_doc *d = &bt->docs[bt->n];
    sl_doc_clear(d);
    d->src_bytes = 0;
    sl_doc_set_meta(d, "", 0);
    bt->split[bt->n] = NULL;
    return d;
}

static void batch_free(batch *bt)
{
    for (size_t i = 0; i < bt->cap; i++)
        sl_doc_free(&bt->docs[i]);
    free(bt->docs);
    free(bt->split);
}

/* Scores the batch's documents and writes them; empties the batch. */
static int score_and_write(sl_model_run *run, batch *bt, const stage *s, sl_err *err)
{
    const sl_score_opts *o = s->o;
    size_t n = bt->n;
    sl_score_item *it = sl_xcalloc(n ? n : 1, sizeof *it), *lc = NULL;
    uint32_t **with_ctx = s->prepend >= 0 ? sl_xcalloc(n ? n : 1, sizeof *with_ctx) : NULL;
    for (size_t i = 0; i < n; i++) {
        sl_doc *d = &bt->docs[i];
        int64_t len = (int64_t)d->n_tokens;
        if (o->max_tokens > 0 && len > o->max_tokens)
            len = o->max_tokens;
        if (o->max_position > 0 && len > o->max_position - (with_ctx ? 1 : 0))
            len = o->max_position - (with_ctx ? 1 : 0);
        it[i] = (sl_score_item){.id = d->id, .tokens = d->tokens, .n = len};
        if (with_ctx) { /* the context token in front, so the first token is predicted too */
            with_ctx[i] = sl_xmalloc((size_t)(len + 1) * sizeof(uint32_t));
            with_ctx[i][0] = (uint32_t)s->prepend;
            if (len)
                memcpy(with_ctx[i] + 1, d->tokens, (size_t)len * sizeof(uint32_t));
            it[i].tokens = with_ctx[i];
            it[i].n = len + 1;
        }
        if (o->per_token || o->curve)
            it[i].logp = sl_xmalloc((size_t)(it[i].n ? it[i].n : 1) * sizeof(float));
    }
    int rc = sl_score_batch(run, it, n, 0, err);
    if (!rc && o->long_context) {
        lc = sl_xcalloc(n ? n : 1, sizeof *lc);
        for (size_t i = 0; i < n; i++)
            lc[i] = (sl_score_item){.id = it[i].id, .tokens = it[i].tokens, .n = it[i].n};
        rc = sl_score_batch(run, lc, n, o->long_context, err);
    }
    if (rc)
        sl_err_prefix(err, "%s", s->src);
    sl_buf b = {0}, sc = {0}, m = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        sl_doc *d = &bt->docs[i];
        if (o->curve) { /* before to_stream replaces the metadata */
            sl_curve_group *g;
            if ((rc = sl_curve_doc_group(o->curve, d->meta, d->meta ? d->meta_len : 0, &g, err))) {
                sl_err_prefix(err, "%s: document '%s'", s->src, d->id);
                break;
            }
            sl_curve_add_doc(o->curve, g, it[i].logp, it[i].n_pred, d->src_bytes);
        }
        if (o->summary)
            summary_add(o->summary, &it[i], d, lc ? &lc[i] : NULL);
        if (s->w) {
            sl_buf_clear(&sc);
            put_scores(&sc, &it[i], d, o, lc ? &lc[i] : NULL, 1);
            if ((rc = merged_meta(&m, d, &sc, s->src, err)))
                break;
            sl_doc_set_meta(d, m.data, m.len);
            rc = sl_ts_write_doc(s->w, d, err);
        } else {
            sl_buf_clear(&b);
            sl_buf_puts(&b, "{\"id\":");
            sl_json_put_str(&b, d->id, d->id_len);
            if (bt->split[i])
                sl_buf_printf(&b, ",\"split\":\"%s\"", bt->split[i]);
            put_scores(&b, &it[i], d, o, lc ? &lc[i] : NULL, 0);
            sl_buf_puts(&b, "}\n");
            rc = sl_output_write(s->out, b.data, b.len, err);
        }
        sl_progress_add(s->pg, 1, 0);
        sl_progress_add_tokens(s->pg, d->n_tokens);
    }
    for (size_t i = 0; i < n; i++) {
        free(it[i].logp);
        if (with_ctx)
            free(with_ctx[i]);
    }
    free(with_ctx);
    free(it);
    free(lc);
    sl_buf_free(&b);
    sl_buf_free(&sc);
    sl_buf_free(&m);
    bt->n = 0;
    bt->tokens = 0;
    return rc;
}

/* Token streams, read as one. */
static int score_streams(sl_model_run *run, const sl_score_opts *o, const char *const *inputs, size_t n, sl_output *out,
                         sl_err *err)
{
    const char *path = n ? inputs[0] : "-";
    sl_ts_reader *r = sl_ts_reader_open_paths((char *const *)inputs, n, err);
    if (!r)
        return -1;
    stage s = {.o = o, .out = out};
    /* a name that stays valid while the reader moves from input to input */
    s.src = sl_ts_reader_n_inputs(r) == 1 ? sl_input_name(sl_ts_reader_input(r)) : path;
    const sl_ts_header *h = sl_ts_reader_header(r);
    int rc = 0;
    if (!o->force)
        rc = sl_score_check_tokenizer(h, sl_model_get_info(sl_model_run_model(run)), o->model_dir, s.src, err);
    if (!rc)
        rc = prepend_id(o, h->eos, s.src, &s.prepend, err);
    if (!rc && o->to_stream && !(s.w = sl_ts_writer_open(out, h, err)))
        rc = -1;
    batch bt = {0};
    s.pg = sl_progress_start("score", "docs", o->progress);
    if (sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(s.pg, sl_ts_reader_input(r));
    while (!rc) {
        int k = sl_ts_read_doc(r, batch_slot(&bt), err);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (k == 1) {
            bt.tokens += (int64_t)bt.docs[bt.n].n_tokens;
            bt.n++;
        }
        if ((k == 0 && bt.n) || bt.tokens >= o->batch_tokens || bt.n >= 4096)
            rc = score_and_write(run, &bt, &s, err);
        if (k == 0)
            break;
    }
    sl_progress_done(s.pg);
    if (!rc && s.w) {
        rc = sl_ts_writer_finish(s.w, err);
        s.w = NULL;
    }
    if (s.w)
        sl_ts_writer_abort(s.w);
    batch_free(&bt);
    sl_ts_reader_close(r);
    return rc;
}

/* Scores the first m documents of the batch and keeps the rest (documents
 * still being reassembled) at its front. cur[] indices are shifted. */
static int flush_prefix(sl_model_run *run, batch *bt, size_t m, size_t *cur, size_t slots, const stage *s, sl_err *err)
{
    size_t n = bt->n;
    bt->n = m;
    int rc = score_and_write(run, bt, s, err);
    for (size_t i = m; i < n; i++) { /* swap, so the scored slots' buffers are reused */
        sl_doc t = bt->docs[i - m];
        bt->docs[i - m] = bt->docs[i];
        bt->docs[i] = t;
        bt->split[i - m] = bt->split[i];
        bt->tokens += (int64_t)bt->docs[i - m].n_tokens;
    }
    bt->n = n - m;
    for (size_t i = 0; i < slots; i++)
        if (cur[i] != SIZE_MAX)
            cur[i] -= m;
    return rc;
}

/* One split of a shard directory. Documents are reassembled from their
 * pieces: rows of a slot (the row itself in the sequential layout; row
 * r - B in the recurrent layout with batch B) continue each other, so a
 * document is complete when its piece ends inside a row, or when the next
 * row of its slot starts another document. */
static int score_split(sl_model_run *run, sl_shard *sh, int sp, batch *bt, size_t *cur, size_t slots, const stage *s,
                       sl_err *err)
{
    const sl_shard_info *info = sl_shard_get_info(sh);
    const char *dir = s->src;
    sl_shard_iter *it = sl_shard_iter_open(sh, sp, err);
    if (!it)
        return -1;
    for (size_t i = 0; i < slots; i++)
        cur[i] = SIZE_MAX;
    sl_row row;
    int k, rc = 0;
    /* Documents stay in the batch from their first piece on; the batch is
     * scored only when no document is in flight, so none is cut. */
    while (!rc && (k = sl_shard_iter_next(it, &row, err)) == 1) {
        size_t slot = (size_t)(row.index % slots), prev = cur[slot];
        cur[slot] = SIZE_MAX; /* the slot's document ends here unless this row continues it */
        for (size_t p = 0; p < row.n_pieces && !rc; p++) {
            const sl_piece *pc = &row.pieces[p];
            sl_doc *d;
            if (pc->doc_offset == 0) {
                d = batch_slot(bt);
                size_t idl;
                const char *id = sl_shard_doc_id(sh, pc->doc, &idl);
                char tmp[32];
                if (!id) {
                    idl = (size_t)snprintf(tmp, sizeof tmp, "doc%llu", (unsigned long long)pc->doc);
                    id = tmp;
                }
                sl_doc_set_id(d, id, idl);
                bt->split[bt->n] = sl_shard_split_names[sp];
                cur[slot] = bt->n++;
            } else if (p != 0 || prev == SIZE_MAX || bt->docs[prev].n_tokens != pc->doc_offset) {
                rc = sl_errf(err,
                             "%s: %s row %llu: the piece of document %llu at document offset %llu does not "
                             "continue an earlier piece, so documents cannot be reassembled (score the "
                             "token stream the shards were made from)",
                             dir, sl_shard_split_names[sp], (unsigned long long)row.index, (unsigned long long)pc->doc,
                             (unsigned long long)pc->doc_offset);
                break;
            } else {
                d = &bt->docs[prev];
                cur[slot] = prev;
            }
            for (uint32_t t = 0; t < pc->length; t++)
                sl_doc_push(d, row.tokens[pc->offset + t]);
            bt->tokens += pc->length;
            if ((uint64_t)pc->offset + pc->length < info->seq_len)
                cur[slot] = SIZE_MAX; /* ends inside the row: complete */
        }
        /* documents before the oldest one in flight are complete */
        size_t m = bt->n;
        for (size_t i = 0; i < slots; i++)
            m = cur[i] < m ? cur[i] : m;
        if (!rc && m && (bt->tokens >= s->o->batch_tokens || m >= 4096))
            rc = flush_prefix(run, bt, m, cur, slots, s, err);
    }
    if (!rc && k < 0)
        rc = -1;
    sl_shard_iter_close(it);
    if (!rc && bt->n)
        rc = score_and_write(run, bt, s, err);
    return rc;
}

/* A shard directory: its splits in order. */
static int score_shard_dir(sl_model_run *run, const sl_score_opts *o, const char *dir, sl_output *out, sl_err *err)
{
    if (o->to_stream)
        return sl_errf(err, "%s: to_stream needs a token stream, not a shard directory", dir);
    sl_shard *sh = sl_shard_open(dir, 1, err);
    if (!sh)
        return -1;
    stage s = {.o = o, .out = out, .src = dir};
    const sl_shard_info *info = sl_shard_get_info(sh);
    int rc = prepend_id(o, info->eos, dir, &s.prepend, err);
    if (!rc && info->shuffle)
        rc = sl_errf(err,
                     "%s: shuffled shards cannot be reassembled into documents; score the token stream "
                     "they were made from",
                     dir);
    if (!rc && !o->force) {
        sl_ts_header h;
        sl_ts_header_init(&h, info->modality, info->vocab_size);
        memcpy(h.fingerprint, info->fingerprint, sizeof h.fingerprint);
        memcpy(h.tokenizer, info->tokenizer, sizeof h.tokenizer);
        rc = sl_score_check_tokenizer(&h, sl_model_get_info(sl_model_run_model(run)), o->model_dir, dir, err);
        sl_ts_header_free(&h);
    }
    if (rc) {
        sl_shard_close(sh);
        return -1;
    }
    size_t slots = info->layout == SL_LAYOUT_RECURRENT && info->batch ? info->batch : 1;
    batch bt = {0};
    /* the document in flight per slot: index into bt.docs, or SIZE_MAX */
    size_t *cur = sl_xmalloc(slots * sizeof *cur);
    s.pg = sl_progress_start("score", "docs", o->progress);
    for (int sp = 0; sp < SL_SPLIT_N && !rc; sp++)
        if (sl_shard_get_split(sh, sp)->present)
            rc = score_split(run, sh, sp, &bt, cur, slots, &s, err);
    sl_progress_done(s.pg);
    free(cur);
    batch_free(&bt);
    sl_shard_close(sh);
    return rc;
}

int sl_score_inputs(sl_model_run *run, const sl_score_opts *o, const char *const *inputs, size_t n, sl_output *out,
                    sl_err *err)
{
    if (sl_score_check(o, err) < 0)
        return -1;
    if (o->curve)
        o->curve->max_position = o->max_position;
    for (size_t i = 0; n > 1 && i < n; i++)
        if (sl_score_is_shard_dir(inputs[i]))
            return sl_errf(err, "%s is a shard directory: one at a time (several inputs are token streams)", inputs[i]);
    if (n == 1 && sl_score_is_shard_dir(inputs[0]))
        return score_shard_dir(run, o, inputs[0], out, err);
    return score_streams(run, o, inputs, n, out, err);
}

int sl_score_run(const sl_score_opts *o, const char *const *inputs, size_t n, sl_output *out, sl_err *err)
{
    if (sl_score_check(o, err) < 0)
        return -1;
    sl_backend *be = sl_backend_open(o->device ? o->device : "auto", o->threads, err);
    if (!be)
        return -1;
    sl_model *m = sl_model_load(o->model_dir, be, err);
    sl_model_run *run = m ? sl_model_run_new(m, o->chunk, err) : NULL;
    int rc = run ? sl_score_inputs(run, o, inputs, n, out, err) : -1;
    sl_model_run_free(run);
    sl_model_free(m);
    sl_backend_close(be);
    return rc;
}
