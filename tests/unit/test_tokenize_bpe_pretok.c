/* The hand-written pre-tokenizer (sl_pretok_scan) against HF and against
 * the PCRE2 GPT-2 pattern:
 *  - the character class of every Unicode scalar value (letter / number /
 *    whitespace / other) equals HF's (tests/data/bpe/hf-classes.txt, probed
 *    from HF's pre-tokenizer by scripts/gen/gen_pretok_classes.py), and equals what
 *    PCRE2 10.42 matches with \p{L}, \p{N} and [\t-\r\x{85}\p{Z}] for every
 *    character PCRE2 knows (Unicode <= 14.0);
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

#include <unicode/uchar.h>

#include "stream/io.h"
#include "tokenize/models/bpe_internal.h"

int sl_pretok_class(uint32_t cp); /* tokenize/pre_tokenizers/pretok.c */

/* Assigned in Unicode 14.0 or earlier (ICU's age property). */
static int known_to_pcre2(uint32_t cp)
{
    UVersionInfo age;
    u_charAge((UChar32)cp, age);
    return age[0] != 0 && age[0] <= 14;
}

/* True when every character of t is known to PCRE2 (see above). */
static int all_known(const char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = (uint8_t)t[i];
        size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        uint32_t cp = k == 1 ? c : (uint32_t)(c & (0x7F >> k));
        for (size_t j = 1; j < k && i + j < n; j++)
            cp = cp << 6 | ((uint8_t)t[i + j] & 0x3F);
        if (cp >= 0x80 && !known_to_pcre2(cp))
            return 0;
        i += k;
    }
    return 1;
}

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

/* HF's class of every code point, from tests/data/bpe/hf-classes.txt. */
static char *hf_classes(void)
{
    char *cls = calloc(0x110000, 1), *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("hf-classes.txt"), &t, &n, &e), 0);
    for (char *l = t; l < t + n;) {
        char *nl = strchr(l, '\n');
        unsigned a, b;
        char c;
        if (l[0] != '#' && sscanf(l, "%X %X %c", &a, &b, &c) == 3)
            for (unsigned i = a; i <= b && i < 0x110000; i++)
                cls[i] = c == 'L' ? 1 : c == 'N' ? 2 : c == 'S' ? 3 : 4;
        l = nl ? nl + 1 : t + n;
    }
    free(t);
    return cls;
}

static void test_classes_every_code_point(void **st)
{
    (void)st;
    char *hf = hf_classes();
    pcre2_code *L = re("\\p{L}"), *N = re("\\p{N}"), *S = re("[\\t-\\r\\x{85}\\p{Z}]");
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    size_t diff_hf = 0, diff_pcre2 = 0, newer = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        if (sl_pretok_class(cp) != hf[cp] && diff_hf++ < 10)
            fprintf(stderr, "U+%04X: scanner class %d, HF %d\n", cp, sl_pretok_class(cp), hf[cp]);
        char u[4];
        size_t n = sl_utf8_encode(u, cp);
        int p = pcre2_match(L, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0   ? 1
                : pcre2_match(N, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0 ? 2
                : pcre2_match(S, (PCRE2_SPTR)u, n, 0, 0, md, NULL) >= 0 ? 3
                                                                        : 4;
        /* PCRE2 10.42 knows Unicode 14.0: it may differ only on characters
         * assigned later, which it sees as unassigned (class 4) */
        if (sl_pretok_class(cp) != p) {
            if (p == 4 && !known_to_pcre2(cp))
                newer++;
            else if (diff_pcre2++ < 10)
                fprintf(stderr, "U+%04X: scanner class %d, PCRE2 %d\n", cp, sl_pretok_class(cp), p);
        }
    }
    assert_int_equal(diff_hf, 0);
    assert_int_equal(diff_pcre2, 0);
    fprintf(stderr, "%zu code points assigned after Unicode 14.0 differ from PCRE2 (expected)\n", newer);
    assert_true(newer > 1000 && newer < 20000);
    pcre2_match_data_free(md);
    pcre2_code_free(L);
    pcre2_code_free(N);
    pcre2_code_free(S);
    free(hf);
}

static int same_split(sl_bpe *b, sl_bpe_state *s, const char *t, size_t n)
{
    if (!all_known(t, n))
        return 1; /* PCRE2 cannot agree there (see above); HF does, via the fixtures */
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
    static const char *pieces[] = {" ",
                                   "  ",
                                   "   ",
                                   "\t",
                                   "\n",
                                   "\r\n",
                                   "\xc2\x85",
                                   "\xc2\xa0",
                                   "\xe3\x80\x80",
                                   "\xe1\xa0\x8e",
                                   "\xe2\x80\xa8",
                                   "a",
                                   "Zz",
                                   "\xc3\xa9",
                                   "\xe4\xbd\xa0",
                                   "1",
                                   "\xd9\xa3",
                                   "\xe2\x85\xa7",
                                   "!",
                                   "--",
                                   "'",
                                   "'s",
                                   "'S",
                                   "'ll",
                                   "'re",
                                   "'ve",
                                   "'m",
                                   "'d",
                                   "'t",
                                   "'x",
                                   "\xf0\x9f\x98\x80",
                                   "\xcc\x81",
                                   "_",
                                   "\x01",
                                   "\x00"};
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
