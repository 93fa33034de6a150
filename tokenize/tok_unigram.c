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
 *   4. the pre-tokenizers: Metaspace (replacement, prepend_scheme, split)
 *      and WhitespaceSplit, alone or in a Sequence;
 *   5. the Unigram model on each piece (unigram.h, double arithmetic, every
 *      vocabulary entry in the lattice, min_score over all of them); runs of
 *      unknown characters are one piece, which becomes its <0xXX> tokens
 *      with byte_fallback (when all exist), else the unk id.
 * "first" prepend_scheme prepends only to the piece that starts the text
 * (HF: whose first byte HF aligns with original offset 0: sl_norm_scratch
 * .lead). Decoding is the file's decoder chain (decoders.h); an added token
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
#include "tokenize/sha256.h"
#include "tokenize/tokenizer_impl.h"
#include "tokenize/unigram.h"

enum { P_METASPACE = 1, P_WSSPLIT };
#define MAX_STEPS 8

typedef struct pstep {
    int kind;
    char rep[5];
    size_t rep_len;
    int scheme, split;
} pstep;

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
    pstep pre[MAX_STEPS];
    size_t n_pre;
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

static int load_pre_tokenizer(uni *m, const sl_json *v, int depth, sl_err *err)
{
    if (is_null(v))
        return 0;
    const char *t = type_of(v);
    if (!strcmp(t, "Sequence") && depth == 0) {
        const sl_json *list = sl_json_get(v, "pretokenizers");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: pre_tokenizer Sequence has no 'pretokenizers' list", m->name);
        for (size_t i = 0; i < list->n; i++)
            if (load_pre_tokenizer(m, list->kids[i], 1, err))
                return -1;
        return 0;
    }
    if (m->n_pre == MAX_STEPS)
        return sl_errf(err, "%s: more than %d pre-tokenizer steps", m->name, MAX_STEPS);
    pstep *p = &m->pre[m->n_pre];
    if (!strcmp(t, "WhitespaceSplit")) {
        p->kind = P_WSSPLIT;
    } else if (!strcmp(t, "Metaspace")) {
        const sl_json *r = sl_json_get(v, "replacement");
        uint32_t cp;
        if (!r || r->type != SL_JSON_STRING || r->str_len > 4 || !r->str_len ||
            sl_utf8_seq((const uint8_t *)r->str, r->str_len, &cp) != r->str_len)
            return sl_errf(err, "%s: pre_tokenizer Metaspace needs a one-character 'replacement'", m->name);
        memcpy(p->rep, r->str, r->str_len);
        p->rep_len = r->str_len;
        int split;
        p->split = sl_json_get_bool(v, "split", &split) == 0 ? split : 1;
        p->kind = P_METASPACE;
        if (sl_prepend_scheme(v, m->name, "pre_tokenizer", &p->scheme, err))
            return -1;
    } else {
        return sl_errf(err,
                       "%s: pre_tokenizer '%s' is not supported with a Unigram model (only Metaspace, WhitespaceSplit, "
                       "Sequence)",
                       m->name, t);
    }
    m->n_pre++;
    return 0;
}

