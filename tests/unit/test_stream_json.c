/* JSON parser and writer: RFC 8259 cases, escapes, surrogates, limits, round trips. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/json.h"
#include "base/rng.h"

static sl_json_doc *P(const char *s, sl_err *e)
{
    return sl_json_parse(s, strlen(s), NULL, e);
}

static void test_valid_values(void **st)
{
    (void)st;
    const char *ok[] = {"0",
                        "-0",
                        "1.5e10",
                        "-12.25E-3",
                        "true",
                        "false",
                        "null",
                        "\"\"",
                        "[]",
                        "{}",
                        " [1, [2, [3]], {\"a\": {}}] ",
                        "\"\\u00e9\\n\\t\\\"\\\\/\"",
                        "123456789012345678"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        sl_err e = {{0}};
        sl_json_doc *d = P(ok[i], &e);
        assert_non_null(d);
        sl_json_free(d);
    }
}

static void test_invalid_values(void **st)
{
    (void)st;
    const char *bad[] = {"",         " ",     "01",      "1.",         ".5",    "1e",       "+1",      "tru",
                         "nul",      "[1,]",  "{\"a\"}", "{\"a\":1,}", "[1 2]", "\"abc",    "\"\\x\"", "\"\\u12g4\"",
                         "\"a\nb\"", "{1:2}", "[1]x",    "{\"a\":1}}", "NaN",   "Infinity", "'a'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_err e = {{0}};
        sl_json_doc *d = P(bad[i], &e);
        if (d)
            fail_msg("accepted invalid JSON: %s", bad[i]);
        assert_non_null(strstr(e.msg, "offset "));
    }
}

static void test_strings_and_surrogates(void **st)
{
    (void)st;
    sl_err e;
    /* U+1F600 as a surrogate pair -> 4-byte UTF-8 */
    sl_json_doc *d = P("\"\\ud83d\\ude00x\"", &e);
    assert_non_null(d);
    sl_json *v = sl_json_root(d);
    assert_int_equal(v->str_len, 5);
    assert_memory_equal(v->str, "\xF0\x9F\x98\x80x", 5);
    sl_json_free(d);
    /* lone surrogates become U+FFFD and are counted */
    sl_json_opts o = {0};
    d = sl_json_parse("\"a\\ud800b\\udc00\"", 16, &o, &e);
    assert_non_null(d);
    v = sl_json_root(d);
    assert_int_equal(v->str_len, 8);
    assert_memory_equal(v->str,
                        "a\xEF\xBF\xBD"
                        "b\xEF\xBF\xBD",
                        8);
    assert_int_equal(o.invalid_count, 2);
    sl_json_free(d);
    /* \u0000 keeps the NUL inside the string */
    d = P("\"a\\u0000b\"", &e);
    assert_non_null(d);
    assert_int_equal(sl_json_root(d)->str_len, 3);
    assert_int_equal(sl_json_root(d)->str[1], 0);
    sl_json_free(d);
}

static void test_raw_invalid_utf8_modes(void **st)
{
    (void)st;
    const char s[] = "\"a\xff"
                     "b\xe2\x82\"";
    sl_err e;
    sl_json_opts o = {.invalid_utf8 = SL_UTF8_REPLACE};
    sl_json_doc *d = sl_json_parse(s, sizeof s - 1, &o, &e);
    assert_non_null(d);
    assert_string_equal(sl_json_root(d)->str, "a\xEF\xBF\xBD"
                                              "b\xEF\xBF\xBD");
    assert_int_equal(o.invalid_count, 2);
    sl_json_free(d);
    o = (sl_json_opts){.invalid_utf8 = SL_UTF8_SKIP};
    d = sl_json_parse(s, sizeof s - 1, &o, &e);
    assert_string_equal(sl_json_root(d)->str, "ab");
    sl_json_free(d);
    o = (sl_json_opts){.invalid_utf8 = SL_UTF8_ERROR};
    assert_null(sl_json_parse(s, sizeof s - 1, &o, &e));
    assert_non_null(strstr(e.msg, "offset 2: invalid UTF-8"));
}

