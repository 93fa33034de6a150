/* `sluice cat` for token streams as a library call (see cat.h). */
#include "stream/cat.h"

#include "stream/io.h"
#include "base/json.h"
#include "stream/progress.h"

void sl_cat_put_header(sl_buf *b, const sl_ts_header *h, const char *name)
{
    sl_buf_puts(b, "{\"file\":");
    sl_json_put_cstr(b, name);
    sl_buf_printf(b, ",\"version\":%u,\"modality\":\"%s\",\"vocab_size\":%u,\"token_bytes\":%u", h->version,
                  sl_modality_name(h->modality), h->vocab_size, h->width);
    const char *names[] = {"eos", "bos", "pad", "unk"};
    const int64_t vals[] = {h->eos, h->bos, h->pad, h->unk};
    for (int i = 0; i < 4; i++) {
        sl_buf_printf(b, ",\"%s\":", names[i]);
        if (vals[i] == SL_TS_NO_ID)
            sl_buf_puts(b, "null");
        else
            sl_json_put_int(b, vals[i]);
    }
    if (h->doc_eos != SL_TS_NO_ID) { /* only then: headers of streams without it print as before */
        sl_buf_puts(b, ",\"doc_eos\":");
        sl_json_put_int(b, h->doc_eos);
    }
    sl_buf_puts(b, ",\"fingerprint\":");
    sl_json_put_cstr(b, h->fingerprint);
    sl_buf_puts(b, ",\"tokenizer\":");
    sl_json_put_cstr(b, h->tokenizer);
    sl_buf_puts(b, ",\"extra\":");
    sl_buf_puts(b, h->extra_json ? h->extra_json : "null");
    sl_buf_puts(b, "}\n");
}

/* Appends the fields of a metadata object (without braces) to b. */
static int put_meta(sl_buf *b, const sl_doc *d, const char *src, sl_err *err)
{
    if (!d->meta || !d->meta_len)
        return 0;
    char q[SL_QUOTE_MAX];
    sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s: document '%s': metadata", src, sl_err_quote(d->id, d->id_len, q, sizeof q));
    sl_json *o = sl_json_root(jd);
    if (o->type != SL_JSON_OBJECT) {
        sl_json_free(jd);
        return sl_errf(err, "%s: document '%s': metadata is not a JSON object", src,
                       sl_err_quote(d->id, d->id_len, q, sizeof q));
    }
    for (size_t i = 0; i < o->n; i++) {
        sl_buf_putc(b, ',');
        sl_json_put_str(b, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(b, ':');
        sl_json_put_value(b, o->kids[i]);
    }
    sl_json_free(jd);
    return 0;
}

int sl_cat_run(const sl_cat_opts *o, const char *const *inputs, size_t n, const char *output, sl_err *err)
{
    sl_ts_reader *r = sl_ts_reader_open_paths((char *const *)inputs, n, err);
    sl_output *out = r ? sl_output_open(output ? output : "-", err) : NULL;
    int rc = out ? 0 : -1;
    sl_buf b = {0}, txt = {0};
    sl_doc d = {0};
    sl_progress *pg = sl_progress_start(o->progress ? o->progress : "cat", "docs", o->progress_mode);
    if (r && sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(pg, sl_ts_reader_input(r));
    if (!rc && o->header_only) {
        sl_cat_put_header(&b, sl_ts_reader_header(r), sl_input_name(sl_ts_reader_input(r)));
        rc = sl_output_write(out, b.data, b.len, err);
    }
    int k = 0;
    while (!rc && !o->header_only && (k = sl_ts_read_doc(r, &d, err)) == 1) {
        sl_buf_clear(&b);
        sl_buf_puts(&b, "{\"id\":");
        sl_json_put_str(&b, d.id, d.id_len);
        if (!o->no_ids) {
            sl_buf_puts(&b, ",\"ids\":[");
            for (size_t i = 0; i < d.n_tokens; i++) {
                if (i)
                    sl_buf_putc(&b, ',');
                sl_buf_printf(&b, "%u", d.tokens[i]);
            }
            sl_buf_putc(&b, ']');
        }
        if (d.src_bytes)
            sl_buf_printf(&b, ",\"src_bytes\":%llu", (unsigned long long)d.src_bytes);
        if (o->decode) {
            sl_buf_clear(&txt);
            if (o->decode(o->decode_ctx, d.tokens, d.n_tokens, &txt, err)) {
                char q[SL_QUOTE_MAX];
                sl_err_prefix(err, "%s: document '%s'", sl_input_name(sl_ts_reader_input(r)),
                              sl_err_quote(d.id, d.id_len, q, sizeof q));
                rc = -1;
                break;
            }
            sl_buf_puts(&b, ",\"text\":");
            sl_json_put_str(&b, txt.data ? txt.data : "", txt.len);
        }
        if (put_meta(&b, &d, sl_input_name(sl_ts_reader_input(r)), err)) {
            rc = -1;
            break;
        }
        sl_buf_puts(&b, "}\n");
        rc = sl_output_write(out, b.data, b.len, err);
        sl_progress_add(pg, 1, b.len); /* bytes of JSON written */
    }
    if (k < 0)
        rc = -1;
    sl_progress_done(pg);
    sl_buf_free(&b);
    sl_buf_free(&txt);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    if (rc) {
        sl_output_abort(out);
        return -1;
    }
    return sl_output_commit(out, err) ? -1 : 0;
}
