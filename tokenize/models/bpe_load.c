/* Loading a byte-level BPE tokenizer from a Hugging Face tokenizer.json
 * (bpe_load.h): the model object (vocab, merges, affixes, unk, options),
 * the normalizer, the pre-tokenizer (bpe_pretok_load.c), the decoder, the
 * added tokens, and the post-processor (kept in the sl_bpe; tok_bpe.c gives
 * it to the tokenizer with --add-special-tokens). The GPT-2 vocab.json + merges.txt
 * pair and the paths are bpe_files.c's. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/json.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/hf_pipeline.h"

/* continuing_subword_prefix / end_of_word_suffix: the initial symbols of
 * each byte with them, as HF's BPE makes a word's symbols (prefix on every
 * character but the first, suffix on the last). */
static int affix_ids(sl_bpe *b, sl_bpe_map *map, const sl_json *prefix, const sl_json *suffix, sl_err *err)
{
    uint32_t b2u[256];
    int16_t u2b[512];
    sl_bpe_byte_level_tables(b2u, u2b);
    const char *pre = sl_hf_is_null(prefix) ? "" : prefix->str, *suf = sl_hf_is_null(suffix) ? "" : suffix->str;
    size_t pn = sl_hf_is_null(prefix) ? 0 : prefix->str_len, sn = sl_hf_is_null(suffix) ? 0 : suffix->str_len;
    sl_buf t = {0};
    for (int c = 0; c < 256; c++) {
        char u[4];
        size_t un = sl_utf8_encode(u, b2u[c]);
        for (int k = 0; k < 3; k++) { /* prefixed, suffixed, both */
            sl_buf_clear(&t);
            if (k != 1)
                sl_buf_append(&t, pre, pn);
            sl_buf_append(&t, u, un);
            if (k != 0)
                sl_buf_append(&t, suf, sn);
            sl_bpe_slot *e = sl_bpe_map_find(map, t.data, t.len);
            int32_t id = e->s ? (int32_t)e->id : -1;
            (k == 0 ? b->byte_id_cont : k == 1 ? b->byte_id_end : b->byte_id_both)[c] = id;
        }
    }
    sl_buf_free(&t);
    (void)err;
    return 0;
}

/* The token strings a decoder chain sees: the vocab text of each id, an
 * added token's normalized content for its id (HF decodes it so). */
static void build_dec_strings(sl_bpe *b, const sl_bpe_vent *v, size_t n)
{
    sl_buf pool = {0};
    b->dec_off = sl_xmalloc(b->vocab_size * sizeof *b->dec_off);
    b->dec_len = sl_xmalloc(b->vocab_size * sizeof *b->dec_len);
    for (uint32_t i = 0; i < b->vocab_size; i++)
        b->dec_off[i] = b->dec_len[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        b->dec_off[v[i].id] = (uint32_t)pool.len;
        b->dec_len[v[i].id] = (uint32_t)v[i].len;
        sl_buf_append(&pool, v[i].key, v[i].len);
    }
    for (size_t i = 0; i < b->n_added; i++) {
        const sl_added *a = &b->added[i];
        b->dec_off[a->id] = (uint32_t)pool.len;
        b->dec_len[a->id] = (uint32_t)a->match_len;
        sl_buf_append(&pool, a->match, a->match_len);
    }
    b->dec_pool = pool.data ? pool.data : sl_xstrdup("");
}