static void test_lookup(void **st)
{
    (void)st;
    sl_err e;
    sl_json_doc *d = P("{\"a\":1,\"b\":\"x\",\"a\":-7,\"f\":2.5,\"t\":true,\"big\":99999999999999999999}", &e);
    sl_json *o = sl_json_root(d);
    int64_t i;
    assert_int_equal(sl_json_get_int(o, "a", &i), 0);
    assert_int_equal(i, -7); /* last duplicate wins, as in Python */
    assert_string_equal(sl_json_get_str(o, "b"), "x");
    assert_int_equal(sl_json_get_int(o, "f", &i), -1);
    assert_int_equal(sl_json_get_int(o, "big", &i), -1); /* out of int64 range */
    int b;
    assert_int_equal(sl_json_get_bool(o, "t", &b), 0);
    assert_true(b);
    assert_null(sl_json_get(o, "zz"));
    sl_json_free(d);
}

static void test_depth_limit(void **st)
{
    (void)st;
    size_t n = 100000;
    char *s = malloc(2 * n + 1);
    memset(s, '[', n);
    memset(s + n, ']', n);
    s[2 * n] = 0;
    sl_err e;
    assert_null(sl_json_parse(s, 2 * n, NULL, &e));
    assert_non_null(strstr(e.msg, "nesting too deep"));
    free(s);
}

/* The JSON string writer against its rule written out byte by byte
 * (RFC 8259's escapes: \" \\ \n \r \t \b \f, other bytes below 0x20 as
 * \u00xx, every other byte as it is, 0x7f and 0x80-0xff included), on
 * random strings of every length to 300 at every alignment: the escapes
 * at each place of the writer's 16- and 8-byte blocks. */
static void ref_put_str(sl_buf *b, const unsigned char *s, size_t n)
{
    sl_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        const char *e = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                                    : NULL;
        if (e)
            sl_buf_puts(b, e);
        else if (c < 0x20)
            sl_buf_printf(b, "\\u%04x", c);
        else
            sl_buf_putc(b, (char)c);
    }
    sl_buf_putc(b, '"');
}

static void test_writer_random(void **st)
{
    (void)st;
    uint64_t rs = 7;
    unsigned char buf[320];
    sl_buf got = {0}, want = {0};
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)sl_rng_below(&rs, 301), off = (size_t)sl_rng_below(&rs, 16);
        unsigned mode = (unsigned)sl_rng_below(&rs, 4); /* 0: escapes rare; 3: dense */
        for (size_t i = 0; i < n; i++) {
            uint64_t r = sl_rng_below(&rs, 64);
            if (r < (mode == 3 ? 24u : mode == 0 ? 1u : 6u)) {
                static const unsigned char special[] = {'"', '\\', '\n', '\r', '\t', 0, 1, 0x1f, '\b', '\f'};
                buf[off + i] = special[sl_rng_below(&rs, sizeof special)];
            } else if (r < 40) {
                buf[off + i] = (unsigned char)(0x20 + sl_rng_below(&rs, 0x60)); /* ASCII, 0x7f included */
            } else {
                buf[off + i] = (unsigned char)(0x80 + sl_rng_below(&rs, 0x80));
            }
        }
        sl_buf_clear(&got);
        sl_buf_clear(&want);
        sl_buf_puts(&got, "x"); /* the writer appends */
        sl_buf_puts(&want, "x");
        sl_json_put_str(&got, (const char *)buf + off, n);
        ref_put_str(&want, buf + off, n);
        if (got.len != want.len || memcmp(got.data, want.data, got.len))
            fail_msg("round %d: %zu bytes at offset %zu written differently", round, n, off);
    }
    sl_buf_free(&got);
    sl_buf_free(&want);
}

static void test_writer_roundtrip(void **st)
{
    (void)st;
    /* every byte value 1..255 that is valid on its own, plus controls and quotes */
    sl_buf in = {0}, out = {0};
    for (int c = 1; c < 0x80; c++)
        sl_buf_putc(&in, (char)c);
    sl_buf_puts(&in, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    sl_buf_putc(&in, 0);
    sl_json_put_str(&out, in.data, in.len);
    sl_err e;
    sl_json_doc *d = sl_json_parse(out.data, out.len, NULL, &e);
    assert_non_null(d);
    assert_int_equal(sl_json_root(d)->str_len, in.len);
    assert_memory_equal(sl_json_root(d)->str, in.data, in.len);
    sl_json_free(d);
    /* numbers: shortest round-trip form */
    double vals[] = {0.1, 1.0 / 3, 1e300, -2.5e-310, 123456789.0, 5e-324};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        sl_buf_clear(&out);
        sl_json_put_num(&out, vals[i]);
        assert_true(strtod(out.data, NULL) == vals[i]);
    }
    sl_buf_clear(&out);
    sl_json_put_num(&out, 0.0 / 0.0);
    assert_string_equal(out.data, "null");
    /* re-serialization keeps order and values */
    const char *src = "{\"z\":[1,2.50,\"a\\\"b\"],\"a\":{\"k\":null,\"t\":false}}";
    d = P(src, &e);
    sl_buf_clear(&out);
    sl_json_put_value(&out, sl_json_root(d));
    assert_string_equal(out.data, "{\"z\":[1,2.50,\"a\\\"b\"],\"a\":{\"k\":null,\"t\":false}}");
    sl_json_free(d);
    sl_buf_free(&in);
    sl_buf_free(&out);
}