static int load_model(uni *m, const sl_json *model, sl_err *err)
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
    double lo = 1e300;
    for (size_t i = 0; i < vocab->n; i++) {
        const sl_json *e = vocab->kids[i];
        if (e->type != SL_JSON_ARRAY || e->n != 2 || e->kids[0]->type != SL_JSON_STRING ||
            e->kids[1]->type != SL_JSON_NUMBER)
            return sl_errf(err, "%s:offset %zu: vocab entry %zu is not [piece, score]", m->name, e->offset, i);
        const sl_json *k = e->kids[0];
        set_string(m, (uint32_t)i, k->str, k->str_len);
        /* string -> id: the last of equal strings wins (HF's HashMap insert) */
        uint64_t h = XXH3_64bits(k->str, k->str_len) & m->vocab_mask;
        for (; m->vocab[h].id1; h = (h + 1) & m->vocab_mask)
            if (m->vocab[h].len == k->str_len && !memcmp(m->pool.data + m->vocab[h].off, k->str, k->str_len))
                break;
        m->vocab[h] = (struct vslot){(uint32_t)i + 1, m->off[i], m->len[i]};
        lo = e->kids[1]->num < lo ? e->kids[1]->num : lo;
    }
    /* the lattice: every entry, scored by the id its string maps to */
    for (size_t i = vocab->n; i-- > 0;) {
        const sl_json *e = vocab->kids[i];
        if (!e->kids[0]->str_len)
            continue;
        int64_t id = vocab_find(m, e->kids[0]->str, e->kids[0]->str_len);
        if (id == (int64_t)i)
            sl_unigram_add(m->u, (uint32_t)i, e->kids[0]->str, e->kids[0]->str_len, e->kids[1]->num, SL_UNI_NORMAL);
    }
    m->unk_id = -1;
    const sl_json *unk = sl_json_get(model, "unk_id");
    if (!is_null(unk)) {
        int64_t id;
        if (!sl_json_is_int(unk, &id) || id < 0 || id >= (int64_t)m->n_ids)
            return sl_errf(err, "%s:offset %zu: model.unk_id is not an id of the vocab", m->name, unk->offset);
        m->unk_id = id;
    }
    sl_unigram_set(m->u, m->unk_id, lo, 0);
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
    const sl_json *pp = sl_json_get(root, "post_processor");
    if (!is_null(pp) && strcmp(type_of(pp), "TemplateProcessing")) {
        sl_errf(err, "%s: post_processor '%s' is not supported with this model (only TemplateProcessing or null)", name,
                type_of(pp));
        goto fail;
    }
    if (load_model(m, model, err) || sl_normalizer_load(&m->norm, sl_json_get(root, "normalizer"), name, err) ||
        load_pre_tokenizer(m, sl_json_get(root, "pre_tokenizer"), 0, err) ||
        sl_decoder_load(&m->dec, sl_json_get(root, "decoder"), name, err) ||
        sl_added_parse(sl_json_get(root, "added_tokens"), name, &m->added, &m->n_added, err))
        goto fail;
    tmp = un_state_new(m);
    if (finish_added(m, tmp, err))
        goto fail;
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
static void replace_str(const char *s, size_t n, const char *a, size_t an, const char *b, size_t bn, sl_buf *out)
{
    size_t i = 0, done = 0;
    while (i + an <= n) {
        const char *hit = memmem(s + i, n - i, a, an);
        if (!hit)
            break;
        i = (size_t)(hit - s);
        sl_buf_append(out, s + done, i - done);
        sl_buf_append(out, b, bn);
        i += an;
        done = i;
    }
    sl_buf_append(out, s + done, n - done);
}

static size_t strip_left(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = sl_utf8_seq((const uint8_t *)s + i, n - i, &cp);
        if (!k || !sl_uc_is_space(cp))
            break;
        i += k;
    }
    return i;
}

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
        int64_t id = vocab_find(m, p + a, b - a);
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

/* Pre-tokenizer step k on piece p[0..n), then the following steps, then
 * the model. first: how many leading bytes of the piece HF aligns with the
 * start of the text (0: the piece does not start the text). */
