/* The SentencePiece-style BPE model (an sl_hf_model, hf_pipeline.h) and
 * its family behind tokenizer.h: Hugging Face tokenizer.json files of
 * Llama-2, Mistral-7B v0.1 and Codestral Mamba (as `transformers` converts
 * SentencePiece models): BPE over characters with byte_fallback and an unk
 * token, spaces written as U+2581. The pipeline runs the added tokens,
 * normalizer, pre-tokenizer (none or one Metaspace on its fast path),
 * post-processor and decoder.
 *
 * BPE on each piece (HF's BPE::tokenize): with ignore_merges a piece that is
 * a vocabulary entry is that entry; otherwise each character is its
 * vocabulary entry (with continuing_subword_prefix before every character
 * but the first, end_of_word_suffix after the last, as HF's merge_word), or
 * the <0xXX> entries of that string's bytes (byte_fallback), or the unk token
 * (consecutive unknown characters fused into one with fuse_unk; HF emits a
 * pending unk only before the next known character, so it follows
 * byte-fallback tokens), and the merges apply by rank (bpe_merge.c, shared
 * with the byte-level family). BPE dropout (not deterministic) is refused at
 * load time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/models/bpe_internal.h"
#include "tokenize/hf_pipeline.h"
#include "tokenize/models/joins.h"
#include "tokenize/json_skim.h"
#include "tokenize/scache.h"

typedef struct spbpe {
    char *name;
    sl_vocab vocab; /* (the pipeline adds the added tokens' strings for decoding) */
    int32_t ascii_id[128];
    int32_t byte_id[256]; /* <0xXX> entries (byte_fallback), -1 when absent */
    int byte_fallback, fuse_unk, ignore_merges;
    int64_t unk_id;
    /* 1 when no merge can join a character to a following U+2581 (no merge
     * makes a token with U+2581 after another character, as in every
     * SentencePiece vocabulary): the merges then run on each stretch that
     * starts there separately, with the same result, and stretches are
     * cached (HF caches whole pieces the same way) */
    int ws_cut;
    /* the junctions of the merges (joins.h): a stretch missing from the
     * cache is cut where no merge joins, and its parts are cached. bits
     * NULL when cutting is not exact: affixes, a merge of a byte-fallback
     * or unk symbol, or an unk that could fuse across the cut */
    sl_joins joins;
    sl_scache_shared *cache; /* the threads' shared short-stretch table */
    sl_bpe *merges;          /* only its merge table is used */
    /* continuing_subword_prefix / end_of_word_suffix: the initial symbol
     * of each character but a piece's first is prefix + character, that of
     * its last character + suffix (HF's BPE::merge_word) */
    char *prefix, *suffix;
    size_t prefix_len, suffix_len;
} spbpe;

typedef struct sp_state {
    sl_scache cache; /* stretch -> ids */
    const spbpe *m;
    sl_bpe_state *bs;
    sl_buf affixed;
    sl_ids *out;
} sp_state;

static const char *tok_str(const spbpe *m, uint32_t id)
{
    return m->vocab.pool.data + m->vocab.off[id];
}

static void free_spbpe(void *impl)
{
    spbpe *m = impl;
    if (!m)
        return;
    free(m->name);
    sl_vocab_free(&m->vocab);
    sl_bpe_free(m->merges);
    sl_joins_free(&m->joins);
    sl_scache_shared_free(m->cache);
    free(m->prefix);
    free(m->suffix);
    free(m);
}

/* --- loading ------------------------------------------------------------- */
#define META "\xE2\x96\x81" /* U+2581 */

/* 1 when id is one of the <0xXX> byte-fallback tokens. */
static int is_byte_token(const spbpe *m, int64_t id)
{
    const char *t = tok_str(m, (uint32_t)id);
    if (!m->byte_fallback || m->vocab.len[id] != 6 || memcmp(t, "<0x", 3) || t[5] != '>')
        return 0;
    unsigned b;
    return sscanf(t + 3, "%2X", &b) == 1 && m->byte_id[b & 255] == id;
}