static void test_utf8_check(void **st)
{
    (void)st;
    assert_int_equal(sl_utf8_check("abc\xC3\xA9", 5), 5);
    assert_int_equal(sl_utf8_check("ab\xC0\x80", 4), 2);        /* overlong */
    assert_int_equal(sl_utf8_check("a\xED\xA0\x80", 4), 1);     /* surrogate */
    assert_int_equal(sl_utf8_check("a\xF4\x90\x80\x80", 5), 1); /* > U+10FFFF */
    assert_int_equal(sl_utf8_check("a\xE2\x82", 3), 1);         /* truncated */
    sl_buf b = {0};
    /* maximal subparts: E2 82 (truncated 3-byte) is ONE replacement; C0 and 80 are two */
    assert_int_equal(sl_utf8_repair(&b,
                                    "\xE2\x82"
                                    "A\xC0\x80",
                                    5, SL_UTF8_REPLACE),
                     3);
    assert_string_equal(b.data, "\xEF\xBF\xBD"
                                "A\xEF\xBF\xBD\xEF\xBF\xBD");
    sl_buf_free(&b);
}

/* Numbers against the C library: every value is strtod's of the text, and
 * sl_json_is_int says what strtoll (with a check for overflow) says, for
 * integers of 1 to 20 digits around the fast paths' limits (15 and 18
 * digits), with and without a sign, fraction or exponent. */
static void test_numbers_random(void **st)
{
    (void)st;
    uint64_t r = 0x9E3779B97F4A7C15u;
    char text[64], digits[32];
    for (int t = 0; t < 20000; t++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int nd = 1 + (int)(r % 20), kind = (int)(r >> 8) % 6;
        for (int i = 0; i < nd; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            digits[i] = (char)('0' + (i == 0 && nd > 1 ? 1 + r % 9 : r % 10));
        }
        if ((r >> 20) % 7 == 0) /* runs of nines: the carries at the limits */
            memset(digits + 1, '9', (size_t)nd - 1);
        digits[nd] = 0;
        snprintf(text, sizeof text, "%s%s%s", kind & 1 ? "-" : "", digits, kind == 2 ? ".5" : kind == 4 ? "e3" : "");
        sl_err err = {{0}};
        sl_json_doc *d = sl_json_parse(text, strlen(text), NULL, &err);
        assert_non_null(d);
        const sl_json *v = sl_json_root(d);
        assert_int_equal(v->type, SL_JSON_NUMBER);
        double want = strtod(text, NULL);
        assert_memory_equal(&v->num, &want, sizeof want); /* bit for bit: -0 too */
        int64_t got = 0;
        int is = sl_json_is_int(v, &got);
        errno = 0;
        char *end;
        long long x = strtoll(text, &end, 10);
        int want_is = !*end && errno != ERANGE;
        assert_int_equal(is, want_is);
        if (is)
            assert_true(got == x);
        sl_json_free(d);
    }
}

/* Strings built from random pieces (plain ASCII, 2- to 4-byte characters,
 * every escape, \u escapes and surrogate pairs) at every alignment: the
 * decoded text must be the pieces' meaning, byte for byte (the run scanner
 * reads 8 bytes at a time); a raw control character or invalid byte placed
 * anywhere must be reported at its own offset. */
