/* The SentencePiece-style BPE family behind tokenizer.h: Hugging Face
 * tokenizer.json files of Llama-2, Mistral-7B v0.1 and Codestral Mamba (as
 * `transformers` converts SentencePiece models): BPE over characters with
 * byte_fallback and an unk token, spaces written as U+2581.
 *
 * Encoding follows HF `tokenizers` (encode(text, add_special_tokens=False)):
 *   1. added tokens that are not normalized are split out of the raw text
 *      (added.h; special ones per sl_special_mode);
 *   2. each remaining piece goes through the normalizer (normalize.h, the
 *      engine every tokenizer.json family shares: any of HF's NFC, NFD,
 *      NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend,
 *      Precompiled, BertNormalizer, in a Sequence);
 *   3. normalized added tokens are split out;
 *   4. the pre-tokenizer: none or one Metaspace on a fast path here
 *      (spaces become the replacement, which is prepended per
 *      prepend_scheme ("first": only to the piece HF aligns with offset 0
 *      of the text: sl_norm_scratch .lead), and with `split` a new piece
 *      starts at each replacement character); any other (a Sequence of
 *      BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits,
 *      Split, Metaspace) through pretokenizer.h, shared by the families;
 *   5. BPE on each piece: with ignore_merges a piece that is a vocabulary
 *      entry is that entry; otherwise each character is its vocabulary
 *      entry (with continuing_subword_prefix before every character but
 *      the first, end_of_word_suffix after the last, as HF's merge_word),
 *      or the <0xXX> entries of that string's bytes (byte_fallback), or the
 *      unk token (consecutive unknown characters fused into one with
 *      fuse_unk; HF emits a pending unk only before the next known
 *      character, so it follows byte-fallback tokens), and the merges apply
 *      by rank (bpe_merge.c, shared with the byte-level family).
 * Decoding is the file's decoder chain (decoders.h). Post-processors
 * (postproc.h) act through tokenizer.c under --add-special-tokens; one
 * sluice lacks is refused at load time either way. BPE dropout (not
 * deterministic) and any component not listed are refused at load time,
 * naming them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "stream/io.h"
#include "stream/json.h"
#include "tokenize/bpe_internal.h"
#include "tokenize/decoders.h"
#include "tokenize/joins.h"
#include "tokenize/json_skim.h"
#include "tokenize/normalize.h"
#include "tokenize/postproc.h"
#include "tokenize/pretokenizer.h"
#include "tokenize/scache.h"
#include "tokenize/sha256.h"
#include "tokenize/tokenizer_impl.h"

typedef struct spbpe {
    char *name;
    char fingerprint[72];
    uint32_t n_ids;
    /* id -> the token's string as the file writes it (vocab entry, or an
     * added token's content); len UINT32_MAX: no such id */
    uint32_t *off, *len;
    sl_buf pool;
    /* model vocabulary: string -> id (open addressing; the entry keeps the
     * string's place in pool, which an added token's decode string for the
     * same id does not change) */
    struct vslot {
        uint32_t id1, off, len; /* id + 1, 0 = empty */
    } * vocab;
    uint64_t vocab_mask;
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
    sl_normalizer norm;
    /* continuing_subword_prefix / end_of_word_suffix: the initial symbol
     * of each character but a piece's first is prefix + character, that of
     * its last character + suffix (HF's BPE::merge_word) */
    char *prefix, *suffix;
    size_t prefix_len, suffix_len;
    /* a pre-tokenizer other than one Metaspace (or none): pretokenizer.h's
     * steps (general = 1) */
    int general;
    sl_pretokenizer pre;
    int metaspace, ms_scheme, ms_split;
    char ms_rep[5];
    size_t ms_rep_len;
    sl_decoder dec;
    sl_added *added;
    size_t n_added;
    sl_trie raw_trie, norm_trie;
} spbpe;

typedef struct sp_state {
    sl_scache cache; /* stretch -> ids */
    const spbpe *m;
    sl_bpe_state *bs;
    sl_buf norm, pre, affixed;
    sl_norm_scratch ns;
    sl_pretok_scratch ps;
    sl_toklist t1, t2;
    sl_ids *out;
    sl_special_mode mode;
    size_t base;   /* offset of the current valid-UTF-8 run in the text */
    int raw_first; /* the raw gap starts at offset 0 of the text */
    size_t lead;   /* leading bytes of the normalized gap aligned with its start (normalize.h) */
} sp_state;

