/* The character family behind tokenizer.h: UTF-8 bytes or code points with
 * a vocabulary (chartok.h). Its files start with {"type":"char"; the
 * vocabulary also travels in a token stream header's "extra". */
#include <stdio.h>
#include <string.h>

#include "tokenize/chartok.h"
#include "tokenize/sha256.h"
#include "tokenize/tokenizer_impl.h"

static void char_free(void *impl)
{
    sl_charvocab_free(impl);
}

static int char_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    (void)state, (void)err;
    sl_charvocab_encode(t->impl, text, n, &out->v, &out->n, &out->cap);
    return 0;
}

static int char_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    return sl_charvocab_decode(t->impl, ids, n, out, err);
}

static int64_t char_token_id(const sl_tokenizer *t, const char *text)
{
    const sl_charvocab *v = t->impl;
    static const char *const specials[] = {"<|endoftext|>", "<|bos|>", "<|unk|>"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(text, specials[k]))
            return sl_charvocab_special(v, k);
    /* one character (byte) of the vocabulary: the id it encodes to, below the specials */
    sl_ids ids = {0};
    sl_charvocab_encode(v, text, strlen(text), &ids.v, &ids.n, &ids.cap);
    int64_t id = -1;
    if (ids.n == 1 && ids.v[0] < sl_charvocab_special(v, SL_CHAR_EOS))
        id = ids.v[0];
    sl_ids_free(&ids);
    return id;
}

static const sl_tok_ops ops = {char_free, NULL, NULL, char_encode, char_decode, char_token_id};

sl_tokenizer *sl_chartok_tokenizer(sl_charvocab *v)
{
    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_char, &ops, v);
    t->vocab_size = sl_charvocab_size(v);
    t->special[SL_TOK_EOS] = sl_charvocab_special(v, SL_CHAR_EOS);
    t->special[SL_TOK_BOS] = sl_charvocab_special(v, SL_CHAR_BOS);
    t->special[SL_TOK_UNK] = sl_charvocab_special(v, SL_CHAR_UNK);
    const char *json = sl_charvocab_json(v);
    sl_sha256_fingerprint(json, strlen(json), t->fingerprint);
    snprintf(t->name, sizeof t->name, "char:%s", sl_charvocab_unit(v) == SL_CHAR_BYTE ? "byte" : "codepoint");
    t->extra = sl_xstrdup(json);
    return t;
}

static int char_probe(sl_tok_src *src)
{
    return !src->is_dir && src->head_len >= 14 && !memcmp(src->head, "{\"type\":\"char\"", 14);
}

static sl_tokenizer *char_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    (void)o;
    sl_charvocab *v = sl_charvocab_load(src->path, err);
    return v ? sl_chartok_tokenizer(v) : NULL;
}

static int char_in_header(const sl_ts_header *h)
{
    return h->extra_json && strstr(h->extra_json, "\"type\":\"char\"");
}

static sl_tokenizer *char_from_header(const sl_ts_header *h, const char *name, sl_err *err)
{
    /* the header JSON re-serializes extra; parse it back */
    sl_charvocab *v = sl_charvocab_parse(h->extra_json, strlen(h->extra_json), name, err);
    return v ? sl_chartok_tokenizer(v) : NULL;
}

const sl_tok_family sl_tok_family_char = {"char", char_probe, char_load, char_in_header, char_from_header};
