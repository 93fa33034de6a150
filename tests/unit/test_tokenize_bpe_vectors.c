/* BPE encoder against llama.cpp's tokenizer test vectors, which were
 * produced by Hugging Face `tokenizers` (AutoTokenizer.encode(text,
 * add_special_tokens=False)): 46 cases each for GPT-2 (vocab.json +
 * merges.txt) and GPT-NeoX-20B (the "mpt" vectors; same tokenizer.json).
 * Also checks that decoding gives the input back (these inputs are NFC). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/io.h"
#include "tokenize/bpe.h"

static char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf;
}

static void run_vectors(const char *tok, const char *name)
{
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load(path(tok), &e);
    if (!b)
        fail_msg("load: %s", e.msg);
    char fn[256], *inp, *out;
    size_t ni, no;
    snprintf(fn, sizeof fn, "llama.cpp-ggml-vocab-%s.gguf.inp", name);
    assert_int_equal(sl_read_file(path(fn), &inp, &ni, &e), 0);
    snprintf(fn, sizeof fn, "llama.cpp-ggml-vocab-%s.gguf.out", name);
    assert_int_equal(sl_read_file(path(fn), &out, &no, &e), 0);
    sl_bpe_state *st = sl_bpe_state_new(b);
    static const char SEP[] = "\n__ggml_vocab_test__\n";
    size_t pos = 0, opos = 0;
    int cases = 0;
    while (pos < ni) {
        char *sep = strstr(inp + pos, SEP);
        assert_non_null(sep);
        size_t len = (size_t)(sep - (inp + pos));
        char *nl = memchr(out + opos, '\n', no - opos);
        assert_non_null(nl);
        /* expected ids: " %d" each */
        sl_ids want = {0}, got = {0};
        char *q = out + opos;
        while (q < nl) {
            char *end;
            unsigned long v = strtoul(q, &end, 10);
            if (end == q)
                break;
            sl_ids_push(&want, (uint32_t)v);
            q = end;
        }
        assert_int_equal(sl_bpe_encode(b, st, inp + pos, len, SL_SPECIAL_PARSE, &got, &e), 0);
        if (got.n != want.n || (got.n && memcmp(got.v, want.v, got.n * sizeof *got.v))) {
            fprintf(stderr, "case %d (%s) '%.*s': got", cases, name, (int)len, inp + pos);
            for (size_t i = 0; i < got.n; i++)
                fprintf(stderr, " %u", got.v[i]);
            fprintf(stderr, "\n want");
            for (size_t i = 0; i < want.n; i++)
                fprintf(stderr, " %u", want.v[i]);
            fprintf(stderr, "\n");
            fail();
        }
        sl_buf dec = {0};
        assert_int_equal(sl_bpe_decode(b, got.v, got.n, &dec, &e), 0);
        assert_int_equal(dec.len, len);
        assert_memory_equal(dec.data ? dec.data : "", inp + pos, len);
        sl_buf_free(&dec);
        sl_ids_free(&want);
        sl_ids_free(&got);
        cases++;
        pos += len + strlen(SEP);
        opos = (size_t)(nl - out) + 1;
    }
    assert_int_equal(cases, 46);
    assert_int_equal(opos, no);
    free(inp);
    free(out);
    sl_bpe_state_free(st);
    sl_bpe_free(b);
}

static void test_gpt2_vectors(void **s)
{
    (void)s;
    run_vectors("gpt2", "gpt-2");
}

static void test_neox_vectors(void **s)
{
    (void)s;
    run_vectors("neox-tokenizer.json", "mpt");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt2_vectors),
        cmocka_unit_test(test_neox_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
