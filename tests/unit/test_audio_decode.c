/* Audio decoding: every format variant and edge-case file in tests/data/audio,
 * checked against independent evidence (the sox-made 16 kHz reference file,
 * the original 48 kHz recording, frame counts from SOURCES.md), and bad input
 * built here byte by byte: each must give one clear error naming the file
 * and position, never a crash. */
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

#include "audio/clips.h"
#include "audio/decode.h"
#include "audio/wavscan.h"
#include "audio/wavwrite.h"

static const char *path_of(const char *rel)
{
    return sl_test_path("tests/data/audio/%s", rel);
}

static void decode(const char *rel, int rate, sl_audio *a)
{
    sl_audio_opts o = {.rate = rate};
    sl_err err = {{0}};
    if (sl_audio_decode_file(path_of(rel), &o, a, &err))
        fail_msg("%s: %s", rel, err.msg);
}

/* Signal-to-difference ratio in dB of a against the reference r (same length required). */
static double snr_db(const sl_audio *a, const sl_audio *r)
{
    assert_int_equal(a->n, r->n);
    double se = 0, sr = 0;
    for (size_t i = 0; i < a->n; i++) {
        double d = (double)a->x[i] - r->x[i];
        se += d * d;
        sr += (double)r->x[i] * r->x[i];
    }
    return se == 0 ? INFINITY : 10 * log10(sr / se);
}

typedef struct {
    const char *file;
    int src_rate, src_channels;
    uint64_t src_frames;
    double min_snr; /* against alsa_Front_Center_16k.wav after decoding at 16 kHz */
} variant;

/* The reference is sox's 16 kHz conversion of the 48 kHz original (with TPDF dither,
 * about 73 dB below the signal); the variants were made from the original with other
 * tools. Lossless formats must agree to the dither floor; u8 and G.711 to their own
 * quantization noise (u8: 8 bits ~ 30 dB on this quiet speech; G.711 at 8 kHz also
 * loses everything above 4 kHz). */
static void test_format_variants(void **s)
{
    (void)s;
    static const variant v[] = {
        {"format_variants/front_center_16k.flac", 16000, 1, 22848, 65},
        {"format_variants/front_center_f32_16k.wav", 16000, 1, 22848, 65},
        {"format_variants/front_center_s24_48k.wav", 48000, 1, 68545, 65},
        {"format_variants/front_center_stereo_s16_44k1.wav", 44100, 2, 62976, 60},
        {"format_variants/front_center_u8_16k.wav", 16000, 1, 22848, 28},
        {"format_variants/front_center_g711ulaw_8k.wav", 8000, 1, 11424, 14},
        {"edge_cases/list_chunk_before_data_and_trailing_chunk_16k.wav", 16000, 1, 22848, INFINITY},
        {"edge_cases/streamed_sizes_0xFFFFFFFF_16k.wav", 16000, 1, 22848, INFINITY},
        {"original/alsa_Front_Center.wav", 48000, 1, 68545, 65},
    };
    sl_audio ref;
    decode("alsa_Front_Center_16k.wav", 16000, &ref);
    assert_int_equal(ref.n, 22848);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        sl_audio a;
        decode(v[i].file, 16000, &a);
        assert_int_equal(a.src_rate, v[i].src_rate);
        assert_int_equal(a.src_channels, v[i].src_channels);
        assert_int_equal(a.src_frames, v[i].src_frames);
        assert_int_equal(a.rate, 16000);
        double snr = snr_db(&a, &ref);
        if (!(snr >= v[i].min_snr))
            fail_msg("%s: %.1f dB against the reference, want >= %.1f", v[i].file, snr, v[i].min_snr);
        sl_audio_free(&a);
    }
    sl_audio_free(&ref);
}

/* 16-bit to 24-bit is exact, so the 24-bit EXTENSIBLE file decodes to exactly the
 * samples of the 16-bit original; at the file's own rate nothing is resampled. */
