/* The Unigram tokenizer.json family behind tokenizer.h: Hugging Face files
 * whose model is "Unigram", as `transformers` converts SentencePiece
 * Unigram models (T5, mT5, ALBERT, XLNet style: SpmConverter), with ids
 * equal to HF tokenizers' encode(text, add_special_tokens=False) and text
 * equal to its decode(ids, skip_special_tokens=False).
 *
 * Encoding follows HF:
 *   1. added tokens that are not normalized are split out of the raw text
 *      (added.h; special ones per sl_special_mode);
 *   2. the normalizer (normalize.h, the engine every tokenizer.json family
 *      shares: any of HF's NFC, NFD, NFKC, NFKD, Lowercase, Strip,
 *      StripAccents, Replace, Prepend, Precompiled, BertNormalizer, in a
 *      Sequence) on each remaining stretch;
 *   3. normalized added tokens are split out;
 *   4. the pre-tokenizer (pretokenizer.h, shared with the other families:
 *      Metaspace, WhitespaceSplit, Whitespace, BertPreTokenizer,
 *      Punctuation, Digits, Split, in a Sequence);
 *   5. the Unigram model on each piece (unigram.h, double arithmetic, every
 *      vocabulary entry in the lattice, min_score over all of them); runs of
 *      unknown characters are one piece, which becomes its <0xXX> tokens
 *      with byte_fallback (when all exist), else the unk id.
 * "first" prepend_scheme prepends only to the piece that starts the text
 * (HF: whose first byte HF aligns with original offset 0: sl_norm_scratch
 * .lead). Post-processors (postproc.h) act through tokenizer.c when asked
 * for. Decoding is the file's decoder chain (decoders.h); an added token
 * decodes as its normalized form when it is normalized (HF 0.23). Anything
 * else is refused at load time, naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "stream/io.h"
#include "stream/json.h"
#include "tokenize/added.h"
#include "tokenize/decoders.h"
#include "tokenize/json_skim.h"
#include "tokenize/normalize.h"
#include "tokenize/postproc.h"
#include "tokenize/pretokenizer.h"
#include "tokenize/sha256.h"
#include "tokenize/tokenizer_impl.h"
#include "tokenize/unigram.h"

typedef struct uni {
    char *name;
    uint32_t n_ids;
    uint32_t *off, *len; /* id -> string (vocab, or an added token's); len UINT32_MAX: none */
    sl_buf pool;
    struct vslot {
        uint32_t id1, off, len;
    } * vocab; /* model vocabulary string -> id (the last of equal strings, as HF) */
    uint64_t vocab_mask;
    sl_unigram *u;
    int64_t unk_id;
    int byte_fallback;
    int32_t byte_id[256];
    sl_normalizer norm;
    sl_pretokenizer pre;
    sl_decoder dec;
    sl_added *added;
    size_t n_added;
    sl_trie raw_trie, norm_trie;
} uni;

typedef struct un_state {
    const uni *m;
    sl_buf na;
    sl_norm_scratch ns;
    sl_uni_scratch us;
    sl_pretok_scratch ps;
    sl_ids *out;
    sl_special_mode mode;
    size_t base;
    int raw_first; /* the raw gap starts at offset 0 of the text */
    size_t lead;   /* leading bytes of the normalized gap aligned with its start (normalize.h) */
} un_state;

/* --- vocabulary ------------------------------------------------------------ */
static int64_t vocab_find(const uni *m, const char *s, size_t n)
{
    for (uint64_t h = XXH3_64bits(s, n) & m->vocab_mask; m->vocab[h].id1; h = (h + 1) & m->vocab_mask) {
        const struct vslot *v = &m->vocab[h];
        if (v->len == n && !memcmp(m->pool.data + v->off, s, n))
            return v->id1 - 1;
    }
    return -1;
}

static void set_string(uni *m, uint32_t id, const char *s, size_t n)
{
    m->off[id] = (uint32_t)m->pool.len;
    m->len[id] = (uint32_t)n;
    sl_buf_append(&m->pool, s, n);
    sl_buf_putc(&m->pool, 0);
}