/* --- vocabulary ------------------------------------------------------------ */
static const char *tok_str(const spbpe *m, uint32_t id)
{
    return m->pool.data + m->off[id];
}

static int64_t vocab_find(const spbpe *m, const char *s, size_t n)
{
    for (uint64_t h = XXH3_64bits(s, n) & m->vocab_mask; m->vocab[h].id1; h = (h + 1) & m->vocab_mask) {
        const struct vslot *v = &m->vocab[h];
        if (v->len == n && !memcmp(m->pool.data + v->off, s, n))
            return v->id1 - 1;
    }
    return -1;
}

/* While loading, before added tokens: m->off/len are the vocab's. */
static void vocab_insert(spbpe *m, uint32_t id)
{
    uint64_t h = XXH3_64bits(tok_str(m, id), m->len[id]) & m->vocab_mask;
    while (m->vocab[h].id1)
        h = (h + 1) & m->vocab_mask;
    m->vocab[h] = (struct vslot){id + 1, m->off[id], m->len[id]};
}

static void set_string(spbpe *m, uint32_t id, const char *s, size_t n)
{
    m->off[id] = (uint32_t)m->pool.len;
    m->len[id] = (uint32_t)n;
    sl_buf_append(&m->pool, s, n);
    sl_buf_putc(&m->pool, 0);
}

static void free_spbpe(spbpe *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->off);
    free(m->len);
    sl_buf_free(&m->pool);
    free(m->vocab);
    sl_bpe_free(m->merges);
    sl_joins_free(&m->joins);
    sl_scache_shared_free(m->cache);
    sl_normalizer_free(&m->norm);
    sl_pretokenizer_free(&m->pre);
    free(m->prefix);
    free(m->suffix);
    sl_decoder_free(&m->dec);
    sl_added_free(m->added, m->n_added);
    sl_trie_free(&m->raw_trie);
    sl_trie_free(&m->norm_trie);
    free(m);
}

/* --- loading ------------------------------------------------------------- */
static int is_null(const sl_json *v)
{
    return !v || v->type == SL_JSON_NULL;
}

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

/* The pre-tokenizer: none or one Metaspace (alone or the one step of a
 * Sequence) runs on the fast path of gap_normalized; anything else through
 * pretokenizer.h (general = 1). */
static int load_pre_tokenizer(spbpe *m, const sl_json *v, sl_err *err)
{
    if (is_null(v))
        return 0;
    const char *t = type_of(v);
    if (!strcmp(t, "Sequence")) {
        const sl_json *list = sl_json_get(v, "pretokenizers");
        if (list && list->type == SL_JSON_ARRAY && list->n == 0)
            return 0;
        if (list && list->type == SL_JSON_ARRAY && list->n == 1) {
            v = list->kids[0];
            t = type_of(v);
        }
    }
    if (strcmp(t, "Metaspace")) {
        m->general = 1;
        return sl_pretokenizer_load(&m->pre, v, m->name, err);
    }
    const sl_json *r = sl_json_get(v, "replacement");
    uint32_t cp;
    if (!r || r->type != SL_JSON_STRING || r->str_len > 4 || !r->str_len ||
        sl_utf8_seq((const uint8_t *)r->str, r->str_len, &cp) != r->str_len)
        return sl_errf(err, "%s: pre_tokenizer Metaspace needs a one-character 'replacement'", m->name);
    memcpy(m->ms_rep, r->str, r->str_len);
    m->ms_rep_len = r->str_len;
    int split;
    m->ms_split = sl_json_get_bool(v, "split", &split) == 0 ? split : 1; /* HF's default: true */
    m->metaspace = 1;
    return sl_prepend_scheme(v, m->name, "pre_tokenizer", &m->ms_scheme, err);
}

#define META "\xE2\x96\x81" /* U+2581 */

