/* The tiktoken family (tokenize/models/tok_tiktoken.c) and its o200k / tekken
 * scanner (tokenize/pre_tokenizers/pretok_o200k.c):
 *  - the scanner's classes of every code point PCRE2 knows (Unicode <= 14.0)
 *    equal what PCRE2 matches with the pattern's own classes (\p{Lu}\p{Lt},
 *    \p{Ll}, \p{Lm}\p{Lo}, \p{M}, \p{N}, whitespace); the table itself was
 *    generated from tiktoken (scripts/gen/gen_o200k_classes.py), which
 *    covers the later characters;
 *  - the scanners split exactly as the patterns through PCRE2 on every such
 *    code point in 12 contexts (after capitals, before lower case, after a
 *    space or a mark, before an apostrophe, CR/LF, '/') and on 20,000 random
 *    strings of tricky pieces;
 *  - decoding random id lists gives tiktoken's decode_bytes
 *    (tests/data/tiktoken/decode.jsonl, made by make_fixtures.py);
 *  - 1 MB without spaces encodes in linear-ish time, and the id count of a
 *    repeated text grows linearly;
 *  - token lookups: special names and ordinary tokens by their bytes;
 *  - the words table (bpe_merge.c) finds exactly the entries a linear
 *    search finds, on entries made to share their first 11 bytes and their
 *    length (which a slot holds), some longer than 255 bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <unicode/uchar.h>

#include "stream/io.h"
#include "base/json.h"
#include "tests/unit/support_tokenize.h"
#include "tokenize/models/bpe_internal.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/models/tiktoken_impl.h"
#include "tokenize/tokenizer.h"

static const char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/tiktoken/%s", src ? src : ".", rel);
    return buf;
}

static int known_to_pcre2(uint32_t cp)
{
    UVersionInfo age;
    u_charAge((UChar32)cp, age);
    return age[0] != 0 && age[0] <= 14;
}

static int matches(pcre2_code *re, pcre2_match_data *md, const char *s, size_t n)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, PCRE2_ANCHORED, md, NULL);
    return rc >= 0 && pcre2_get_ovector_pointer(md)[1] == n;
}

static size_t put_utf8(char *o, uint32_t c)
{
    if (c < 0x80)
        return o[0] = (char)c, 1;
    if (c < 0x800)
        return o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 63)), 2;
    if (c < 0x10000)
        return o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 63)), o[2] = (char)(0x80 | (c & 63)), 3;
    o[0] = (char)(0xF0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 63));
    o[2] = (char)(0x80 | (c >> 6 & 63)), o[3] = (char)(0x80 | (c & 63));
    return 4;
}

static void test_classes(void **st)
{
    (void)st;
    static const char *const cls_pat[7] = {NULL,     "[\\p{Lu}\\p{Lt}]",      "\\p{Ll}", "[\\p{Lm}\\p{Lo}]", "\\p{M}",
                                           "\\p{N}", "[\\t-\\r\\x{85}\\p{Z}]"};
    pcre2_code *re[7] = {0};
    for (int k = 1; k < 7; k++)
        re[k] = sl_tt_pcre2_compile(cls_pat[k]);
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    size_t checked = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if ((cp >= 0xD800 && cp <= 0xDFFF) || !known_to_pcre2(cp))
            continue;
        char s[4];
        size_t n = put_utf8(s, cp);
        int want = 0;
        for (int k = 1; k < 7; k++)
            if (matches(re[k], md, s, n)) {
                assert_int_equal(want, 0); /* the classes are disjoint */
                want = k;
            }
        if (sl_pretok_o200k_class(cp) != want)
            fail_msg("U+%04X: scanner class %d, PCRE2 %d", cp, sl_pretok_o200k_class(cp), want);
        checked++;
    }
    assert_true(checked > 280000);
    pcre2_match_data_free(md);
    for (int k = 1; k < 7; k++)
        pcre2_code_free(re[k]);
}