static void test_string_runs_random(void **st)
{
    (void)st;
    uint64_t seed = 0x9e3779b97f4a7c15u;
#define RND() (seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17, seed)
    char *src = malloc(4096), *want = malloc(4096);
    for (int round = 0; round < 3000; round++) {
        size_t sn = 0, wn = 0;
        size_t lead = (size_t)(round % 9); /* the string's start moves through every alignment */
        memcpy(src, "[", 1), sn = 1;
        for (size_t i = 0; i < lead; i++)
            src[sn++] = ' ';
        src[sn++] = '"';
        int pieces = (int)(RND() % 40);
        for (int k = 0; k < pieces; k++) {
            unsigned kind = (unsigned)(RND() % 10);
            if (kind < 4) { /* a run of plain ASCII */
                size_t len = 1 + RND() % 19;
                for (size_t i = 0; i < len; i++) {
                    char c = (char)(0x20 + RND() % 95);
                    if (c == '"' || c == '\\')
                        c = 'x';
                    src[sn++] = want[wn++] = c;
                }
            } else if (kind == 4) {
                memcpy(src + sn, "\xC3\xA9", 2), memcpy(want + wn, "\xC3\xA9", 2), sn += 2, wn += 2;
            } else if (kind == 5) {
                memcpy(src + sn, "\xE6\xBC\xA2", 3), memcpy(want + wn, "\xE6\xBC\xA2", 3), sn += 3, wn += 3;
            } else if (kind == 6) {
                memcpy(src + sn, "\xF0\x9F\x99\x82", 4), memcpy(want + wn, "\xF0\x9F\x99\x82", 4), sn += 4, wn += 4;
            } else if (kind == 7) {
                static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
                int e = (int)(RND() % 8);
                src[sn++] = '\\', src[sn++] = esc[e], want[wn++] = val[e];
            } else if (kind == 8) {
                memcpy(src + sn, "\\u00e9", 6), memcpy(want + wn, "\xC3\xA9", 2), sn += 6, wn += 2;
            } else {
                memcpy(src + sn, "\\ud83d\\ude42", 12), memcpy(want + wn, "\xF0\x9F\x99\x82", 4), sn += 12, wn += 4;
            }
        }
        src[sn++] = '"', src[sn++] = ']';
        sl_err e = {{0}};
        sl_json_doc *d = sl_json_parse(src, sn, NULL, &e);
        assert_non_null(d);
        const sl_json *str = sl_json_root(d)->kids[0];
        assert_int_equal(str->type, SL_JSON_STRING);
        assert_int_equal(str->str_len, wn);
        assert_memory_equal(str->str, want, wn);
        sl_json_free(d);
        /* a raw control character or a byte that is never UTF-8, at a
         * random place inside the string: an error at exactly that offset */
        size_t open = 1 + lead, at = open + 1 + (sn - open - 3 ? RND() % (sn - open - 3) : 0);
        for (int bad = 0; bad < 2; bad++) {
            /* on a plain ASCII byte, not in an escape (the five bytes after a backslash) */
            size_t j = at;
            for (; j < sn - 2; j++) {
                int in_escape = 0;
                for (size_t b = j > 5 ? j - 5 : 0; b < j; b++)
                    in_escape |= src[b] == '\\';
                if ((unsigned char)src[j] < 0x80 && src[j] != '\\' && !in_escape)
                    break;
            }
            if (j >= sn - 2)
                break;
            char keep = src[j];
            src[j] = bad ? '\xFF' : '\x01';
            sl_json_opts o = {.invalid_utf8 = SL_UTF8_ERROR};
            sl_err e2 = {{0}};
            sl_json_doc *d2 = sl_json_parse(src, sn, &o, &e2);
            if (d2) {
                sl_json_free(d2);
                fail_msg("round %d: a raw 0x%02x at offset %zu was accepted", round, bad ? 0xFF : 0x01, j);
            }
            char off[64];
            snprintf(off, sizeof off, "offset %zu:", j);
            if (!strstr(e2.msg, off))
                fail_msg("round %d: '%s' does not name %s", round, e2.msg, off);
            src[j] = keep;
        }
    }
#undef RND
    free(src);
    free(want);
}

/* sl_json_str_decode's one-loop way (16 bytes at a time, and 64 at a time
 * with AVX-512 VBMI2 where the CPU has it) against its run-by-run way
 * (SL_JSTR_CAREFUL): the same result, end, bytes and changed flag on
 * strings of every escape, backslash pairs and escapes on both sides of
 * every 64-byte boundary, long plain runs, UTF-8, and now and then a fault
 * (a raw control character, a bad escape, invalid UTF-8, no closing quote). */