static void test_s24_extensible_exact(void **s)
{
    (void)s;
    sl_audio a, b;
    decode("format_variants/front_center_s24_48k.wav", 0, &a);
    decode("original/alsa_Front_Center.wav", 0, &b);
    assert_int_equal(a.rate, 48000);
    assert_int_equal(a.n, 68545);
    assert_int_equal(b.n, 68545);
    assert_memory_equal(a.x, b.x, a.n * sizeof *a.x);
    sl_audio_free(&a);
    sl_audio_free(&b);
}

/* Ogg Vorbis 44.1 kHz stereo against sox's 16 kHz mono conversion of the same file. */
static void test_ogg_vorbis_stereo(void **s)
{
    (void)s;
    sl_audio a, r;
    decode("original/freedesktop_complete.oga", 16000, &a);
    decode("freedesktop_complete_16k.wav", 16000, &r);
    assert_int_equal(a.src_channels, 2);
    assert_int_equal(a.src_frames, 48022);
    assert_true(snr_db(&a, &r) > 60);
    sl_audio_free(&a);
    sl_audio_free(&r);
}

static void test_sc09_and_melody_lengths(void **s)
{
    (void)s;
    const char *digits[] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};
    for (int i = 0; i < 10; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sc09_like_espeak/%s_espeak.wav", digits[i]);
        sl_audio a;
        decode(rel, 16000, &a);
        assert_int_equal(a.n, 16000);
        sl_audio_free(&a);
    }
    sl_audio a;
    decode("sc09_like_espeak/eight_espeak_short_9240.wav", 16000, &a);
    assert_int_equal(a.n, 9240);
    sl_audio_free(&a);
    decode("synthetic_pluck_melody_16k.wav", 16000, &a);
    assert_int_equal(a.n, 320000);
    sl_clip *c;
    size_t nc = sl_clips_plan(a.n, 131072, 0, 0, &c);
    assert_int_equal(nc, 3); /* SOURCES.md: 2 full 131,072-sample chunks + 57,856 */
    assert_int_equal(c[2].start, 262144);
    assert_int_equal(c[2].len, 57856);
    free(c);
    assert_int_equal(sl_clips_plan(a.n, 131072, 0, 1, &c), 2);
    free(c);
    sl_audio_free(&a);
}

/* ---- bad input, built here ---- */
typedef struct {
    unsigned char b[4096];
    size_t n;
} bytes;

