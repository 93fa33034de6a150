/* libFuzzer target: the Unigram and the SentencePiece-style BPE
 * tokenizer.json loaders (with the shared normalizer engine: Precompiled
 * charsmaps, regexes, every other normalizer; the shared pre-tokenizers,
 * Metaspace included, and post-processors; BPE affixes) on arbitrary bytes. A
 * tokenizer that loads must encode and decode a sample, with ids in range. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tokenize/tokenizer_impl.h"

static void run(sl_tokenizer *t)
{
    static const char sample[] =
        "  Hello  World! <s> caf\xc3\xa9 e\xcc\x81 \xef\xac\x81 \xe4\xb8\xad\xe6\x96\x87 12,345 "
        "\xf0\x9f\x91\xa9\xf0\x9f\x8f\xbd\xe2\x80\x8d\xf0\x9f\x9a\x80\t\x01x\r\n";
    sl_err e;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err e;
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.special = SL_SPECIAL_PARSE;
    sl_tokenizer *t = sl_tok_unigram_load_mem((const char *)data, size, "fuzz.json", &o, &e);
    if (t)
        run(t);
    t = sl_tok_spbpe_load_mem((const char *)data, size, "fuzz.json", &o, &e);
    if (t)
        run(t);
    return 0;
}
