/* Mistral's tekken JSON (tiktoken_impl.h): the config (pattern, number of
 * special tokens, vocabulary size), the special tokens (listed, or Mistral's
 * fixed list for v7 and before), and the base64 vocabulary by rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/models/tiktoken_impl.h"

/* Mistral's special tokens of tekken files without a special_tokens list
 * (version v7 and before; mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS),
 * ids 0..19; the rest up to default_num_special_tokens are <SPECIAL_id>. */
static const char *const tekken_old_specials[] = {
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
};

/* An object member of the tekken file, parsed on its own (the fast way
 * below) or found in the whole tree: base is where its text starts in the
 * file, so that a message names the file's line. */
typedef struct member {
    const sl_json *v;
    size_t base;
} member;

/* A vocab entry: its token_bytes (base64, as in the file: a tekken file
 * has no escape in them; not NUL-terminated) and where the entry starts in
 * the file. */
typedef struct entry {
    const char *b64;
    size_t n, off;
} entry;

static int tekken_int(member cfg, const char *key, int64_t lo, int64_t hi, int64_t *v, const char *text,
                      const char *name, sl_err *err)
{
    const sl_json *x = sl_json_get(cfg.v, key);
    if (!x)
        return sl_errf(err, "%s:%zu: config.%s is missing", name, sl_tt_line_of(text, cfg.base + cfg.v->offset), key);
    if (!sl_json_is_int(x, v) || *v < lo || *v > hi)
        return sl_errf(err, "%s:%zu: config.%s must be an integer in %lld..%lld", name,
                       sl_tt_line_of(text, cfg.base + x->offset), key, (long long)lo, (long long)hi);
    return 0;
}

/* The tokenizer from the config, the special tokens' list (v NULL: none)
 * and the vocabulary's n_vocab entries in rank order (checked here). */
static int tekken_build(tiktoken *t, member cfg, member list, const entry *vocab, size_t n_vocab, const char *text,
                        const char *name, const char **pattern, sl_err *err)
{
    *pattern = sl_json_get_str(cfg.v, "pattern");
    if (!*pattern)
        return sl_errf(err, "%s:%zu: config.pattern is missing", name, sl_tt_line_of(text, cfg.base + cfg.v->offset));
    int64_t vsize, nspecial;
    if (tekken_int(cfg, "default_num_special_tokens", 0, 1 << 20, &nspecial, text, name, err) ||
        tekken_int(cfg, "default_vocab_size", nspecial + 256, nspecial + (int64_t)n_vocab, &vsize, text, name, err))
        return -1;
    if (list.v && list.v->type == SL_JSON_NULL)
        list.v = NULL;
    if (list.v && list.v->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s:%zu: special_tokens must be an array", name,
                       sl_tt_line_of(text, list.base + list.v->offset));
    if (!list.v) { /* Mistral's rule: only files up to v7 may leave them out */
        const char *ver = sl_json_get_str(cfg.v, "version");
        int v = ver && ver[0] == 'v' ? atoi(ver + 1) : 0;
        if (!ver || v < 1 || v > 7)
            return sl_errf(err,
                           "%s: no special_tokens list (only files of version v1..v7 may leave it out; this is %s)",
                           name, ver ? ver : "without config.version");
    }
    size_t n_listed = list.v ? list.v->n : sizeof tekken_old_specials / sizeof *tekken_old_specials;
    if ((int64_t)n_listed > nspecial)
        return sl_errf(err, "%s: %zu special tokens, more than config.default_num_special_tokens (%lld)", name,
                       n_listed, (long long)nspecial);
    t->offset = (uint32_t)nspecial;
    t->n_ranks = (uint32_t)(vsize - nspecial);
    t->sp = sl_xcalloc((size_t)nspecial + 1, sizeof *t->sp);
    for (size_t i = 0; i < (size_t)nspecial; i++) {
        special *s = &t->sp[t->n_sp++];
        if (i < n_listed && list.v) {
            const sl_json *e = list.v->kids[i];
            int64_t r;
            const char *str = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_str") : NULL;
            if (!str || sl_json_get_int(e, "rank", &r) || r != (int64_t)i)
                return sl_errf(err, "%s:%zu: special_tokens[%zu] must be an object with rank %zu and token_str", name,
                               sl_tt_line_of(text, list.base + e->offset), i, i);
            s->name = sl_xstrdup(str);
        } else if (i < n_listed) {
            s->name = sl_xstrdup(tekken_old_specials[i]);
        } else {
            char buf[32];
            snprintf(buf, sizeof buf, "<SPECIAL_%zu>", i);
            s->name = sl_xstrdup(buf);
        }
        s->len = strlen(s->name);
        s->id = (uint32_t)i;
        for (size_t j = 0; j < i; j++)
            if (t->sp[j].len == s->len && !memcmp(t->sp[j].name, s->name, s->len))
                return sl_errf(err, "%s: special token '%s' is given twice (ids %zu and %zu)", name, s->name, j, i);
    }
    sl_bpe *b = t->b;
    sl_tt_alloc_ids(b, (uint32_t)vsize);
    sl_words_init(b, t->n_ranks);
    sl_buf tok = {0};
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        const entry *e = &vocab[r];
        if (!e->b64) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u] must be an object with rank %u and token_bytes", name,
                           sl_tt_line_of(text, e->off), r, r);
        }
        if (sl_tt_b64_decode(e->b64, e->n, &tok)) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u].token_bytes '%.*s' is not base64", name, sl_tt_line_of(text, e->off),
                           r, (int)(e->n < 60 ? e->n : 60), e->b64);
        }
        int64_t old = sl_tt_add_token(b, t->offset + r, tok.data, tok.len);
        if (old >= 0) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: the token of rank %u is also rank %lld", name, sl_tt_line_of(text, e->off), r,
                           (long long)(old - t->offset));
        }
    }
    sl_buf_free(&tok);
    return 0;
}