/* 1 when s has U+2581 right after another character. */
static int space_after_char(const char *s, size_t n)
{
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), META, 3)); p += 3)
        if (p > s && !(p - s >= 3 && !memcmp(p - 3, META, 3)))
            return 1;
    return 0;
}

/* 1 when id is one of the <0xXX> byte-fallback tokens. */
static int is_byte_token(const spbpe *m, int64_t id)
{
    const char *t = tok_str(m, (uint32_t)id);
    if (!m->byte_fallback || m->len[id] != 6 || memcmp(t, "<0x", 3) || t[5] != '>')
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
    if ((v = sl_json_get(model, "dropout")) && !is_null(v))
        return sl_errf(err, "%s: model.dropout is not supported (BPE dropout is not deterministic; set it to null)",
                       m->name);
    const sl_json *prefix = sl_json_get(model, "continuing_subword_prefix"),
                  *suffix = sl_json_get(model, "end_of_word_suffix");
    if ((!is_null(prefix) && prefix->type != SL_JSON_STRING) || (!is_null(suffix) && suffix->type != SL_JSON_STRING))
        return sl_errf(err, "%s: model.%s is not a string", m->name,
                       !is_null(prefix) && prefix->type != SL_JSON_STRING ? "continuing_subword_prefix"
                                                                          : "end_of_word_suffix");
    if (!is_null(prefix) && prefix->str_len)
        m->prefix = sl_xstrndup(prefix->str, prefix->str_len), m->prefix_len = prefix->str_len;
    if (!is_null(suffix) && suffix->str_len)
        m->suffix = sl_xstrndup(suffix->str, suffix->str_len), m->suffix_len = suffix->str_len;
    int bv;
    m->byte_fallback = sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv;
    m->fuse_unk = sl_json_get_bool(model, "fuse_unk", &bv) == 0 && bv;
    m->ignore_merges = sl_json_get_bool(model, "ignore_merges", &bv) == 0 && bv;

    const sl_json *vocab = sl_json_get(model, "vocab");
    if (!vocab || vocab->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: model.vocab is missing or not a JSON object", m->name);
    uint32_t max_id = 0;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        if (!sl_json_is_int(vocab->kids[i], &id) || id < 0 || id >= (int64_t)1 << 31)
            return sl_errf(err, "%s:offset %zu: vocab entry '%.60s' has no valid integer id", m->name,
                           vocab->kids[i]->offset, vocab->keys[i]->str);
        if ((uint32_t)id + 1 > max_id)
            max_id = (uint32_t)id + 1;
    }
    if ((uint64_t)max_id > 2 * (uint64_t)vocab->n + 256)
        return sl_errf(err, "%s: vocab ids are not dense (id %u with %zu entries)", m->name, max_id - 1, vocab->n);
    m->n_ids = max_id;
    m->off = sl_xcalloc(max_id ? max_id : 1, sizeof *m->off);
    m->len = sl_xmalloc((max_id ? max_id : 1) * sizeof *m->len);
    for (uint32_t i = 0; i < max_id; i++)
        m->len[i] = UINT32_MAX;
    size_t cap = 16;
    while (cap < 2 * vocab->n + 16)
        cap *= 2;
    m->vocab = sl_xcalloc(cap, sizeof *m->vocab);
    m->vocab_mask = cap - 1;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        sl_json_is_int(vocab->kids[i], &id);
        const sl_json *k = vocab->keys[i];
        if (m->len[id] != UINT32_MAX)
            return sl_errf(err, "%s:offset %zu: id %lld is used twice in the vocab", m->name, k->offset, (long long)id);
        if (vocab_find(m, k->str, k->str_len) >= 0)
            return sl_errf(err, "%s:offset %zu: vocab entry '%.60s' appears twice", m->name, k->offset, k->str);
        set_string(m, (uint32_t)id, k->str, k->str_len);
        vocab_insert(m, (uint32_t)id);
    }
    for (int c = 0; c < 128; c++) {
        char ch = (char)c;
        m->ascii_id[c] = (int32_t)vocab_find(m, &ch, 1);
    }
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = m->byte_fallback ? (int32_t)vocab_find(m, code, 6) : -1;
    }
    m->unk_id = -1;
    const sl_json *unk = sl_json_get(model, "unk_token");
    if (!is_null(unk)) {
        if (unk->type != SL_JSON_STRING)
            return sl_errf(err, "%s: model.unk_token is not a string", m->name);
        if ((m->unk_id = vocab_find(m, unk->str, unk->str_len)) < 0)
            return sl_errf(err, "%s: model.unk_token '%.60s' is not in the vocab", m->name, unk->str);
    }

    /* (with affixes a piece's first character is special: no cutting) */
    m->ws_cut = !m->prefix && !m->suffix && vocab_find(m, META, 3) >= 0 &&
                !(m->unk_id >= 0 && m->len[m->unk_id] >= 3 &&
                  !memcmp(tok_str(m, (uint32_t)m->unk_id) + m->len[m->unk_id] - 3, META, 3));
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
                return sl_errf(err, "%s:offset %zu: merge '%.60s' is not two tokens separated by one space", m->name,
                               x->offset, x->str);
            }
            l = x->str, ln = (size_t)(sp - x->str), r = sp + 1, rn = x->str_len - ln - 1;
        } else if (x->type == SL_JSON_ARRAY && x->n == 2 && x->kids[0]->type == SL_JSON_STRING &&
                   x->kids[1]->type == SL_JSON_STRING) {
            l = x->kids[0]->str, ln = x->kids[0]->str_len, r = x->kids[1]->str, rn = x->kids[1]->str_len;
        } else {
            sl_buf_free(&cat);
            return sl_errf(err, "%s:offset %zu: a merge must be \"a b\" or [\"a\", \"b\"]", m->name, x->offset);
        }
        int64_t a = vocab_find(m, l, ln), b = vocab_find(m, r, rn);
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
        int64_t c = vocab_find(m, cat.data, cat.len);
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
        if (m->ws_cut && space_after_char(cat.data, cat.len))
            m->ws_cut = 0;
    }
    sl_buf_free(&cat);
    return 0;
}

