/* libFuzzer target: tokenizer file parsers on arbitrary bytes: the
 * tokenizer.json loader, the vocab.json + merges.txt loader (input split at
 * the first NUL byte) and the character vocabulary parser. A tokenizer that
 * loads must encode and decode a sample without error, with ids in range. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/bpe.h"
#include "tokenize/chartok.h"

static void exercise(sl_bpe *b)
{
    static const char sample[] = "Hello  world <|endoftext|> caf\xc3\xa9 \xff 123";
    sl_bpe_state *s = sl_bpe_state_new(b);
    sl_ids ids = {0};
    sl_err e;
    if (sl_bpe_encode(b, s, sample, sizeof sample - 1, SL_SPECIAL_PARSE, &ids, &e))
        abort();
    sl_buf out = {0};
    for (size_t i = 0; i < ids.n; i++)
        if (ids.v[i] >= sl_bpe_vocab_size(b))
            abort();
    if (sl_bpe_decode(b, ids.v, ids.n, &out, &e))
        abort();
    sl_buf_free(&out);
    sl_ids_free(&ids);
    sl_bpe_state_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err e;
    const char *t = (const char *)data;
    sl_bpe *b = sl_bpe_load_mem(t, size, NULL, 0, "fuzz.json", &e);
    if (b) {
        exercise(b);
        sl_bpe_free(b);
    }
    const char *nul = memchr(t, 0, size);
    if (nul) {
        size_t vn = (size_t)(nul - t);
        b = sl_bpe_load_mem(t, vn, nul + 1, size - vn - 1, "fuzz", &e);
        if (b) {
            exercise(b);
            sl_bpe_free(b);
        }
    }
    sl_charvocab *v = sl_charvocab_parse(t, size, "fuzz.json", &e);
    if (v) {
        uint32_t *ids = NULL;
        size_t n = 0, cap = 0;
        sl_charvocab_encode(v, "ab\xc3\xa9\xff", 5, &ids, &n, &cap);
        sl_buf out = {0};
        if (sl_charvocab_decode(v, ids, n, &out, &e))
            abort();
        sl_buf_free(&out);
        free(ids);
        sl_charvocab_free(v);
    }
    return 0;
}