static int load_model(spbpe *m, const sl_json *model, sl_err *err)
{
    const char *mt = sl_json_get_str(model, "type");
    if (mt && strcmp(mt, "BPE"))
        return sl_errf(err, "%s: model type '%s' is not supported (only BPE)", m->name, mt);
    const sl_json *v;
    if ((v = sl_json_get(model, "dropout")) && !sl_hf_is_null(v))
        return sl_errf(err, "%s: model.dropout is not supported (BPE dropout is not deterministic; set it to null)",
                       m->name);
    const sl_json *prefix = sl_json_get(model, "continuing_subword_prefix"),
                  *suffix = sl_json_get(model, "end_of_word_suffix");
    if ((!sl_hf_is_null(prefix) && prefix->type != SL_JSON_STRING) ||
        (!sl_hf_is_null(suffix) && suffix->type != SL_JSON_STRING))
        return sl_errf(err, "%s: model.%s is not a string", m->name,
                       !sl_hf_is_null(prefix) && prefix->type != SL_JSON_STRING ? "continuing_subword_prefix"
                                                                                : "end_of_word_suffix");
    if (!sl_hf_is_null(prefix) && prefix->str_len)
        m->prefix = sl_xstrndup(prefix->str, prefix->str_len), m->prefix_len = prefix->str_len;
    if (!sl_hf_is_null(suffix) && suffix->str_len)
        m->suffix = sl_xstrndup(suffix->str, suffix->str_len), m->suffix_len = suffix->str_len;
    int bv;
    m->byte_fallback = sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv;
    m->fuse_unk = sl_json_get_bool(model, "fuse_unk", &bv) == 0 && bv;
    m->ignore_merges = sl_json_get_bool(model, "ignore_merges", &bv) == 0 && bv;

    if (sl_vocab_load(&m->vocab, sl_json_get(model, "vocab"), m->name, err))
        return -1;
    for (int c = 0; c < 128; c++) {
        char ch = (char)c;
        m->ascii_id[c] = (int32_t)sl_vocab_find(&m->vocab, &ch, 1);
    }
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = m->byte_fallback ? (int32_t)sl_vocab_find(&m->vocab, code, 6) : -1;
    }
    m->unk_id = -1;
    const sl_json *unk = sl_json_get(model, "unk_token");
    if (!sl_hf_is_null(unk)) {
        if (unk->type != SL_JSON_STRING)
            return sl_errf(err, "%s: model.unk_token is not a string", m->name);
        if ((m->unk_id = sl_vocab_find(&m->vocab, unk->str, unk->str_len)) < 0)
            return sl_errf(err, "%s: model.unk_token '%.60s' is not in the vocab", m->name, unk->str);
    }

    /* (with affixes a piece's first character is special: no cutting) */
    m->ws_cut = !m->prefix && !m->suffix && sl_vocab_find(&m->vocab, META, 3) >= 0 &&
                !(m->unk_id >= 0 && m->vocab.len[m->unk_id] >= 3 &&
                  !memcmp(tok_str(m, (uint32_t)m->unk_id) + m->vocab.len[m->unk_id] - 3, META, 3));
    const sl_json *merges = sl_json_get(model, "merges");
    if (!merges || merges->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: model.merges is missing or not an array", m->name);
    int all_bytes = m->byte_fallback;
    for (int b = 0; b < 256; b++)
        all_bytes &= m->byte_id[b] >= 0;
    if (!m->prefix && !m->suffix && (m->unk_id < 0 || all_bytes)) /* (else an unk could fuse across a cut) */
        sl_joins_init(&m->joins);
    m->merges = sl_xcalloc(1, sizeof *m->merges);
    sl_merge_table_init(m->merges, merges->n);
    sl_buf cat = {0};
    for (size_t i = 0; i < merges->n; i++) {
        const sl_json *x = merges->kids[i];
        const char *l, *r;
        size_t ln, rn;
        if (x->type == SL_JSON_STRING) {
            const char *sp = memchr(x->str, ' ', x->str_len);
            if (!sp || memchr(sp + 1, ' ', x->str_len - (size_t)(sp + 1 - x->str))) {
                sl_buf_free(&cat);
                return sl_errf(err, "%s: offset %zu: merge '%.60s' is not two tokens separated by one space", m->name,
                               x->offset, x->str);
            }
            l = x->str, ln = (size_t)(sp - x->str), r = sp + 1, rn = x->str_len - ln - 1;
        } else if (x->type == SL_JSON_ARRAY && x->n == 2 && x->kids[0]->type == SL_JSON_STRING &&
                   x->kids[1]->type == SL_JSON_STRING) {
            l = x->kids[0]->str, ln = x->kids[0]->str_len, r = x->kids[1]->str, rn = x->kids[1]->str_len;
        } else {
            sl_buf_free(&cat);
            return sl_errf(err, "%s: offset %zu: a merge must be \"a b\" or [\"a\", \"b\"]", m->name, x->offset);
        }
        int64_t a = sl_vocab_find(&m->vocab, l, ln), b = sl_vocab_find(&m->vocab, r, rn);
        /* HF: the merged token is a + b without b's continuing-subword
         * prefix (its first prefix_len bytes, whatever they are) */
        if (rn < m->prefix_len) {
            sl_buf_free(&cat);
            return sl_errf(err, "%s:merge %zu: token '%.*s' is shorter than the continuing_subword_prefix", m->name, i,
                           (int)rn, r);
        }
        sl_buf_clear(&cat);
        sl_buf_append(&cat, l, ln);
        sl_buf_append(&cat, r + m->prefix_len, rn - m->prefix_len);
        int64_t c = sl_vocab_find(&m->vocab, cat.data, cat.len);
        if (a < 0 || b < 0 || c < 0) {
            sl_errf(err, "%s:merge %zu: '%.*s' is not in the vocab", m->name, i,
                    (int)(a < 0   ? ln
                          : b < 0 ? rn
                                  : cat.len),
                    a < 0   ? l
                    : b < 0 ? r
                            : cat.data);
            sl_buf_free(&cat);
            return -1;
        }
        /* a repeated merge takes its last rank, as HF's hash map does */
        sl_merge_insert(m->merges, (uint32_t)a, (uint32_t)b, (uint32_t)i, (uint32_t)c);
        if (a == m->unk_id || b == m->unk_id || is_byte_token(m, a) || is_byte_token(m, b))
            sl_joins_free(&m->joins); /* a byte-fallback or unk symbol merges: no cutting */
        sl_joins_add_junction(&m->joins, l, ln, r, rn);
        if (m->ws_cut && sl_joins_word(cat.data, cat.len) < cat.len /* U+2581 after a character */)
            m->ws_cut = 0;
    }
    sl_buf_free(&cat);
    return 0;
}