static int finish_added(spbpe *m, sl_err *err)
{
    uint32_t max_id = m->n_ids;
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].id + 1 > max_id)
            max_id = m->added[i].id + 1;
    if ((uint64_t)max_id > 2 * ((uint64_t)m->n_ids + m->n_added) + 256)
        return sl_errf(err, "%s: added token id %u is far beyond the vocab (%u ids)", m->name, max_id - 1, m->n_ids);
    if (max_id > m->n_ids) {
        m->off = sl_xrealloc(m->off, max_id * sizeof *m->off);
        m->len = sl_xrealloc(m->len, max_id * sizeof *m->len);
        for (uint32_t i = m->n_ids; i < max_id; i++)
            m->len[i] = UINT32_MAX, m->off[i] = 0;
        m->n_ids = max_id;
    }
    sl_buf nb = {0};
    sl_norm_scratch ns = {0};
    for (size_t i = 0; i < m->n_added; i++) {
        sl_added *a = &m->added[i];
        if (a->normalized && m->norm.n) {
            if (sl_normalize(&m->norm, &ns, a->content, a->len, &nb, err)) {
                sl_buf_free(&nb);
                sl_norm_scratch_free(&ns);
                sl_err_prefix(err, "%s: added token %u", m->name, a->id);
                return -1;
            }
            a->match = sl_xstrndup(nb.data ? nb.data : "", nb.len);
            a->match_len = nb.len;
        } else {
            a->match = sl_xstrndup(a->content, a->len);
            a->match_len = a->len;
        }
        /* decoding uses the added token (HF looks ids up as added tokens
         * first), in its normalized form when it is normalized, as HF does */
        set_string(m, a->id, a->match, a->match_len);
        if (a->match_len)
            sl_trie_add(a->normalized ? &m->norm_trie : &m->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    sl_buf_free(&nb);
    sl_norm_scratch_free(&ns);
    return 0;
}

static spbpe *load_json(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", name);
        return NULL;
    }
    spbpe *m = sl_xcalloc(1, sizeof *m);
    m->name = sl_xstrdup(name);
    m->cache = sl_scache_shared_new();
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    if (!model || model->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object)", name);
        goto fail;
    }
    if (!is_null(sl_json_get(root, "truncation")) || !is_null(sl_json_get(root, "padding"))) {
        sl_errf(err, "%s: %s is not supported (set it to null)", name,
                is_null(sl_json_get(root, "truncation")) ? "padding" : "truncation");
        goto fail;
    }
    if (load_model(m, model, err) || sl_normalizer_load(&m->norm, sl_json_get(root, "normalizer"), name, err) ||
        load_pre_tokenizer(m, sl_json_get(root, "pre_tokenizer"), err) ||
        sl_decoder_load(&m->dec, sl_json_get(root, "decoder"), name, err) ||
        sl_added_parse(sl_json_get(root, "added_tokens"), name, &m->added, &m->n_added, err) || finish_added(m, err))
        goto fail;
    /* the post-processor is read only when asked for (tokenizer.c), but a
     * file with one sluice cannot run is refused either way */
    sl_postproc pp;
    if (sl_postproc_load(&pp, sl_json_get(root, "post_processor"), m->n_ids, name, err))
        goto fail;
    sl_postproc_free(&pp);
    sl_json_free(doc);
    return m;
