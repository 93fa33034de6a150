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
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