/* Piece ends of p[0..n) by the scanner and by the regex must agree. */
static void same_split(size_t (*scan)(const uint8_t *, size_t, size_t), pcre2_code *re, pcre2_match_data *md,
                       const char *p, size_t n)
{
    size_t a = 0, b = 0;
    while (a < n) {
        size_t e = scan((const uint8_t *)p, n, a);
        int rc = pcre2_match(re, (PCRE2_SPTR)p, n, b, 0, md, NULL);
        assert_true(rc >= 0);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[0] != a || ov[1] != e) {
            char hex[400] = {0};
            for (size_t i = 0; i < n && i < 100; i++)
                snprintf(hex + 3 * i, 4, "%02x ", (uint8_t)p[i]);
            fail_msg("at %zu: scanner piece ends at %zu, PCRE2 matches %zu..%zu in %s", a, e, (size_t)ov[0],
                     (size_t)ov[1], hex);
        }
        a = b = e;
    }
}

static void test_same_pieces(void **st)
{
    (void)st;
    pcre2_code *o200k = sl_tt_pcre2_compile(sl_pretok_o200k_pcre2),
               *tekken = sl_tt_pcre2_compile(sl_pretok_tekken_pcre2);
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    static const char *const ctx[][2] = {
        {"AB", "cd"}, {"ab", "CD"}, {" ", "x"},  {"x", "'s"},   {"\xcc\x81", "a"}, {"", "\xcc\x81"},
        {"1", "23"},  {" ", " x"},  {"\n", "/"}, {"/", "\r\n"}, {"'", "'T"},       {"\xc7\x85", "\xca\xb0"},
    };
    char buf[64];
    size_t checked = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if ((cp >= 0xD800 && cp <= 0xDFFF) || !known_to_pcre2(cp))
            continue;
        for (size_t k = 0; k < sizeof ctx / sizeof *ctx; k++) {
            size_t n = strlen(ctx[k][0]);
            memcpy(buf, ctx[k][0], n);
            n += put_utf8(buf + n, cp);
            size_t m = strlen(ctx[k][1]);
            memcpy(buf + n, ctx[k][1], m);
            n += m;
            same_split(sl_pretok_scan_o200k, o200k, md, buf, n);
            same_split(sl_pretok_scan_tekken, tekken, md, buf, n);
        }
        checked++;
    }
    assert_true(checked > 280000);
    /* random strings of tricky pieces */
    static const char *const pieces[] = {
        "A",
        "b",
        "\xc7\x85" /* Lt */,
        "\xca\xb0" /* Lm */,
        "\xe4\xb8\xad" /* Lo */,
        "\xcc\x81" /* M */,
        "1",
        "\xd9\xa3" /* Arabic 3 */,
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\xc2\xa0",
        "\xe3\x80\x80",
        "'",
        "'s",
        "'S",
        "'ll",
        "'RE",
        "\xc5\xbf" /* long s */,
        "/",
        "//",
        ".",
        "!?",
        "\xf0\x9f\x98\x80",
        "\xe2\x80\x8d",
        "x",
        "Q",
    };
    uint64_t r = 12345;
    char text[256];
    for (int it = 0; it < 20000; it++) {
        size_t n = 0;
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        int k = 1 + (int)(r >> 59);
        for (int i = 0; i < k; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            const char *pc = pieces[(r >> 33) % (sizeof pieces / sizeof *pieces)];
            size_t m = strlen(pc);
            memcpy(text + n, pc, m);
            n += m;
        }
        same_split(sl_pretok_scan_o200k, o200k, md, text, n);
        same_split(sl_pretok_scan_tekken, tekken, md, text, n);
    }
    pcre2_match_data_free(md);
    pcre2_code_free(o200k);
    pcre2_code_free(tekken);
}

static sl_tokenizer *load_small(void)
{
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.pattern = "o200k";
    o.specials = "<|endoftext|>=7000,<|fim_prefix|>=7001,<|endofprompt|>=7010";
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(path("small.tiktoken"), &o, &e);
    if (!t)
        fail_msg("%s", e.msg);
    assert_string_equal(sl_tokenizer_family(t), "tiktoken");
    return t;
}

