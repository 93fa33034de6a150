/* libFuzzer target: the tiktoken family's loaders on arbitrary bytes (a
 * .tiktoken rank file, or a tekken JSON when it starts with {"config"). The
 * first byte picks the pattern (a name, or when it is '~' the bytes up to
 * the first NUL are a regex for PCRE2) and whether special tokens are given.
 * A tokenizer that loads must encode and decode a sample without error, with
 * ids below its vocab size, and give the sample back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/models/tiktoken.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"gpt2", "cl100k", "qwen2", "o200k", "tekken"};
    if (size < 1)
        return 0;
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    const char *t = (const char *)data + 1;
    size_t n = size - 1;
    char *regex = NULL;
    if (data[0] == '~') {
        const char *nul = memchr(t, 0, n);
        if (!nul)
            return 0;
        regex = strndup(t, (size_t)(nul - t));
        o.pattern = regex;
        n -= (size_t)(nul - t) + 1;
        t = nul + 1;
    } else {
        o.pattern = names[data[0] % 5];
    }
    if (data[0] & 0x40)
        o.specials = "<|endoftext|>=300,<|x|>=999";
    o.special = data[0] & 0x20 ? SL_SPECIAL_PARSE : SL_SPECIAL_PLAIN;
    sl_err e;
    sl_tokenizer *tk = sl_tiktoken_load_mem(t, n, "fuzz", &o, &e);
    if (!tk && (data[0] & 0x40)) { /* a tekken file refuses options: try without */
        o.pattern = NULL;
        o.specials = NULL;
        tk = sl_tiktoken_load_mem(t, n, "fuzz", &o, &e);
    }
    if (tk) {
        static const char sample[] = "Hello  world <|endoftext|> caf\xc3\xa9 \xe4\xb8\xad'S 123/\r\n \xcc\x81";
        sl_tok_state *s = sl_tok_state_new(tk);
        sl_ids ids = {0};
        if (sl_tokenizer_encode(tk, s, sample, sizeof sample - 1, &ids, &e))
            abort();
        for (size_t i = 0; i < ids.n; i++)
            if (ids.v[i] >= sl_tokenizer_vocab_size(tk))
                abort();
        sl_buf out = {0};
        if (sl_tokenizer_decode(tk, ids.v, ids.n, &out, &e))
            abort();
        if (!regex && (out.len != sizeof sample - 1 || memcmp(out.data, sample, out.len)))
            abort(); /* every byte has a token, and the known patterns cover all text */
        sl_buf_free(&out);
        sl_ids_free(&ids);
        sl_tok_state_free(s);
        sl_tokenizer_free(tk);
    }
    free(regex);
    return 0;
}
