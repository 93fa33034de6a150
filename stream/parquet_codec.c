/* Parquet page decompression (see parquet_codec.h). */
#include "stream/parquet_codec.h"
#include "base/byteorder.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "stream/parquet_meta.h"

int pq_codec_supported(int codec)
{
    return codec == PQ_UNCOMPRESSED || codec == PQ_SNAPPY || codec == PQ_GZIP || codec == PQ_BROTLI ||
           codec == PQ_LZ4 || codec == PQ_ZSTD || codec == PQ_LZ4_RAW;
}

static int size_mismatch(sl_err *err, const char *codec, size_t got, size_t want)
{
    return sl_errf(err, "%s data decompresses to %zu bytes, the page header says %zu", codec, got, want);
}

static int gunzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, sl_err *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) /* gzip or zlib header */
        return sl_errf(err, "GZIP: cannot start zlib");
    size_t out = 0;
    int rc = Z_OK;
    while (n > 0 && rc != Z_STREAM_ERROR) {
        /* z_stream counts in uInt: feed at most 1 GiB at a time */
        z.next_in = (Bytef *)(uintptr_t)src;
        z.avail_in = (uInt)(n > (1u << 30) ? (1u << 30) : n);
        z.next_out = dst + out;
        z.avail_out = (uInt)(dn - out > (1u << 30) ? (1u << 30) : dn - out);
        uInt in0 = z.avail_in, out0 = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        src += in0 - z.avail_in;
        n -= in0 - z.avail_in;
        out += out0 - z.avail_out;
        if (rc == Z_STREAM_END) {
            if (n == 0)
                break;
            inflateReset(&z); /* concatenated gzip members */
            continue;
        }
        if (rc != Z_OK) {
            const char *why = z.msg               ? z.msg
                              : rc == Z_BUF_ERROR ? "more data than the page header says"
                                                  : "corrupt data";
            inflateEnd(&z);
            return sl_errf(err, "GZIP decompression error: %s", why);
        }
        if (in0 == z.avail_in && out0 == z.avail_out)
            break; /* no progress */
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return sl_errf(err, "GZIP decompression error: truncated data");
    return out == dn ? 0 : size_mismatch(err, "GZIP", out, dn);
}

/* Hadoop's LZ4 framing: blocks of [BE32 decompressed size][BE32 compressed
 * size][LZ4 block]. 0 ok, 1 not that framing, -1 a framed block is corrupt. */
static int lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dn)
{
    size_t out = 0;
    while (n > 0) {
        if (n < 8)
            return 1;
        uint32_t usz = sl_get_be32(src), csz = sl_get_be32(src + 4);
        if (csz > n - 8 || usz > dn - out)
            return 1;
        int got = LZ4_decompress_safe((const char *)src + 8, (char *)dst + out, (int)csz, (int)usz);
        if (got < 0 || (uint32_t)got != usz)
            return 1;
        out += usz;
        src += 8 + csz;
        n -= 8 + csz;
    }
    return out == dn ? 0 : 1;
}

void pq_zctx_free(void *zctx)
{
    ZSTD_freeDCtx(zctx);
}

int pq_decompress(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, void **zctx, sl_err *err)
{
    /* a page of no bytes (the dictionary page of an all-null column) may
     * come with no buffer, which zlib refuses (Z_STREAM_ERROR) and memcpy
     * must not be given */
    uint8_t spare[1];
    if (!dst)
        dst = spare;
    switch (codec) {
    case PQ_UNCOMPRESSED:
        if (n != dn)
            return size_mismatch(err, "UNCOMPRESSED", n, dn);
        memcpy(dst, src, n);
        return 0;
    case PQ_SNAPPY: {
        size_t len;
        if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK)
            return sl_errf(err, "SNAPPY decompression error: bad length header");
        if (len != dn)
            return size_mismatch(err, "SNAPPY", len, dn);
        if (snappy_uncompress((const char *)src, n, (char *)dst, &len) != SNAPPY_OK)
            return sl_errf(err, "SNAPPY decompression error: corrupt data");
        return 0;
    }
    case PQ_GZIP: return gunzip(src, n, dst, dn, err);
    case PQ_ZSTD: {
        if (!*zctx && !(*zctx = ZSTD_createDCtx()))
            return sl_errf(err, "ZSTD: out of memory");
        size_t got = ZSTD_decompressDCtx(*zctx, dst, dn, src, n);
        if (ZSTD_isError(got))
            return sl_errf(err, "ZSTD decompression error: %s", ZSTD_getErrorName(got));
        return got == dn ? 0 : size_mismatch(err, "ZSTD", got, dn);
    }
    case PQ_BROTLI: {
        size_t got = dn;
        if (BrotliDecoderDecompress(n, src, &got, dst) != BROTLI_DECODER_RESULT_SUCCESS)
            return sl_errf(err, "BROTLI decompression error: corrupt data or more data than the page header says");
        return got == dn ? 0 : size_mismatch(err, "BROTLI", got, dn);
    }
    case PQ_LZ4_RAW:
    case PQ_LZ4: {
        if (n > INT32_MAX || dn > INT32_MAX)
            return sl_errf(err, "%s page over 2 GiB", pq_codec_name(codec));
        if (codec == PQ_LZ4 && lz4_hadoop(src, n, dst, dn) == 0)
            return 0;
        int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dn);
        if (got < 0)
            return sl_errf(err, "%s decompression error: corrupt data", pq_codec_name(codec));
        return (size_t)got == dn ? 0 : size_mismatch(err, pq_codec_name(codec), (size_t)got, dn);
    }
    default: return sl_errf(err, "codec %s is not supported", pq_codec_name(codec));
    }
}