/* --- encoding ------------------------------------------------------------ */
/* The symbols of p[0..n) merged (HF's BPE::merge_word). */
static void model_segment(const spbpe *m, sp_state *s, const char *p, size_t n)
{
    int32_t *sym = sl_bpe_syms(s->bs, n + 1);
    size_t k = 0;
    int64_t unk = -1; /* a pending unk symbol */
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t cl = sl_utf8_seq((const uint8_t *)p + i, n - i, &cp);
        if (!cl)
            cl = 1;            /* an invalid byte (only from direct callers): a character of its own */
        const char *c = p + i; /* the symbol's string: the character, with affixes */
        size_t cn = cl;
        int64_t id;
        if ((m->prefix && i > 0) || (m->suffix && i + cl == n)) {
            sl_buf *a = &s->affixed;
            sl_buf_clear(a);
            if (m->prefix && i > 0)
                sl_buf_append(a, m->prefix, m->prefix_len);
            sl_buf_append(a, p + i, cl);
            if (m->suffix && i + cl == n)
                sl_buf_append(a, m->suffix, m->suffix_len);
            c = a->data, cn = a->len;
            id = sl_vocab_find(&m->vocab, c, cn);
        } else {
            id = (uint8_t)p[i] < 128 && cl == 1 ? m->ascii_id[(uint8_t)p[i]] : sl_vocab_find(&m->vocab, p + i, cl);
        }
        if (id >= 0) {
            if (unk >= 0)
                sym[k++] = (int32_t)unk, unk = -1;
            sym[k++] = (int32_t)id;
        } else {
            int fb = m->byte_fallback; /* HF: the bytes of the string with its affixes */
            for (size_t j = 0; fb && j < cn; j++)
                fb = m->byte_id[(uint8_t)c[j]] >= 0;
            if (fb) {
                sym = sl_bpe_syms(s->bs, k + cn + (n - i) + 1); /* affixes may add symbols */
                for (size_t j = 0; j < cn; j++)
                    sym[k++] = m->byte_id[(uint8_t)c[j]];
            } else if (m->unk_id >= 0) {
                if (unk >= 0 && !m->fuse_unk)
                    sym[k++] = (int32_t)unk;
                unk = m->unk_id;
            }
        }
        i += cl;
    }
    if (unk >= 0)
        sym[k++] = (int32_t)unk;
    sl_bpe_merge_syms(m->merges, s->bs, k, s->out);
}

