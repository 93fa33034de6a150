/* See hf_pipeline.h. */
#include "tokenize/hf_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tokenize/added.h"
#include "tokenize/decoders/decoders.h"
#include "tokenize/json_skim.h"
#include "tokenize/normalizers/normalize.h"
#include "tokenize/processors/postproc.h"
#include "tokenize/pre_tokenizers/pretokenizer.h"
#include "tokenize/sha256.h"

/* How the pre-tokenizer runs. */
enum { PRE_NONE = 0, PRE_METASPACE, PRE_GENERAL };

typedef struct pipe {
    const sl_hf_model *ad;
    void *model;
    sl_vocab *vocab; /* the model's, with the added tokens' strings */
    char *name;
    sl_normalizer norm;
    int pre_kind;
    sl_pretokenizer pre;
    int ms_scheme, ms_split; /* the Metaspace fast path (PRE_METASPACE) */
    char ms_rep[5];
    size_t ms_rep_len;
    sl_decoder dec;
    sl_postproc post;
    sl_added *added;
    size_t n_added;
    sl_trie raw_trie, norm_trie;
} pipe;

typedef struct pstate {
    const pipe *p;
    void *model; /* the model's state */
    sl_buf norm, pre;
    sl_norm_scratch ns;
    sl_pretok_scratch ps;
    sl_ids *out;
    sl_special_mode mode;
    size_t base;   /* offset of the current valid-UTF-8 run in the text */
    int raw_first; /* the raw gap starts at offset 0 of the text */
    size_t lead;   /* leading bytes of the normalized gap aligned with its start (normalize.h) */
} pstate;

int sl_hf_is_null(const sl_json *v)
{
    return !v || v->type == SL_JSON_NULL;
}

const char *sl_hf_type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static void free_pipe(pipe *p)
{
    if (!p)
        return;
    if (p->model)
        p->ad->free(p->model);
    free(p->name);
    sl_normalizer_free(&p->norm);
    sl_pretokenizer_free(&p->pre);
    sl_decoder_free(&p->dec);
    sl_postproc_free(&p->post);
    sl_added_free(p->added, p->n_added);
    sl_trie_free(&p->raw_trie);
    sl_trie_free(&p->norm_trie);
    free(p);
}

/* --- loading ------------------------------------------------------------- */
/* The pre-tokenizer: with metaspace_fast, none or one Metaspace (alone or
 * the one step of a Sequence) runs on the fast path of gap_normalized;
 * anything else through pretokenizer.h. */
static int load_pre_tokenizer(pipe *p, const sl_json *v, sl_err *err)
{
    if (!p->ad->metaspace_fast) {
        p->pre_kind = PRE_GENERAL;
        return sl_pretokenizer_load(&p->pre, v, p->name, err);
    }
    if (sl_hf_is_null(v))
        return 0;
    const char *t = sl_hf_type_of(v);
    if (!strcmp(t, "Sequence")) {
        const sl_json *list = sl_json_get(v, "pretokenizers");
        if (list && list->type == SL_JSON_ARRAY && list->n == 0)
            return 0;
        if (list && list->type == SL_JSON_ARRAY && list->n == 1) {
            v = list->kids[0];
            t = sl_hf_type_of(v);
        }
    }
    if (strcmp(t, "Metaspace")) {
        p->pre_kind = PRE_GENERAL;
        return sl_pretokenizer_load(&p->pre, v, p->name, err);
    }
    const sl_json *r = sl_json_get(v, "replacement");
    uint32_t cp;
    if (!r || r->type != SL_JSON_STRING || r->str_len > 4 || !r->str_len ||
        sl_utf8_seq((const uint8_t *)r->str, r->str_len, &cp) != r->str_len)
        return sl_errf(err, "%s: pre_tokenizer Metaspace needs a one-character 'replacement'", p->name);
    memcpy(p->ms_rep, r->str, r->str_len);
    p->ms_rep_len = r->str_len;
    int split;
    p->ms_split = sl_json_get_bool(v, "split", &split) == 0 ? split : 1; /* HF's default: true */
    p->pre_kind = PRE_METASPACE;
    return sl_prepend_scheme(v, p->name, "pre_tokenizer", &p->ms_scheme, err);
}

