/* `sluice tokenize ids` as a library call (see ids.h). */
#include "tokenize/ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/io.h"
#include "base/json.h"
#include "stream/progress.h"

static int ids_line(const char *src, uint64_t lineno, const char *line, size_t len, const char *field, sl_doc *d,
                    sl_buf *meta, sl_err *err)
{
    sl_json_doc *jd = sl_json_parse(line, len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s:%llu", src, (unsigned long long)lineno);
    sl_json *o = sl_json_root(jd);
    int rc = -1;
    if (o->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s:%llu: not a JSON object", src, (unsigned long long)lineno);
        goto out;
    }
    sl_json *arr = sl_json_get(o, field);
    if (!arr || arr->type != SL_JSON_ARRAY) {
        sl_errf(err, "%s:%llu: no \"%s\" array", src, (unsigned long long)lineno, field);
        goto out;
    }
    sl_doc_clear(d);
    sl_doc_reserve(d, arr->n);
    for (size_t i = 0; i < arr->n; i++) {
        int64_t v;
        if (!sl_json_is_int(arr->kids[i], &v) || v < 0 || v > UINT32_MAX) {
            sl_errf(err, "%s:%llu: \"%s\"[%zu] is not a token id (a non-negative integer < 2^32)", src,
                    (unsigned long long)lineno, field, i);
            goto out;
        }
        d->tokens[d->n_tokens++] = (uint32_t)v;
    }
    sl_json *id = sl_json_get(o, "id");
    if (id && (id->type == SL_JSON_STRING || id->type == SL_JSON_NUMBER))
        sl_doc_set_id(d, id->str, id->str_len);
    else {
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, ":%llu", (unsigned long long)lineno);
        sl_buf b = {0};
        sl_buf_puts(&b, src);
        sl_buf_append(&b, tmp, (size_t)n);
        sl_doc_set_id(d, b.data, b.len);
        sl_buf_free(&b);
    }
    int64_t sb;
    if (sl_json_get_int(o, "src_bytes", &sb) == 0 && sb >= 0)
        d->src_bytes = (uint64_t)sb;
    /* metadata: every other field */
    sl_buf_clear(meta);
    sl_buf_putc(meta, '{');
    int first = 1;
    for (size_t i = 0; i < o->n; i++) {
        const sl_json *k = o->keys[i];
        if (!strcmp(k->str, field) || !strcmp(k->str, "id") || !strcmp(k->str, "src_bytes"))
            continue;
        if (!first)
            sl_buf_putc(meta, ',');
        first = 0;
        sl_json_put_str(meta, k->str, k->str_len);
        sl_buf_putc(meta, ':');
        sl_json_put_value(meta, o->kids[i]);
    }
    sl_buf_putc(meta, '}');
    if (first)
        sl_doc_set_meta(d, "", 0);
    else
        sl_doc_set_meta(d, meta->data, meta->len);
    rc = 0;
out:
    sl_json_free(jd);
    return rc;
}

int sl_ids_opts_check(const sl_ids_opts *o, sl_err *err)
{
    if (!o->vocab_size)
        return sl_errf(err, "`vocab_size` is required");
    if (o->ends_with_eos && o->eos == SL_TS_NO_ID)
        return sl_errf(err, "`ends_with_eos` needs `eos` ID");
    int64_t specials[3] = {o->eos, o->bos, o->pad};
    for (int i = 0; i < 3; i++)
        if (specials[i] != SL_TS_NO_ID && (specials[i] < 0 || specials[i] >= (int64_t)o->vocab_size))
            return sl_errf(err, "special id %lld is not below `vocab_size` %lld", (long long)specials[i],
                           (long long)o->vocab_size);
    return 0;
}

/* One input: its documents into w. */
/* One input, or with piece set a piece of one (a range of lines: the line
 * numbers go on from those before it, so generated ids are the whole run's). */
