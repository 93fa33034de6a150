/* See detok.h. */
#include "tokenize/detok.h"

#include <stdlib.h>
#include <string.h>

#include "stream/io.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "base/utf8.h"

/* Leaves out the header's special ids. */
static void drop_specials(sl_doc *d, const sl_ts_header *h)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n_tokens; i++) {
        int64_t t = d->tokens[i];
        if (t != h->eos && t != h->bos && t != h->pad)
            d->tokens[k++] = d->tokens[i];
    }
    d->n_tokens = k;
}

/* One JSON line: id, text (invalid UTF-8 repaired), the metadata fields. */
static void put_doc(sl_buf *line, const sl_doc *d, const sl_buf *raw, sl_buf *text, uint64_t *repaired)
{
    sl_buf_clear(text);
    *repaired += sl_utf8_repair(text, raw->data ? raw->data : "", raw->len, SL_UTF8_REPLACE);
    sl_buf_puts(line, "{\"id\":");
    sl_json_put_str(line, d->id ? d->id : "", d->id_len);
    sl_buf_puts(line, ",\"text\":");
    sl_json_put_str(line, text->data ? text->data : "", text->len);
    if (d->meta && d->meta_len > 2 && d->meta[0] == '{') {
        sl_buf_putc(line, ',');
        sl_buf_append(line, d->meta + 1, d->meta_len - 2);
    }
    sl_buf_puts(line, "}\n");
}

/* Decodes every document of r into out. */
static int decode_all(const sl_detok_opts *o, const sl_tokenizer *t, sl_ts_reader *r, sl_input *in, const char *inp,
                      sl_output *out, sl_detok_stats *st, sl_err *err)
{
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_progress *pg = sl_progress_start(o->progress ? o->progress : "detokenize", "docs", o->progress_mode);
    sl_progress_track_input(pg, in);
    sl_doc d = {0};
    sl_buf raw = {0}, text = {0}, line = {0};
    int got;
    while ((got = sl_ts_read_doc(r, &d, err)) == 1) {
        if (o->skip_special)
            drop_specials(&d, h);
        sl_buf_clear(&raw);
        if (sl_tokenizer_decode(t, d.tokens, d.n_tokens, &raw, err)) {
            sl_err_prefix(err, "%s: document '%.*s'", inp, (int)d.id_len, d.id ? d.id : "");
            got = -1;
            break;
        }
        put_doc(&line, &d, &raw, &text, &st->repaired);
        st->docs++;
        if (line.len >= (1u << 20)) {
            if (sl_output_write(out, line.data, line.len, err) < 0) {
                got = -1;
                break;
            }
            sl_buf_clear(&line);
        }
        sl_progress_add(pg, 1, raw.len);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (got == 0 && line.len && sl_output_write(out, line.data, line.len, err) < 0)
        got = -1;
    sl_progress_done(pg);
    sl_doc_free(&d);
    sl_buf_free(&raw);
    sl_buf_free(&text);
    sl_buf_free(&line);
    return got < 0 ? -1 : 0;
}

int sl_detok_run(const sl_detok_opts *o, const char *input, const char *output, sl_detok_stats *stats, sl_err *err)
{
    sl_detok_stats st = {0};
    const char *inp = input ? input : "-";
    sl_input *in = sl_input_open(inp, err);
    if (!in)
        return SL_DETOK_FAIL;
    sl_ts_reader *r = sl_ts_reader_open(in, err);
    if (!r) {
        sl_input_close(in);
        return SL_DETOK_FAIL;
    }
    const sl_ts_header *h = sl_ts_reader_header(r);
    int rc = SL_DETOK_FAIL;
    sl_tokenizer *t = NULL;
    if (!o->tokenizer && !sl_tokenizer_in_header(h)) {
        sl_errf(err, "%s: the stream has no character vocabulary in its header", inp);
        rc = SL_DETOK_NO_TOKENIZER;
        goto done;
    }
    sl_tokenizer_opts lo = SL_TOKENIZER_OPTS_INIT;
    lo.header = h; /* a tiktoken rank file's pattern and special tokens, unless given */
    lo.pattern = o->pattern;
    lo.specials = o->specials;
    t = o->tokenizer ? sl_tokenizer_load(o->tokenizer, &lo, err) : sl_tokenizer_from_header(h, inp, err);
    if (!t)
        goto done;
    if ((o->pattern || o->specials) && strcmp(sl_tokenizer_family(t), "tiktoken")) {
        sl_errf(err, "%s: --pattern and --special are for tiktoken rank files; it is not one", o->tokenizer);
        goto done;
    }
    const char *fp = sl_tokenizer_fingerprint(t);
    if (!o->force && h->fingerprint[0] && strcmp(h->fingerprint, fp)) {
        sl_errf(err, "%s: the stream was made with tokenizer %s, but %s is %s", inp, h->fingerprint,
                o->tokenizer ? o->tokenizer : "the header's vocabulary", fp);
        rc = SL_DETOK_MISMATCH;
        goto done;
    }
    sl_output *out = sl_output_open(output ? output : "-", err);
    if (!out)
        goto done;
    if (decode_all(o, t, r, in, inp, out, &st, err)) {
        sl_output_abort(out);
        goto done;
    }
    if (sl_output_commit(out, err))
        goto done;
    rc = 0;
done:
    sl_ts_reader_close(r);
    sl_input_close(in);
    sl_tokenizer_free(t);
    if (stats)
        *stats = st;
    return rc;
}