static void free_uni(uni *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->off);
    free(m->len);
    sl_buf_free(&m->pool);
    free(m->vocab);
    sl_unigram_free(m->u);
    sl_normalizer_free(&m->norm);
    sl_pretokenizer_free(&m->pre);
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

/* The number at s[0..n) (JSON syntax, already checked by the parser) as
 * serde_json reads it without its float_roundtrip feature, as HF's
 * tokenizers does: the decimal digits as a u64 (digits beyond its range
 * dropped), then one multiplication or division by a power of ten. That is
 * not always the nearest double (strtod's), and a Viterbi tie between two
 * segmentations can turn on the last bit. */
static double serde_f64(const char *s, size_t n, const double *p10)
{
    size_t i = 0;
    int neg = i < n && s[i] == '-';
    i += (size_t)neg;
    uint64_t sig = 0;
    int64_t exp10 = 0;
    int over = 0;
    for (int frac = 0; i < n; i++) {
        if (s[i] == '.' && !frac) {
            frac = 1;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            break;
        unsigned d = (unsigned)(s[i] - '0');
        if (!over && sig >= UINT64_MAX / 10 && (sig > UINT64_MAX / 10 || d > UINT64_MAX % 10))
            over = 1;
        if (over) {
            exp10 += !frac; /* an integer digit past the range still scales */
            continue;
        }
        sig = sig * 10 + d;
        exp10 -= frac;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = i < n && s[i] == '-';
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        int64_t e = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            e = e < 100000 ? e * 10 + (s[i] - '0') : e;
        exp10 += eneg ? -e : e;
    }
    double f = (double)sig;
    for (;;) {
        int64_t a = exp10 < 0 ? -exp10 : exp10;
        if (a <= 308) {
            f = exp10 >= 0 ? f * p10[a] : f / p10[a];
            break;
        }
        if (f == 0 || exp10 > 0) {
            f = f == 0 ? 0 : f * 1e308 * 1e308;
            break;
        }
        f /= 1e308;
        exp10 += 308;
    }
    return neg ? -f : f;
}

static int load_model(uni *m, const sl_json *model, const char *text, size_t text_len, sl_err *err)
{
    const sl_json *vocab = sl_json_get(model, "vocab");
    if (!vocab || vocab->type != SL_JSON_ARRAY || !vocab->n)
        return sl_errf(err, "%s: model.vocab is missing or not a non-empty list of [piece, score]", m->name);
    if (vocab->n >= (size_t)1 << 31)
        return sl_errf(err, "%s: model.vocab is too large", m->name);
    int bv;
    m->byte_fallback = sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv;
    m->n_ids = (uint32_t)vocab->n;
    m->off = sl_xcalloc(m->n_ids, sizeof *m->off);
    m->len = sl_xmalloc(m->n_ids * sizeof *m->len);
    size_t cap = 16;
    while (cap < 2 * vocab->n + 16)
        cap *= 2;
    m->vocab = sl_xcalloc(cap, sizeof *m->vocab);
    m->vocab_mask = cap - 1;
    m->u = sl_unigram_new(m->n_ids, 1);
    double p10[309];
    for (int k = 0; k <= 308; k++) {
        char b[8];
        snprintf(b, sizeof b, "1e%d", k);
        p10[k] = strtod(b, NULL);
    }
    double *score = sl_xmalloc(vocab->n * sizeof *score);
    double lo = 1e300;
    for (size_t i = 0; i < vocab->n; i++) {
        const sl_json *e = vocab->kids[i];
        if (e->type != SL_JSON_ARRAY || e->n != 2 || e->kids[0]->type != SL_JSON_STRING ||
            e->kids[1]->type != SL_JSON_NUMBER) {
            free(score);
            return sl_errf(err, "%s:offset %zu: vocab entry %zu is not [piece, score]", m->name, e->offset, i);
        }
        const sl_json *k = e->kids[0];
        set_string(m, (uint32_t)i, k->str, k->str_len);
        /* string -> id: the last of equal strings wins (HF's HashMap insert) */
        uint64_t h = XXH3_64bits(k->str, k->str_len) & m->vocab_mask;
        for (; m->vocab[h].id1; h = (h + 1) & m->vocab_mask)
            if (m->vocab[h].len == k->str_len && !memcmp(m->pool.data + m->vocab[h].off, k->str, k->str_len))
                break;
        m->vocab[h] = (struct vslot){(uint32_t)i + 1, m->off[i], m->len[i]};
        size_t at = e->kids[1]->offset;
        score[i] = at < text_len ? serde_f64(text + at, text_len - at, p10) : e->kids[1]->num;
        lo = score[i] < lo ? score[i] : lo;
    }
    /* the lattice: every entry, scored by the id its string maps to */
    for (size_t i = vocab->n; i-- > 0;) {
        const sl_json *e = vocab->kids[i];
        if (!e->kids[0]->str_len)
            continue;
        int64_t id = vocab_find(m, e->kids[0]->str, e->kids[0]->str_len);
        if (id == (int64_t)i)
            sl_unigram_add(m->u, (uint32_t)i, e->kids[0]->str, e->kids[0]->str_len, score[i], SL_UNI_NORMAL);
    }
    free(score);
    m->unk_id = -1;
    const sl_json *unk = sl_json_get(model, "unk_id");
    if (!is_null(unk)) {
        int64_t id;
        if (!sl_json_is_int(unk, &id) || id < 0 || id >= (int64_t)m->n_ids)
            return sl_errf(err, "%s:offset %zu: model.unk_id is not an id of the vocab", m->name, unk->offset);
        m->unk_id = id;
    }
    sl_unigram_set(m->u, m->unk_id, lo);
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = (int32_t)vocab_find(m, code, 6);
    }
    return 0;
}

