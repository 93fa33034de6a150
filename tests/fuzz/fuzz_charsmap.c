/* libFuzzer target: SentencePiece precompiled charsmaps
 * (tokenize/normalizers/norm_precompiled.c) on arbitrary bytes. Parsing checks every
 * reachable trie node, so a charsmap that parses must then normalize any
 * text, SentencePiece's way and Hugging Face's, without reading outside the
 * trie or the strings. Seed: tests/fuzz/corpus/charsmap (the charsmap
 * SentencePieceTrainer compiles from a 4-rule normalization TSV). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/normalizers/norm_precompiled.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const samples[] = {"AB \xef\xbc\x91\xe2\x80\x83 x", "  a  b  ",
                                          "e\xcc\x81\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x94\xac", "\xff A\0B"};
    sl_charsmap cm;
    sl_err e;
    if (sl_charsmap_parse(&cm, data, size, "fuzz", 0, &e)) {
        if (strchr(e.msg, '\n'))
            abort();
        return 0;
    }
    sl_spm_norm nz = {&cm, NULL, 1, 1, 1, 0};
    sl_buf out = {0};
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
        size_t n = k == 3 ? 5 : strlen(samples[k]); /* the last one holds a NUL */
        sl_spm_normalize(&nz, samples[k], n, &out);
        if (k != 3) { /* HF's way takes valid UTF-8 only */
            sl_buf_clear(&out);
            if (sl_precompiled_hf(&cm, samples[k], n, &out, &e))
                abort();
        }
        const char *rep;
        sl_charsmap_match(&cm, samples[k], n, 1, &rep);
    }
    sl_buf_free(&out);
    sl_charsmap_free(&cm);
    return 0;
}
