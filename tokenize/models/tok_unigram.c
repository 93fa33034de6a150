/* The Unigram model (an sl_hf_model, hf_pipeline.h) and its family behind
 * tokenizer.h: Hugging Face files whose model is "Unigram", as
 * `transformers` converts SentencePiece Unigram models (T5, mT5, ALBERT,
 * XLNet style: SpmConverter), with ids equal to HF tokenizers'
 * encode(text, add_special_tokens=False) and text equal to its
 * decode(ids, skip_special_tokens=False). The pipeline runs the added
 * tokens, normalizer, pre-tokenizer, post-processor and decoder.
 *
 * The model on each piece: unigram.h (double arithmetic, every vocabulary
 * entry in the lattice, min_score over all of them); runs of unknown
 * characters are one piece, which becomes its <0xXX> tokens with
 * byte_fallback (when all exist), else the unk id. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/hf_pipeline.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/unigram.h"
#include "tokenize/models/vlist.h"
#include "tokenize/scache.h"

typedef struct uni {
    char *name;
    sl_vocab vocab; /* a list: the last of equal strings maps to its id, as HF */
    sl_unigram *u;
    int64_t unk_id;
    int byte_fallback;
    int32_t byte_id[256];
    sl_scache_shared *cache; /* the threads' shared short-piece table */
} uni;

typedef struct un_state {
    sl_uni_scratch us;
    sl_scache cache; /* piece -> its ids */
    sl_ids *out;
} un_state;

static int64_t vocab_find(const uni *m, const char *s, size_t n)
{
    return sl_vocab_find(&m->vocab, s, n);
}

static void free_uni(void *impl)
{
    uni *m = impl;
    if (!m)
        return;
    free(m->name);
    sl_vocab_free(&m->vocab);
    sl_unigram_free(m->u);
    sl_scache_shared_free(m->cache);
    free(m);
}

/* --- loading ------------------------------------------------------------- */
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

/* model.vocab as a list: read ahead (L given), else from the tree. */
static int vocab_list(const uni *m, const sl_json *model, const sl_uni_vlist *ahead, sl_uni_vlist *L, sl_err *err)
{
    if (ahead) {
        *L = (sl_uni_vlist){ahead->v, ahead->n, NULL};
        return 0;
    }
    const sl_json *vocab = sl_json_get(model, "vocab");
    if (!vocab || vocab->type != SL_JSON_ARRAY || !vocab->n)
        return sl_errf(err, "%s: model.vocab is missing or not a non-empty list of [piece, score]", m->name);
    L->v = sl_xmalloc(vocab->n * sizeof *L->v);
    L->n = vocab->n;
    for (size_t i = 0; i < vocab->n; i++) {
        const sl_json *e = vocab->kids[i];
        if (e->type != SL_JSON_ARRAY || e->n != 2 || e->kids[0]->type != SL_JSON_STRING ||
            e->kids[1]->type != SL_JSON_NUMBER) {
            free(L->v);
            return sl_errf(err, "%s: offset %zu: vocab entry %zu is not [piece, score]", m->name, e->offset, i);
        }
        L->v[i] = (sl_uni_vent){e->kids[0]->str, e->kids[0]->str_len, e->offset, e->kids[1]->offset};
    }
    return 0;
}

static int load_model(uni *m, const sl_json *model, const sl_hf_src *src, sl_err *err)
{
    sl_uni_vlist L = {0};
    if (vocab_list(m, model, src->pre, &L, err))
        return -1;
    int rc = -1;
    double *score = NULL;
    if (L.n >= (size_t)1 << 31) {
        sl_errf(err, "%s: model.vocab is too large", m->name);
        goto done;
    }
    int bv;
    m->byte_fallback = sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv;
    sl_vocab_init(&m->vocab, (uint32_t)L.n, L.n);
    m->u = sl_unigram_new(m->vocab.n_ids, 1);
    double p10[309];
    for (int k = 0; k <= 308; k++) {
        char b[8];
        snprintf(b, sizeof b, "1e%d", k);
        p10[k] = strtod(b, NULL);
    }
    score = sl_xmalloc(L.n * sizeof *score);
    double lo = 1e300;
    for (size_t i = 0; i < L.n; i++) {
        const sl_uni_vent *e = &L.v[i];
        sl_vocab_put_last(&m->vocab, (uint32_t)i, e->s, e->len); /* HF's HashMap insert */
        score[i] = serde_f64(src->text + e->num, src->len - e->num, p10);
        /* beyond a double: serde_json refuses it too ("number out of range");
         * beyond 1e290: a path's sum of up to 2^29 pieces in double could
         * reach infinity, where no candidate wins (HF loads such a file) */
        if (!isfinite(score[i]) || fabs(score[i]) > 1e290) {
            sl_errf(err, "%s: offset %zu: vocab entry %zu: the score is out of range (beyond 1e290 in magnitude)",
                    m->name, e->num, i);
            goto done;
        }
        lo = score[i] < lo ? score[i] : lo;
    }
    /* the lattice: every string once, with the id it maps to (the last
     * entry of equal strings), added first: the last entry first */
    for (size_t i = L.n; i-- > 0;)
        if (L.v[i].len)
            sl_unigram_add(m->u, (uint32_t)i, L.v[i].s, L.v[i].len, score[i], SL_UNI_NORMAL);
    rc = 0;
done:
    free(score);
    if (!src->pre)
        free(L.v);
    if (rc)
        return rc;
    m->unk_id = -1;
    const sl_json *unk = sl_json_get(model, "unk_id");
    if (!sl_hf_is_null(unk)) {
        int64_t id;
        if (!sl_json_is_int(unk, &id) || id < 0 || id >= (int64_t)m->vocab.n_ids)
            return sl_errf(err, "%s: offset %zu: model.unk_id is not an id of the vocab", m->name, unk->offset);
        m->unk_id = id;
    }
    sl_unigram_set(m->u, m->unk_id, lo);
    m->cache = sl_scache_shared_new();
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = (int32_t)vocab_find(m, code, 6);
    }
    return 0;
}