static int normalize(const uni *m, un_state *s, const char *p, size_t n, sl_buf *out, sl_err *err);

static int finish_added(uni *m, un_state *tmp, sl_err *err)
{
    uint32_t max_id = m->n_ids;
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].id + 1 > max_id)
            max_id = m->added[i].id + 1;
    if (max_id > m->n_ids + (uint64_t)m->n_added + 1024)
        return sl_errf(err, "%s: added token id %u is far beyond the vocab (%u ids)", m->name, max_id - 1, m->n_ids);
    if (max_id > m->n_ids) {
        m->off = sl_xrealloc(m->off, max_id * sizeof *m->off);
        m->len = sl_xrealloc(m->len, max_id * sizeof *m->len);
        for (uint32_t i = m->n_ids; i < max_id; i++)
            m->len[i] = UINT32_MAX, m->off[i] = 0;
        m->n_ids = max_id;
    }
    sl_buf nb = {0};
    for (size_t i = 0; i < m->n_added; i++) {
        sl_added *a = &m->added[i];
        if (a->normalized && m->norm.n) {
            if (normalize(m, tmp, a->content, a->len, &nb, err)) {
                sl_buf_free(&nb);
                sl_err_prefix(err, "%s: added token %u", m->name, a->id);
                return -1;
            }
            a->match = sl_xstrndup(nb.data ? nb.data : "", nb.len);
            a->match_len = nb.len;
        } else {
            a->match = sl_xstrndup(a->content, a->len);
            a->match_len = a->len;
        }
        /* HF (0.23) decodes an added id as the added token, in its
         * normalized form when it is normalized */
        set_string(m, a->id, a->match, a->match_len);
        if (a->match_len)
            sl_trie_add(a->normalized ? &m->norm_trie : &m->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    sl_buf_free(&nb);
    return 0;
}

static void *un_state_new(const void *impl);
static void un_state_free(void *state);

static uni *load_json(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", name);
        return NULL;
    }
    uni *m = sl_xcalloc(1, sizeof *m);
    m->name = sl_xstrdup(name);
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    un_state *tmp = NULL;
    if (!model || model->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object)", name);
        goto fail;
    }
    if (!is_null(sl_json_get(root, "truncation")) || !is_null(sl_json_get(root, "padding"))) {
        sl_errf(err, "%s: %s is not supported (set it to null)", name,
                is_null(sl_json_get(root, "truncation")) ? "padding" : "truncation");
        goto fail;
    }
    if (load_model(m, model, text, len, err) ||
        sl_normalizer_load(&m->norm, sl_json_get(root, "normalizer"), name, err) ||
        sl_pretokenizer_load(&m->pre, sl_json_get(root, "pre_tokenizer"), name, err) ||
        sl_decoder_load(&m->dec, sl_json_get(root, "decoder"), name, err) ||
        sl_added_parse(sl_json_get(root, "added_tokens"), name, &m->added, &m->n_added, err))
        goto fail;
    tmp = un_state_new(m);
    if (finish_added(m, tmp, err))
        goto fail;
    /* the post-processor is read only when asked for (tokenizer.c), but a
     * file with one sluice cannot run is refused either way */
    sl_postproc pp;
    if (sl_postproc_load(&pp, sl_json_get(root, "post_processor"), m->n_ids, name, err))
        goto fail;
    sl_postproc_free(&pp);
    un_state_free(tmp);
    sl_json_free(doc);
    return m;
