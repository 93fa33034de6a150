/* The BERT-style family behind tokenizer.h: Hugging Face tokenizer.json
 * files whose model is WordPiece (BERT and its relatives) or WordLevel,
 * with any of the normalizers of normalize.h, the pre-tokenizers of
 * pretokenizer.h and the decoders of decoders.h.
 *
 * Encoding follows HF `tokenizers` (encode(text, add_special_tokens=False)):
 *   1. added tokens that are not normalized are split out of the raw text
 *      (added.h; special ones per sl_special_mode);
 *   2. each remaining stretch is normalized;
 *   3. normalized added tokens are split out of it;
 *   4. the pre-tokenizer cuts each remaining stretch into pieces;
 *   5. the model turns each piece into ids (models.h).
 * Post-processors act through tokenizer.c (postproc.h) when asked for.
 * Decoding is the file's decoder chain; an id is decoded as its added
 * token first (normalized when that token is), as HF does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/io.h"
#include "stream/json.h"
#include "stream/utf8.h"
#include "tokenize/added.h"
#include "tokenize/decoders.h"
#include "tokenize/json_skim.h"
#include "tokenize/models.h"
#include "tokenize/normalize.h"
#include "tokenize/postproc.h"
#include "tokenize/pretokenizer.h"
#include "tokenize/sha256.h"
#include "tokenize/tokenizer_impl.h"

typedef struct wp {
    char *name;
    sl_vocab_model model; /* its vocab also holds the added tokens' strings for decoding */
    sl_normalizer norm;
    sl_pretokenizer pre;
    sl_decoder dec;
    sl_added *added;
    size_t n_added;
    sl_trie raw_trie, norm_trie;
} wp;

typedef struct wp_state {
    const wp *m;
    sl_norm_scratch ns;
    sl_pretok_scratch ps;
    sl_buf norm, tmp;
    sl_ids *out;
    sl_special_mode mode;
    size_t base;
    int raw_first; /* the raw gap starts at offset 0 of the text */
    size_t lead;   /* leading bytes of the normalized gap aligned with its start (normalize.h) */
} wp_state;

static void free_wp(wp *m)
{
    if (!m)
        return;
    free(m->name);
    sl_vocab_model_free(&m->model);
    sl_normalizer_free(&m->norm);
    sl_pretokenizer_free(&m->pre);
    sl_decoder_free(&m->dec);
    sl_added_free(m->added, m->n_added);
    sl_trie_free(&m->raw_trie);
    sl_trie_free(&m->norm_trie);
    free(m);
}

static int is_null(const sl_json *v)
{
    return !v || v->type == SL_JSON_NULL;
}

static int finish_added(wp *m, sl_err *err)
{
    sl_vocab *v = &m->model.vocab;
    uint32_t max_id = v->n_ids;
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].id + 1 > max_id)
            max_id = m->added[i].id + 1;
    if ((uint64_t)max_id > 2 * ((uint64_t)v->n_ids + m->n_added) + 256)
        return sl_errf(err, "%s: added token id %u is far beyond the vocab (%u ids)", m->name, max_id - 1, v->n_ids);
    sl_buf nb = {0};
    sl_norm_scratch ns = {0};
    int rc = 0;
    for (size_t i = 0; i < m->n_added && rc == 0; i++) {
        sl_added *a = &m->added[i];
        if (a->normalized && m->norm.n) {
            if (sl_normalize(&m->norm, &ns, a->content, a->len, &nb, err)) {
                sl_err_prefix(err, "%s: added token %u", m->name, a->id);
                rc = -1;
                break;
            }
            a->match = sl_xstrndup(nb.data ? nb.data : "", nb.len);
            a->match_len = nb.len;
        } else {
            a->match = sl_xstrndup(a->content, a->len);
            a->match_len = a->len;
        }
        sl_vocab_set(v, a->id, a->match, a->match_len);
        if (a->match_len)
            sl_trie_add(a->normalized ? &m->norm_trie : &m->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    sl_buf_free(&nb);
    sl_norm_scratch_free(&ns);
    return rc;
}

static wp *load_json(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", name);
        return NULL;
    }
    wp *m = sl_xcalloc(1, sizeof *m);
    m->name = sl_xstrdup(name);
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
    if (!mt) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object with a type)", name);
        goto fail;
    }
    if (!is_null(sl_json_get(root, "truncation")) || !is_null(sl_json_get(root, "padding"))) {
        sl_errf(err, "%s: %s is not supported (set it to null)", name,
                is_null(sl_json_get(root, "truncation")) ? "padding" : "truncation");
        goto fail;
    }
    int rc = !strcmp(mt, "WordPiece") ? sl_wordpiece_load(&m->model, model, name, err)
             : !strcmp(mt, "WordLevel")
                 ? sl_wordlevel_load(&m->model, model, name, err)
                 : sl_errf(err, "%s: model type '%s' is not supported here (WordPiece, WordLevel)", name, mt);
    if (rc || sl_normalizer_load(&m->norm, sl_json_get(root, "normalizer"), name, err) ||
        sl_pretokenizer_load(&m->pre, sl_json_get(root, "pre_tokenizer"), name, err) ||
        sl_decoder_load(&m->dec, sl_json_get(root, "decoder"), name, err) ||
        sl_added_parse(sl_json_get(root, "added_tokens"), name, &m->added, &m->n_added, err) || finish_added(m, err))
        goto fail;
    /* the post-processor is read only when asked for (tokenizer.c), but a
     * file with one sluice cannot run is refused either way */
    sl_postproc pp;
    if (sl_postproc_load(&pp, sl_json_get(root, "post_processor"), m->model.vocab.n_ids, name, err))
        goto fail;
    sl_postproc_free(&pp);
    sl_json_free(doc);
    return m;