fail:
    sl_json_free(doc);
    free_spbpe(m);
    return NULL;
}

/* --- encoding ------------------------------------------------------------ */
/* s with every occurrence of a replaced by b, appended to out. */
static void replace_all(const char *s, size_t n, const char *a, size_t an, const char *b, size_t bn, sl_buf *out)
{
    size_t i = 0, done = 0;
    while (i + an <= n) {
        const char *hit = memchr(s + i, a[0], n - i - an + 1);
        if (!hit)
            break;
        i = (size_t)(hit - s);
        if (!memcmp(hit, a, an)) {
            sl_buf_append(out, s + done, i - done);
            sl_buf_append(out, b, bn);
            i += an;
            done = i;
        } else {
            i++;
        }
    }
    sl_buf_append(out, s + done, n - done);
}

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
            id = vocab_find(m, c, cn);
        } else {
            id = (uint8_t)p[i] < 128 && cl == 1 ? m->ascii_id[(uint8_t)p[i]] : vocab_find(m, p + i, cl);
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
    uint64_t h = 0;
    if (n <= SL_SCACHE_KEY) {
        h = sl_scache_hash(p, n);
        size_t nv;
        const uint32_t *v = sl_scache_get(&s->cache, h, p, n, &nv);
        if (v) {
            sl_ids_append(s->out, v, nv);
            return;
        }
    }
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
    if (n <= SL_SCACHE_KEY)
        sl_scache_put(&s->cache, h, p, n, s->out->v + start, s->out->n - start);
}