static int load_merges_json(sl_bpe *b, const sl_json *merges, sl_bpe_map *map, sl_err *err)
{
    if (!merges || merges->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: model.merges is missing or not an array", b->name);
    sl_merge_table_init(b, merges->n);
    for (size_t i = 0; i < merges->n; i++) {
        sl_bpe_ment m;
        if (sl_bpe_merge_of(b, merges->kids[i], &m, err) ||
            sl_bpe_add_merge(b, map, m.l, m.ln, m.r, m.rn, i, "merge", i, err))
            return -1;
    }
    return 0;
}

/* ignore_merges: the model vocabulary entries by their bytes. Only entries
 * written wholly in the byte-level alphabet: a piece is always looked up in
 * that form, so no other entry can match it. */
static void build_words(sl_bpe *b, const sl_bpe_vent *v, size_t n)
{
    sl_words_init(b, n);
    sl_buf tmp = {0};
    for (size_t i = 0; i < n; i++) {
        sl_buf_clear(&tmp);
        if (!sl_bpe_byte_level_only(v[i].key, v[i].len, &tmp))
            continue;
        const char *t = tmp.data ? tmp.data : "";
        sl_words_put(b, v[i].id, t, tmp.len, XXH3_64bits(t, tmp.len));
    }
    sl_buf_free(&tmp);
}

/* The one-pass way to model.vocab and model.merges (bpe_vlist.c): 1 with
 * both in L and their spans in sp (for the parser to step over); 0 when
 * the whole text must be parsed. */
static int read_model_lists(const char *text, size_t len, sl_bpe_lists *L, sl_json_skip sp[2])
{
    static const char *const keys[] = {"vocab", "merges"};
    sl_skim_span s[2];
    if (sl_tokjson_skim_model(text, len, keys, s, 2) || !s[0].len || !s[1].len ||
        !sl_bpe_vocab_read(text, s[0].at, s[0].len, L) || !sl_bpe_merges_read(text, s[1].at, s[1].len, L)) {
        sl_bpe_lists_free(L);
        return 0;
    }
    sp[0] = (sl_json_skip){s[0].at, s[0].len};
    sp[1] = (sl_json_skip){s[1].at, s[1].len};
    return 1;
}

sl_bpe *sl_bpe_load_json(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_bpe *b;
    sl_bpe_lists L = {0};
    sl_json_skip skip[2];
    int fast = read_model_lists(text, len, &L, skip);
    sl_json_doc *doc = sl_bpe_load_begin(text, len, skip, fast ? 2 : 0, name, &b, err);
    if (!doc) {
        sl_bpe_lists_free(&L);
        return NULL;
    }
    sl_bpe_map map = {0};
    sl_buf txt = {0};
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    if (!model || model->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object)", name);
        goto fail;
    }
    const char *mt = sl_json_get_str(model, "type");
    if (mt && strcmp(mt, "BPE")) {
        sl_errf(err, "%s: model type '%s' is not supported (tokenizer.json models: BPE, Unigram, WordPiece, WordLevel)",
                name, mt);
        goto fail;
    }
    if (!sl_json_get(model, "merges") || !sl_json_get(model, "vocab")) {
        sl_errf(err, "%s: a BPE model without `vocab` and `merges`", name);
        goto fail;
    }
    static const char *const must_be_null[][2] = {{"truncation", "truncation"}, {"padding", "padding"}};
    for (size_t i = 0; i < 2; i++)
        if (!sl_hf_is_null(sl_json_get(root, must_be_null[i][0]))) {
            sl_errf(err, "%s: %s is not supported (set it to null)", name, must_be_null[i][1]);
            goto fail;
        }
    const sl_json *v;
    double dv;
    if ((v = sl_json_get(model, "dropout")) && !sl_hf_is_null(v) &&
        (sl_json_get_num(model, "dropout", &dv) || dv != 0)) {
        sl_errf(err, "%s: BPE dropout is not supported", name);
        goto fail;
    }
    const sl_json *unk = sl_json_get(model, "unk_token");
    if (!sl_hf_is_null(unk) && unk->type != SL_JSON_STRING) {
        sl_errf(err, "%s: model.unk_token is not a string", name);
        goto fail;
    }
    const sl_json *prefix = sl_json_get(model, "continuing_subword_prefix"),
                  *suffix = sl_json_get(model, "end_of_word_suffix");
    if ((!sl_hf_is_null(prefix) && prefix->type != SL_JSON_STRING) ||
        (!sl_hf_is_null(suffix) && suffix->type != SL_JSON_STRING)) {
        sl_errf(err, "%s: model.%s is not a string", name,
                !sl_hf_is_null(prefix) && prefix->type != SL_JSON_STRING ? "continuing_subword_prefix"
                                                                         : "end_of_word_suffix");
        goto fail;
    }
    if (!sl_hf_is_null(prefix) && prefix->str_len)
        b->affix = 1, b->prefix_len = prefix->str_len;
    if (!sl_hf_is_null(suffix) && suffix->str_len)
        b->affix = 1;
    int bv;
    if (sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv) {
        sl_errf(err, "%s: byte_fallback is not supported", name);
        goto fail;
    }
    b->ignore_merges = sl_json_get_bool(model, "ignore_merges", &bv) == 0 && bv;
    if (sl_normalizer_load(&b->norm, sl_json_get(root, "normalizer"), name, err) ||
        sl_bpe_load_pre_tokenizer(b, sl_json_get(root, "pre_tokenizer"), err))
        goto fail;
    /* ByteLevel (or none): the bytes of the tokens, as before; any other
     * chain runs on the token strings (decoders.h) */
    const sl_json *dec = sl_json_get(root, "decoder");
    if (!sl_hf_is_null(dec) && strcmp(sl_hf_type_of(dec), "ByteLevel")) {
        if (sl_decoder_load(&b->dec, dec, name, err))
            goto fail;
        b->dec_chain = 1;
    }
    if (sl_added_parse(sl_json_get(root, "added_tokens"), name, &b->added, &b->n_added, err) ||
        (!fast && sl_bpe_vocab_list(b, sl_json_get(model, "vocab"), &L, err)) ||
        sl_bpe_load_vocab(b, L.v, L.nv, 0, &map, &txt, err) || (b->affix && affix_ids(b, &map, prefix, suffix, err)))
        goto fail;
    if (fast) {
        sl_merge_table_init(b, L.nm);
        for (size_t i = 0; i < L.nm; i++)
            if (sl_bpe_add_merge(b, &map, L.m[i].l, L.m[i].ln, L.m[i].r, L.m[i].rn, i, "merge", i, err))
                goto fail;
    } else if (load_merges_json(b, sl_json_get(model, "merges"), &map, err)) {
        goto fail;
    }
    if (sl_bpe_finish(b, &txt, err))
        goto fail;
    if (b->dec_chain)
        build_dec_strings(b, L.v, L.nv);
    b->unk_id = -1;
    if (!sl_hf_is_null(unk)) { /* HF looks it up in the model vocab (an error there when a character needs it) */
        sl_bpe_slot *u = sl_bpe_map_find(&map, unk->str, unk->str_len);
        if (!u->s) {
            sl_errf(err, "%s: model.unk_token '%.60s' is not in the vocab", name, unk->str);
            goto fail;
        }
        b->unk_id = (int32_t)u->id;
        int fu = 0;
        b->fuse_unk = sl_json_get_bool(model, "fuse_unk", &fu) == 0 && fu;
    }
    /* a post-processor acts only with --add-special-tokens (tok_bpe.c
     * hands it on), but one sluice cannot run is refused either way */
    if (sl_postproc_load(&b->post, sl_json_get(root, "post_processor"), b->vocab_size, name, err))
        goto fail;
    b->post_known = 1;
    if (b->ignore_merges)
        build_words(b, L.v, L.nv);
    free(map.slots);
    sl_json_free(doc);
    sl_bpe_lists_free(&L);
    return b;
fail:
    sl_bpe_load_abort(b, &map, &txt, doc);
    sl_bpe_lists_free(&L);
    return NULL;
}
