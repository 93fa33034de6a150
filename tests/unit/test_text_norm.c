/* simplify_text (text/textnorm.h) against datatrove 0.10.1's own, on every
 * code point alone between 'a' and 'b' (tests/data/dedup/textnorm-cp.txt
 * lists those it changes) and on adversarial strings (textnorm-strings.jsonl:
 * sigma contexts, digits of many scripts and decimal separators, every kind
 * of whitespace, punctuation and controls, marks in and out of canonical
 * order, Hangul); both made by tests/data/dedup/make_textnorm_fixtures.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/support.h"

#include "stream/io.h"
#include "base/json.h"
#include "base/utf8.h"
#include "text/textnorm.h"

static char *path(const char *rel)
{
    return sl_test_path("tests/data/dedup/%s", rel);
}

static void test_code_points(void **state)
{
    (void)state;
    char *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("textnorm-cp.txt"), &t, &n, &e), 0);
    /* expected[cp]: offset of its line's results in t, or 0: unchanged */
    size_t *expected = calloc(0x110000, sizeof *expected);
    for (char *l = t; l < t + n;) {
        char *nl = strchr(l, '\n');
        *nl = 0;
        if (*l != '#') {
            unsigned long cp = strtoul(l, NULL, 16);
            expected[cp] = (size_t)(strchr(l, ' ') - t);
        }
        l = nl + 1;
    }
    sl_textnorm tn = {0};
    sl_buf in = {0}, out = {0}, want = {0};
    size_t checked = 0, changed = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0xAC00 && cp <= 0xD7A3))
            continue;
        sl_buf_clear(&in);
        sl_buf_putc(&in, 'a');
        sl_utf8_put(&in, cp);
        sl_buf_putc(&in, 'b');
        sl_buf_clear(&want);
        if (expected[cp]) {
            changed++;
            for (char *p = t + expected[cp]; *p == ' ';) {
                char *end;
                sl_utf8_put(&want, (uint32_t)strtoul(p + 1, &end, 16));
                p = end;
            }
        } else {
            sl_buf_append(&want, in.data, in.len);
        }
        sl_simplify_text(&tn, in.data, in.len, &out);
        if (out.len != want.len || memcmp(out.data, want.data, out.len))
            fail_msg("U+%04X: got \"%s\", datatrove \"%s\"", cp, out.data, want.data);
        checked++;
    }
    assert_int_equal(checked, 0x110000 - 2048 - 11172);
    assert_true(changed > 5000);
    sl_textnorm_free(&tn);
    sl_buf_free(&in);
    sl_buf_free(&out);
    sl_buf_free(&want);
    free(expected);
    free(t);
}

/* sl_tn_isspace is Python's str.isspace: the code points
 * [c for c in range(0x110000) if chr(c).isspace()] (Python 3.11.7) */
static void test_isspace(void **state)
{
    (void)state;
    static const uint32_t py[] = {0x9,    0xa,    0xb,    0xc,    0xd,    0x1c,   0x1d,   0x1e,   0x1f,   0x20,
                                  0x85,   0xa0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
                                  0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000};
    size_t k = 0;
    for (uint32_t c = 0; c < 0x110000; c++) {
        int want = k < sizeof py / sizeof *py && py[k] == c;
        k += (size_t)want;
        if (sl_tn_isspace(c) != want)
            fail_msg("U+%04X: sl_tn_isspace %d, Python %d", (unsigned)c, sl_tn_isspace(c), want);
    }
    assert_int_equal(k, sizeof py / sizeof *py);
    assert_false(sl_tn_isspace(0x110000));
    assert_false(sl_tn_isspace(UINT32_MAX));
}

static void test_strings(void **state)
{
    (void)state;
    char *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("textnorm-strings.jsonl"), &t, &n, &e), 0);
    sl_textnorm tn = {0};
    sl_buf out = {0};
    size_t lines = 0;
    for (char *l = t; l < t + n;) {
        char *nl = memchr(l, '\n', (size_t)(t + n - l));
        sl_json_doc *d = sl_json_parse(l, (size_t)(nl - l), NULL, &e);
        assert_non_null(d);
        const sl_json *in = sl_json_get(sl_json_root(d), "text");
        const sl_json *want = sl_json_get(sl_json_root(d), "simplified");
        assert_non_null(in);
        assert_non_null(want);
        sl_simplify_text(&tn, in->str, in->str_len, &out);
        if (out.len != want->str_len || memcmp(out.data, want->str, out.len))
            fail_msg("line %zu: got \"%s\", datatrove \"%s\"", lines + 1, out.data, want->str);
        sl_json_free(d);
        lines++;
        l = nl + 1;
    }
    assert_true(lines > 1500);
    sl_textnorm_free(&tn);
    sl_buf_free(&out);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_points),
        cmocka_unit_test(test_isspace),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