/* --- the fast way ---------------------------------------------------------
 * A tekken file is a vocabulary of 150k entries written the same way,
 * {"rank": N, "token_bytes": "<base64>", "token_str": "..." or null}, and a
 * few small members. Building the whole tree took most of the load (0.2 s
 * for tekken_240911.json). Here the root's members other than "vocab" are
 * parsed as trees one by one, and the vocabulary is read in one pass that
 * accepts exactly that shape (JSON whitespace between the tokens, keys in
 * that order, a rank equal to the entry's index, token_bytes without an
 * escape, a token_str that is a valid JSON string). Anything else, or a
 * member given twice, sends the file the whole tree's way, whose messages
 * the fast way never makes up: it fails over instead. */
static inline size_t ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

/* The literal w (k bytes) at s[*i] (after whitespace): 1 with *i past it.
 * (Inline, with k known, the comparison is a few instructions.) */
static inline __attribute__((always_inline)) int word_k(const char *s, size_t n, size_t *i, const char *w, size_t k)
{
    size_t j = ws(s, n, *i);
    if (n - j < k || memcmp(s + j, w, k))
        return 0;
    *i = j + k;
    return 1;
}
#define word(s, n, i, w) word_k(s, n, i, w, sizeof(w) - 1)

static int fast_vocab(const char *s, size_t n, size_t *pos, entry **out, size_t *n_out)
{
    size_t i = *pos, m = 0, cap = 0;
    entry *v = NULL;
    sl_buf str = {0};
    if (!word(s, n, &i, "["))
        goto fail;
    if (word(s, n, &i, "]"))
        goto done;
    for (;;) {
        size_t off = ws(s, n, i);
        if (!word(s, n, &i, "{") || !word(s, n, &i, "\"rank\"") || !word(s, n, &i, ":"))
            goto fail;
        i = ws(s, n, i);
        uint64_t r = 0;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - d < 10)
            r = r * 10 + (uint64_t)(s[i++] - '0');
        if (i == d || (s[d] == '0' && i - d > 1) || r != m || (i < n && s[i] >= '0' && s[i] <= '9'))
            goto fail;
        if (!word(s, n, &i, ",") || !word(s, n, &i, "\"token_bytes\"") || !word(s, n, &i, ":") || !word(s, n, &i, "\""))
            goto fail;
        size_t b0 = i;
        while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                         s[i] == '+' || s[i] == '/' || s[i] == '='))
            i++;
        if (i >= n || s[i] != '"')
            goto fail;
        size_t b1 = i++;
        if (!word(s, n, &i, ",") || !word(s, n, &i, "\"token_str\"") || !word(s, n, &i, ":"))
            goto fail;
        if (!word(s, n, &i, "null")) {
            if (!word(s, n, &i, "\""))
                goto fail;
            size_t invalid = 0;
            sl_buf_clear(&str);
            if (sl_json_str_decode(s, n, &i, &str, SL_UTF8_ERROR, &invalid, NULL))
                goto fail;
        }
        if (!word(s, n, &i, "}"))
            goto fail;
        if (m == cap) {
            cap = cap ? 2 * cap : 1024;
            v = sl_xrealloc(v, cap * sizeof *v);
        }
        v[m++] = (entry){s + b0, b1 - b0, off};
        if (word(s, n, &i, "]"))
            break;
        if (!word(s, n, &i, ","))
            goto fail;
    }