/* BPE of a stretch through the cache. On a miss (cut set) the stretch is
 * cut where no merge joins (joins.h) and each part goes through the cache
 * in turn. */
static void cached_segment(const spbpe *m, sp_state *s, const char *p, size_t n, int cut)
{
    uint64_t h;
    if (sl_scache_ids(&s->cache, p, n, s->out, &h))
        return;
    size_t start = s->out->n, k = cut && m->joins.bits ? sl_joins_part(&m->joins, p, n) : n;
    if (k < n) {
        for (size_t a = 0; a < n; a += k) {
            if (a)
                k = sl_joins_part(&m->joins, p + a, n - a);
            cached_segment(m, s, p + a, k, 0);
        }
    } else {
        model_segment(m, s, p, n);
    }
    sl_scache_put_ids(&s->cache, h, p, n, s->out, start);
}

/* BPE of one piece (HF's BPE::tokenize). */
static void model_piece(const spbpe *m, sp_state *s, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (m->ignore_merges) {
        int64_t id = sl_vocab_find(&m->vocab, p, n);
        if (id >= 0) {
            sl_ids_push(s->out, (uint32_t)id);
            return;
        }
    }
    if (!m->ws_cut) {
        cached_segment(m, s, p, n, 1);
        return;
    }
    /* stretches start at each U+2581 that follows another character */
    for (size_t a = 0, k; a < n; a += k) {
        k = sl_joins_word(p + a, n - a);
        cached_segment(m, s, p + a, k, 1);
    }
}

/* --- the model ----------------------------------------------------------- */
static void *sp_load_model(const sl_json *model, const sl_hf_src *src, sl_err *err)
{
    spbpe *m = sl_xcalloc(1, sizeof *m);
    m->name = sl_xstrdup(src->name);
    m->cache = sl_scache_shared_new();
    if (load_model(m, model, err)) {
        free_spbpe(m);
        return NULL;
    }
    return m;
}

static sl_vocab *sp_vocab(void *model)
{
    return &((spbpe *)model)->vocab;
}

static int64_t sp_unk_id(const void *model)
{
    return ((const spbpe *)model)->unk_id;
}

static void *sp_state_new(const void *model)
{
    const spbpe *m = model;
    sp_state *s = sl_xcalloc(1, sizeof *s);
    s->m = m;
    s->bs = sl_bpe_state_new(m->merges);
    sl_scache_init(&s->cache, m->cache);
    return s;
}

static void sp_state_free(void *state)
{
    sp_state *s = state;
    if (!s)
        return;
    sl_bpe_state_free(s->bs);
    sl_scache_free(&s->cache);
    sl_buf_free(&s->affixed);
    free(s);
}

static int sp_encode(const void *model, void *state, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    (void)err;
    sp_state *s = state;
    s->out = out;
    model_piece(model, s, p, n);
    return 0;
}

static const sl_hf_model sp_model = {
    .name_prefix = "bpe",
    .specials = {{"</s>"}, {"<s>"}, {"<pad>"}},
    .metaspace_fast = 1,
    .bad_utf8 = SL_HF_BAD_PIECE,
    .added_mult = 2,
    .added_slack = 256,
    .load = sp_load_model,
    .free = free_spbpe,
    .vocab = sp_vocab,
    .unk_id = sp_unk_id,
    .state_new = sp_state_new,
    .state_free = sp_state_free,
    .encode = sp_encode,
};

/* --- the family ---------------------------------------------------------- */
sl_tokenizer *sl_tok_spbpe_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                    sl_err *err)
{
    return sl_hf_load_mem(&sp_model, &sl_tok_family_spbpe, text, len, name, o, err);
}

static sl_tokenizer *sp_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_spbpe_load_mem);
}

const sl_tok_family sl_tok_family_spbpe = {"spbpe", sl_tokjson_probe_spbpe, sp_load, NULL, NULL};