/* The added tokens' match strings (normalized when they are), their tries,
 * and their strings in the vocabulary (HF looks ids up as added tokens
 * first, in the normalized form when normalized). */
static int finish_added(pipe *p, sl_err *err)
{
    sl_vocab *v = p->vocab;
    uint32_t max_id = v->n_ids;
    for (size_t i = 0; i < p->n_added; i++)
        if (p->added[i].id + 1 > max_id)
            max_id = p->added[i].id + 1;
    if ((uint64_t)max_id > (uint64_t)p->ad->added_mult * ((uint64_t)v->n_ids + p->n_added) + p->ad->added_slack)
        return sl_errf(err, "%s: added token id %u is far beyond the vocab (%u ids)", p->name, max_id - 1, v->n_ids);
    sl_buf nb = {0};
    sl_norm_scratch ns = {0};
    int rc = 0;
    for (size_t i = 0; i < p->n_added; i++) {
        sl_added *a = &p->added[i];
        if (a->normalized && p->norm.n) {
            if (sl_normalize(&p->norm, &ns, a->content, a->len, &nb, err)) {
                sl_err_prefix(err, "%s: added token %u", p->name, a->id);
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
            sl_trie_add(a->normalized ? &p->norm_trie : &p->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    sl_buf_free(&nb);
    sl_norm_scratch_free(&ns);
    return rc;
}

int sl_hf_read_ahead = 1;
size_t sl_hf_read_ahead_loads;

static pipe *load_json(const sl_hf_model *ad, const char *text, size_t len, const char *name, sl_err *err)
{
    void *pre = NULL;
    sl_json_skip skip[4] = {{0}};
    size_t n_skip = 0;
    if (sl_hf_read_ahead && ad->read_ahead && ad->n_ahead <= 4) {
        sl_skim_span sp[4];
        if (!sl_tokjson_skim_model(text, len, ad->ahead, sp, ad->n_ahead) && (pre = ad->read_ahead(text, len, sp)))
            for (size_t k = 0; k < ad->n_ahead; k++)
                if (sp[k].len)
                    skip[n_skip++] = (sl_json_skip){sp[k].at, sp[k].len};
        sl_hf_read_ahead_loads += pre != NULL;
    }
    sl_json_doc *doc = sl_tokjson_parse_skip(text, len, skip, n_skip, name, err);
    if (!doc) {
        if (pre)
            ad->free_ahead(pre);
        return NULL;
    }
    pipe *p = sl_xcalloc(1, sizeof *p);
    p->ad = ad;
    p->name = sl_xstrdup(name);
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    if (!model || model->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object)", name);
        goto fail;
    }
    if (!sl_hf_is_null(sl_json_get(root, "truncation")) || !sl_hf_is_null(sl_json_get(root, "padding"))) {
        sl_errf(err, "%s: %s is not supported (set it to null)", name,
                sl_hf_is_null(sl_json_get(root, "truncation")) ? "padding" : "truncation");
        goto fail;
    }
    sl_hf_src src = {name, text, len, pre};
    p->model = ad->load(model, &src, err);
    if (pre)
        ad->free_ahead(pre);
    pre = NULL;
    if (!p->model)
        goto fail;
    p->vocab = ad->vocab(p->model);
    /* the post-processor acts only with --add-special-tokens, but a file
     * with one sluice cannot run is refused either way */
    if (sl_normalizer_load(&p->norm, sl_json_get(root, "normalizer"), name, err) ||
        load_pre_tokenizer(p, sl_json_get(root, "pre_tokenizer"), err) ||
        sl_decoder_load(&p->dec, sl_json_get(root, "decoder"), name, err) ||
        sl_added_parse(sl_json_get(root, "added_tokens"), name, &p->added, &p->n_added, err) || finish_added(p, err) ||
        sl_postproc_load(&p->post, sl_json_get(root, "post_processor"), p->vocab->n_ids, name, err))
        goto fail;
    sl_json_free(doc);
    return p;
fail:
    if (pre)
        ad->free_ahead(pre);
    sl_json_free(doc);
    free_pipe(p);
    return NULL;
}

/* --- encoding ------------------------------------------------------------ */
static int piece(pstate *s, const char *q, size_t n, sl_err *err)
{
    return s->p->ad->encode(s->p->model, s->model, q, n, s->out, err);
}

static int each_piece(void *ctx, const char *q, size_t n, sl_err *err)
{
    return piece(ctx, q, n, err);
}

/* The Metaspace fast path: spaces become the replacement, which is
 * prepended per prepend_scheme ("first": only to the piece HF aligns with
 * offset 0 of the text), and with `split` a new piece starts at each
 * replacement character (MergedWithNext). */
static int metaspace(pstate *s, const char *q, size_t n, size_t off, sl_err *err)
{
    const pipe *p = s->p;
    sl_buf *b = &s->pre;
    sl_buf_clear(b);
    int prepend =
        p->ms_scheme == SL_PREPEND_ALWAYS || (p->ms_scheme == SL_PREPEND_FIRST && s->raw_first && off < s->lead);
    if (prepend && !(n >= p->ms_rep_len && !memcmp(q, p->ms_rep, p->ms_rep_len)) &&
        !(n && q[0] == ' ')) /* a leading space becomes the replacement */
        sl_buf_append(b, p->ms_rep, p->ms_rep_len);
    for (size_t i = 0; i < n;) { /* spaces become the replacement */
        const char *sp = memchr(q + i, ' ', n - i);
        size_t k = sp ? (size_t)(sp - q) : n;
        sl_buf_append(b, q + i, k - i);
        if (!sp)
            break;
        sl_buf_append(b, p->ms_rep, p->ms_rep_len);
        i = k + 1;
    }
    if (!p->ms_split)
        return piece(s, b->data, b->len, err);
    size_t start = 0;
    for (size_t i = 1; i + p->ms_rep_len <= b->len;) {
        const char *hit = memmem(b->data + i, b->len - i, p->ms_rep, p->ms_rep_len);
        if (!hit)
            break;
        i = (size_t)(hit - b->data);
        if (i > start) {
            if (piece(s, b->data + start, i - start, err))
                return -1;
            start = i;
        }
        i += p->ms_rep_len;
    }
    return piece(s, b->data + start, b->len - start, err);
}

/* The pre-tokenizer and the model on a normalized stretch. */
static int gap_normalized(void *ctx, const char *q, size_t n, size_t off, sl_err *err)
{
    pstate *s = ctx;
    const pipe *p = s->p;
    if (p->pre_kind == PRE_NONE)
        return n ? piece(s, q, n, err) : 0;
    if (p->pre_kind == PRE_METASPACE)
        return metaspace(s, q, n, off, err);
    /* the pieces as they are cut: nothing held per piece of a long document */
    return sl_pretokenize_each(&p->pre, &s->ps, q, n, s->raw_first && off < s->lead ? s->lead - off : 0, each_piece, s,
                               err);
}

/* The normalizer and the normalized added tokens on a raw stretch. */
static int gap_raw(void *ctx, const char *q, size_t n, size_t off, sl_err *err)
{
    pstate *s = ctx;
    const pipe *p = s->p;
    s->raw_first = s->base + off == 0;
    uint32_t cp;
    s->lead = n ? sl_utf8_seq((const uint8_t *)q, n, &cp) : 0;
    if (!p->norm.n)
        return sl_added_split(p->added, &p->norm_trie, q, n, s->base, s->mode, gap_normalized, s, s->out, err);
    if (sl_normalize(&p->norm, &s->ns, q, n, &s->norm, err))
        return -1;
    s->lead = s->ns.lead;
    return sl_added_split(p->added, &p->norm_trie, s->norm.data ? s->norm.data : "", s->norm.len, s->base, s->mode,
                          gap_normalized, s, s->out, err);
}

static int pipe_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const pipe *p = t->impl;
    pstate *s = state;
    if (p->ad->max_text && n > p->ad->max_text)
        return sl_errf(err, "a document of %zu bytes is too long for %s (at most %zu MiB)", n, p->name,
                       (p->ad->max_text + 1) >> 20);
    s->out = out;
    s->mode = t->special_mode;
    size_t pos = 0;
    while (pos < n) {
        size_t v = pos + sl_utf8_check(text + pos, n - pos);
        if (v > pos) {
            s->base = pos;
            if (sl_added_split(p->added, &p->raw_trie, text + pos, v - pos, pos, s->mode, gap_raw, s, out, err))
                return -1;
        }
        if (v < n) { /* invalid UTF-8 (callers normally repair it) */
            if (p->ad->bad_utf8 == SL_HF_BAD_PIECE && piece(s, text + v, 1, err))
                return -1;
            if (p->ad->bad_utf8 == SL_HF_BAD_FFFD) {
                s->base = v;
                if (gap_raw(s, "\xEF\xBF\xBD", 3, 0, err))
                    return -1;
            }
            v++;
        }
        pos = v;
    }
    return 0;
}

/* --- the tokenizer ------------------------------------------------------- */
static int pipe_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const pipe *p = t->impl;
    sl_toklist a = {0}, b = {0};
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *s = sl_vocab_str(p->vocab, ids[i], &len);
        if (!s) {
            sl_toklist_free(&a);
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], p->name);
        }
        sl_toklist_push(&a, s, len);
    }
    sl_decoder_run(&p->dec, &a, &b, out);
    sl_toklist_free(&a);
    sl_toklist_free(&b);
    return 0;
}

