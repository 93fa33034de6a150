/* Audio quantizers against the reference codes in tests/data/audio/reference
 * (computed by make_reference_codes.py from the state-spaces/s4, WaveNet and
 * Sun G.711 formulas, independently of this code), plus properties:
 * mu-law decode(encode(x)) stays within one quantization step, G.711 codes
 * round-trip, codes stay in range for any input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/unit/support.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "audio/clips.h"
#include "audio/decode.h"
#include "audio/quantize.h"

static char *path_of(const char *rel)
{
    return sl_test_path("tests/data/audio/%s", rel);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    unsigned char *p = (unsigned char *)sl_test_slurp(path, n);
    assert_non_null(p);
    return p;
}

static void load_front_center(sl_audio *a)
{
    sl_audio_opts o = {0};
    sl_err err = {{0}};
    int rc = sl_audio_decode_file(path_of("alsa_Front_Center_16k.wav"), &o, a, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(a->n, 22848);
    assert_int_equal(a->rate, 16000);
}

static void check_reference(int kind, const char *ref)
{
    sl_audio a;
    load_front_center(&a);
    size_t n;
    unsigned char *want = read_all(path_of(ref), &n);
    assert_int_equal(n, a.n);
    uint32_t *codes = malloc(n * sizeof *codes);
    sl_aq_encode(kind, 8, a.x, a.n, codes);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (codes[i] != want[i]) {
            if (first == n)
                first = i;
            bad++;
        }
    if (bad)
        fail_msg("%s: %zu of %zu codes differ, first at %zu: got %u want %u", ref, bad, n, first, codes[first],
                 want[first]);
    free(codes);
    free(want);
    sl_audio_free(&a);
}

static void test_ref_mulaw_s4(void **s)
{
    (void)s;
    check_reference(SL_AQ_MULAW_S4, "reference/front_center_16k.s4_mulaw.u8");
}
static void test_ref_linear(void **s)
{
    (void)s;
    check_reference(SL_AQ_LINEAR, "reference/front_center_16k.s4_linear.u8");
}
static void test_ref_wavenet(void **s)
{
    (void)s;
    check_reference(SL_AQ_MULAW, "reference/front_center_16k.wavenet.u8");
}
static void test_ref_g711(void **s)
{
    (void)s;
    check_reference(SL_AQ_G711, "reference/front_center_16k.g711_ulaw.u8");
}

/* reference_first64.tsv: idx int16 x s4_mulaw s4_linear wavenet g711_hex g711_decoded. The
 * s4 columns depend on the whole clip's min and max, so they are checked on the whole file. */
static void test_ref_first64_table(void **s)
{
    (void)s;
    sl_audio a;
    load_front_center(&a);
    uint32_t *c[4];
    for (int k = 0; k < 4; k++) {
        c[k] = malloc(a.n * sizeof *c[k]);
        sl_aq_encode(k, 8, a.x, a.n, c[k]);
    }
    FILE *f = fopen(path_of("reference/reference_first64.tsv"), "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int idx, s16, m, l, w, gd;
        double x;
        unsigned g;
        assert_int_equal(sscanf(line, "%d %d %lf %d %d %d 0x%x %d", &idx, &s16, &x, &m, &l, &w, &g, &gd), 8);
        assert_true(fabs(a.x[idx] - s16 / 32768.0) < 1e-12);
        assert_int_equal(c[SL_AQ_MULAW_S4][idx], m);
        assert_int_equal(c[SL_AQ_LINEAR][idx], l);
        assert_int_equal(c[SL_AQ_MULAW][idx], w);
        assert_int_equal(c[SL_AQ_G711][idx], g);
        assert_int_equal(sl_g711_decode((uint8_t)g), gd);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 64);
    for (int k = 0; k < 4; k++)
        free(c[k]);
    sl_audio_free(&a);
}

/* The edge-case files hold the same samples as alsa_Front_Center_16k.wav in
 * other chunk layouts (SOURCES.md): they must decode to identical samples. */