static void test_decode_ways_agree(void **st)
{
    (void)st;
    uint64_t seed = 0x2545F4914F6CDD1Du;
#define RND() (seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17, seed)
    static const char *const bits[] = {"\\n",     "\\\\",           "\\\"",     "\\/",          "\\t",
                                       "\\u00e9", "\\ud83d\\ude42", "\xc3\xa9", "\xe6\xbc\xa2", " ",
                                       "\\\\n",   "\\r\\n",         "\\b\\f"};
    static const char *const faults[] = {"\x01", "\\x", "\\u12", "\xff", "\xc3(", "\\ud800"};
    sl_buf src = {0}, fast = {0}, careful = {0};
    for (int round = 0; round < 20000; round++) {
        sl_buf_clear(&src);
        size_t lead = (size_t)(RND() % 70);
        for (size_t i = 0; i < lead; i++)
            sl_buf_putc(&src, 'x');
        size_t start = src.len;
        int pieces = (int)(RND() % 30);
        for (int k = 0; k < pieces; k++) {
            unsigned kind = (unsigned)(RND() % 8);
            if (kind < 3) { /* plain ASCII, up to past a block */
                size_t len = 1 + RND() % (kind ? 20 : 140);
                for (size_t i = 0; i < len; i++) {
                    char c = (char)(0x20 + RND() % 95);
                    sl_buf_putc(&src, c == '"' || c == '\\' ? 'y' : c);
                }
            } else {
                const char *b = bits[RND() % (sizeof bits / sizeof *bits)];
                sl_buf_append(&src, b, strlen(b));
            }
        }
        if (RND() % 8 == 0) { /* a fault somewhere */
            const char *f = faults[RND() % (sizeof faults / sizeof *faults)];
            size_t at = start + (src.len > start ? RND() % (src.len - start + 1) : 0);
            sl_buf t = {0};
            sl_buf_append(&t, src.data, at);
            sl_buf_append(&t, f, strlen(f));
            sl_buf_append(&t, src.data + at, src.len - at);
            sl_buf_free(&src);
            src = t;
        }
        if (RND() % 16)
            sl_buf_putc(&src, '"');
        size_t tail = (size_t)(RND() % 80); /* what follows the string on the line */
        for (size_t i = 0; i < tail; i++)
            sl_buf_putc(&src, (char)(RND() % 2 ? '"' : '\\'));
        for (int mode = 0; mode < 3; mode++) {
            size_t pf = start, pc = start, inf = 0, inc = 0;
            int chf = -1, chc = -1;
            sl_buf_clear(&fast);
            sl_buf_clear(&careful);
            int rf = sl_json_str_decode(src.data, src.len, &pf, &fast, mode, &inf, &chf);
            int rc = sl_json_str_decode(src.data, src.len, &pc, &careful, mode | SL_JSTR_CAREFUL, &inc, &chc);
            assert_int_equal(rf, rc);
            assert_int_equal(pf, pc);
            if (rf == 0) {
                assert_int_equal(fast.len, careful.len);
                if (fast.len)
                    assert_memory_equal(fast.data, careful.data, fast.len);
                assert_int_equal(inf, inc);
                assert_int_equal(chf, chc);
            }
        }
    }
    sl_buf_free(&src);
    sl_buf_free(&fast);
    sl_buf_free(&careful);
#undef RND
}

/* NaN, Infinity and -Infinity with nonfinite SL_JSON_NONFINITE_WORDS (JSON
 * Lines): the words are numbers, and an object {"__float__": "NaN"} stays an
 * object, as Python's json.loads reads it (with nonfinite 1, the model
 * config parsers', it becomes the number); sl_json_put_canon writes what
 * the tree gives. */
static void test_nonfinite_words(void **st)
{
    (void)st;
    const char *src = "{\"a\": {\"__float__\": \"NaN\"}, \"b\": [NaN, -Infinity, {\"__float__\": \"Infinity\", "
                      "\"__float__\": \"-Infinity\"}], \"c\": Infinity}";
    const char *words = "{\"a\":{\"__float__\":\"NaN\"},\"b\":[NaN,-Infinity,{\"__float__\":\"Infinity\","
                        "\"__float__\":\"-Infinity\"}],\"c\":Infinity}";
    sl_err e = {{0}};
    sl_buf out = {0}, tmp = {0};
    sl_json_opts o = {.nonfinite = SL_JSON_NONFINITE_WORDS};
    sl_json_doc *d = sl_json_parse(src, strlen(src), &o, &e);
    assert_non_null(d);
    sl_json_put_value(&out, sl_json_root(d));
    assert_string_equal(out.data, words);
    assert_int_equal(sl_json_get(sl_json_root(d), "a")->type, SL_JSON_OBJECT);
    sl_json_free(d);
    sl_buf_clear(&out);
    size_t pos = 0, invalid = 0;
    assert_int_equal(sl_json_put_canon(&out, src, strlen(src), &pos, &tmp, SL_UTF8_REPLACE, &invalid), 0);
    assert_int_equal(pos, strlen(src));
    assert_string_equal(out.data, words);
    o.nonfinite = 1;
    d = sl_json_parse(src, strlen(src), &o, &e);
    assert_non_null(d);
    sl_buf_clear(&out);
    sl_json_put_value(&out, sl_json_root(d));
    assert_string_equal(out.data, "{\"a\":NaN,\"b\":[NaN,-Infinity,-Infinity],\"c\":Infinity}");
    sl_json_free(d);
    /* the words alone, not other spellings */
    const char *bad[] = {"-NaN", "nan", "inf", "+Infinity", "Infinit", "NaNx"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o.nonfinite = SL_JSON_NONFINITE_WORDS;
        assert_null(sl_json_parse(bad[i], strlen(bad[i]), &o, &e));
    }
    sl_buf_free(&out);
    sl_buf_free(&tmp);
}

