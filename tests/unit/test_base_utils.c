/* Base utilities (base/byteorder.h, base/rng.h, base/utf8.h) against
 * independent evidence:
 * - byte order: byte strings whose values follow from the definition;
 * - RNG: tests/data/base/rng_vectors.tsv, written from the published
 *   algorithms with Python integers (make_rng_vectors.py); SplitMix64 seeded
 *   with 1234567 must also give the sequence published with Vigna's
 *   splitmix64.c (6457827717110365317, 3203168211198807973, ...);
 * - UTF-8: glibc's iconv as the reference encoder and validator (every code
 *   point, every 1- and 2-byte string, the 3- and 4-byte strings at the
 *   boundaries of every lead byte); repair against CPython is in
 *   test_stream_utf8.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/rng.h"
#include "base/utf8.h"

static void test_byteorder(void **st)
{
    (void)st;
    const unsigned char b[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
    assert_int_equal(sl_get_le16(b), 0x0201);
    assert_int_equal(sl_get_le32(b), 0x04030201u);
    assert_true(sl_get_le64(b) == 0x8807060504030201ull);
    assert_int_equal(sl_get_be32(b), 0x01020304u);
    assert_true(sl_get_be64(b) == 0x0102030405060788ull);
    unsigned char o[8];
    memset(o, 0, sizeof o);
    sl_put_le16(o, 0x0201);
    assert_memory_equal(o, b, 2);
    sl_put_le32(o, 0x04030201u);
    assert_memory_equal(o, b, 4);
    sl_put_le64(o, 0x8807060504030201ull);
    assert_memory_equal(o, b, 8);
    memset(o, 0, sizeof o);
    sl_put_be32(o, 0x01020304u);
    assert_memory_equal(o, b, 4);
    sl_put_be64(o, 0x0102030405060788ull);
    assert_memory_equal(o, b, 8);
    /* the sign bit and all-ones survive */
    sl_put_le64(o, UINT64_MAX);
    assert_true(sl_get_le64(o) == UINT64_MAX && sl_get_be64(o) == UINT64_MAX);
}

static char *read_vectors(void)
{
    const char *src = getenv("SLUICE_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/base/rng_vectors.tsv", src ? src : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    return text;
}

static void test_splitmix_published(void **st)
{
    (void)st;
    const uint64_t want[5] = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                              4593380528125082431ull, 16408922859458223821ull};
    uint64_t s = 1234567;
    for (int i = 0; i < 5; i++)
        assert_true(sl_splitmix64(&s) == want[i]);
}

static void test_rng_vectors(void **st)
{
    (void)st;
    char *text = read_vectors();
    int lines = 0, kinds[4] = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char kind[16];
        unsigned long long seed, arg;
        int off = 0;
        assert_int_equal(sscanf(line, "%15s %llu %llu %n", kind, &seed, &arg, &off), 3);
        const char *v = line + off;
        uint64_t s = seed;
        int k = 0;
        while (*v && *v != ';') {
            char *end;
            if (!strcmp(kind, "next")) {
                assert_true(sl_splitmix64(&s) == strtoull(v, &end, 10));
                kinds[0]++;
            } else if (!strcmp(kind, "below")) {
                uint64_t got = sl_rng_below(&s, arg);
                assert_true(got == strtoull(v, &end, 10));
                assert_true(arg <= 1 ? got == 0 : got < arg);
                kinds[1]++;
            } else {
                double want = strtod(v, &end), got = !strcmp(kind, "unit") ? sl_rng_unit(&s) : sl_rng_unit_at(seed, k);
                assert_memory_equal(&got, &want, sizeof got);
                kinds[!strcmp(kind, "unit") ? 2 : 3]++;
            }
            k++;
            v = *end == ',' ? end + 1 : end;
        }
        if (*v == ';') /* the state after the draws: counts the redraws */
            assert_true(s == strtoull(v + 1, NULL, 10));
        lines++;
    }
    assert_int_equal(lines, 3 + 33 + 4);
    for (int i = 0; i < 4; i++)
        assert_true(kinds[i] > 0);
}

/* Every value of [0, n) comes out, and none outside (small n). */
static void test_rng_below_covers(void **st)
{
    (void)st;
    for (uint64_t n = 2; n < 40; n++) {
        int seen[40] = {0};
        uint64_t s = n;
        for (int i = 0; i < 2000; i++) {
            uint64_t x = sl_rng_below(&s, n);
            assert_true(x < n);
            seen[x] = 1;
        }
        for (uint64_t i = 0; i < n; i++)
            assert_true(seen[i]);
    }
}

