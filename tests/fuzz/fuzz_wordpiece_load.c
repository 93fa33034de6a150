/* libFuzzer target: the WordPiece / WordLevel tokenizer.json loader (its
 * normalizers, pre-tokenizers, decoders and post-processor) on arbitrary
 * bytes, and the Oniguruma-to-PCRE2 regex translation on the same bytes as a
 * pattern. A tokenizer that loads must encode and decode a sample (or fail
 * with an error, for a missing unk token), with ids in range; a regex that
 * compiles must match a sample without crashing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/pre_tokenizers/hf_regex.h"
#include "tokenize/tokenizer_impl.h"

static void on_match(void *ctx, size_t a, size_t b)
{
    size_t n = *(size_t *)ctx;
    if (a > b || b > n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sample[] =
        "Hello  World! [CLS] caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 12,345 \xf0\x9f\x98\x80\t\x01x";
    sl_err e;
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.special = SL_SPECIAL_PARSE;
    sl_tokenizer *t = sl_tok_wordpiece_load_mem((const char *)data, size, "fuzz.json", &o, &e);
    if (t) {
        sl_tok_state *s = sl_tok_state_new(t);
        sl_ids ids = {0};
        if (sl_tokenizer_encode(t, s, sample, sizeof sample - 1, &ids, &e) == 0) {
            for (size_t i = 0; i < ids.n; i++)
                if (ids.v[i] >= sl_tokenizer_vocab_size(t))
                    abort();
            sl_buf out = {0};
            if (sl_tokenizer_decode(t, ids.v, ids.n, &out, &e))
                abort();
            sl_buf_free(&out);
        }
        sl_ids_free(&ids);
        sl_tok_state_free(s);
        sl_tokenizer_free(t);
    }
    sl_hf_regex *re = sl_hf_regex_new((const char *)data, size, "fuzz", &e);
    if (re) {
        sl_hf_match m = {0};
        size_t n = sizeof sample - 1;
        sl_hf_regex_each(re, &m, sample, n, on_match, &n, &e);
        sl_hf_match_free(&m);
        sl_hf_regex_free(re);
    }
    return 0;
}