done:
    sl_buf_free(&str);
    *pos = i;
    *out = v;
    *n_out = m;
    return 1;
fail:
    sl_buf_free(&str);
    free(v);
    return 0;
}

/* The file the fast way: 1 with the members and entries (and the docs to
 * free after the load: docs[0] the config's, kept by the caller), or 0. */
static int fast_file(const char *s, size_t n, member *cfg, member *list, entry **vocab, size_t *n_vocab,
                     sl_json_doc **docs)
{
    size_t i = 0;
    int seen_vocab = 0;
    sl_buf key = {0};
    if (!word(s, n, &i, "{"))
        return 0;
    if (word(s, n, &i, "}"))
        goto fail;
    for (;;) {
        if (!word(s, n, &i, "\""))
            goto fail;
        size_t invalid = 0;
        sl_buf_clear(&key);
        if (sl_json_str_decode(s, n, &i, &key, SL_UTF8_ERROR, &invalid, NULL) || !word(s, n, &i, ":"))
            goto fail;
        if (key.len == 5 && !memcmp(key.data, "vocab", 5)) {
            if (seen_vocab || !fast_vocab(s, n, &i, vocab, n_vocab))
                goto fail;
            seen_vocab = 1;
        } else {
            int k = key.len == 6 && !memcmp(key.data, "config", 6)             ? 0
                    : key.len == 14 && !memcmp(key.data, "special_tokens", 14) ? 1
                                                                               : 2;
            if (k < 2 && docs[k])
                goto fail;
            size_t base = ws(s, n, i), end;
            sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
            sl_err je = {{0}};
            sl_json_doc *d = sl_json_parse_prefix(s + base, n - base, &end, &jo, &je);
            if (!d)
                goto fail;
            i = base + end;
            if (k == 2) {
                sl_json_free(d);
            } else {
                docs[k] = d;
                *(k ? list : cfg) = (member){sl_json_root(d), base};
            }
        }
        if (word(s, n, &i, "}"))
            break;
        if (!word(s, n, &i, ","))
            goto fail;
    }
    if (ws(s, n, i) != n || !seen_vocab || !docs[0] || cfg->v->type != SL_JSON_OBJECT)
        goto fail;
    sl_buf_free(&key);
    return 1;
fail:
    sl_buf_free(&key);
    if (seen_vocab)
        free(*vocab);
    *vocab = NULL;
    for (int k = 0; k < 2; k++) {
        sl_json_free(docs[k]);
        docs[k] = NULL;
    }
    return 0;
}

int sl_tt_load_tekken(tiktoken *t, const char *text, size_t len, const char *name, const char **pattern,
                      sl_json_doc **docp, sl_err *err)
{
    member cfg = {0}, list = {0};
    entry *vocab = NULL;
    size_t n_vocab = 0;
    sl_json_doc *docs[2] = {NULL, NULL};
    if (fast_file(text, len, &cfg, &list, &vocab, &n_vocab, docs)) {
        *docp = docs[0]; /* (the pattern is the config's) */
        int rc = tekken_build(t, cfg, list, vocab, n_vocab, text, name, pattern, err);
        sl_json_free(docs[1]);
        free(vocab);
        return rc;
    }
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_err je = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &je);
    if (!doc)
        return sl_errf(err, "%s: %s", name, je.msg);
    *docp = doc;
    const sl_json *root = sl_json_root(doc), *c = sl_json_get(root, "config"), *v = sl_json_get(root, "vocab");
    if (!c || c->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: no \"config\" object (a tekken file has config and vocab)", name);
    if (!v || v->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: no \"vocab\" array (a tekken file has config and vocab)", name);
    vocab = sl_xmalloc((v->n ? v->n : 1) * sizeof *vocab);
    for (size_t r = 0; r < v->n; r++) {
        const sl_json *e = v->kids[r];
        int64_t rank;
        const char *b64 = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_bytes") : NULL;
        if (b64 && (sl_json_get_int(e, "rank", &rank) || rank != (int64_t)r))
            b64 = NULL;
        vocab[r] = (entry){b64, b64 ? strlen(b64) : 0, e->offset};
    }
    int rc = tekken_build(t, (member){c, 0}, (member){sl_json_get(root, "special_tokens"), 0}, vocab, v->n, text, name,
                          pattern, err);
    free(vocab);
    return rc;
}
