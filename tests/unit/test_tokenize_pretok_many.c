/* The scan_many forms of the hand-written pre-tokenizers (GPT-2, Llama-3,
 * Qwen2, o200k, tekken), which split ASCII text 64 bytes at a time with
 * bit operations (tokenize/pre_tokenizers/pretok_scan.h), against their
 * patterns through PCRE2 (independent evidence: the regex engine):
 *  - 6,000 random strings per pattern, mostly ASCII, built to hit the
 *    window rules: letter, digit, space and punctuation runs of every
 *    length up to well past a window (64 bytes), CamelCase, contractions in
 *    any case and place, CR/LF after punctuation, '/' after it, and now and
 *    then a non-ASCII character (letters, marks, numbers, Unicode spaces;
 *    all in Unicode 14, which PCRE2 10.42 knows);
 *  - each string split with caps of 1, 2, 3, 7 and 256 pieces a call (a
 *    call starts anew where the last one ended) and by the one-piece
 *    scanners; all must give PCRE2's piece ends;
 *  - each scan_many form: SSE2's window load and, where the CPU has
 *    AVX-512BW, that one (sl_pretok_many_isa). */
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

#include "tests/unit/support_tokenize.h"
#include "tokenize/models/bpe_internal.h"

typedef size_t (*many_fn)(const uint8_t *, size_t, size_t, size_t *, size_t);
typedef size_t (*one_fn)(const uint8_t *, size_t, size_t);

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned k)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)((rng >> 11) % k);
}

static size_t put(char *t, size_t n, const char *s, size_t k)
{
    memcpy(t + n, s, k);
    return n + k;
}

static size_t run_of(char *t, size_t n, const char *set, size_t len)
{
    size_t k = strlen(set);
    for (size_t i = 0; i < len; i++)
        t[n++] = set[rnd((unsigned)k)];
    return n;
}

/* A random text of about `want` bytes into t (room for want + 200). */
static size_t make_text(char *t, size_t want)
{
    static const char *const bits[] = {
        "'s",         "'S",        "'t",           "'re",         "'RE",      "'Ve",          "'m",
        "'ll",        "'lL",       "'d",           "'x",          "'",        "''s",          " 's",
        "don't",      "it's",      "IT'S",         "rock'n'roll", "\r\n",     "\n",           "\r",
        ";\n",        ";\n//",     ".\n/",         "}\n\n  ",     "\t",       "\x0b\x0c",     "/",
        "//",         " /",        "\n\n",         "\n \n",       " \n ",     "  \n",         "aBc",
        "HTTPServer", "camelCase", "ABC",          "x1",          "1x",       "(a",           " (a",
        "((a",        "\t(a",      "\n(a",         " 'abc",       "\xc3\xa9", "\xe4\xb8\xad", "\xcc\x81",
        "\xd9\xa3",   "\xc2\xa0",  "\xe3\x80\x80", "\xc5\xbf",    "\xc7\x85", "\xca\xb0",     "\xc2\x85",
    };
    size_t n = 0;
    while (n < want) {
        unsigned r = rnd(100);
        if (r < 22)
            n = run_of(t, n, "abcdefghijklmnopqrstuvwxyz", 1 + rnd(rnd(8) ? 9 : 80));
        else if (r < 30)
            n = run_of(t, n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1 + rnd(rnd(8) ? 4 : 70));
        else if (r < 37)
            n = run_of(t, n, "0123456789", 1 + rnd(rnd(6) ? 5 : 70));
        else if (r < 52)
            n = run_of(t, n, " ", 1 + (rnd(3) ? 0 : rnd(rnd(6) ? 6 : 90)));
        else if (r < 56)
            n = run_of(t, n, " \t\n\r\x0b\x0c", 1 + rnd(rnd(4) ? 4 : 80));
        else if (r < 66)
            n = run_of(t, n, "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~", 1 + rnd(rnd(6) ? 3 : 70));
        else if (r < 68) { /* O+[\r\n/]*: punctuation, a CR/LF run of any length, '/', punctuation */
            n = run_of(t, n, ".;)*", 1 + rnd(2));
            n = run_of(t, n, "\r\n", 1 + rnd(rnd(3) ? 8 : 90));
            n = run_of(t, n, "/", 1 + rnd(2));
            n = run_of(t, n, ".*(", rnd(2));
        } else {
            const char *b = bits[rnd(sizeof bits / sizeof *bits)];
            if ((uint8_t)b[0] >= 0x80 && rnd(3)) /* non-ASCII: rarer */
                continue;
            n = put(t, n, b, strlen(b));
        }
    }
    return n;
}