/* BPE of one piece (HF's BPE::tokenize). */
static void model_piece(const spbpe *m, sp_state *s, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (m->ignore_merges) {
        int64_t id = vocab_find(m, p, n);
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

static int sp_piece(void *ctx, const char *q, size_t k, sl_err *err)
{
    (void)err;
    sp_state *s = ctx;
    model_piece(s->m, s, q, k);
    return 0;
}

/* The Metaspace pre-tokenizer (or none) and the model on a normalized gap. */
static int gap_normalized(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    sp_state *s = ctx;
    const spbpe *m = s->m;
    if (m->general) {
        return sl_pretokenize_each(&m->pre, &s->ps, p, n, s->raw_first && off < s->lead ? s->lead - off : 0, sp_piece,
                                   s, err);
    }
    if (!m->metaspace) {
        model_piece(m, s, p, n);
        return 0;
    }
    sl_buf *b = &s->pre;
    sl_buf_clear(b);
    int prepend =
        m->ms_scheme == SL_PREPEND_ALWAYS || (m->ms_scheme == SL_PREPEND_FIRST && s->raw_first && off < s->lead);
    if (prepend && !(n >= m->ms_rep_len && !memcmp(p, m->ms_rep, m->ms_rep_len)) &&
        !(n && p[0] == ' ')) /* a leading space becomes the replacement */
        sl_buf_append(b, m->ms_rep, m->ms_rep_len);
    replace_all(p, n, " ", 1, m->ms_rep, m->ms_rep_len, b);
    if (!m->ms_split) {
        model_piece(m, s, b->data, b->len);
        return 0;
    }
    /* a piece starts at each replacement character (MergedWithNext) */
    size_t start = 0;
    for (size_t i = 1; i + m->ms_rep_len <= b->len;) {
        const char *hit = memmem(b->data + i, b->len - i, m->ms_rep, m->ms_rep_len);
        if (!hit)
            break;
        i = (size_t)(hit - b->data);
        if (i > start) {
            model_piece(m, s, b->data + start, i - start);
            start = i;
        }
        i += m->ms_rep_len;
    }
    model_piece(m, s, b->data + start, b->len - start);
    return 0;
}

static int gap_raw(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    sp_state *s = ctx;
    const spbpe *m = s->m;
    s->raw_first = s->base + off == 0;
    uint32_t cp;
    s->lead = n ? sl_utf8_seq((const uint8_t *)p, n, &cp) : 0;
    if (!m->norm.n)
        return sl_added_split(m->added, &m->norm_trie, p, n, s->base, s->mode, gap_normalized, s, s->out, err);
    if (sl_normalize(&m->norm, &s->ns, p, n, &s->norm, err))
        return -1;
    s->lead = s->ns.lead;
    return sl_added_split(m->added, &m->norm_trie, s->norm.data ? s->norm.data : "", s->norm.len, s->base, s->mode,
                          gap_normalized, s, s->out, err);
}

/* --- the family ---------------------------------------------------------- */
static void sp_free(void *impl)
{
    free_spbpe(impl);
}

static void *sp_state_new(const void *impl)
{
    const spbpe *m = impl;
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
    sl_buf_free(&s->norm);
    sl_norm_scratch_free(&s->ns);
    sl_buf_free(&s->pre);
    sl_buf_free(&s->affixed);
    sl_pretok_scratch_free(&s->ps);
    sl_toklist_free(&s->t1);
    sl_toklist_free(&s->t2);
    free(s);
}

static int sp_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const spbpe *m = t->impl;
    sp_state *s = state;
    s->out = out;
    s->mode = t->special_mode;
    size_t pos = 0;
    while (pos < n) {
        size_t v = pos + sl_utf8_check(text + pos, n - pos);
        if (v > pos) {
            s->base = pos;
            if (sl_added_split(m->added, &m->raw_trie, text + pos, v - pos, pos, s->mode, gap_raw, s, out, err))
                return -1;
        }
        if (v < n) { /* invalid UTF-8 (callers normally repair it): the byte's own piece */
            model_piece(m, s, text + v, 1);
            v++;
        }
        pos = v;
    }
    return 0;
}

static int sp_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const spbpe *m = t->impl;
    sl_toklist a = {0}, b = {0};
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= m->n_ids || m->len[ids[i]] == UINT32_MAX) {
            sl_toklist_free(&a);
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], m->name);
        }
        sl_toklist_push(&a, tok_str(m, ids[i]), m->len[ids[i]]);
    }
    sl_decoder_run(&m->dec, &a, &b, out);
    sl_toklist_free(&a);
    sl_toklist_free(&b);
    return 0;
}

static int64_t sp_token_id(const sl_tokenizer *t, const char *text)
{
    const spbpe *m = t->impl;
    size_t n = strlen(text);
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].len == n && !memcmp(m->added[i].content, text, n))
            return m->added[i].id;
    return vocab_find(m, text, n);
}

static const sl_tok_ops ops = {sp_free, sp_state_new, sp_state_free, sp_encode, sp_decode, sp_token_id};

/* The file a path names: itself, or a directory's tokenizer.json. */
/* 1 when a pre_tokenizer or decoder value is or contains ByteLevel. */
static int has_byte_level(const sl_json *v, const char *list_key)
{
    if (!strcmp(type_of(v), "ByteLevel"))
        return 1;
    const sl_json *list = v && v->type == SL_JSON_OBJECT ? sl_json_get(v, list_key) : NULL;
    for (size_t i = 0; list && list->type == SL_JSON_ARRAY && i < list->n; i++)
        if (has_byte_level(list->kids[i], list_key))
            return 1;
    return 0;
}

/* The decision on the parsed document: model.type is "BPE" and neither the
 * pre-tokenizer nor the decoder is byte-level. */