static void put(bytes *w, const void *p, size_t n)
{
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void put32(bytes *w, uint32_t v)
{
    unsigned char p[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(w, p, 4);
}
static void put16(bytes *w, unsigned v)
{
    unsigned char p[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(w, p, 2);
}

/* A PCM WAV: tag, channels, rate, bits, data bytes (declared size separately). */
static bytes make_wav(unsigned tag, unsigned ch, uint32_t rate, unsigned bits, size_t data, uint32_t declared)
{
    bytes w = {.n = 0};
    put(&w, "RIFF", 4);
    put32(&w, (uint32_t)(36 + data));
    put(&w, "WAVEfmt ", 8);
    put32(&w, 16);
    put16(&w, tag);
    put16(&w, ch);
    put32(&w, rate);
    put32(&w, rate * ch * bits / 8);
    put16(&w, ch * bits / 8);
    put16(&w, bits);
    put(&w, "data", 4);
    put32(&w, declared);
    for (size_t i = 0; i < data; i++)
        w.b[w.n++] = (unsigned char)(i * 37);
    return w;
}

static void expect_error(const bytes *w, const char *want)
{
    sl_audio a;
    sl_audio_opts o = {.rate = 16000};
    sl_err err = {{0}};
    int rc = sl_audio_decode_mem(w->b, w->n, "bad.wav", &o, &a, &err);
    if (rc == 0)
        fail_msg("expected an error containing '%s', got %zu samples", want, a.n);
    if (strncmp(err.msg, "bad.wav", 7) || !strstr(err.msg, want) || strchr(err.msg, '\n'))
        fail_msg("error '%s' does not name the file or lacks '%s'", err.msg, want);
    assert_null(a.x);
}

static void test_bad_inputs(void **s)
{
    (void)s;
    bytes w;
    w = make_wav(1, 1, 16000, 16, 200, 100000);
    expect_error(&w, "bad.wav:36: chunk 'data' declares 100000 bytes but only 200 remain");
    w = make_wav(1, 1, 16000, 16, 0, 0);
    expect_error(&w, "no audio");
    w = make_wav(1, 0, 16000, 16, 200, 200);
    expect_error(&w, "0 channels");
    w = make_wav(1, 1, 1000000000, 16, 200, 200);
    expect_error(&w, "sample rate 1000000000 Hz is outside");
    w = make_wav(1, 1, 0, 16, 200, 200);
    expect_error(&w, "bad.wav:0: cannot decode audio");
    w = make_wav(1, 1, 16000, 16, 200, 200);
    w.n = 30; /* header cut inside the fmt chunk */
    expect_error(&w, "bad.wav:12: chunk 'fmt ' declares 16 bytes but only 10 remain");
    w.n = 10;
    expect_error(&w, "bad.wav:10: truncated RIFF header");
    w = make_wav(1, 1, 16000, 16, 200, 200);
    memcpy(w.b + 12, "junk", 4); /* no fmt chunk at all */
    expect_error(&w, "no 'fmt ' chunk");
    /* float data with a NaN */
    w = make_wav(3, 1, 16000, 32, 0, 8);
    float nan = NAN, one = 0.5f;
    put(&w, &one, 4);
    put(&w, &nan, 4);
    expect_error(&w, "sample frame 1 is not a finite number");
    /* garbage and empty input */
    bytes g = {.n = 300};
    for (size_t i = 0; i < g.n; i++)
        g.b[i] = (unsigned char)(i * 101 + 7);
    expect_error(&g, "bad.wav:0: not a recognised audio file");
    /* bytes that libsndfile would guess to be MPEG audio never reach it under a .wav name */
    g.b[0] = 0xFF;
    g.b[1] = 0xFB;
    expect_error(&g, "bad.wav:0: not a recognised audio file");
    bytes e = {.n = 0};
    expect_error(&e, "bad.wav:0: empty file");
}

/* The walker accepts what real writers produce and reports the layout. */
static void test_wavscan_layouts(void **s)
{
    (void)s;
    bytes w = make_wav(1, 2, 44100, 16, 400, 400);
    sl_wavinfo info;
    sl_err err;
    assert_int_equal(sl_wavscan(w.b, w.n, "x", &info, &err), 0);
    assert_true(info.is_wav);
    assert_int_equal(info.channels, 2);
    assert_int_equal(info.sample_rate, 44100);
    assert_int_equal(info.data_off, 44);
    assert_int_equal(info.data_len, 400);
    /* odd data size without the final pad byte is fine */
    w = make_wav(1, 1, 8000, 8, 201, 201);
    assert_int_equal(sl_wavscan(w.b, w.n, "x", &info, &err), 0);
    /* streamed sizes: data runs to the end */
    w = make_wav(1, 1, 8000, 16, 300, 0xFFFFFFFFu);
    assert_int_equal(sl_wavscan(w.b, w.n, "x", &info, &err), 0);
    assert_true(info.streamed);
    assert_int_equal(info.data_len, 300);
    /* not RIFF: left to libsndfile */
    assert_int_equal(sl_wavscan((const uint8_t *)"fLaC\0\0\0\x22", 8, "x", &info, &err), 0);
    assert_false(info.is_wav);
}

/* Our WAV writer's output read back by libsndfile: same samples (16-bit rounding, float exact). */
static void test_wav_writer_roundtrip(void **s)
{
    (void)s;
    enum { N = 1001 };
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)sin(i * 0.05) * 0.9f;
    for (int fl = 0; fl <= 1; fl++) {
        sl_buf b = {0};
        assert_int_equal(sl_wav_encode(&b, x, N, 22050, fl), 0);
        sl_audio a;
        sl_audio_opts o = {0};
        sl_err err;
        if (sl_audio_decode_mem(b.data, b.len, "w.wav", &o, &a, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(a.n, N);
        assert_int_equal(a.rate, 22050);
        for (int i = 0; i < N; i++)
            assert_true(fabs((double)a.x[i] - x[i]) <= (fl ? 0 : 0.5 / 32768 + 1e-9));
        sl_audio_free(&a);
        sl_buf_free(&b);
    }
}

static void test_split_and_natsort(void **s)
{
    (void)s;
    double w[3];
    assert_int_equal(sl_audio_split_parse("88:6:6", w), 0);
    assert_int_equal(sl_audio_split_parse("1:0:0", w), 0);
    assert_int_equal(sl_audio_split_parse("0:0:0", w), -1);
    assert_int_equal(sl_audio_split_parse("88:6", w), -1);
    assert_int_equal(sl_audio_split_parse("a:b:c", w), -1);
    assert_int_equal(sl_audio_split_parse("-1:1:1", w), -1);
    sl_audio_split_parse("88:6:6", w);
    /* SaShiMi: train [0, int(0.88 n)), valid [int(0.88 n), int(0.94 n)), test the rest */
    size_t n = 50, counts[3] = {0};
    for (size_t i = 0; i < n; i++)
        counts[sl_audio_split_by_index(i, n, w)]++;
    assert_int_equal(counts[0], 44);
    assert_int_equal(counts[1], 3);
    assert_int_equal(counts[2], 3);
    /* unequal valid/test weights: f0 = 0.5, f1 = 0.5 + 0.5 * (3/4) = 0.875 -> 5, 3 (8 of 10 cut), 2 */
    sl_audio_split_parse("4:3:1", w);
    size_t c2[3] = {0};
    for (size_t i = 0; i < 10; i++)
        c2[sl_audio_split_by_index(i, 10, w)]++;
    assert_int_equal(c2[0], 5);
    assert_int_equal(c2[1], 3);
    assert_int_equal(c2[2], 2);
    sl_audio_split_parse("88:6:6", w);
    size_t hc[3] = {0};
    char key[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof key, "f%d.wav", i);
        hc[sl_audio_split_by_hash(key, 0, w)]++;
    }
    assert_true(hc[0] > 8600 && hc[0] < 9000 && hc[1] > 450 && hc[2] > 450);
    assert_true(sl_natcmp("a2.wav", "a10.wav") < 0);
    assert_true(sl_natcmp("a10.wav", "a9.wav") > 0);
    assert_true(sl_natcmp("a01", "a1") != 0);
    assert_true(sl_natcmp("b", "a100") > 0);
    assert_int_equal(sl_natcmp("x1y", "x1y"), 0);
}

static void test_clip_overlap(void **s)
{
    (void)s;
    sl_clip *c;
    size_t nc = sl_clips_plan(10, 4, 1, 0, &c); /* hop 3: [0,4) [3,7) [6,10) */
    assert_int_equal(nc, 3);
    assert_int_equal(c[2].start, 6);
    assert_int_equal(c[2].len, 4);
    free(c);
    nc = sl_clips_plan(11, 4, 1, 0, &c); /* + [9,11) holds sample 10, new */
    assert_int_equal(nc, 4);
    assert_int_equal(c[3].start, 9);
    assert_int_equal(c[3].len, 2);
    free(c);
    nc = sl_clips_plan(3, 4, 0, 0, &c); /* shorter than one clip */
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].len, 3);
    free(c);
    assert_int_equal(sl_clips_plan(3, 4, 0, 1, &c), 0);
    free(c);
    nc = sl_clips_plan(5, 0, 0, 0, &c);
    assert_int_equal(nc, 1);
    assert_int_equal(c[0].len, 5);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_variants),      cmocka_unit_test(test_s24_extensible_exact),
        cmocka_unit_test(test_ogg_vorbis_stereo),    cmocka_unit_test(test_sc09_and_melody_lengths),
        cmocka_unit_test(test_bad_inputs),           cmocka_unit_test(test_wavscan_layouts),
        cmocka_unit_test(test_wav_writer_roundtrip), cmocka_unit_test(test_split_and_natsort),
        cmocka_unit_test(test_clip_overlap),
    };
    return cmocka_run_group_tests_name("audio_decode", tests, NULL, NULL);
}