static int64_t pipe_token_id(const sl_tokenizer *t, const char *text)
{
    const pipe *p = t->impl;
    size_t n = strlen(text);
    for (size_t i = 0; i < p->n_added; i++)
        if (p->added[i].len == n && !memcmp(p->added[i].content, text, n))
            return p->added[i].id;
    return sl_vocab_find(p->vocab, text, n);
}

static void pipe_free(void *impl)
{
    free_pipe(impl);
}

static void *pipe_state_new(const void *impl)
{
    const pipe *p = impl;
    pstate *s = sl_xcalloc(1, sizeof *s);
    s->p = p;
    s->model = p->ad->state_new ? p->ad->state_new(p->model) : NULL;
    return s;
}

static void pipe_state_free(void *state)
{
    pstate *s = state;
    if (!s)
        return;
    if (s->p->ad->state_free)
        s->p->ad->state_free(s->model);
    sl_buf_free(&s->norm);
    sl_buf_free(&s->pre);
    sl_norm_scratch_free(&s->ns);
    sl_pretok_scratch_free(&s->ps);
    free(s);
}

static const sl_tok_ops ops = {pipe_free, pipe_state_new, pipe_state_free, pipe_encode, pipe_decode, pipe_token_id};

sl_tokenizer *sl_hf_load_mem(const sl_hf_model *ad, const sl_tok_family *fam, const char *text, size_t len,
                             const char *name, const sl_tokenizer_opts *o, sl_err *err)
{
    pipe *p = load_json(ad, text, len, name, err);
    if (!p)
        return NULL;
    sl_tokenizer *t = sl_tokenizer_new(fam, &ops, p);
    sl_sha256_fingerprint(text, len, t->fingerprint);
    if (o)
        t->special_mode = o->special;
    t->vocab_size = p->vocab->n_ids;
    sl_tokenizer_set_specials(t, p->added, p->n_added);
    static const sl_tok_special which[3] = {SL_TOK_EOS, SL_TOK_BOS, SL_TOK_PAD};
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 2 && t->special[which[k]] < 0 && ad->specials[k][j]; j++)
            t->special[which[k]] = pipe_token_id(t, ad->specials[k][j]);
    t->special[SL_TOK_UNK] = ad->unk_id(p->model);
    if (o && o->add_special) { /* the post-processor of the one parse */
        t->add_pre = p->post.pre, t->n_add_pre = p->post.n_pre;
        t->add_post = p->post.post, t->n_add_post = p->post.n_post;
        p->post.pre = p->post.post = NULL;
        p->post.n_pre = p->post.n_post = 0;
    }
    t->post_known = 1;
    const char *base = strrchr(name, '/');
    snprintf(t->name, sizeof t->name, "%s:%s", ad->name_prefix, base && base[1] ? base + 1 : name);
    return t;
}