static int sp_mine(const sl_json *root)
{
    const sl_json *model = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
    return mt && !strcmp(mt, "BPE") && !has_byte_level(sl_json_get(root, "pre_tokenizer"), "pretokenizers") &&
           !has_byte_level(sl_json_get(root, "decoder"), "decoders");
}

/* ---- a cheap first look: every byte-level tokenizer.json (GPT-2, GPT-NeoX,
 * Llama-3, Qwen2) is probed here before its own family loads it, and
 * parsing all of it (a 2.5 MB vocabulary and merge list) only to read three
 * small values cost about a third of the load. The skim (json_skim.h) steps
 * over values without building them and parses only the three it needs. On
 * anything unexpected it gives up (-1) and the whole file is parsed as
 * before, so the answer is always that of the full parse. */

/* 1 or 0 as sp_mine would say on the whole file, or -1 when the skim cannot
 * tell. */
static int sp_skim(const char *text, const sl_tokjson_spans *sp)
{
    if (!sp->model.len || text[sp->model.at] != '{')
        return 0; /* no model object: not BPE */
    if (!sp->type.len)
        return 0;
    /* a small document of the three values, parsed as the full parse would */
    sl_buf b = {0};
    sl_buf_append(&b, "{\"model\":{\"type\":", 17);
    sl_buf_append(&b, text + sp->type.at, sp->type.len);
    if (sp->pre_tokenizer.len) {
        sl_buf_append(&b, "},\"pre_tokenizer\":", 18);
        sl_buf_append(&b, text + sp->pre_tokenizer.at, sp->pre_tokenizer.len);
    } else {
        sl_buf_append(&b, "}", 1);
    }
    if (sp->decoder.len) {
        sl_buf_append(&b, ",\"decoder\":", 11);
        sl_buf_append(&b, text + sp->decoder.at, sp->decoder.len);
    }
    sl_buf_append(&b, "}", 1);
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(b.data, b.len, NULL, &e);
    int mine = doc ? sp_mine(sl_json_root(doc)) : -1;
    sl_json_free(doc);
    sl_buf_free(&b);
    return mine;
}

/* A tokenizer.json whose model is BPE and whose pre-tokenizer and decoder
 * are not byte-level is this family's. */
static int sp_probe(sl_tok_src *src)
{
    const char *text;
    size_t len;
    if (!sl_tokjson_head_is_object(src) || sl_tok_src_json(src, &text, &len))
        return 0;
    const sl_tokjson_spans *sp = sl_tok_src_skim(src);
    int mine = sp ? sp_skim(text, sp) : -1;
    if (mine < 0) {
        /* the skim could not tell: the whole file decides (also whether it
         * is valid JSON at all; when the skim says yes, the load's parse
         * reports a file that is not) */
        sl_err e = {{0}};
        sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
        mine = doc ? sp_mine(sl_json_root(doc)) : 0;
        sl_json_free(doc);
    }
    return mine;
}

sl_tokenizer *sl_tok_spbpe_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                    sl_err *err)
{
    spbpe *m = load_json(text, len, name, err);
    if (!m)
        return NULL;
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    sl_sha256_update(&h, text, len);
    sl_sha256_final(&h, d);
    sl_sha256_hex(d, m->fingerprint);

    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_spbpe, &ops, m);
    if (o)
        t->special_mode = o->special;
    t->vocab_size = m->n_ids;
    sl_tokenizer_set_specials(t, m->added, m->n_added);
    t->special[SL_TOK_EOS] = sp_token_id(t, "</s>");
    t->special[SL_TOK_BOS] = sp_token_id(t, "<s>");
    t->special[SL_TOK_UNK] = m->unk_id;
    t->special[SL_TOK_PAD] = sp_token_id(t, "<pad>");
    snprintf(t->fingerprint, sizeof t->fingerprint, "%s", m->fingerprint);
    const char *base = strrchr(name, '/');
    snprintf(t->name, sizeof t->name, "bpe:%s", base && base[1] ? base + 1 : name);
    return t;
}

static sl_tokenizer *sp_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_spbpe_load_mem);
}

const sl_tok_family sl_tok_family_spbpe = {"spbpe", sp_probe, sp_load, NULL, NULL};