static void pre_step(const uni *m, un_state *s, size_t k, const char *p, size_t n, size_t first)
{
    if (k == m->n_pre) {
        model_piece(m, s, p, n);
        return;
    }
    const pstep *st = &m->pre[k];
    if (st->kind == P_WSSPLIT) {
        size_t i = 0;
        while (i < n) {
            size_t a = i + strip_left(p + i, n - i), b = a;
            while (b < n) {
                uint32_t cp;
                size_t c = sl_utf8_seq((const uint8_t *)p + b, n - b, &cp);
                if (!c)
                    c = 1;
                else if (sl_uc_is_space(cp))
                    break;
                b += c;
            }
            if (b > a)
                pre_step(m, s, k + 1, p + a, b - a, a < first ? first - a : 0);
            i = b;
        }
        return;
    }
    if (!n)
        return;
    /* Metaspace: spaces become the replacement, which is prepended */
    sl_buf b = {0};
    int prepend = st->scheme == SL_PREPEND_ALWAYS || (st->scheme == SL_PREPEND_FIRST && first > 0);
    if (prepend && !(n >= st->rep_len && !memcmp(p, st->rep, st->rep_len)) && p[0] != ' ')
        sl_buf_append(&b, st->rep, st->rep_len);
    replace_str(p, n, " ", 1, st->rep, st->rep_len, &b);
    if (!st->split) {
        pre_step(m, s, k + 1, b.data, b.len, first);
        sl_buf_free(&b);
        return;
    }
    size_t start = 0;
    for (size_t i = 1; i + st->rep_len <= b.len;) {
        const char *hit = memmem(b.data + i, b.len - i, st->rep, st->rep_len);
        if (!hit)
            break;
        i = (size_t)(hit - b.data);
        if (i > start) {
            pre_step(m, s, k + 1, b.data + start, i - start, start == 0 ? first : 0);
            start = i;
        }
        i += st->rep_len;
    }
    pre_step(m, s, k + 1, b.data + start, b.len - start, start == 0 ? first : 0);
    sl_buf_free(&b);
}

static int gap_normalized(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    un_state *s = ctx;
    (void)err;
    pre_step(s->m, s, 0, p, n, s->raw_first && off < s->lead ? s->lead - off : 0);
    return 0;
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

static char *json_path(const char *path, int is_dir)
{
    if (!is_dir)
        return sl_xstrdup(path);
    sl_buf b = {0};
    sl_buf_printf(&b, "%s/tokenizer.json", path);
    return b.data;
}

/* A tokenizer.json whose model is Unigram. */
static int un_probe(const char *path, int is_dir, const unsigned char *head, size_t n)
{
    if (!is_dir) {
        size_t i = 0;
        while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
            i++;
        if (i == n || head[i] != '{')
            return 0;
    }
    char *p = json_path(path, is_dir), *text = NULL;
    size_t len;
    sl_err e = {{0}};
    int mine = 0;
    char type[32];
    int skim = -1;
    if (sl_read_file(p, &text, &len, &e) == 0 && (skim = sl_tokjson_model_type(text, len, type, sizeof type)) >= 0) {
        const char *mt = skim ? type : NULL; /* json_skim.h: the full parse's answer, cheaply */
        mine = mt && (!strcmp(mt, "Unigram"));
    } else if (text) {
        sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
        const sl_json *root = doc ? sl_json_root(doc) : NULL;
        const sl_json *model = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
        const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
        mine = mt && !strcmp(mt, "Unigram");
        sl_json_free(doc);
    }
    free(text);
    free(p);
    return mine;
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
    t->special[SL_TOK_EOS] = un_token_id(t, "</s>");
    t->special[SL_TOK_BOS] = un_token_id(t, "<s>");
    t->special[SL_TOK_UNK] = m->unk_id;
    t->special[SL_TOK_PAD] = un_token_id(t, "<pad>");
    memcpy(t->fingerprint, "sha256:", 7);
    for (int i = 0; i < 32; i++) {
        static const char hex[] = "0123456789abcdef";
        t->fingerprint[7 + 2 * i] = hex[d[i] >> 4];
        t->fingerprint[8 + 2 * i] = hex[d[i] & 15];
    }
    t->fingerprint[71] = 0;
    const char *base = strrchr(name, '/');
    snprintf(t->name, sizeof t->name, "unigram:%s", base && base[1] ? base + 1 : name);
    return t;
}

static sl_tokenizer *un_load(const char *path, const sl_tokenizer_opts *o, sl_err *err)
{
    struct stat st;
    char *p = json_path(path, stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    char *text = NULL;
    size_t len;
    sl_tokenizer *t = NULL;
    if (sl_read_file(p, &text, &len, err) == 0)
        t = sl_tok_unigram_load_mem(text, len, p, o, err);
    free(text);
    free(p);
    return t;
}

const sl_tok_family sl_tok_family_unigram = {"unigram", un_probe, un_load, NULL, NULL};