/* iconv's verdict on bytes s[0..n): 1 when they are exactly one character. */
static int iconv_one_char(iconv_t cd, const unsigned char *s, size_t n, uint32_t *cp)
{
    char *in = (char *)s, *out;
    char ob[16];
    size_t il = n, ol = sizeof ob;
    out = ob;
    iconv(cd, NULL, NULL, NULL, NULL);
    if (iconv(cd, &in, &il, &out, &ol) == (size_t)-1 || il != 0 || sizeof ob - ol != 4)
        return 0;
    *cp = sl_get_le32((const unsigned char *)ob);
    return 1;
}

static void test_utf8_encode_every_code_point(void **st)
{
    (void)st;
    /* all scalar values through iconv in one call, then compare */
    size_t ncp = 0x110000 - 0x800;
    uint32_t *cps = malloc(ncp * 4);
    assert_non_null(cps);
    size_t k = 0;
    for (uint32_t c = 0; c < 0x110000; c++)
        if (c < 0xD800 || c > 0xDFFF)
            sl_put_le32((unsigned char *)&cps[k++], c);
    assert_int_equal(k, ncp);
    char *ref = malloc(ncp * 4), *in = (char *)cps, *out = ref;
    size_t il = ncp * 4, ol = ncp * 4;
    iconv_t cd = iconv_open("UTF-8", "UTF-32LE");
    assert_true(cd != (iconv_t)-1);
    assert_true(iconv(cd, &in, &il, &out, &ol) != (size_t)-1 && il == 0);
    iconv_close(cd);
    size_t rn = (size_t)(out - ref), at = 0;
    for (size_t i = 0; i < ncp; i++) {
        uint32_t c = sl_get_le32((const unsigned char *)&cps[i]), back = 0xFFFFFFFF;
        char u[4];
        size_t len = sl_utf8_encode(u, c);
        assert_true(at + len <= rn);
        assert_memory_equal(u, ref + at, len);
        /* and the decoder reads the reference bytes back */
        assert_int_equal(sl_utf8_seq((const uint8_t *)ref + at, rn - at, &back), len);
        assert_int_equal(back, c);
        at += len;
    }
    assert_int_equal(at, rn);
    assert_int_equal(sl_utf8_check(ref, rn), rn);
    sl_buf b = {0};
    sl_utf8_put(&b, 0x1F600);
    assert_int_equal(b.len, 4);
    assert_memory_equal(b.data, "\xF0\x9F\x98\x80", 4);
    sl_buf_free(&b);
    free(ref);
    free(cps);
}

/* One string: sl_utf8_seq agrees with iconv on whether it is exactly one
 * well-formed character, and when it is not, sl_utf8_check stops at 0. */
static void check_string(iconv_t cd, const unsigned char *s, size_t n, long *valid)
{
    uint32_t want = 0, got = 0;
    int ok = iconv_one_char(cd, s, n, &want);
    size_t k = sl_utf8_seq(s, n, &got);
    if (ok) {
        (*valid)++;
        if (k != n || got != want)
            fail_msg("bytes %02x %02x %02x %02x (n=%zu): iconv U+%04X, sluice length %zu U+%04X", s[0],
                     n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, want, k, got);
    } else if (k == n) {
        fail_msg("bytes %02x %02x %02x %02x (n=%zu): iconv rejects, sluice decodes U+%04X", s[0], n > 1 ? s[1] : 0,
                 n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, got);
    }
    if (k == 0) { /* the maximal subpart: at least the lead byte, never past the input */
        size_t bad = 0;
        assert_int_equal(sl_utf8_decode(s, n, &got, &bad), 0);
        assert_true(bad >= 1 && bad <= n);
    }
}

static void test_utf8_decode_against_iconv(void **st)
{
    (void)st;
    iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
    assert_true(cd != (iconv_t)-1);
    long valid = 0;
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        check_string(cd, s, 1, &valid);
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            check_string(cd, s, 2, &valid);
        }
    }
    /* 3 and 4 bytes: every lead byte from 0xC0 and every second byte, with
     * the later bytes at and around the continuation range's edges */
    static const unsigned char edge[] = {0x00, 0x7F, 0x80, 0x81, 0xA0, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0xC0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t i = 0; i < sizeof edge; i++) {
                s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = edge[i];
                check_string(cd, s, 3, &valid);
                for (size_t j = 0; j < sizeof edge; j++) {
                    s[3] = edge[j];
                    check_string(cd, s, 4, &valid);
                }
            }
    iconv_close(cd);
    /* Table 3-7 counted by hand: 128 one-byte; 30 leads x 64 two-byte;
     * (32 + 32 + 14 x 64) lead/second pairs x 4 continuation edges; (48 + 16
     * + 3 x 64) pairs x 4 x 4 */
    assert_int_equal(valid, 128 + 1920 + 960 * 4 + 256 * 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byteorder),
        cmocka_unit_test(test_splitmix_published),
        cmocka_unit_test(test_rng_vectors),
        cmocka_unit_test(test_rng_below_covers),
        cmocka_unit_test(test_utf8_encode_every_code_point),
        cmocka_unit_test(test_utf8_decode_against_iconv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