static void test_decode_vectors(void **st)
{
    (void)st;
    sl_tokenizer *t = load_small();
    char *text;
    size_t len;
    sl_err e = {{0}};
    if (sl_read_file(path("decode.jsonl"), &text, &len, &e))
        fail_msg("%s", e.msg);
    size_t lines = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        sl_json_doc *doc = sl_json_parse(p, n, NULL, &e);
        assert_non_null(doc);
        const sl_json *root = sl_json_root(doc), *ids = sl_json_get(root, "ids");
        const char *hex = sl_json_get_str(root, "hex");
        uint32_t v[64];
        for (size_t i = 0; i < ids->n; i++) {
            int64_t x;
            assert_true(sl_json_is_int(ids->kids[i], &x));
            v[i] = (uint32_t)x;
        }
        sl_buf out = {0};
        assert_int_equal(sl_tokenizer_decode(t, v, ids->n, &out, &e), 0);
        assert_int_equal(out.len * 2, strlen(hex));
        for (size_t i = 0; i < out.len; i++) {
            unsigned byte;
            sscanf(hex + 2 * i, "%2x", &byte);
            assert_int_equal((uint8_t)out.data[i], byte);
        }
        sl_buf_free(&out);
        sl_json_free(doc);
        lines++;
        p += n + 1;
    }
    assert_int_equal(lines, 500);
    free(text);
    /* an id without bytes (between the last rank and the special ids) */
    uint32_t gap = 6500;
    sl_buf out = {0};
    assert_int_not_equal(sl_tokenizer_decode(t, &gap, 1, &out, &e), 0);
    assert_non_null(strstr(e.msg, "id 6500 is not in the vocabulary"));
    sl_buf_free(&out);
    sl_tokenizer_free(t);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: preemption on a busy machine does not count */
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 MB without spaces: mixed letters (one o200k piece after another with
 * CamelCase, or one huge piece of lower case) and digits. The CPU time of
 * the whole (best of 3) is at most a small multiple of 16 times that of a
 * 1/16 slice, plus slack for the timer (quadratic work would be 16 times
 * that). */
static void test_long_text(void **st)
{
    (void)st;
    sl_tokenizer *t = load_small();
    sl_tok_state *s = sl_tok_state_new(t);
    static const char *const unit[] = {"abcdefghij", "AbcDefGhiJ", "\xe4\xb8\xad\xe6\x96\x87", "0123456789"};
    for (size_t u = 0; u < sizeof unit / sizeof *unit; u++) {
        size_t n = 1 << 20, ul = strlen(unit[u]);
        char *text = malloc(n);
        for (size_t i = 0; i < n; i++)
            text[i] = unit[u][i % ul];
        n -= n % ul;
        double tt[2];
        size_t got[2];
        for (int k = 0; k < 2; k++) {
            size_t m = k ? n : n / 16 - (n / 16) % ul;
            sl_ids ids = {0};
            sl_err e = {{0}};
            tt[k] = 1e9;
            for (int rep = 0; rep < 3; rep++) {
                ids.n = 0;
                double t0 = now();
                assert_int_equal(sl_tokenizer_encode(t, s, text, m, &ids, &e), 0);
                if (now() - t0 < tt[k])
                    tt[k] = now() - t0;
            }
            got[k] = ids.n;
            sl_buf out = {0};
            assert_int_equal(sl_tokenizer_decode(t, ids.v, ids.n, &out, &e), 0);
            assert_int_equal(out.len, m);
            assert_memory_equal(out.data, text, m);
            sl_buf_free(&out);
            sl_ids_free(&ids);
        }
        print_message("unit %zu: %zu ids in %.3f s, 1/16: %zu ids in %.3f s\n", u, got[1], tt[1], got[0], tt[0]);
        assert_true(tt[1] < 4 * 16 * tt[0] + 0.25);
        free(text);
    }
    sl_tok_state_free(s);
    sl_tokenizer_free(t);
}

static void test_lookup(void **st)
{
    (void)st;
    sl_tokenizer *t = load_small();
    assert_int_equal(sl_tokenizer_token_id(t, "<|endofprompt|>"), 7010);
    assert_int_equal(sl_tokenizer_token_id(t, "a"), 'a');
    assert_int_equal(sl_tokenizer_token_id(t, "<|nothing|>"), -1);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), 7000);
    assert_int_equal(sl_tokenizer_vocab_size(t), 7011);
    sl_tokenizer_free(t);
}

