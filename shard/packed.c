/* Packed stream helpers (see packed.h). */
#include "shard/packed.h"

#include <stdlib.h>
#include <string.h>

#include "shard/warmup.h"
#include "base/json.h"

int sl_pack_user_any(const sl_pack_user *u)
{
    return u->seq_len >= 0 || u->eos >= 0 || u->bos >= 0 || u->pad >= 0 || u->no_eos || u->eos_mode >= 0 ||
           u->layout != SL_LAYOUT_SEQUENTIAL || u->batch >= 0 || u->no_split || u->long_mode >= 0 || u->warmup ||
           u->mem_tokens >= 0 || u->mem_id >= 0 || u->mem_write;
}

static int check_id(const char *field, int64_t v, uint32_t vocab, sl_err *err)
{
    if (v != SL_NO_TOKEN && (uint64_t)v >= vocab)
        return sl_errf(err, "`%s` %lld: not below the vocab size %u", field, (long long)v, vocab);
    return 0;
}

int sl_pack_user_check(const sl_pack_user *u, sl_err *err)
{
    if (u->seq_len >= 0 && sl_pack_check_seq_len(u->seq_len, err))
        return -1;
    if (u->no_eos && u->eos >= 0)
        return sl_err_set(err, SL_E_OPTION, "eos", "`eos` and `no_eos` exclude each other");
    if (u->no_eos && u->eos_mode >= 0 && u->eos_mode != SL_PACK_EOS_NONE)
        return sl_err_set(err, SL_E_OPTION, "eos", "`eos` %s and `no_eos` exclude each other",
                          u->eos_mode == SL_EOS_KEEP ? "keep" : "append");
    if (u->eos_mode == SL_PACK_EOS_NONE && u->eos >= 0)
        return sl_err_set(err, SL_E_OPTION, "eos", "`eos` none and `eos` ID exclude each other");
    if (u->long_mode >= 0 && !u->no_split)
        return sl_err_set(err, SL_E_OPTION, "long_mode",
                          "`long_mode` applies only with `no_split` (split mode always continues long documents)");
    if (u->warmup && u->layout == SL_LAYOUT_RECURRENT)
        return sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` cannot be combined with `layout` recurrent");
    if (u->layout == SL_LAYOUT_RECURRENT && u->batch <= 0)
        return sl_err_set(err, SL_E_OPTION, "layout", "`layout` recurrent needs `batch` B");
    if ((u->mem_tokens >= 0 || u->mem_id >= 0 || u->mem_write) && u->layout != SL_LAYOUT_RECURRENT)
        return sl_err_set(err, SL_E_OPTION, "mem_tokens",
                          "`mem_tokens` (memory-token slots) applies to `layout` recurrent");
    if (u->mem_tokens == 0)
        return sl_err_set(err, SL_E_OPTION, "mem_tokens", "`mem_tokens` 0: must be positive");
    if (u->mem_tokens > 0 && u->mem_id < 0)
        return sl_err_set(err, SL_E_OPTION, "mem_tokens",
                          "`mem_tokens` %lld needs `mem_id` ID (the token id of a memory position)",
                          (long long)u->mem_tokens);
    if ((u->mem_id >= 0 || u->mem_write) && u->mem_tokens < 0)
        return sl_errf(err, "`%s` needs `mem_tokens` K", u->mem_id >= 0 ? "mem_id" : "mem_write");
    if (u->batch > 0 && u->layout != SL_LAYOUT_RECURRENT)
        return sl_err_set(err, SL_E_OPTION, "batch",
                          "`batch` applies to `layout` recurrent (use `warmup` ...,batch=B for stage batches)");
    return 0;
}

int sl_pack_resolve(const sl_pack_user *u, const sl_ts_header *h, sl_pack_opts *o, sl_err *err)
{
    memset(o, 0, sizeof *o);
    int none = u->no_eos || u->eos_mode == SL_PACK_EOS_NONE;
    o->eos = none ? SL_NO_TOKEN : u->eos >= 0 ? u->eos : h->eos;
    o->eos_mode = u->eos_mode == SL_EOS_APPEND || u->eos_mode == SL_EOS_KEEP ? u->eos_mode
                  : o->eos != SL_NO_TOKEN && h->doc_eos == o->eos            ? SL_EOS_MISSING
                                                                             : SL_EOS_APPEND;
    o->bos = u->bos >= 0 ? u->bos : SL_NO_TOKEN;
    o->pad = u->pad >= 0 ? u->pad : h->pad != SL_TS_NO_ID ? h->pad : o->eos;
    o->layout = u->layout;
    o->batch = u->batch > 0 ? (uint32_t)u->batch : 0;
    o->no_split = u->no_split;
    o->long_mode = u->long_mode >= 0 ? u->long_mode : SL_LONG_TRUNCATE;
    o->mem_tokens = u->mem_tokens > 0 ? (uint32_t)u->mem_tokens : 0;
    o->mem_id = u->mem_tokens > 0 ? u->mem_id : SL_NO_TOKEN;
    o->mem_write = u->mem_write;
    if (sl_pack_user_check(u, err))
        return -1;
    if (u->warmup) {
        sl_warmup w;
        if (sl_warmup_parse(u->warmup, &w, err))
            return -1;
        uint32_t mx = w.max_len;
        sl_warmup_free(&w);
        if (u->seq_len >= 0 && (uint64_t)u->seq_len != mx)
            return sl_err_set(err, SL_E_OPTION, "seq_len", "`seq_len` %lld differs from the longest `warmup` stage %u",
                              (long long)u->seq_len, mx);
        o->seq_len = mx;
    } else {
        if (u->seq_len < 0)
            return sl_err_set(err, SL_E_OPTION, "seq_len", "`seq_len` L is required (or `warmup` SPEC)");
        o->seq_len = (uint32_t)u->seq_len;
    }
    if (check_id("eos", o->eos, h->vocab_size, err) || check_id("bos", o->bos, h->vocab_size, err) ||
        check_id("pad", o->pad, h->vocab_size, err) || check_id("mem_id", o->mem_id, h->vocab_size, err))
        return -1;
    return sl_pack_opts_check(o, err);
}

static void put_id(sl_buf *b, const char *key, int64_t v)
{
    sl_buf_printf(b, ",\"%s\":", key);
    if (v == SL_NO_TOKEN)
        sl_buf_puts(b, "null");
    else
        sl_buf_printf(b, "%lld", (long long)v);
}

void sl_packed_header(const sl_ts_header *h, const sl_pack_opts *o, const char *warmup, sl_ts_header *out)
{
    sl_ts_header_copy(out, h);
    out->pad = o->pad;
    out->doc_eos = SL_TS_NO_ID; /* records are rows: each document's end is in the rows already */
    sl_buf b = {0};
    sl_buf_puts(&b, "{");
    /* keep the input's extra fields, except an older "packed" */
    sl_json_doc *jd =
        h->extra_json && *h->extra_json ? sl_json_parse(h->extra_json, strlen(h->extra_json), NULL, NULL) : NULL;
    sl_json *root = jd ? sl_json_root(jd) : NULL;
    if (root && root->type == SL_JSON_OBJECT)
        for (size_t i = 0; i < root->n; i++) {
            if (root->keys[i]->str_len == 6 && !memcmp(root->keys[i]->str, "packed", 6))
                continue;
            sl_json_put_str(&b, root->keys[i]->str, root->keys[i]->str_len);
            sl_buf_putc(&b, ':');
            sl_json_put_value(&b, root->kids[i]);
            sl_buf_putc(&b, ',');
        }
    sl_json_free(jd);
    sl_buf_printf(&b, "\"packed\":{\"seq_len\":%u,\"layout\":\"%s\",\"batch\":%u", o->seq_len,
                  o->layout == SL_LAYOUT_RECURRENT ? "recurrent" : "sequential",
                  o->layout == SL_LAYOUT_RECURRENT ? o->batch : 1);
    put_id(&b, "eos", o->eos);
    put_id(&b, "bos", o->bos);
    put_id(&b, "pad", o->pad);
    sl_buf_puts(&b, ",\"warmup\":");
    if (warmup)
        sl_json_put_cstr(&b, warmup);
    else
        sl_buf_puts(&b, "null");
    if (o->mem_tokens) /* only then: headers without memory stay as they were */
        sl_buf_printf(&b, ",\"memory\":{\"tokens\":%u,\"id\":%lld,\"write\":%s}", o->mem_tokens, (long long)o->mem_id,
                      o->mem_write ? "true" : "false");
    if (o->layout == SL_LAYOUT_SEQUENTIAL && o->no_split) /* only then, as "memory" */
        sl_buf_printf(&b, ",\"no_split\":{\"long\":\"%s\"}", sl_long_mode_name(o->long_mode));
    sl_buf_puts(&b, "}}");
    sl_ts_header_set_extra(out, b.data);
    sl_buf_free(&b);
}

static int get_id(const sl_json *o, const char *key, int64_t *v)
{
    sl_json *x = sl_json_get(o, key);
    if (!x || x->type == SL_JSON_NULL) {
        *v = SL_NO_TOKEN;
        return 0;
    }
    return sl_json_is_int(x, v) && *v >= 0 && *v <= (int64_t)UINT32_MAX ? 0 : -1;
}

int sl_packed_detect(const sl_ts_header *h, sl_pack_opts *o, char **warmup, sl_err *err)
{
    *warmup = NULL;
    if (!h->extra_json || !*h->extra_json)
        return 0;
    sl_json_doc *jd = sl_json_parse(h->extra_json, strlen(h->extra_json), NULL, err);
    if (!jd)
        return sl_err_prefix(err, "header extra");
    sl_json *root = sl_json_root(jd);
    sl_json *p = root->type == SL_JSON_OBJECT ? sl_json_get(root, "packed") : NULL;
    if (!p) {
        sl_json_free(jd);
        return 0;
    }
    memset(o, 0, sizeof *o);
    int64_t L, B;
    const char *layout = p->type == SL_JSON_OBJECT ? sl_json_get_str(p, "layout") : NULL;
    sl_json *wv = layout ? sl_json_get(p, "warmup") : NULL;
    int bad = !layout || sl_json_get_int(p, "seq_len", &L) || sl_json_get_int(p, "batch", &B) || L <= 0 ||
              L > (1ll << 31) || B <= 0 || B > UINT32_MAX || get_id(p, "eos", &o->eos) || get_id(p, "bos", &o->bos) ||
              get_id(p, "pad", &o->pad) || (strcmp(layout, "sequential") && strcmp(layout, "recurrent")) ||
              (wv && wv->type != SL_JSON_NULL && wv->type != SL_JSON_STRING);
    sl_json *mv = layout ? sl_json_get(p, "memory") : NULL;
    if (!bad && mv && mv->type != SL_JSON_NULL) {
        int64_t mk, mi;
        sl_json *wr = mv->type == SL_JSON_OBJECT ? sl_json_get(mv, "write") : NULL;
        bad = !wr || sl_json_get_int(mv, "tokens", &mk) || sl_json_get_int(mv, "id", &mi) || mk <= 0 ||
              mk > (1ll << 31) || mi < 0 || mi > (int64_t)UINT32_MAX ||
              (wr->type != SL_JSON_TRUE && wr->type != SL_JSON_FALSE);
        if (!bad) {
            o->mem_tokens = (uint32_t)mk;
            o->mem_id = mi;
            o->mem_write = wr->type == SL_JSON_TRUE;
        }
    }
    sl_json *nv = layout ? sl_json_get(p, "no_split") : NULL;
    if (!bad && nv && nv->type != SL_JSON_NULL) {
        const char *lm = nv->type == SL_JSON_OBJECT ? sl_json_get_str(nv, "long") : NULL;
        int m = lm ? sl_long_mode_parse(lm) : -1;
        bad = m < 0;
        o->no_split = 1;
        o->long_mode = m;
    }
    if (!bad) {
        o->seq_len = (uint32_t)L;
        o->layout = strcmp(layout, "recurrent") ? SL_LAYOUT_SEQUENTIAL : SL_LAYOUT_RECURRENT;
        o->batch = (uint32_t)B;
        if (wv && wv->type == SL_JSON_STRING)
            *warmup = sl_xstrndup(wv->str, wv->str_len);
        bad = sl_pack_opts_check(o, err) != 0;
    }
    sl_json_free(jd);
    if (bad) {
        free(*warmup);
        *warmup = NULL;
        return sl_errf(err,
                       "header: malformed \"packed\" object (seq_len, layout, batch, eos, bos, pad, warmup, memory, "
                       "no_split)");
    }
    return 1;
}

int sl_packed_need_docs(const sl_ts_header *h, const char *src, const char *stage, sl_err *err)
{
    sl_pack_opts po;
    char *wu = NULL;
    int packed = sl_packed_detect(h, &po, &wu, err);
    free(wu);
    if (packed > 0)
        return sl_errf(err, "%s: a packed stream (rows of %u tokens): %s needs a document stream", src, po.seq_len,
                       stage);
    if (packed < 0)
        return sl_err_prefix(err, "%s", src);
    return 0;
}

void sl_packed_encode(const sl_row *r, uint32_t seq_len, sl_doc *d, sl_buf *b)
{
    char id[24];
    int n = snprintf(id, sizeof id, "%llu", (unsigned long long)r->index);
    sl_doc_set_id(d, id, (size_t)n);
    sl_doc_reserve(d, seq_len);
    memcpy(d->tokens, r->tokens, (size_t)seq_len * sizeof *d->tokens);
    d->n_tokens = seq_len;
    d->src_bytes = 0;
    sl_buf_clear(b);
    sl_buf_puts(b, "{\"pieces\":[");
    for (size_t i = 0; i < r->n_pieces; i++) {
        const sl_piece *p = &r->pieces[i];
        sl_buf_printf(b, "%s[%u,%u,%llu,%llu,", i ? "," : "", p->offset, p->length, (unsigned long long)p->doc,
                      (unsigned long long)p->doc_offset);
        sl_json_put_str(b, p->id ? p->id : "", p->id ? p->id_len : 0);
        sl_buf_putc(b, ']');
    }
    /* explicit for readers of the recurrent layout: the row begins inside a
     * document carried over from an earlier row (no state reset at its first
     * data position: 0, or K after memory slots). A piece with a non-zero
     * document offset is always the first piece of its row. */
    int cont = r->n_pieces && r->pieces[0].doc_offset != 0;
    sl_buf_printf(b, "],\"continues\":%s}", cont ? "true" : "false");
    sl_doc_set_meta(d, b->data, b->len);
}

int sl_packed_decode(const sl_doc *d, uint32_t L, sl_packed_row *st, sl_row *out, const char *src, sl_err *err)
{
    if (d->n_tokens != L)
        return sl_errf(err, "%s: row '%s': %zu tokens, the packed header says %u", src, d->id, d->n_tokens, L);
    sl_json_doc *jd = d->meta && d->meta_len ? sl_json_parse(d->meta, d->meta_len, NULL, err) : NULL;
    sl_json *root = jd ? sl_json_root(jd) : NULL;
    sl_json *arr = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "pieces") : NULL;
    if (!arr || arr->type != SL_JSON_ARRAY) {
        sl_json_free(jd);
        return sl_errf(err, "%s: row '%s': metadata has no \"pieces\" array", src, d->id);
    }
    if (arr->n > st->cap) {
        st->cap = arr->n;
        st->pieces = sl_xrealloc(st->pieces, st->cap * sizeof *st->pieces);
        st->offs = sl_xrealloc(st->offs, st->cap * sizeof *st->offs);
    }
    sl_buf_clear(&st->ids);
    uint64_t end = 0;
    for (size_t i = 0; i < arr->n; i++) {
        const sl_json *e = arr->kids[i];
        int64_t v[4];
        int ok = e->type == SL_JSON_ARRAY && e->n == 5 && e->kids[4]->type == SL_JSON_STRING;
        for (int k = 0; ok && k < 4; k++)
            ok = sl_json_is_int(e->kids[k], &v[k]) && v[k] >= 0;
        if (ok)
            ok = (uint64_t)v[0] >= end && v[1] > 0 && (uint64_t)v[0] + (uint64_t)v[1] <= L;
        if (!ok) {
            sl_json_free(jd);
            return sl_errf(err,
                           "%s: row '%s': piece %zu: expected [offset,length,doc,doc_offset,\"id\"] inside the "
                           "row, after the previous piece",
                           src, d->id, i);
        }
        sl_piece *p = &st->pieces[i];
        p->offset = (uint32_t)v[0];
        p->length = (uint32_t)v[1];
        p->doc = (uint64_t)v[2];
        p->doc_offset = (uint64_t)v[3];
        st->offs[i] = st->ids.len;
        p->id_len = (uint32_t)e->kids[4]->str_len;
        sl_buf_append(&st->ids, e->kids[4]->str, e->kids[4]->str_len);
        end = (uint64_t)v[0] + (uint64_t)v[1];
    }
    for (size_t i = 0; i < arr->n; i++)
        st->pieces[i].id = st->ids.data ? st->ids.data + st->offs[i] : "";
    out->n_pieces = arr->n;
    out->pieces = st->pieces;
    out->tokens = d->tokens;
    char *e;
    out->index = strtoull(d->id, &e, 10);
    sl_json_free(jd);
    return 0;
}

void sl_packed_row_free(sl_packed_row *st)
{
    free(st->pieces);
    free(st->offs);
    sl_buf_free(&st->ids);
}

void sl_packed_add_docs(sl_doc *d, const char *recs, size_t n, sl_buf *b)
{
    sl_buf_clear(b);
    size_t m = d->meta_len;
    while (m && d->meta[m - 1] != '}')
        m--;
    if (!m) /* not an encoded row: leave it */
        return;
    sl_buf_append(b, d->meta, m - 1);
    sl_buf_puts(b, ",\"docs\":[");
    sl_buf_append(b, recs, n);
    sl_buf_puts(b, "]}");
    sl_doc_set_meta(d, b->data, b->len);
}

void sl_packed_put_docrec(sl_buf *recs, uint64_t doc, const char *id, size_t id_len, int long_status, const char *meta,
                          size_t meta_len)
{
    sl_buf_printf(recs, "%s{\"doc\":%llu,\"id\":", recs->len ? "," : "", (unsigned long long)doc);
    sl_json_put_str(recs, id ? id : "", id ? id_len : 0);
    if (long_status == SL_DOC_TRUNCATED)
        sl_buf_puts(recs, ",\"long\":\"truncated\"");
    else if (long_status == SL_DOC_DROPPED)
        sl_buf_puts(recs, ",\"long\":\"dropped\"");
    if (meta && meta_len) {
        sl_buf_puts(recs, ",\"meta\":");
        sl_buf_append(recs, meta, meta_len);
    }
    sl_buf_putc(recs, '}');
}

int sl_packed_decode_docs(const sl_doc *d, sl_packed_docs *out, const char *src, sl_err *err)
{
    out->present = 0;
    out->n = 0;
    sl_buf_clear(&out->text);
    if (!d->meta || !d->meta_len)
        return 0;
    sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s: row '%s': metadata", src, d->id);
    sl_json *root = sl_json_root(jd);
    sl_json *arr = root->type == SL_JSON_OBJECT ? sl_json_get(root, "docs") : NULL;
    if (!arr) {
        sl_json_free(jd);
        return 0;
    }
    int ok = arr->type == SL_JSON_ARRAY;
    size_t i = 0;
    for (; ok && i < arr->n; i++) {
        const sl_json *e = arr->kids[i];
        int64_t ord;
        const sl_json *idv = e->type == SL_JSON_OBJECT ? sl_json_get(e, "id") : NULL;
        const sl_json *lv = idv ? sl_json_get(e, "long") : NULL, *mv = idv ? sl_json_get(e, "meta") : NULL;
        ok = idv && idv->type == SL_JSON_STRING && !sl_json_get_int(e, "doc", &ord) && ord >= 0 &&
             (!out->n || (uint64_t)ord > out->recs[out->n - 1].doc) && (!mv || mv->type == SL_JSON_OBJECT) &&
             (!lv || (lv->type == SL_JSON_STRING && (!strcmp(lv->str, "truncated") || !strcmp(lv->str, "dropped"))));
        if (!ok)
            break;
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 16;
            out->recs = sl_xrealloc(out->recs, out->cap * sizeof *out->recs);
        }
        sl_packed_docrec *r = &out->recs[out->n++];
        r->doc = (uint64_t)ord;
        r->long_status = !lv ? SL_DOC_PLACED : !strcmp(lv->str, "dropped") ? SL_DOC_DROPPED : SL_DOC_TRUNCATED;
        r->id_off = out->text.len;
        r->id_len = idv->str_len;
        sl_buf_append(&out->text, idv->str, idv->str_len);
        r->meta_off = out->text.len;
        if (mv && mv->n)
            sl_json_put_value(&out->text, mv);
        r->meta_len = out->text.len - r->meta_off;
    }
    sl_json_free(jd);
    if (!ok)
        return sl_errf(err,
                       "%s: row '%s': \"docs\" entry %zu: expected {\"doc\":N,\"id\":\"...\"} with increasing N, "
                       "\"long\" truncated|dropped, \"meta\" an object",
                       src, d->id, i);
    out->present = 1;
    return 0;
}

void sl_packed_docs_free(sl_packed_docs *p)
{
    free(p->recs);
    sl_buf_free(&p->text);
    memset(p, 0, sizeof *p);
}
