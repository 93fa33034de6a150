/* Extended grapheme clusters (tokenize/normalizers/grapheme.c) against the Unicode
 * 17.0.0 GraphemeBreakTest.txt (tests/data/unicode, from the UCD files that
 * scripts/gen/gen_grapheme.py reads): every line's boundaries, found by
 * walking sl_grapheme_end from the start, are the ones the line marks with
 * '÷'. Then the marks of Unicode 16.0 and 17.0 that the XLM-R test texts
 * hit extend the cluster before them (ICU 72 ends the cluster there), and a
 * byte that is not UTF-8 is a cluster of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tokenize/normalizers/grapheme.h"

static size_t put_utf8(char *o, uint32_t c)
{
    if (c < 0x80)
        return o[0] = (char)c, 1;
    if (c < 0x800)
        return o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000)
        return o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 0x3F)), o[2] = (char)(0x80 | (c & 0x3F)),
               3;
    return o[0] = (char)(0xF0 | c >> 18), o[1] = (char)(0x80 | ((c >> 12) & 0x3F)),
           o[2] = (char)(0x80 | ((c >> 6) & 0x3F)), o[3] = (char)(0x80 | (c & 0x3F)), 4;
}

static void test_break_test_file(void **st)
{
    (void)st;
    const char *src = getenv("SLUICE_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/unicode/GraphemeBreakTest-17.0.0.txt", src ? src : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int cases = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char text[1024];
        size_t n = 0, want[256], nw = 0;
        int any = 0;
        for (char *p = line; *p;) {
            if (!strncmp(p, "\xC3\xB7", 2)) { /* ÷: a boundary here */
                want[nw++] = n;
                p += 2;
            } else if (!strncmp(p, "\xC3\x97", 2)) { /* ×: none */
                p += 2;
            } else if ((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'F')) {
                char *e;
                n += put_utf8(text + n, (uint32_t)strtoul(p, &e, 16));
                p = e;
                any = 1;
            } else {
                p++;
            }
        }
        if (!any)
            continue;
        cases++;
        /* the first mark is the start; the rest are the ends of the clusters */
        size_t k = 1;
        for (size_t at = 0; at < n; k++) {
            size_t e = sl_grapheme_end(text, n, at);
            if (k >= nw || e != want[k])
                fail_msg("GraphemeBreakTest line %d: cluster %zu ends at byte %zu, the file says %zu", lineno, k, e,
                         k < nw ? want[k] : (size_t)-1);
            at = e;
        }
        if (k != nw)
            fail_msg("GraphemeBreakTest line %d: %zu clusters, the file has %zu", lineno, k - 1, nw - 1);
    }
    fclose(f);
    assert_true(cases > 700);
}

/* "\u00A0\u0897" and the like: one cluster (Unicode 16.0/17.0 Extend) */
static void test_new_marks(void **st)
{
    (void)st;
    static const char *const one[] = {
        "\xC2\xA0\xE0\xA2\x97",                 /* U+00A0 U+0897 (16.0) */
        "e\xCC\x81\xF0\x9E\x97\xAE",            /* e U+0301 U+1E5EE (16.0) */
        "\xC2\xBD\xEF\xB8\x8F\xF0\x91\x8E\xB8", /* U+00BD U+FE0F U+113B8 (16.0, SpacingMark) */
        "\xC5\xBF\xE0\xA2\x97",                 /* U+017F U+0897 */
        "\xE0\xA4\x95\xE0\xA5\x8D\xE0\xA4\xB7", /* KA VIRAMA SSA: GB9c */
    };
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        assert_int_equal(sl_grapheme_end(one[i], strlen(one[i]), 0), strlen(one[i]));
    assert_string_equal(sl_grapheme_unicode_version(), "17.0.0");
    /* a stray continuation byte and a cut sequence are clusters of one byte */
    assert_int_equal(sl_grapheme_end("\x80\xCC\x81", 3, 0), 1);
    assert_int_equal(sl_grapheme_end("a\xE0\xA2", 3, 1), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_break_test_file),
        cmocka_unit_test(test_new_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
