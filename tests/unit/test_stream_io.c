/* Input decoding: every codec, read in odd-sized pieces after a peek (so the
 * decoder's output buffer boundaries fall anywhere), must give back exactly
 * the original bytes; cutting the compressed data anywhere must be an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "stream/io.h"
#include "tests/unit/support.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Compressible but not trivial: words from a small alphabet, random runs. */
static unsigned char *make_data(size_t n)
{
    unsigned char *p = malloc(n);
    for (size_t i = 0; i < n;) {
        size_t run = 1 + rnd() % 300;
        unsigned char c = (unsigned char)('a' + rnd() % 8);
        for (size_t k = 0; k < run && i < n; k++, i++)
            p[i] = rnd() % 16 ? c : (unsigned char)(rnd() & 0xff);
    }
    return p;
}

typedef size_t (*compress_fn)(const unsigned char *src, size_t n, unsigned char **out);

static size_t c_zstd(const unsigned char *src, size_t n, unsigned char **out)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t cap = ZSTD_compressBound(n);
    *out = malloc(cap);
    size_t k = ZSTD_compress2(cc, *out, cap, src, n);
    ZSTD_freeCCtx(cc);
    assert_false(ZSTD_isError(k));
    return k;
}

static size_t c_gzip(const unsigned char *src, size_t n, unsigned char **out)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, n) + 64;
    *out = malloc(cap);
    z.next_in = (unsigned char *)src;
    z.avail_in = (uInt)n;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t k = cap - z.avail_out;
    deflateEnd(&z);
    return k;
}

static size_t c_xz(const unsigned char *src, size_t n, unsigned char **out)
{
    size_t cap = lzma_stream_buffer_bound(n), k = 0;
    *out = malloc(cap);
    assert_int_equal(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, src, n, *out, &k, cap), LZMA_OK);
    return k;
}

static size_t c_bz2(const unsigned char *src, size_t n, unsigned char **out)
{
    unsigned int cap = (unsigned int)(n + n / 100 + 700);
    *out = malloc(cap);
    assert_int_equal(BZ2_bzBuffToBuffCompress((char *)*out, &cap, (char *)src, (unsigned)n, 1, 0, 0), BZ_OK);
    return cap;
}

static const struct {
    const char *name;
    compress_fn fn;
} codecs[] = {{"zstd", c_zstd}, {"gzip", c_gzip}, {"xz", c_xz}, {"bzip2", c_bz2}};

/* Reads everything back in random piece sizes after a peek of `peek` bytes. */
static int read_all(const unsigned char *z, size_t zn, unsigned char *dst, size_t cap, size_t peek, size_t *got,
                    sl_err *e)
{
    sl_input *in = sl_input_mem(z, zn, "mem", e);
    if (!in)
        return -1;
    unsigned char tmp[4096];
    if (peek && sl_input_peek(in, tmp, peek, e) < 0) {
        sl_input_close(in);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        size_t want = 1 + rnd() % 200000;
        if (want > cap - n)
            want = cap - n + 1; /* also asks past the end */
        long r = sl_input_read(in, dst + n, want, e);
        if (r < 0) {
            sl_input_close(in);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        assert_true(n <= cap);
    }
    sl_input_close(in);
    *got = n;
    return 0;
}

static void test_roundtrip_odd_pieces(void **st)
{
    (void)st;
    const size_t sizes[] = {1, 4095, 131072, 1048576 - 37, 1048576 + 4096 + 5, 3 * 1048576 + 12345};
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (size_t peek = 0; peek <= 4096; peek += 4096 - 7 * (peek == 0)) {
                size_t n = sizes[s];
                unsigned char *data = make_data(n), *z, *back = malloc(n + 1);
                size_t zn = codecs[c].fn(data, n, &z), got = 0;
                sl_err e = {{0}};
                if (read_all(z, zn, back, n + 1, peek, &got, &e))
                    fail_msg("%s, %zu bytes, peek %zu: %s", codecs[c].name, n, peek, e.msg);
                assert_int_equal(got, n);
                assert_memory_equal(back, data, n);
                free(data);
                free(z);
                free(back);
            }
}

static void test_every_cut_is_an_error(void **st)
{
    (void)st;
    size_t n = 300000;
    unsigned char *data = make_data(n), *back = malloc(n + 1);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        unsigned char *z;
        size_t zn = codecs[c].fn(data, n, &z);
        /* every cut in the last 64 bytes (trailers, checksums) and a spread elsewhere */
        /* from 8 bytes on: a shorter prefix has no complete magic and is plain data */
        for (size_t cut = 8; cut < zn; cut += cut + 64 < zn ? 1 + zn / 97 : 1) {
            size_t got;
            sl_err e = {{0}};
            if (read_all(z, cut, back, n + 1, 0, &got, &e) == 0)
                fail_msg("%s cut at %zu of %zu bytes was accepted (%zu bytes decoded)", codecs[c].name, cut, zn, got);
            assert_true(strstr(e.msg, "truncated") || strstr(e.msg, "corrupt"));
        }
        free(z);
    }
    free(data);
    free(back);
}

/* sl_map_file gives the bytes sl_read_file gives: a plain file mapped, a
 * compressed one decoded, an empty one read; the same message for a file
 * that is missing or a directory. */
static void test_map_file(void **st)
{
    (void)st;
    char dir[] = "/tmp/sluice-map-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f", dir);
    size_t n = 300001;
    unsigned char *data = make_data(n);
    for (size_t c = 0; c <= sizeof codecs / sizeof *codecs; c++) {
        unsigned char *z = NULL;
        size_t zn = c < sizeof codecs / sizeof *codecs ? codecs[c].fn(data, n, &z) : n;
        assert_int_equal(sl_test_write(path, z ? z : data, zn), 0);
        sl_mapped m;
        sl_err e = {{0}};
        assert_int_equal(sl_map_file(path, &m, &e), 0);
        assert_int_equal(m.mapped, z == NULL); /* only the plain file is mapped */
        assert_int_equal(m.len, n);
        assert_memory_equal(m.data, data, n);
        sl_unmap_file(&m);
        assert_null(m.data);
        free(z);
    }
    assert_int_equal(sl_test_write(path, "", 0), 0);
    sl_mapped m;
    sl_err e = {{0}}, e2 = {{0}};
    assert_int_equal(sl_map_file(path, &m, &e), 0);
    assert_int_equal(m.len, 0);
    assert_int_equal(m.mapped, 0);
    sl_unmap_file(&m);
    char *d;
    size_t dn;
    remove(path);
    assert_int_equal(sl_map_file(path, &m, &e), -1);
    assert_int_equal(sl_read_file(path, &d, &dn, &e2), -1);
    assert_string_equal(e.msg, e2.msg);
    assert_int_equal(sl_map_file(dir, &m, &e), -1);
    assert_int_equal(sl_read_file(dir, &d, &dn, &e2), -1);
    assert_string_equal(e.msg, e2.msg);
    rmdir(dir);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_odd_pieces),
        cmocka_unit_test(test_every_cut_is_an_error),
        cmocka_unit_test(test_map_file),
    };
    return cmocka_run_group_tests_name("stream/io", tests, NULL, NULL);
}