/* The ends of PCRE2's matches from 0 (every byte is in one: the patterns'
 * last alternatives match any character). */
static size_t regex_ends(pcre2_code *re, pcre2_match_data *md, const char *t, size_t n, size_t *ends)
{
    size_t m = 0, pos = 0;
    while (pos < n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)t, n, pos, 0, md, NULL);
        assert_true(rc >= 0);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        assert_true(ov[0] == pos && ov[1] > pos);
        ends[m++] = pos = ov[1];
    }
    return m;
}

static void show(const char *what, const char *t, size_t n, size_t at)
{
    size_t a = at > 20 ? at - 20 : 0, b = at + 20 < n ? at + 20 : n;
    fprintf(stderr, "%s: differs near byte %zu of %zu: \"", what, at, n);
    for (size_t i = a; i < b; i++)
        fprintf(stderr, (uint8_t)t[i] >= 0x20 && (uint8_t)t[i] < 0x7F ? "%c" : "\\x%02x", (uint8_t)t[i]);
    fprintf(stderr, "\"\n");
}

static void check(const char *name, many_fn many, one_fn one, pcre2_code *re, pcre2_match_data *md, const char *t,
                  size_t n, size_t *want, size_t *got)
{
    size_t m = regex_ends(re, md, t, n, want);
    static const size_t caps[] = {1, 2, 3, 7, 256};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
        size_t k = 0, pos = 0;
        while (pos < n) {
            size_t r = many((const uint8_t *)t, n, pos, got + k, caps[c]);
            assert_true(r >= 1 && r <= caps[c]);
            k += r;
            pos = got[k - 1];
            assert_true(k <= m + 1);
        }
        for (size_t i = 0; i < m; i++)
            if (i >= k || got[i] != want[i]) {
                show(name, t, n, i ? want[i - 1] : 0);
                fail_msg("%s (cap %zu): piece %zu ends at %zu, PCRE2 %zu", name, caps[c], i, i < k ? got[i] : 0,
                         want[i]);
            }
        assert_int_equal(k, m);
    }
    for (size_t i = 0, pos = 0; i < m; i++) {
        pos = one((const uint8_t *)t, n, pos);
        if (pos != want[i]) {
            show(name, t, n, i ? want[i - 1] : 0);
            fail_msg("%s (one piece): piece %zu ends at %zu, PCRE2 %zu", name, i, pos, want[i]);
        }
    }
}

/* A pre-tokenizer's pattern: its name, SL_PRETOK_* (whose scan_many forms
 * sl_pretok_many_isa gives), one-piece scanner and PCRE2 form */
typedef struct {
    const char *name;
    int id;
    one_fn one;
    const char *pat;
} scanner;

/* A '/' after a CR/LF run that O+[\r\n/]* takes (o200k, tekken) belongs to
 * that piece; the piece after it starts at the next byte. Placed at every
 * offset from a window's start, with runs of every length up to past a
 * window: a run holding a window's first byte has its punctuation before
 * the window (found by the fuzzer: "a" x 53 ".\n\n\n\n\n\n/.js" split ".js"
 * as "." "js"). */