fail:
    un_state_free(tmp);
    sl_json_free(doc);
    free_uni(m);
    return NULL;
}

/* --- encoding ------------------------------------------------------------ */
/* The normalizer on p[0..n), result in out; sets s->lead. */
static int normalize(const uni *m, un_state *s, const char *p, size_t n, sl_buf *out, sl_err *err)
{
    if (sl_normalize(&m->norm, &s->ns, p, n, out, err))
        return -1;
    s->lead = s->ns.lead;
    return 0;
}

/* The Unigram model on one pre-tokenized piece. */
static void model_piece(const uni *m, un_state *s, const char *p, size_t n)
{
    if (!n)
        return;
    sl_unigram_encode(m->u, &s->us, p, n);
    const sl_uni_piece *pc = s->us.pieces;
    for (size_t i = 0; i < s->us.n;) {
        size_t j = i + 1;
        if (pc[i].id == m->unk_id) /* fuse_unk: a run of unknown pieces is one */
            while (j < s->us.n && pc[j].id == m->unk_id)
                j++;
        uint32_t a = pc[i].start, b = pc[j - 1].end;
        /* a lattice entry's id is the one its string maps to (load_model
         * adds no other), so only a run of unknown pieces is looked up */
        int64_t id = j == i + 1 && pc[i].id != m->unk_id ? pc[i].id : vocab_find(m, p + a, b - a);
        if (id < 0) {
            int fb = m->byte_fallback;
            for (uint32_t k = a; fb && k < b; k++)
                fb = m->byte_id[(uint8_t)p[k]] >= 0;
            if (fb) {
                for (uint32_t k = a; k < b; k++)
                    sl_ids_push(s->out, (uint32_t)m->byte_id[(uint8_t)p[k]]);
                i = j;
                continue;
            }
            id = m->unk_id;
        }
        if (id >= 0)
            sl_ids_push(s->out, (uint32_t)id);
        i = j;
    }
}

static int un_piece(void *ctx, const char *q, size_t k, sl_err *err)
{
    (void)err;
    un_state *s = ctx;
    model_piece(s->m, s, q, k);
    return 0;
}

/* The pre-tokenizer and the model on a normalized stretch (the pieces as
 * they are cut: nothing held per piece of a long document). */
static int gap_normalized(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    un_state *s = ctx;
    const uni *m = s->m;
    return sl_pretokenize_each(&m->pre, &s->ps, p, n, s->raw_first && off < s->lead ? s->lead - off : 0, un_piece, s,
                               err);
}