/* sl_json_put_num against its definition: the integer, or "%.*g" at the
 * least precision from 6 to 17 that reads back (the loop the writer ran
 * for every number before it made the digits itself); 150,000 random
 * doubles of every kind: bit patterns, float32 values, values in [0, 1),
 * short decimals at every scale, powers of two, integers around 2^53,
 * ratios; and sl_json_put_int against printf's %lld */
static void put_num_ref(sl_buf *b, double v)
{
    if (!isfinite(v)) {
        sl_buf_puts(b, "null");
        return;
    }
    if (fabs(v) < 9.007199254740992e15 && v == (double)(int64_t)v) {
        sl_buf_printf(b, "%lld", (long long)v);
        return;
    }
    char tmp[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    sl_buf_puts(b, tmp);
}

static void test_put_num_random(void **state)
{
    (void)state;
    /* integers, as printf's %lld writes them */
    static const int64_t edge[] = {0, 1, -1, 9, 10, -10, 99, 100, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (int i = 0; i < 20000; i++) {
        uint64_t u = (uint64_t)i * 0x9E3779B97F4A7C15u;
        int64_t v = i < (int)(sizeof edge / sizeof *edge) ? edge[i] : (int64_t)(u >> (u % 64));
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)v);
        sl_buf b = {0};
        sl_json_put_int(&b, v);
        assert_string_equal(b.data, want);
        sl_buf_free(&b);
    }
    uint64_t seed = 1129;
    sl_buf a = {0}, r = {0};
    for (int i = 0; i < 150000; i++) {
        uint64_t u = sl_splitmix64(&seed);
        double v, m;
        switch (i % 6) {
        case 0: memcpy(&v, &u, 8); break;
        case 1: v = (double)(float)((double)(u >> 40) / 16777216.0); break;
        case 2: v = (double)(u >> 11) / 9007199254740992.0; break;
        case 3: { /* a short decimal at any scale, read as strtod reads it */
            char dec[48];
            snprintf(dec, sizeof dec, "%llue%d", (unsigned long long)(u % 1000000), (int)((u >> 32) % 640) - 320);
            v = strtod(dec, NULL);
            break;
        }
        case 4:
            if (u & 1) /* a power of two: its shortest digits need not be the nearest */
                v = ldexp(1.0, (int)((u >> 1) % 2098) - 1074);
            else
                v = 9007199254740992.0 + (double)(int64_t)(u % 4096) - 2048.0 + (u >> 63 ? 0.5 : 0);
            break;
        default:
            m = (double)(u % 100000 + 1);
            v = m / (double)((u >> 20) % 999 + 1);
            break;
        }
        if (u >> 62 == 3)
            v = -v;
        sl_buf_clear(&a);
        sl_buf_clear(&r);
        sl_json_put_num(&a, v);
        put_num_ref(&r, v);
        if (strcmp(a.data, r.data))
            fail_msg("%016llx (%.17g): %s, the definition %s", (unsigned long long)u, v, a.data, r.data);
    }
    sl_buf_free(&a);
    sl_buf_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_values),
        cmocka_unit_test(test_invalid_values),
        cmocka_unit_test(test_strings_and_surrogates),
        cmocka_unit_test(test_raw_invalid_utf8_modes),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_writer_roundtrip),
        cmocka_unit_test(test_writer_random),
        cmocka_unit_test(test_utf8_check),
        cmocka_unit_test(test_string_runs_random),
        cmocka_unit_test(test_decode_ways_agree),
        cmocka_unit_test(test_numbers_random),
        cmocka_unit_test(test_put_num_random),
        cmocka_unit_test(test_nonfinite_words),
    };
    return cmocka_run_group_tests_name("stream/json", tests, NULL, NULL);
}
