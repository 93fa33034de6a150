/* Parquet page decompression through the libraries Debian ships: libsnappy,
 * zlib (GZIP), libzstd, libbrotli and liblz4 (LZ4_RAW and the Hadoop-framed
 * LZ4 of codec 5, with a fallback to a raw block as old writers made). */
#ifndef SLUICE_STREAM_PARQUET_CODEC_H
#define SLUICE_STREAM_PARQUET_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* 1 when codec (PQ_* of parquet_meta.h) can be decoded. */
int pq_codec_supported(int codec);
/* Decompresses src[0, n) into exactly dst[0, dn): 0, or -1 with err set
 * (a decompression error, or a size other than the page header's). *zctx
 * is the caller's ZSTD decompression context, made at the first ZSTD page
 * (NULL before) and kept for the next: a context made for each page
 * allocates its ~150 KB of tables afresh, and their pages fault in again.
 * Free it with pq_zctx_free. */
int pq_decompress(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, void **zctx, sl_err *err);
void pq_zctx_free(void *zctx);

#endif
