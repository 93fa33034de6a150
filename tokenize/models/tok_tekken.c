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

static int tekken_int(const sl_json *cfg, const char *key, int64_t lo, int64_t hi, int64_t *v, const char *text,
                      const char *name, sl_err *err)
{
    const sl_json *x = sl_json_get(cfg, key);
    if (!x)
        return sl_errf(err, "%s:%zu: config.%s is missing", name, sl_tt_line_of(text, cfg->offset), key);
    if (!sl_json_is_int(x, v) || *v < lo || *v > hi)
        return sl_errf(err, "%s:%zu: config.%s must be an integer in %lld..%lld", name, sl_tt_line_of(text, x->offset),
                       key, (long long)lo, (long long)hi);
    return 0;
}

int sl_tt_load_tekken(tiktoken *t, const char *text, size_t len, const char *name, const char **pattern,
                      sl_json_doc **docp, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_err je = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &je);
    if (!doc)
        return sl_errf(err, "%s: %s", name, je.msg);
    *docp = doc;
    const sl_json *root = sl_json_root(doc), *cfg = sl_json_get(root, "config"), *vocab = sl_json_get(root, "vocab");
    if (!cfg || cfg->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: no \"config\" object (a tekken file has config and vocab)", name);
    if (!vocab || vocab->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: no \"vocab\" array (a tekken file has config and vocab)", name);
    *pattern = sl_json_get_str(cfg, "pattern");
    if (!*pattern)
        return sl_errf(err, "%s:%zu: config.pattern is missing", name, sl_tt_line_of(text, cfg->offset));
    int64_t vsize, nspecial;
    if (tekken_int(cfg, "default_num_special_tokens", 0, 1 << 20, &nspecial, text, name, err) ||
        tekken_int(cfg, "default_vocab_size", nspecial + 256, nspecial + (int64_t)vocab->n, &vsize, text, name, err))
        return -1;
    const sl_json *list = sl_json_get(root, "special_tokens");
    if (list && list->type == SL_JSON_NULL)
        list = NULL;
    if (list && list->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s:%zu: special_tokens must be an array", name, sl_tt_line_of(text, list->offset));
    if (!list) { /* Mistral's rule: only files up to v7 may leave them out */
        const char *ver = sl_json_get_str(cfg, "version");
        int v = ver && ver[0] == 'v' ? atoi(ver + 1) : 0;
        if (!ver || v < 1 || v > 7)
            return sl_errf(err,
                           "%s: no special_tokens list (only files of version v1..v7 may leave it out; this is %s)",
                           name, ver ? ver : "without config.version");
    }
    size_t n_listed = list ? list->n : sizeof tekken_old_specials / sizeof *tekken_old_specials;
    if ((int64_t)n_listed > nspecial)
        return sl_errf(err, "%s: %zu special tokens, more than config.default_num_special_tokens (%lld)", name,
                       n_listed, (long long)nspecial);
    t->offset = (uint32_t)nspecial;
    t->n_ranks = (uint32_t)(vsize - nspecial);
    t->sp = sl_xcalloc((size_t)nspecial + 1, sizeof *t->sp);
    for (size_t i = 0; i < (size_t)nspecial; i++) {
        special *s = &t->sp[t->n_sp++];
        if (i < n_listed && list) {
            const sl_json *e = list->kids[i];
            int64_t r;
            const char *str = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_str") : NULL;
            if (!str || sl_json_get_int(e, "rank", &r) || r != (int64_t)i)
                return sl_errf(err, "%s:%zu: special_tokens[%zu] must be an object with rank %zu and token_str", name,
                               sl_tt_line_of(text, e->offset), i, i);
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
        const sl_json *e = vocab->kids[r];
        int64_t rank;
        const char *b64 = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_bytes") : NULL;
        if (!b64 || sl_json_get_int(e, "rank", &rank) || rank != r) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u] must be an object with rank %u and token_bytes", name,
                           sl_tt_line_of(text, e->offset), r, r);
        }
        if (sl_tt_b64_decode(b64, strlen(b64), &tok)) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u].token_bytes '%.60s' is not base64", name,
                           sl_tt_line_of(text, e->offset), r, b64);
        }
        int64_t old = sl_tt_add_token(b, t->offset + r, tok.data, tok.len);
        if (old >= 0) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: the token of rank %u is also rank %lld", name, sl_tt_line_of(text, e->offset),
                           r, (long long)(old - t->offset));
        }
    }
    sl_buf_free(&tok);
    return 0;
}