static void test_edge_layouts_same_samples(void **s)
{
    (void)s;
    sl_audio ref;
    load_front_center(&ref);
    const char *same[] = {"edge_cases/list_chunk_before_data_and_trailing_chunk_16k.wav",
                          "edge_cases/streamed_sizes_0xFFFFFFFF_16k.wav", NULL};
    for (int i = 0; same[i]; i++) {
        sl_audio a;
        sl_audio_opts o = {0};
        sl_err err = {{0}};
        if (sl_audio_decode_file(path_of(same[i]), &o, &a, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(a.n, ref.n);
        assert_memory_equal(a.x, ref.x, a.n * sizeof *a.x);
        sl_audio_free(&a);
    }
    sl_audio_free(&ref);
}

/* Reads a gzip fixture whole. */
static unsigned char *read_gz(const char *rel, size_t *n)
{
    gzFile g = gzopen(path_of(rel), "rb");
    if (!g)
        fail_msg("cannot open %s", rel);
    size_t cap = 1 << 20, len = 0;
    unsigned char *p = malloc(cap);
    int r;
    while ((r = gzread(g, p + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)r;
        if (len == cap)
            p = realloc(p, cap *= 2);
    }
    assert_true(r == 0);
    gzclose(g);
    *n = len;
    return p;
}

/* Other bit widths: extra/make_extra_codes.py (the s4 and torchaudio formulas in float64). */
static void test_ref_other_bits(void **s)
{
    (void)s;
    sl_audio a;
    sl_audio_opts o = {0};
    sl_err err;
    if (sl_audio_decode_file(path_of("sc09_like_espeak/eight_espeak_short_9240.wav"), &o, &a, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(a.n, 9240);
    const struct {
        int kind;
        const char *name;
    } q[] = {{SL_AQ_MULAW_S4, "s4_mulaw"}, {SL_AQ_LINEAR, "s4_linear"}, {SL_AQ_MULAW, "wavenet"}};
    uint32_t *codes = malloc(a.n * sizeof *codes);
    for (int k = 0; k < 3; k++)
        for (int bits = 4; bits <= 16; bits += bits == 4 ? 8 : 4) {
            char rel[128];
            snprintf(rel, sizeof rel, "extra/short9240.%s.b%d.u16.gz", q[k].name, bits);
            size_t n;
            unsigned char *want = read_gz(rel, &n);
            assert_int_equal(n, 2 * a.n);
            sl_aq_encode(q[k].kind, bits, a.x, a.n, codes);
            for (size_t i = 0; i < a.n; i++) {
                unsigned w = want[2 * i] | want[2 * i + 1] << 8;
                if (codes[i] != w)
                    fail_msg("%s: sample %zu: got %u want %u", rel, i, codes[i], w);
            }
            free(want);
        }
    free(codes);
    sl_audio_free(&a);
}

/* SaShiMi scales each 131072-sample example on its own: the melody's three clips. */
static void test_ref_per_clip_scaling(void **s)
{
    (void)s;
    sl_audio a;
    sl_audio_opts o = {0};
    sl_err err;
    if (sl_audio_decode_file(path_of("synthetic_pluck_melody_16k.wav"), &o, &a, &err))
        fail_msg("%s", err.msg);
    size_t n;
    unsigned char *want = read_gz("extra/melody.s4_mulaw.clips131072.u8.gz", &n);
    assert_int_equal(n, a.n);
    sl_clip *c;
    size_t nc = sl_clips_plan(a.n, 131072, 0, 0, &c);
    assert_int_equal(nc, 3);
    uint32_t *codes = malloc(a.n * sizeof *codes);
    for (size_t k = 0; k < nc; k++)
        sl_aq_encode(SL_AQ_MULAW_S4, 8, a.x + c[k].start, c[k].len, codes + c[k].start);
    for (size_t i = 0; i < n; i++)
        if (codes[i] != want[i])
            fail_msg("sample %zu: got %u want %u", i, codes[i], want[i]);
    /* and it matters: scaling the whole file at once gives other codes */
    sl_aq_encode(SL_AQ_MULAW_S4, 8, a.x, a.n, codes);
    size_t diff = 0;
    for (size_t i = 0; i < n; i++)
        diff += codes[i] != want[i];
    assert_true(diff > 0);
    free(c);
    free(codes);
    free(want);
    sl_audio_free(&a);
}

/* Deterministic xorshift for the randomized properties. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

/* WaveNet mu-law: decode(encode(x)) lies in the bin of x: re-encoding the
 * decoded value gives the same code, and |x - decode| is at most the bin
 * width around x in the amplitude domain. */
static void test_mulaw_roundtrip_property(void **s)
{
    (void)s;
    for (int bits = 2; bits <= 16; bits++) {
        double mu = (double)((1u << bits) - 1);
        enum { N = 4000 };
        float x[N], y[N];
        uint32_t c[N], c2[N];
        for (int i = 0; i < N; i++) {
            double u = urand() * 2 - 1;
            x[i] = (float)(i % 3 == 0 ? u * u * u : u); /* many small amplitudes too */
        }
        sl_aq_encode(SL_AQ_MULAW, bits, x, N, c);
        sl_aq_decode(SL_AQ_MULAW, bits, c, N, y);
        sl_aq_encode(SL_AQ_MULAW, bits, y, N, c2);
        for (int i = 0; i < N; i++) {
            assert_true(c[i] <= (uint32_t)mu);
            assert_int_equal(c[i], c2[i]);
            /* the bin of code k spans companded values (2k-1)/mu-1 .. (2k+1)/mu-1 */
            double f = fabs((double)x[i]);
            double lo = log1p(mu * f) / log1p(mu) - 2 / mu, hi = lo + 4 / mu;
            double step = (pow(1 + mu, hi) - pow(1 + mu, lo < 0 ? 0 : lo)) / mu;
            assert_true(fabs((double)x[i] - y[i]) <= step + 1e-6);
        }
    }
}

/* SaShiMi mu-law: the decoded companded value k/2^(b-1) - 1 is the lower edge
 * of the bin holding the (min-max scaled, companded) input: 0 <= e - d < one
 * step (2/2^b), up to the reference's 0.01/0.005 offsets. */
static void test_mulaw_s4_step_property(void **s)
{
    (void)s;
    for (int bits = 2; bits <= 16; bits++) {
        double q = (double)(1u << bits), mu = q - 1;
        enum { N = 3000 };
        float x[N];
        uint32_t c[N];
        double lo = 1e9, hi = -1e9;
        double gain = 0.001 + urand(), off = (urand() - 0.5) * 0.2;
        for (int i = 0; i < N; i++) {
            x[i] = (float)((urand() * 2 - 1) * gain + off);
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
        sl_aq_encode(SL_AQ_MULAW_S4, bits, x, N, c);
        int saw_min = 0;
        for (int i = 0; i < N; i++) {
            double a = -1 + 2 * (x[i] - lo) / (hi - lo + 1e-6);
            double e = a == 0 ? 0 : copysign(log1p(mu * fabs(a + 1e-8)) / log1p(mu), a);
            double d = c[i] / (q / 2) - 1;
            assert_true(c[i] < q);
            assert_true(e - d >= -0.01 / q - 1e-12);
            assert_true(e - d < 2 / q + 0.02 / q);
            saw_min |= c[i] == 0;
        }
        assert_true(saw_min); /* the clip minimum always maps to code 0 */
    }
}

static void test_linear_step_property(void **s)
{
    (void)s;
    enum { N = 3000 };
    float x[N], y[N];
    uint32_t c[N];
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i < N; i++) {
        x[i] = (float)(urand() * 1.6 - 0.7);
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    sl_aq_encode(SL_AQ_LINEAR, 8, x, N, c);
    sl_aq_decode(SL_AQ_LINEAR, 8, c, N, y);
    for (int i = 0; i < N; i++) {
        double s01 = (x[i] - lo) / (hi - lo + 1e-6); /* in [0, 1) */
        double d = (y[i] + 1) / 2;                   /* lower bin edge in [0, 1) */
        assert_true(s01 - d >= -0.005 / 256 - 1e-9 && s01 - d < 1.0 / 256 + 1e-4);
    }
}

/* G.711: every code decodes and re-encodes to itself except 0x7F (negative
 * zero, which encodes as 0xFF); every int16 is within half a segment step. */
static void test_g711_exhaustive(void **s)
{
    (void)s;
    for (int u = 0; u < 256; u++) {
        uint8_t back = sl_g711_encode(sl_g711_decode((uint8_t)u));
        assert_int_equal(back, u == 0x7F ? 0xFF : u);
    }
    for (int v = -32768; v <= 32767; v++) {
        int d = sl_g711_decode(sl_g711_encode((int16_t)v));
        int a = v < 0 ? -v : v;
        int seg = 0;
        while (seg < 7 && a + 0x84 > (0x100 << seg) - 1)
            seg++;
        int step = 1 << (seg + 3);
        if (abs(d - v) > step && !(v < -32000 || v > 32000)) /* the top segment clips */
            fail_msg("g711: %d -> %d (step %d)", v, d, step);
    }
    assert_int_equal(sl_g711_encode(0), 0xFF);
    assert_int_equal(sl_g711_encode(-1), 0x7F);
    assert_int_equal(sl_g711_encode(32767), 0x80);
    assert_int_equal(sl_g711_encode(-32768), 0x00);
}

/* Any input, including non-finite and out-of-range values, gives in-range codes. */
static void test_codes_in_range(void **s)
{
    (void)s;
    float x[] = {0, 1, -1, 5, -5, 1e30f, -1e30f, 0.5f, -0.25f, 3e-9f};
    size_t n = sizeof x / sizeof *x;
    uint32_t c[16];
    for (int k = 0; k < 4; k++)
        for (int bits = 2; bits <= 16; bits++) {
            if (sl_aq_bits_ok(k, bits))
                continue;
            sl_aq_encode(k, bits, x, n, c);
            for (size_t i = 0; i < n; i++)
                assert_true(c[i] < (1u << bits));
        }
    /* a flat clip: s4 maps it to -1 (code 0), as the reference does with its 1e-6 */
    float flat[4] = {0.3f, 0.3f, 0.3f, 0.3f};
    sl_aq_encode(SL_AQ_MULAW_S4, 8, flat, 4, c);
    assert_int_equal(c[0], 0);
    assert_int_equal(sl_aq_zero(8), 128);
    assert_int_equal(sl_aq_parse("mulaw-s4"), SL_AQ_MULAW_S4);
    assert_int_equal(sl_aq_parse("g711"), SL_AQ_G711);
    assert_int_equal(sl_aq_parse("alaw"), -1);
    assert_int_equal(sl_aq_bits_ok(SL_AQ_G711, 16), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref_mulaw_s4),
        cmocka_unit_test(test_ref_linear),
        cmocka_unit_test(test_ref_wavenet),
        cmocka_unit_test(test_ref_g711),
        cmocka_unit_test(test_ref_first64_table),
        cmocka_unit_test(test_edge_layouts_same_samples),
        cmocka_unit_test(test_mulaw_roundtrip_property),
        cmocka_unit_test(test_mulaw_s4_step_property),
        cmocka_unit_test(test_linear_step_property),
        cmocka_unit_test(test_g711_exhaustive),
        cmocka_unit_test(test_codes_in_range),
        cmocka_unit_test(test_ref_other_bits),
        cmocka_unit_test(test_ref_per_clip_scaling),
    };
    return cmocka_run_group_tests_name("audio_quantize", tests, NULL, NULL);
}