/* The words table (a slot holds an entry's first 11 bytes and its length,
 * capped at 255) against a linear search: many tables of 32 slots with 20
 * entries each, so that every lookup walks a long run of slots, and the
 * Bloom filter in front made to pass everything. The entries: short ones
 * over {a, b}; ones of 11-21 bytes that share their first 11; ones of
 * 240-300 bytes of c and d that share far more. Looked up: each entry,
 * each one-byte change of it, and each of its prefixes. */
static int64_t words_linear(char tok[][300], const size_t *len, size_t n, const char *q, size_t l)
{
    for (size_t k = 0; k < n; k++)
        if (len[k] == l && !memcmp(tok[k], q, l))
            return (int64_t)k;
    return -1;
}

static void test_words_table(void **st)
{
    (void)st;
    enum { N = 20, MAXLEN = 300 };
    char tok[N][MAXLEN], q[MAXLEN];
    size_t len[N];
    uint64_t r = 12345;
#define NEXT() (r = r * 6364136223846793005ULL + 1442695040888963407ULL, r >> 33)
    size_t found = 0, missing = 0;
    for (int trial = 0; trial < 500; trial++) {
        sl_bpe *b = sl_bpe_new("words");
        sl_tt_alloc_ids(b, N);
        sl_words_init(b, 8);
        assert_int_equal(b->words_mask, 31);
        size_t n = 0;
        for (size_t i = 0; i < N; i++) {
            size_t kind = NEXT() % 3, l;
            if (kind == 0) {
                l = 1 + NEXT() % 11;
                for (size_t j = 0; j < l; j++)
                    tok[n][j] = (char)('a' + NEXT() % 2);
            } else if (kind == 1) {
                l = 11 + NEXT() % 11;
                for (size_t j = 0; j < l; j++)
                    tok[n][j] = j < 11 ? "abababababa"[j] : (char)('a' + NEXT() % 2);
            } else {
                l = 240 + NEXT() % 61;
                for (size_t j = 0; j < l; j++)
                    tok[n][j] = j < 230 ? 'c' : (char)('c' + NEXT() % 2);
            }
            len[n] = l;
            int64_t first = words_linear(tok, len, n, tok[n], l);
            assert_int_equal(sl_tt_add_token(b, (uint32_t)n, tok[n], l), first);
            if (first < 0)
                n++;
        }
        memset(b->bloom, 0xFF, (b->bloom_mask + 1) / 8);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(sl_bpe_find_word(b, tok[i], len[i]), (int64_t)i);
            for (size_t c = 0; c < 8; c++) {
                memcpy(q, tok[i], len[i]);
                size_t at = NEXT() % len[i];
                q[at] = q[at] == 'a' ? 'b' : q[at] == 'b' ? 'a' : q[at] == 'c' ? 'd' : 'c';
                int64_t got = sl_bpe_find_word(b, q, len[i]);
                assert_int_equal(got, words_linear(tok, len, n, q, len[i]));
                found += got >= 0;
                missing += got < 0;
            }
            for (size_t l = 0; l < len[i]; l++)
                assert_int_equal(sl_bpe_find_word(b, tok[i], l), words_linear(tok, len, n, tok[i], l));
        }
        sl_bpe_free(b);
    }
#undef NEXT
    print_message("%zu changed lookups found, %zu not\n", found, missing);
    assert_true(found > 1000 && missing > 1000);
}

/* sl_head8 (the words table's and the load map's key head) equals the
 * first min(n, 8) bytes copied into a zeroed word, reading only p[0..n). */
static void test_head8(void **st)
{
    (void)st;
    uint64_t r = 99;
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = (size_t)trial % 17;
        uint8_t *p = malloc(n ? n : 1); /* (exactly n bytes: ASan sees a read past them) */
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            p[i] = (uint8_t)(r >> 56);
        }
        uint64_t want = 0;
        memcpy(&want, p, n < 8 ? n : 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        assert_int_equal(sl_head8(p, n), want);
#else
        (void)want;
#endif
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),   cmocka_unit_test(test_same_pieces), cmocka_unit_test(test_decode_vectors),
        cmocka_unit_test(test_long_text), cmocka_unit_test(test_lookup),      cmocka_unit_test(test_words_table),
        cmocka_unit_test(test_head8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
