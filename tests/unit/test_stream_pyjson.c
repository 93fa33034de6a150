/* stream/pyjson.c's floats, base64 decoder and timestamps with a fixed
 * offset. Floats: Python's json.dumps of 6,686 doubles of every kind
 * (tests/data/pyjson/floats.txt, make_floats.py), and 400,000 random
 * doubles (bit patterns, float32 values, values in [0, 1) and short
 * decimals) written the same by the integer method and by the reference
 * method (printf's digits read back by strtod), which each read back as
 * the double.
 * Base64: RFC 4648's test vectors (section 10), random round trips through
 * the encoder (which the Parquet and Arrow fixtures check against Python's
 * base64), unpadded input, and refusals. Timestamps: the strings CPython's
 * datetime.isoformat() gives for the same instants and offsets (computed
 * once with datetime.astimezone(timezone(timedelta(minutes=OFF)))), and the
 * instants whose local time leaves the years 1 to 9999, where CPython
 * raises OverflowError. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tests/unit/support.h"

#include <math.h>
#include <stdio.h>

#include "base/rng.h"
#include "stream/pyjson.h"

static double from_bits(uint64_t u)
{
    double v;
    memcpy(&v, &u, 8);
    return v;
}

static void test_float_python(void **state)
{
    (void)state;
    FILE *f = fopen(sl_test_path("tests/data/pyjson/floats.txt"), "r");
    assert_non_null(f);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *want = strchr(line, ' ');
        assert_non_null(want);
        *want++ = 0;
        double v = from_bits(strtoull(line, NULL, 16));
        sl_buf b = {0}, r = {0};
        sl_pyjson_float(&b, v);
        sl_pyjson_float_ref(&r, v);
        if (strcmp(b.data, want) || strcmp(r.data, want))
            fail_msg("%s: want %s, got %s (reference method %s)", line, want, b.data, r.data);
        sl_buf_free(&b);
        sl_buf_free(&r);
        n++;
    }
    fclose(f);
    assert_int_equal(n, 6686);
}

static void test_float_random(void **state)
{
    (void)state;
    uint64_t seed = 20261129;
    sl_buf b = {0}, r = {0};
    for (int i = 0; i < 400000; i++) {
        uint64_t u = sl_splitmix64(&seed);
        double v;
        switch (i & 3) {
        case 0: v = from_bits(u); break;                                    /* any double */
        case 1: v = (double)(float)((double)(u >> 40) / 16777216.0); break; /* a float32 score */
        case 2: v = (double)(u >> 11) / 9007199254740992.0; break;          /* random.random() */
        default: v = (double)(u % 100000) * pow(10.0, (double)(int)((u >> 32) % 60) - 30); break;
        }
        if (isnan(v))
            continue;
        sl_buf_clear(&b);
        sl_buf_clear(&r);
        sl_pyjson_float(&b, v);
        sl_pyjson_float_ref(&r, v);
        if (strcmp(b.data, r.data))
            fail_msg("%016llx: %s, reference method %s", (unsigned long long)u, b.data, r.data);
        if (!isinf(v) && strtod(b.data, NULL) != v)
            fail_msg("%016llx: %s does not read back", (unsigned long long)u, b.data);
    }
    sl_buf_free(&b);
    sl_buf_free(&r);
}

static void test_base64_rfc4648(void **state)
{
    (void)state;
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        sl_buf b = {0};
        assert_int_equal(sl_base64_decode(&b, enc[i], strlen(enc[i])), 0);
        assert_int_equal(b.len, strlen(plain[i]));
        assert_memory_equal(b.len ? b.data : "", plain[i], b.len);
        sl_buf_free(&b);
        /* without its padding */
        size_t n = strlen(enc[i]);
        while (n && enc[i][n - 1] == '=')
            n--;
        assert_int_equal(sl_base64_decode(&b, enc[i], n), 0);
        assert_int_equal(b.len, strlen(plain[i]));
        assert_memory_equal(b.len ? b.data : "", plain[i], b.len);
        sl_buf_free(&b);
    }
}

static void test_base64_round_trip(void **state)
{
    (void)state;
    uint64_t r = 88172645463325252ULL;
    for (int k = 0; k < 2000; k++) {
        uint8_t p[300];
        size_t n = (size_t)(k % 300);
        for (size_t i = 0; i < n; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            p[i] = (uint8_t)r;
        }
        sl_buf e = {0}, d = {0};
        sl_pyjson_base64(&e, p, n); /* quoted */
        assert_int_equal(sl_base64_decode(&d, e.data + 1, e.len - 2), 0);
        assert_int_equal(d.len, n);
        assert_memory_equal(d.len ? d.data : "", p, n);
        sl_buf_free(&e);
        sl_buf_free(&d);
    }
}

static void test_base64_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"Zg=a", "Z", "Zm9vY", "Zm 9v", "Zm9v\n", "Zm-_", "Zm9v*A=="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_buf b = {0};
        assert_int_equal(sl_base64_decode(&b, bad[i], strlen(bad[i])), -1);
        sl_buf_free(&b);
    }
}

static void test_timestamp_offsets(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        int unit, off;
        const char *want;
    } cases[] = {
        {0, 1, 330, "\"1970-01-01T05:30:00+05:30\""},
        {1, 2, -480, "\"1969-12-31T16:00:00.000001-08:00\""},
        {INT64_C(1700000000123), 1, -210, "\"2023-11-14T18:43:20.123000-03:30\""},
        {INT64_C(-62135596800000), 1, 60, "\"0001-01-01T01:00:00+01:00\""},
        {INT64_C(253402300799000), 1, -60, "\"9999-12-31T22:59:59-01:00\""},
        {INT64_C(1000000000000000), 2, 840, "\"2001-09-09T15:46:40+14:00\""},
        {0, 1, 0, "\"1970-01-01T00:00:00+00:00\""}, /* UTC: as sl_pyjson_timestamp */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_buf b = {0};
        sl_buf_puts(&b, "x"); /* appended after what is there */
        assert_int_equal(sl_pyjson_timestamp_tz(&b, cases[i].v, cases[i].unit, 1, cases[i].off), 0);
        assert_string_equal(b.data + 1, cases[i].want);
        sl_buf_free(&b);
    }
}

static void test_timestamp_out_of_range(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        int unit, off;
    } cases[] = {
        {INT64_C(-62135596800000), 1, -60}, /* 0001-01-01T00:00 UTC is year 0 at -01:00 */
        {INT64_C(253402300799000), 1, 60},  /* 9999-12-31T23:59:59 UTC is year 10000 at +01:00 */
        {INT64_MAX, 2, 1},                  /* the offset overflows */
        {INT64_MIN, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_buf b = {0};
        sl_buf_puts(&b, "x");
        assert_int_equal(sl_pyjson_timestamp_tz(&b, cases[i].v, cases[i].unit, 1, cases[i].off), -1);
        assert_string_equal(b.data, "x"); /* nothing written */
        sl_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_rfc4648),         cmocka_unit_test(test_base64_round_trip),
        cmocka_unit_test(test_base64_refused),         cmocka_unit_test(test_timestamp_offsets),
        cmocka_unit_test(test_timestamp_out_of_range), cmocka_unit_test(test_float_python),
        cmocka_unit_test(test_float_random),
    };
    return cmocka_run_group_tests_name("stream_pyjson", tests, NULL, NULL);
}
