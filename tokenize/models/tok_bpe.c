/* The byte-level BPE family behind tokenizer.h (bpe.h): Hugging Face
 * tokenizer.json, GPT-2 vocab.json + merges.txt. It reads whatever no other
 * family claims, so its loader's message says what is wrong with a file. */
#include <stdio.h>
#include <string.h>

#include "tokenize/bpe.h"
#include "tokenize/models/bpe_internal.h"
#include "tokenize/json_skim.h"
#include "tokenize/tokenizer_impl.h"

static void bpe_free(void *impl)
{
    sl_bpe_free(impl);
}

static void *bpe_state_new(const void *impl)
{
    return sl_bpe_state_new(impl);
}

static void bpe_state_free(void *state)
{
    sl_bpe_state_free(state);
}

static int bpe_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    return sl_bpe_encode(t->impl, state, text, n, t->special_mode, out, err);
}

static int bpe_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    return sl_bpe_decode(t->impl, ids, n, out, err);
}

static int64_t bpe_token_id(const sl_tokenizer *t, const char *text)
{
    return sl_bpe_token_id(t->impl, text);
}

static const sl_tok_ops ops = {bpe_free, bpe_state_new, bpe_state_free, bpe_encode, bpe_decode, bpe_token_id};

sl_tokenizer *sl_bpe_tokenizer(sl_bpe *b, const char *path, const sl_tokenizer_opts *o)
{
    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_bpe, &ops, b);
    if (o) {
        t->special_mode = o->special;
        sl_bpe_set_scanner(b, !o->pcre2);
    }
    t->vocab_size = sl_bpe_vocab_size(b);
    if (b->post_known && o && o->add_special) { /* the post-processor of the one parse */
        t->add_pre = b->post.pre, t->n_add_pre = b->post.n_pre;
        t->add_post = b->post.post, t->n_add_post = b->post.n_post;
        b->post.pre = b->post.post = NULL;
        b->post.n_pre = b->post.n_post = 0;
    }
    t->post_known = b->post_known;
    sl_tokenizer_set_specials(t, b->added, b->n_added);
    t->special[SL_TOK_EOS] = sl_bpe_token_id(b, "<|endoftext|>");
    if (t->special[SL_TOK_EOS] < 0) /* Llama-3 */
        t->special[SL_TOK_EOS] = sl_bpe_token_id(b, "<|end_of_text|>");
    t->special[SL_TOK_BOS] = sl_bpe_token_id(b, "<|begin_of_text|>");
    t->special[SL_TOK_PAD] = sl_bpe_token_id(b, "<|padding|>");
    snprintf(t->fingerprint, sizeof t->fingerprint, "%s", sl_bpe_fingerprint(b));
    const char *base = strrchr(path, '/');
    snprintf(t->name, sizeof t->name, "bpe:%s", base && base[1] ? base + 1 : path);
    return t;
}

static int bpe_probe(sl_tok_src *src)
{
    (void)src;
    return 1;
}

static sl_tokenizer *bpe_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    /* a tokenizer.json is read once for the probes and the load (a
     * vocab.json + merges.txt pair, or a file that cannot be read, goes the
     * way of sl_bpe_load, which names what is wrong) */
    size_t pl = strlen(src->path), len;
    int pair = !src->is_dir && pl >= 10 && !strcmp(src->path + pl - 10, "vocab.json");
    const char *text;
    sl_bpe *b = !pair && sl_tok_src_json(src, &text, &len) == 0
                    ? sl_bpe_load_mem(text, len, NULL, 0, src->json_path, err)
                    : sl_bpe_load(src->path, err);
    return b ? sl_bpe_tokenizer(b, src->path, o) : NULL;
}

const sl_tok_family sl_tok_family_bpe = {"bpe", bpe_probe, bpe_load, NULL, NULL};
