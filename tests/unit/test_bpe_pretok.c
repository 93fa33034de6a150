/* The hand-written pre-tokenizer (sl_pretok_scan) against the PCRE2 GPT-2
 * pattern, which is the reference the scanner must equal:
 *  - the character class of every Unicode scalar value (letter / number /
 *    whitespace / other) equals what PCRE2 10.42 (Unicode 14) matches with
 *    \p{L}, \p{N} and [\t-\r\x{85}\p{Z}];
 *  - the piece boundaries are identical on the test corpus, the llama.cpp
 *    inputs, and 20,000 random strings built from tricky pieces (space runs
 *    before letters, digits, punctuation, Unicode spaces, contractions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "stream/io.h"
#include "tokenize/bpe.h"

int sl_pretok_class(uint32_t cp); /* tokenize/pretok.c */

static char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf;
}

static pcre2_code *re(const char *pat)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_ANCHORED, &ec, &eo, NULL);
    assert_non_null(c);
    return c;
}

static size_t utf8(uint32_t cp, char *u)
{
    if (cp < 0x80)
        return u[0] = (char)cp, 1;
    if (cp < 0x800)
        return u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000)
        return u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 63)), u[2] = (char)(0x80 | (cp & 63)), 3;
    return u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 63)),
           u[2] = (char)(0x80 | ((cp >> 6) & 63)), u[3] = (char)(0x80 | (cp & 63)), 4;
}

static void test_classes_every_code_point(void **st)
{
    (void)st;
    pcre2_code *L = re("\\p{L}"), *N = re("\\p{N}"), *S = re("[\\t-\\r\\x{85}\\p{Z}]");
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    size_t diff = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char u[4];
        size_t n = utf8(cp, u);
        int want = pcre2_match(L, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0   ? 1
                   : pcre2_match(N, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0 ? 2
                   : pcre2_match(S, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0 ? 3
                                                                            : 4;
        if (sl_pretok_class(cp) != want && diff++ < 10)
            fprintf(stderr, "U+%04X: scanner class %d, PCRE2 %d\n", cp, sl_pretok_class(cp), want);
    }
    assert_int_equal(diff, 0);
    pcre2_match_data_free(md);
    pcre2_code_free(L);
    pcre2_code_free(N);
    pcre2_code_free(S);
}

static int same_split(sl_bpe *b, sl_bpe_state *s, const char *t, size_t n)
{
    sl_ids a = {0}, c = {0};
    sl_bpe_set_scanner(b, 1);
    sl_bpe_pretokenize(b, s, t, n, &a);
    sl_bpe_set_scanner(b, 0);
    sl_bpe_pretokenize(b, s, t, n, &c);
    sl_bpe_set_scanner(b, 1);
    int ok = a.n == c.n && (a.n == 0 || !memcmp(a.v, c.v, a.n * sizeof *a.v));
    if (!ok)
        fprintf(stderr, "split differs on '%.*s'\n", (int)n, t);
    sl_ids_free(&a);
    sl_ids_free(&c);
    return ok;
}

static void test_same_pieces(void **st)
{
    (void)st;
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load(path("gpt2"), &e);
    assert_non_null(b);
    sl_bpe_state *s = sl_bpe_state_new(b);
    const char *files[] = {"corpus.jsonl", "llama.cpp-ggml-vocab-gpt-2.gguf.inp"};
    for (int f = 0; f < 2; f++) {
        char *t;
        size_t n;
        assert_int_equal(sl_read_file(path(files[f]), &t, &n, &e), 0);
        /* line by line and whole */
        for (char *l = t; l < t + n;) {
            char *nl = memchr(l, '\n', (size_t)(t + n - l));
            size_t len = nl ? (size_t)(nl - l) : (size_t)(t + n - l);
            assert_true(same_split(b, s, l, len));
            l += len + 1;
        }
        assert_true(same_split(b, s, t, n));
        free(t);
    }
    static const char *pieces[] = {" ", "  ", "   ", "\t", "\n", "\r\n", "\xc2\x85", "\xc2\xa0", "\xe3\x80\x80",
                                   "\xe1\xa0\x8e", "\xe2\x80\xa8", "a", "Zz", "\xc3\xa9", "\xe4\xbd\xa0", "1",
                                   "\xd9\xa3", "\xe2\x85\xa7", "!", "--", "'", "'s", "'S", "'ll", "'re", "'ve",
                                   "'m", "'d", "'t", "'x", "\xf0\x9f\x98\x80", "\xcc\x81", "_", "\x01", "\x00"};
    uint64_t r = 88172645463325252ULL;
    for (int i = 0; i < 20000; i++) {
        char buf[512];
        size_t n = 0;
        int k = 1 + (int)(r % 24);
        for (int j = 0; j < k; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            const char *p = pieces[r % (sizeof pieces / sizeof *pieces)];
            size_t pl = p[0] ? strlen(p) : 1;
            memcpy(buf + n, p, pl);
            n += pl;
        }
        if (!same_split(b, s, buf, n))
            fail();
    }
    sl_bpe_state_free(s);
    sl_bpe_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_every_code_point),
        cmocka_unit_test(test_same_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
