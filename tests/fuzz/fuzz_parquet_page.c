/* libFuzzer target: Parquet's pieces one by one, on raw bytes: the Thrift
 * page-header and footer decoders, the RLE/bit-packed hybrid and
 * DELTA_BINARY_PACKED decoders, and the page decompressors (the first byte
 * picks the codec and bit width). Nothing may read out of bounds, and a
 * decoder that succeeds must have produced exactly what was asked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/parquet_codec.h"
#include "stream/parquet_enc.h"
#include "stream/parquet_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t sel = data[0], arg = data[1];
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    sl_err err;
    switch (sel % 5) {
    case 0: {
        pq_page_header h;
        size_t used = 0;
        if (pq_page_header_decode(p, n, &h, &used, &err) == 0 && used > n)
            abort();
        break;
    }
    case 1: {
        pq_meta m;
        if (pq_meta_decode(p, n, &m, &err) == 0)
            pq_meta_free(&m);
        break;
    }
    case 2: {
        pq_rle d;
        int16_t lv[512];
        uint32_t v[512];
        int bw = arg % 33;
        pq_rle_init(&d, p, p + n, bw);
        for (int k = 0; k < 64 && pq_rle_get(&d, v, 1 + arg % 511) == 0; k++) /* a run may be endless */
            for (size_t i = 0; i < 1u + arg % 511; i++)
                if (bw < 32 && v[i] >> bw)
                    abort();
        if (arg & 1) {
            pq_rle_init_msb(&d, p, p + n, bw % 16);
            pq_rle_get_levels(&d, lv, 512, 7);
        }
        break;
    }
    case 3: {
        pq_dbp d;
        int64_t v[300];
        if (pq_dbp_init(&d, p, p + n, arg & 1) == 0) {
            pq_dbp_end(&d);
            for (int k = 0; k < 64 && pq_dbp_get(&d, v, 1 + arg % 299) == 0; k++)
                ;
        }
        break;
    }
    default: {
        static const int codecs[] = {0, 1, 2, 4, 5, 6, 7};
        int codec = codecs[arg % 7];
        size_t dn = (size_t)(arg >> 3) * 97;
        uint8_t *dst = malloc(dn ? dn : 1);
        static void *zctx; /* kept from run to run, as a column keeps it from page to page (also after errors) */
        pq_decompress(codec, p, n, dst, dn, &zctx, &err);
        free(dst);
        break;
    }
    }
    return 0;
}