/* --- encoding ------------------------------------------------------------ */
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

/* --- the model ----------------------------------------------------------- */
static void *un_load_model(const sl_json *model, const sl_hf_src *src, sl_err *err)
{
    uni *m = sl_xcalloc(1, sizeof *m);
    m->name = sl_xstrdup(src->name);
    if (load_model(m, model, src, err)) {
        free_uni(m);
        return NULL;
    }
    return m;
}

static sl_vocab *un_vocab(void *model)
{
    return &((uni *)model)->vocab;
}

static int64_t un_unk_id(const void *model)
{
    return ((const uni *)model)->unk_id;
}

static void *un_state_new(const void *model)
{
    un_state *s = sl_xcalloc(1, sizeof *s);
    sl_scache_init(&s->cache, ((const uni *)model)->cache);
    return s;
}

static void un_state_free(void *state)
{
    un_state *s = state;
    if (!s)
        return;
    sl_uni_scratch_free(&s->us);
    sl_scache_free(&s->cache);
    free(s);
}

static int un_encode(const void *model, void *state, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    (void)err;
    un_state *s = state;
    s->out = out;
    /* HF's Unigram runs each pre-tokenized piece's lattice on its own, in
     * double from 0: its ids depend on the piece alone, so they are kept */
    uint64_t h;
    if (sl_scache_ids(&s->cache, p, n, out, &h))
        return 0;
    size_t start = out->n;
    model_piece(model, s, p, n);
    sl_scache_put_ids(&s->cache, h, p, n, out, start);
    return 0;
}

static void *un_read_ahead(const char *text, size_t len, const sl_skim_span *sp)
{
    (void)len; /* (the span lies in it) */
    sl_uni_vlist *L = sl_xmalloc(sizeof *L);
    if (sp[0].len && sl_uni_vocab_read(text, sp[0].at, sp[0].len, L))
        return L;
    free(L);
    return NULL;
}

static void un_free_ahead(void *pre)
{
    sl_uni_vlist_free(pre);
    free(pre);
}

static const char *const un_ahead[] = {"vocab"};

static const sl_hf_model un_model = {
    .name_prefix = "unigram",
    .specials = {{"</s>"}, {"<s>"}, {"<pad>"}},
    .bad_utf8 = SL_HF_BAD_FFFD,
    .max_text = INT32_MAX / 4, /* the lattice keeps 32-bit offsets; normalization may grow the text */
    .added_mult = 1,
    .added_slack = 1024,
    .ahead = un_ahead,
    .n_ahead = 1,
    .read_ahead = un_read_ahead,
    .free_ahead = un_free_ahead,
    .load = un_load_model,
    .free = free_uni,
    .vocab = un_vocab,
    .unk_id = un_unk_id,
    .state_new = un_state_new,
    .state_free = un_state_free,
    .encode = un_encode,
};

/* --- the family ---------------------------------------------------------- */
/* A tokenizer.json whose model is Unigram. */
static int un_probe(sl_tok_src *src)
{
    static const char *const types[] = {"Unigram", NULL};
    return sl_tokjson_probe_model(src, types);
}

sl_tokenizer *sl_tok_unigram_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                      sl_err *err)
{
    return sl_hf_load_mem(&un_model, &sl_tok_family_unigram, text, len, name, o, err);
}

static sl_tokenizer *un_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_unigram_load_mem);
}

const sl_tok_family sl_tok_family_unigram = {"unigram", un_probe, un_load, NULL, NULL};