static int gap_raw(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    un_state *s = ctx;
    const uni *m = s->m;
    s->raw_first = s->base + off == 0;
    uint32_t cp;
    s->lead = n ? sl_utf8_seq((const uint8_t *)p, n, &cp) : 0;
    if (!m->norm.n)
        return sl_added_split(m->added, &m->norm_trie, p, n, s->base, s->mode, gap_normalized, s, s->out, err);
    if (normalize(m, s, p, n, &s->na, err))
        return -1;
    return sl_added_split(m->added, &m->norm_trie, s->na.data ? s->na.data : "", s->na.len, s->base, s->mode,
                          gap_normalized, s, s->out, err);
}

/* --- the family ---------------------------------------------------------- */
static void un_free(void *impl)
{
    free_uni(impl);
}

static void *un_state_new(const void *impl)
{
    un_state *s = sl_xcalloc(1, sizeof *s);
    s->m = impl;
    return s;
}

static void un_state_free(void *state)
{
    un_state *s = state;
    if (!s)
        return;
    sl_buf_free(&s->na);
    sl_norm_scratch_free(&s->ns);
    sl_uni_scratch_free(&s->us);
    sl_pretok_scratch_free(&s->ps);
    free(s);
}

static int un_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const uni *m = t->impl;
    un_state *s = state;
    if (n > INT32_MAX / 4) /* the lattice keeps 32-bit offsets; normalization may grow the text */
        return sl_errf(err, "a document of %zu bytes is too long for %s (at most 512 MiB)", n, m->name);
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
        if (v < n) { /* invalid UTF-8 (callers normally repair it): U+FFFD */
            s->base = v;
            if (gap_raw(s, "\xEF\xBF\xBD", 3, 0, err))
                return -1;
            v++;
        }
        pos = v;
    }
    return 0;
}

static int un_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const uni *m = t->impl;
    sl_toklist a = {0}, b = {0};
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= m->n_ids || m->len[ids[i]] == UINT32_MAX) {
            sl_toklist_free(&a);
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], m->name);
        }
        sl_toklist_push(&a, m->pool.data + m->off[ids[i]], m->len[ids[i]]);
    }
    sl_decoder_run(&m->dec, &a, &b, out);
    sl_toklist_free(&a);
    sl_toklist_free(&b);
    return 0;
}

static int64_t un_token_id(const sl_tokenizer *t, const char *text)
{
    const uni *m = t->impl;
    size_t n = strlen(text);
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].len == n && !memcmp(m->added[i].content, text, n))
            return m->added[i].id;
    return vocab_find(m, text, n);
}

static const sl_tok_ops ops = {un_free, un_state_new, un_state_free, un_encode, un_decode, un_token_id};

/* A tokenizer.json whose model is Unigram. */
static int un_probe(sl_tok_src *src)
{
    static const char *const types[] = {"Unigram", NULL};
    return sl_tokjson_probe_model(src, types);
}

sl_tokenizer *sl_tok_unigram_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                      sl_err *err)
{
    uni *m = load_json(text, len, name, err);
    if (!m)
        return NULL;
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    sl_sha256_update(&h, text, len);
    sl_sha256_final(&h, d);
    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_unigram, &ops, m);
    if (o)
        t->special_mode = o->special;
    t->vocab_size = m->n_ids;
    sl_tokenizer_set_specials(t, m->added, m->n_added);
    t->special[SL_TOK_EOS] = un_token_id(t, "</s>");
    t->special[SL_TOK_BOS] = un_token_id(t, "<s>");
    t->special[SL_TOK_UNK] = m->unk_id;
    t->special[SL_TOK_PAD] = un_token_id(t, "<pad>");
    sl_sha256_hex(d, t->fingerprint);
    const char *base = strrchr(name, '/');
    snprintf(t->name, sizeof t->name, "unigram:%s", base && base[1] ? base + 1 : name);
    return t;
}

static sl_tokenizer *un_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_unigram_load_mem);
}

const sl_tok_family sl_tok_family_unigram = {"unigram", un_probe, un_load, NULL, NULL};
