/* libFuzzer target: the BPE encoder on arbitrary bytes (valid UTF-8 or
 * not), GPT-2 and GPT-NeoX-20B, every --special mode. Oracles:
 *  - GPT-2 has a token for each of the 256 bytes, so in plain mode decoding
 *    gives the input back byte for byte, whatever it is;
 *  - every id is below the vocab size;
 *  - the heap merge and the scan merge agree on the input as one piece.
 * Each input runs GPT-2 in plain mode (the round trip) and one of the other
 * five tokenizer/mode pairs, chosen by its length: every pair is covered
 * across inputs at a third of the cost of all six on each.
 * The tokenizers are read from $SLUICE_SRC/tests/data/bpe, else from
 * tests/data/bpe beside the build folder that holds this binary
 * (build-fuzz/fuzz_bpe_encode), else from the current directory's. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/models/bpe_internal.h"

#include <unistd.h>

static sl_bpe *load(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    char p[4096], exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
    if (!src && slash) { /* <repo>/build-fuzz/fuzz_bpe_encode */
        *slash = 0;
        snprintf(p, sizeof p, "%s/../tests/data/bpe/%s", exe, rel);
        if (access(p, R_OK) == 0)
            src = strcat(exe, "/..");
    }
    snprintf(p, sizeof p, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    sl_err e;
    sl_bpe *b = sl_bpe_load(p, &e);
    if (!b) {
        fprintf(stderr, "fuzz_bpe_encode: %s (set SLUICE_SRC to the repository)\n", e.msg);
        abort();
    }
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sl_bpe *gpt2, *neox;
    static sl_bpe_state *sg, *sn;
    if (!gpt2) {
        gpt2 = load("gpt2");
        neox = load("neox-tokenizer.json");
        sg = sl_bpe_state_new(gpt2);
        sn = sl_bpe_state_new(neox);
    }
    sl_err e;
    sl_ids ids = {0}, a = {0}, b = {0};
    int pick = 1 + (int)(size % 5); /* pair 0 (GPT-2, plain) and one of pairs 1..5 */
    for (int mode = 0; mode < 3; mode++) {
        for (int k = 0; k < 2; k++) {
            int pair = mode * 2 + k;
            if (pair != 0 && pair != pick)
                continue;
            sl_bpe *t = k ? neox : gpt2;
            ids.n = 0;
            if (sl_bpe_encode(t, k ? sn : sg, (const char *)data, size, (sl_special_mode)mode, &ids, &e) &&
                mode != SL_SPECIAL_ERROR)
                abort();
            for (size_t i = 0; i < ids.n; i++)
                if (ids.v[i] >= sl_bpe_vocab_size(t))
                    abort();
            if (k == 0 && mode == SL_SPECIAL_PLAIN) {
                sl_buf out = {0};
                if (sl_bpe_decode(t, ids.v, ids.n, &out, &e) || out.len != size ||
                    (size && memcmp(out.data, data, size)))
                    abort();
                sl_buf_free(&out);
            }
        }
    }
    if (size < 300) { /* the scan is quadratic: keep it to short pieces */
        sl_bpe_encode_piece(gpt2, sg, data, size, 1, &a);
        sl_bpe_encode_piece(gpt2, sg, data, size, 0, &b);
        if (a.n != b.n || (a.n && memcmp(a.v, b.v, a.n * sizeof *a.v)))
            abort();
    }
    sl_ids_free(&ids);
    sl_ids_free(&a);
    sl_ids_free(&b);
    return 0;
}
