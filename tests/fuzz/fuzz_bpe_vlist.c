/* libFuzzer target: the one-pass readers of a vocabulary object, a merges
 * array and a Unigram vocabulary list (tokenize/models/bpe_vlist.c) on
 * arbitrary bytes. What a reader accepts must be what the loaders take
 * from the parser's tree: the parse succeeds (invalid UTF-8 an error, as
 * the loaders parse) and gives the same entries (texts, key offsets, ids),
 * the same merges, or the same [piece, score] pairs (texts, offsets of
 * the entry and of the number). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/models/vlist.h"

static sl_json_doc *parse(const char *t, size_t n)
{
    sl_err e;
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    return sl_json_parse(t, n, &jo, &e);
}

static int same(const char *a, const char *b, size_t n)
{
    return n == 0 || !memcmp(a, b, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sl_bpe *b;
    if (!b)
        b = sl_bpe_new("fuzz");
    const char *t = (const char *)data;
    sl_bpe_lists fast = {0}, slow = {0};
    sl_err e;
    if (sl_bpe_vocab_read(t, 0, size, &fast)) {
        sl_json_doc *d = parse(t, size);
        if (!d || sl_bpe_vocab_list(b, sl_json_root(d), &slow, &e) || slow.nv != fast.nv)
            abort();
        for (size_t i = 0; i < fast.nv; i++)
            if (fast.v[i].len != slow.v[i].len || !same(fast.v[i].key, slow.v[i].key, fast.v[i].len) ||
                fast.v[i].off != slow.v[i].off || fast.v[i].id != slow.v[i].id)
                abort();
        sl_json_free(d);
    }
    sl_bpe_lists_free(&fast);
    sl_bpe_lists_free(&slow);
    if (sl_bpe_merges_read(t, 0, size, &fast)) {
        sl_json_doc *d = parse(t, size);
        const sl_json *r = d ? sl_json_root(d) : NULL;
        if (!r || r->type != SL_JSON_ARRAY || r->n != fast.nm)
            abort();
        for (size_t i = 0; i < fast.nm; i++) {
            sl_bpe_ment m;
            if (sl_bpe_merge_of(b, r->kids[i], &m, &e) || m.ln != fast.m[i].ln || m.rn != fast.m[i].rn ||
                !same(m.l, fast.m[i].l, m.ln) || !same(m.r, fast.m[i].r, m.rn))
                abort();
        }
        sl_json_free(d);
    }
    sl_bpe_lists_free(&fast);
    sl_uni_vlist u;
    if (sl_uni_vocab_read(t, 0, size, &u)) {
        sl_json_doc *d = parse(t, size);
        const sl_json *r = d ? sl_json_root(d) : NULL;
        if (!r || r->type != SL_JSON_ARRAY || r->n != u.n || !u.n)
            abort();
        for (size_t i = 0; i < u.n; i++) {
            const sl_json *x = r->kids[i];
            if (x->type != SL_JSON_ARRAY || x->n != 2 || x->kids[0]->type != SL_JSON_STRING ||
                x->kids[1]->type != SL_JSON_NUMBER || x->offset != u.v[i].off || x->kids[1]->offset != u.v[i].num ||
                x->kids[0]->str_len != u.v[i].len || !same(x->kids[0]->str, u.v[i].s, u.v[i].len))
                abort();
        }
        sl_json_free(d);
        sl_uni_vlist_free(&u);
    }
    return 0;
}
