/* simplify_text's ASCII fast path (text/textnorm.c) against its general
 * path, which test_text_norm.c checks against datatrove: a text with one
 * "é" in it takes the general path, and "é" comes out as "e" there (NFD,
 * the mark dropped), so simplify_text(s + "é") must equal
 * simplify_text(s + "e") for every ASCII s. Random strings (fixed seed),
 * weighted toward what the path special-cases: letters of both cases,
 * single and repeated spaces, every ASCII whitespace, digits with and
 * without separators, punctuation and controls, and runs long enough for
 * its 8-byte steps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text/textnorm.h"

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t next(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void test_ascii_paths_agree(void **state)
{
    (void)state;
    static const char common[] = "abcdeXYZ   ";
    static const char special[] = "0123456789.,\t\n\r\v\f\x1c\x1d\x1e\x1f\x01\x7f'-!?()\"_";
    sl_textnorm t = {0};
    sl_buf fast = {0}, general = {0};
    char s[96];
    for (int it = 0; it < 200000; it++) {
        size_t n = next(80), k;
        for (k = 0; k < n; k++) {
            uint32_t r = next(16);
            s[k] = r < 11   ? common[next(sizeof common - 1)]
                   : r < 15 ? special[next(sizeof special - 1)]
                            : (char)(1 + next(127));
        }
        memcpy(s + n, "e", 2);
        sl_simplify_text(&t, s, n + 1, &fast);
        memcpy(s + n, "\xc3\xa9", 3);
        sl_simplify_text(&t, s, n + 2, &general);
        if (fast.len != general.len || memcmp(fast.data, general.data, fast.len)) {
            s[n] = 0;
            fail_msg("simplify_text differs on \"%s\": ASCII path \"%s\", general \"%s\"", s, fast.data, general.data);
        }
    }
    sl_buf_free(&fast);
    sl_buf_free(&general);
    sl_textnorm_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