static int ids_file(const sl_ids_opts *o, const char *path, const sl_slice *piece, int track, sl_ts_writer *w,
                    sl_progress *pg, sl_doc *d, sl_buf *meta, char **line, size_t *cap, sl_err *err)
{
    sl_range *range = NULL;
    sl_input *in;
    if (piece && !piece->whole) {
        range = sl_range_open(piece->path, piece->begin, piece->end, err);
        in = range ? sl_range_input(range) : NULL;
    } else {
        in = sl_input_open(piece ? piece->path : path, err);
    }
    if (!in)
        return -1;
    sl_progress_track_input(pg, track ? in : NULL); /* ETA only for a single input */
    const char *field = o->field ? o->field : "ids";
    size_t maxb = o->max_doc_bytes ? o->max_doc_bytes : (size_t)64 << 20;
    uint64_t lineno = piece ? piece->line : 0;
    size_t len = 0;
    int r;
    while ((r = sl_input_getline(in, line, &len, cap, maxb, err)) == 1) {
        lineno++;
        if (len && (*line)[len - 1] == '\r')
            len--;
        size_t k = 0;
        while (k < len && ((*line)[k] == ' ' || (*line)[k] == '\t'))
            k++;
        if (k == len)
            continue; /* blank line */
        if (ids_line(sl_input_name(in), lineno, (*line), len, field, d, meta, err)) {
            r = -1;
            break;
        }
        if (o->ends_with_eos && (!d->n_tokens || d->tokens[d->n_tokens - 1] != (uint32_t)o->eos)) {
            sl_errf(err, "%s:%llu: \"%s\" does not end in the eos id %lld (`ends_with_eos`)", sl_input_name(in),
                    (unsigned long long)lineno, field, (long long)o->eos);
            r = -1;
            break;
        }
        if (sl_ts_write_doc(w, d, err)) {
            sl_err_prefix(err, "%s:%llu", sl_input_name(in), (unsigned long long)lineno);
            r = -1;
            break;
        }
        sl_progress_add(pg, 1, len + 1);
        sl_progress_add_tokens(pg, d->n_tokens);
    }
    sl_progress_track_input(pg, NULL);
    if (range)
        sl_range_close(range);
    else
        sl_input_close(in);
    return r < 0 ? -1 : 0;
}

int sl_ids_run(const sl_ids_opts *o, const char *const *inputs, size_t n, const char *output, sl_err *err)
{
    if (sl_ids_opts_check(o, err))
        return -1;
    sl_ts_header h;
    sl_ts_header_init(&h, o->modality, o->vocab_size);
    h.eos = o->eos;
    h.doc_eos = o->ends_with_eos ? o->eos : SL_TS_NO_ID;
    h.bos = o->bos;
    h.pad = o->pad;
    if (o->tokenizer)
        snprintf(h.tokenizer, sizeof h.tokenizer, "%s", o->tokenizer);
    if (o->fingerprint)
        snprintf(h.fingerprint, sizeof h.fingerprint, "%s", o->fingerprint);
    static const char *const stdin_only[] = {"-"};
    if (n == 0) {
        inputs = stdin_only;
        n = 1;
    }
    sl_output *out = sl_output_open(output ? output : "-", err);
    sl_ts_writer *w = out ? sl_ts_writer_open(out, &h, err) : NULL;
    if (!w) {
        sl_output_abort(out);
        sl_ts_header_free(&h);
        return -1;
    }
    sl_progress *pg = sl_progress_start(o->progress ? o->progress : "tokenize ids", "docs", o->progress_mode);
    sl_doc d = {0};
    sl_buf meta = {0};
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    if (o->slices)
        for (size_t f = 0; f < o->n_slices && !rc; f++)
            rc = ids_file(o, NULL, &o->slices[f], o->n_slices == 1, w, pg, &d, &meta, &line, &cap, err);
    else
        for (size_t f = 0; f < n && !rc; f++)
            rc = ids_file(o, inputs[f], NULL, n == 1, w, pg, &d, &meta, &line, &cap, err);
    free(line);
    sl_buf_free(&meta);
    sl_doc_free(&d);
    sl_progress_done(pg);
    sl_ts_header_free(&h);
    if (rc) {
        sl_ts_writer_abort(w);
        sl_output_abort(out);
        return -1;
    }
    if (sl_ts_writer_finish(w, err)) {
        sl_output_abort(out);
        return -1;
    }
    return sl_output_commit(out, err) ? -1 : 0;
}