static void test_slash_after_crlf_run(void **st)
{
    (void)st;
    sl_pretok_class('a');
    sl_pretok_o200k_init();
    const scanner sc[] = {
        {"o200k", SL_PRETOK_O200K, sl_pretok_scan_o200k, sl_pretok_o200k_pcre2},
        {"tekken", SL_PRETOK_TEKKEN, sl_pretok_scan_tekken, sl_pretok_tekken_pcre2},
        {"llama3", SL_PRETOK_LLAMA3, sl_pretok_scan_llama3, sl_pretok_llama3_pcre2},
    };
    enum { NS = sizeof sc / sizeof *sc, ROOM = 400 };
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    char t[ROOM];
    size_t want[ROOM], got[ROOM];
    for (size_t s = 0; s < NS; s++) {
        pcre2_code *re = sl_tt_pcre2_compile(sc[s].pat);
        for (int isa = 0; isa <= 4; isa += 4) {
            many_fn many = sl_pretok_many_isa(sc[s].id, isa);
            if (!many)
                continue;
            for (size_t run = 1; run <= 130; run++)
                for (size_t pad = 0; pad <= 130; pad++)
                    for (int v = 0; v < 2; v++) {
                        size_t n = 0;
                        n = run_of(t, n, "a", pad);
                        n = put(t, n, v ? ";" : ".", 1);
                        for (size_t i = 0; i < run; i++)
                            t[n++] = v && i % 2 ? '\r' : '\n';
                        n = put(t, n, v ? "//.js x" : "/.js", v ? 7 : 4);
                        check(sc[s].name, many, sc[s].one, re, md, t, n, want, got);
                    }
        }
        pcre2_code_free(re);
    }
    pcre2_match_data_free(md);
}

static void test_many_vs_pcre2(void **st)
{
    (void)st;
    sl_pretok_class('a');
    sl_pretok_o200k_init();
    const scanner sc[] = {
        {"gpt2", SL_PRETOK_GPT2, sl_pretok_scan, sl_pretok_gpt2_pcre2},
        {"llama3", SL_PRETOK_LLAMA3, sl_pretok_scan_llama3, sl_pretok_llama3_pcre2},
        {"qwen2", SL_PRETOK_QWEN2, sl_pretok_scan_qwen2, sl_pretok_qwen2_pcre2},
        {"o200k", SL_PRETOK_O200K, sl_pretok_scan_o200k, sl_pretok_o200k_pcre2},
        {"tekken", SL_PRETOK_TEKKEN, sl_pretok_scan_tekken, sl_pretok_tekken_pcre2},
    };
    enum { NS = sizeof sc / sizeof *sc, ROOM = 1400 };
    pcre2_code *re[NS];
    for (size_t s = 0; s < NS; s++)
        re[s] = sl_tt_pcre2_compile(sc[s].pat);
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    char *t = malloc(ROOM);
    size_t *want = malloc(ROOM * sizeof *want), *got = malloc(ROOM * sizeof *got);
    /* each form: SSE2's window load and, where the CPU has it, AVX-512BW's */
    int runs = 0;
    for (int isa = 0; isa <= 4; isa += 4) {
        if (!sl_pretok_many_isa(SL_PRETOK_GPT2, isa))
            continue;
        runs++;
        many_fn many[NS];
        for (size_t s = 0; s < NS; s++) {
            many[s] = sl_pretok_many_isa(sc[s].id, isa);
            assert_non_null(many[s]);
        }
        for (int it = 0; it < 6000; it++) {
            size_t n = make_text(t, 1 + rnd(it % 4 ? 200 : 1000));
            for (size_t s = 0; s < NS; s++)
                check(sc[s].name, many[s], sc[s].one, re[s], md, t, n, want, got);
        }
    }
    assert_true(runs >= 1);
    assert_ptr_equal(sl_pretok_many_isa(SL_PRETOK_GPT2, 0), sl_pretok_many_gpt2);
    free(t);
    free(want);
    free(got);
    pcre2_match_data_free(md);
    for (size_t s = 0; s < NS; s++)
        pcre2_code_free(re[s]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slash_after_crlf_run),
        cmocka_unit_test(test_many_vs_pcre2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