fail:
    sl_json_free(doc);
    free_wp(m);
    return NULL;
}

/* --- encoding ------------------------------------------------------------ */
static int wp_piece(void *ctx, const char *q, size_t k, sl_err *err)
{
    wp_state *s = ctx;
    const wp *m = s->m;
    return m->model.kind == SL_MODEL_WORDPIECE ? sl_wordpiece_encode(&m->model, &s->tmp, q, k, s->out, err)
                                               : sl_wordlevel_encode(&m->model, q, k, s->out, err);
}

/* the pieces as they are cut: nothing held per piece of a long document */
static int gap_normalized(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    wp_state *s = ctx;
    const wp *m = s->m;
    return sl_pretokenize_each(&m->pre, &s->ps, p, n, s->raw_first && off < s->lead ? s->lead - off : 0, wp_piece, s,
                               err);
}

static int gap_raw(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    wp_state *s = ctx;
    const wp *m = s->m;
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

static void wp_free(void *impl)
{
    free_wp(impl);
}

static void *wp_state_new(const void *impl)
{
    wp_state *s = sl_xcalloc(1, sizeof *s);
    s->m = impl;
    return s;
}

static void wp_state_free(void *state)
{
    wp_state *s = state;
    if (!s)
        return;
    sl_norm_scratch_free(&s->ns);
    sl_pretok_scratch_free(&s->ps);
    sl_buf_free(&s->norm);
    sl_buf_free(&s->tmp);
    free(s);
}

static int wp_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const wp *m = t->impl;
    wp_state *s = state;
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
        if (v < n) /* invalid UTF-8 (callers normally repair it): skipped */
            v++;
        pos = v;
    }
    return 0;
}

static int wp_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const wp *m = t->impl;
    sl_toklist a = {0}, b = {0};
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *s = sl_vocab_str(&m->model.vocab, ids[i], &len);
        if (!s) {
            sl_toklist_free(&a);
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], m->name);
        }
        sl_toklist_push(&a, s, len);
    }
    sl_decoder_run(&m->dec, &a, &b, out);
    sl_toklist_free(&a);
    sl_toklist_free(&b);
    return 0;
}

static int64_t wp_token_id(const sl_tokenizer *t, const char *text)
{
    const wp *m = t->impl;
    size_t n = strlen(text);
    for (size_t i = 0; i < m->n_added; i++)
        if (m->added[i].len == n && !memcmp(m->added[i].content, text, n))
            return m->added[i].id;
    return sl_vocab_find(&m->model.vocab, text, n);
}

static const sl_tok_ops ops = {wp_free, wp_state_new, wp_state_free, wp_encode, wp_decode, wp_token_id};

/* A tokenizer.json whose model is WordPiece or WordLevel. */
static int wp_probe(sl_tok_src *src)
{
    static const char *const types[] = {"WordPiece", "WordLevel", NULL};
    return sl_tokjson_probe_model(src, types);
}

static int64_t first_of(const sl_tokenizer *t, const char *a, const char *b)
{
    int64_t id = wp_token_id(t, a);
    return id >= 0 ? id : wp_token_id(t, b);
}

static sl_tokenizer *make(wp *m, const char *text, size_t len, const char *p, const sl_tokenizer_opts *o)
{
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    sl_sha256_update(&h, text, len);
    sl_sha256_final(&h, d);
    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_wordpiece, &ops, m);
    sl_sha256_hex(d, t->fingerprint);
    if (o)
        t->special_mode = o->special;
    t->vocab_size = m->model.vocab.n_ids;
    sl_tokenizer_set_specials(t, m->added, m->n_added);
    t->special[SL_TOK_EOS] = first_of(t, "[SEP]", "</s>");
    t->special[SL_TOK_BOS] = first_of(t, "[CLS]", "<s>");
    t->special[SL_TOK_PAD] = first_of(t, "[PAD]", "<pad>");
    t->special[SL_TOK_UNK] = m->model.unk_id;
    const char *base = strrchr(p, '/');
    snprintf(t->name, sizeof t->name, "bpe:%s", base && base[1] ? base + 1 : p);
    return t;
}

sl_tokenizer *sl_tok_wordpiece_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                        sl_err *err)
{
    wp *m = load_json(text, len, name, err);
    return m ? make(m, text, len, name, o) : NULL;
}

static sl_tokenizer *wp_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_wordpiece_load_mem);
}

const sl_tok_family sl_tok_family_wordpiece = {"wordpiece", wp_probe, wp_load, NULL, NULL};
