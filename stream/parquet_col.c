/* A Parquet column chunk read page by page (see parquet_col.h).
 *
 * Levels are decoded PQ_LEVELS_BUF at a time into a small look-ahead
 * buffer (a row of a repeated column ends where the next entry with
 * repetition level 0 begins, so the reader must see that entry before
 * deciding), values as many as the levels taken say, straight into the
 * batch. Nothing is materialised per page beyond its decompressed bytes. */
#include "stream/parquet_col.h"
#include "base/byteorder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/parquet_codec.h"

#define TMP_N 1024
#define MAX_HEADER ((size_t)16 << 20)

static int colerr(const pq_col *col, sl_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int colerr(const pq_col *col, sl_err *err, const char *fmt, ...)
{
    char what[SL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (col->page_no > 0)
        return sl_errf(err, "%s: row group %d, column %s, page %d (offset %llu): %s", col->file, col->rg,
                       col->leaf->path, col->page_no - 1, (unsigned long long)col->page_off, what);
    return sl_errf(err, "%s: row group %d, column %s: %s", col->file, col->rg, col->leaf->path, what);
}

int pq_value_width(const pq_leafinfo *l)
{
    switch (l->type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FLBA: return l->type_length;
    default: return 0;
    }
}

int pq_col_open(pq_col *col, const pq_leafinfo *leaf, const pq_chunk *c, int rg, const char *file, uint64_t file_size,
                sl_pread_fn rd, void *ctx, size_t max_entries, sl_err *err)
{
    /* the buffers of the chunk before (this column's in the row group
     * before), emptied: fresh ones would fault their pages in again, for
     * every column of every row group */
    sl_buf hdr = col->hdr, raw = col->raw, dict_fixed = col->dict_fixed, dict_bytes = col->dict_bytes, prev = col->prev;
    uint8_t *page = col->page;
    size_t page_cap = col->page_cap;
    int64_t *tmp64 = col->tmp64;
    uint32_t *tmp32 = col->tmp32;
    void *zctx = col->zctx;
    free(col->dict_off);
    memset(col, 0, sizeof *col);
    col->hdr = hdr, col->raw = raw, col->dict_fixed = dict_fixed, col->dict_bytes = dict_bytes, col->prev = prev;
    col->page = page, col->page_cap = page_cap, col->tmp64 = tmp64, col->tmp32 = tmp32;
    col->zctx = zctx;
    sl_buf_clear(&col->hdr);
    sl_buf_clear(&col->raw);
    sl_buf_clear(&col->dict_fixed);
    sl_buf_clear(&col->dict_bytes);
    sl_buf_clear(&col->prev);
    col->leaf = leaf;
    col->file = file;
    col->rg = rg;
    col->rd = rd;
    col->rd_ctx = ctx;
    col->max_entries = max_entries;
    col->codec = c->codec;
    if (c->encrypted || !c->has_meta)
        return colerr(col, err, "encrypted column chunks are not supported");
    if (c->external)
        return colerr(col, err, "the column chunk is in another file (file_path): not supported");
    if (c->type != leaf->type)
        return colerr(col, err, "chunk type %s differs from the schema's %s", pq_type_name(c->type),
                      pq_type_name(leaf->type));
    if (!pq_codec_supported(c->codec))
        return colerr(col, err, "codec %s is not supported", pq_codec_name(c->codec));
    int64_t start = c->data_page_offset;
    if (c->dictionary_page_offset > 0 && c->dictionary_page_offset < start)
        start = c->dictionary_page_offset;
    if (start < 4 || c->total_compressed < 0 || (uint64_t)start > file_size ||
        (uint64_t)c->total_compressed > file_size - (uint64_t)start)
        return colerr(col, err, "chunk bytes [%lld, +%lld) lie outside the file (%llu bytes)", (long long)start,
                      (long long)c->total_compressed, (unsigned long long)file_size);
    if (c->num_values < 0)
        return colerr(col, err, "negative value count");
    col->pos = (uint64_t)start;
    col->end = (uint64_t)start + (uint64_t)c->total_compressed;
    col->values_left = c->num_values;
    return 0;
}

void pq_col_close(pq_col *col)
{
    sl_buf_free(&col->hdr);
    sl_buf_free(&col->raw);
    free(col->page);
    sl_buf_free(&col->dict_fixed);
    sl_buf_free(&col->dict_bytes);
    free(col->dict_off);
    sl_buf_free(&col->prev);
    free(col->tmp64);
    free(col->tmp32);
    pq_zctx_free(col->zctx);
    memset(col, 0, sizeof *col);
}

void pq_colbatch_free(pq_colbatch *b)
{
    free(b->def);
    free(b->rep);
    sl_buf_free(&b->fixed);
    sl_buf_free(&b->bytes);
    free(b->off);
    free(b->row_e);
    free(b->row_v);
    memset(b, 0, sizeof *b);
}

/* ---- pages ---------------------------------------------------------------- */

static int read_at(pq_col *col, sl_buf *b, size_t n, uint64_t off, sl_err *err)
{
    sl_buf_clear(b);
    sl_buf_reserve(b, n);
    if (col->rd(col->rd_ctx, b->data, n, off, err) < 0)
        return -1;
    b->len = n;
    return 0;
}

/* PLAIN values of the dictionary page into the dictionary. */
static int load_dict(pq_col *col, const uint8_t *p, size_t n, int32_t count, int enc, sl_err *err)
{
    if (col->has_dict)
        return colerr(col, err, "a second dictionary page");
    if (col->data_seen)
        return colerr(col, err, "a dictionary page after data pages");
    if (enc != PQ_PLAIN && enc != PQ_PLAIN_DICTIONARY)
        return colerr(col, err, "dictionary page encoding %s is not supported", pq_encoding_name(enc));
    if (count < 0)
        return colerr(col, err, "negative dictionary size");
    static const uint8_t none[1];
    if (!p) /* an empty page (n == 0): no arithmetic on a NULL pointer */
        p = none;
    const uint8_t *end = p + n;
    int w = pq_value_width(col->leaf);
    if (col->leaf->type == PQ_BOOLEAN)
        return colerr(col, err, "a dictionary for a BOOLEAN column");
    if (w) {
        if ((uint64_t)count * (uint64_t)w > n)
            return colerr(col, err, "dictionary page holds fewer values than its header says");
        sl_buf_append(&col->dict_fixed, p, (size_t)count * (size_t)w);
    } else {
        col->dict_off = sl_xmalloc(((size_t)count + 1) * sizeof *col->dict_off);
        col->dict_off[0] = 0;
        for (int32_t i = 0; i < count; i++) {
            if (end - p < 4)
                return colerr(col, err, "dictionary page holds fewer values than its header says");
            uint32_t len = sl_get_le32(p);
            p += 4;
            if (len > (size_t)(end - p))
                return colerr(col, err, "dictionary value longer than the page");
            sl_buf_append(&col->dict_bytes, p, len);
            p += len;
            col->dict_off[i + 1] = col->dict_bytes.len;
        }
    }
    col->dict_n = (uint32_t)count;
    col->has_dict = 1;
    return 0;
}

/* Levels of a v1 page: 4-byte length + RLE, or BIT_PACKED. */
static int v1_levels(pq_col *col, pq_rle *d, const uint8_t **p, const uint8_t *end, int enc, int max, int64_t nv,
                     const char *what, sl_err *err)
{
    int bw = pq_bit_width((uint64_t)max);
    if (enc == PQ_RLE) {
        if (end - *p < 4)
            return colerr(col, err, "%s levels are truncated", what);
        uint32_t len = sl_get_le32(*p);
        *p += 4;
        if (len > (size_t)(end - *p))
            return colerr(col, err, "%s levels (%u bytes) longer than the page", what, len);
        pq_rle_init(d, *p, *p + len, bw);
        *p += len;
        return 0;
    }
    if (enc == PQ_BIT_PACKED) {
        uint64_t len = ((uint64_t)nv * (uint64_t)bw + 7) / 8;
        if (len > (uint64_t)(end - *p))
            return colerr(col, err, "%s levels longer than the page", what);
        pq_rle_init_msb(d, *p, *p + len, bw);
        *p += len;
        return 0;
    }
    return colerr(col, err, "%s level encoding %s is not supported", what, pq_encoding_name(enc));
}

/* Sets up the value decoder for encoding enc over [vp, vend). */
static int values_start(pq_col *col, int enc, int64_t nv, sl_err *err)
{
    const pq_leafinfo *l = col->leaf;
    col->enc = enc;
    col->bool_bit = 0;
    switch (enc) {
    case PQ_PLAIN: return 0;
    case PQ_PLAIN_DICTIONARY:
    case PQ_RLE_DICTIONARY:
        if (!col->has_dict)
            return colerr(col, err, "dictionary-encoded page without a dictionary page");
        if (col->vp >= col->vend) {
            if (nv == 0 || l->max_def > 0) { /* all nulls may have no index bytes at all */
                pq_rle_init(&col->idx, col->vp, col->vend, 0);
                return 0;
            }
            return colerr(col, err, "dictionary indices are missing");
        }
        if (*col->vp > 32)
            return colerr(col, err, "dictionary index bit width %d", *col->vp);
        pq_rle_init(&col->idx, col->vp + 1, col->vend, *col->vp);
        return 0;
    case PQ_RLE:
        if (l->type != PQ_BOOLEAN)
            return colerr(col, err, "RLE values in a %s column", pq_type_name(l->type));
        if (col->vend - col->vp < 4)
            return colerr(col, err, "RLE values are truncated");
        {
            uint32_t len = sl_get_le32(col->vp);
            if (len > (size_t)(col->vend - col->vp - 4))
                return colerr(col, err, "RLE values longer than the page");
            pq_rle_init(&col->idx, col->vp + 4, col->vp + 4 + len, 1);
        }
        return 0;
    case PQ_DELTA_BINARY_PACKED:
        if (l->type != PQ_INT32 && l->type != PQ_INT64)
            return colerr(col, err, "DELTA_BINARY_PACKED values in a %s column", pq_type_name(l->type));
        if (pq_dbp_init(&col->dbp, col->vp, col->vend, l->type == PQ_INT64) < 0)
            return colerr(col, err, "%s", col->dbp.why);
        return 0;
    case PQ_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_DELTA_BYTE_ARRAY: {
        if (l->type != PQ_BYTE_ARRAY && !(enc == PQ_DELTA_BYTE_ARRAY && l->type == PQ_FLBA))
            return colerr(col, err, "%s values in a %s column", pq_encoding_name(enc), pq_type_name(l->type));
        const uint8_t *p = col->vp;
        if (enc == PQ_DELTA_BYTE_ARRAY) { /* prefix lengths, then the suffixes as DELTA_LENGTH_BYTE_ARRAY */
            if (pq_dbp_init(&col->dbp2, p, col->vend, 0) < 0)
                return colerr(col, err, "%s", col->dbp2.why);
            p = pq_dbp_end(&col->dbp2);
            if (!p)
                return colerr(col, err, "%s", col->dbp2.why);
            sl_buf_clear(&col->prev);
        }
        if (pq_dbp_init(&col->dbp, p, col->vend, 0) < 0)
            return colerr(col, err, "%s", col->dbp.why);
        col->data = pq_dbp_end(&col->dbp);
        if (!col->data)
            return colerr(col, err, "%s", col->dbp.why);
        return 0;
    }
    case PQ_BYTE_STREAM_SPLIT: {
        int w = pq_value_width(l);
        if (!w || l->type == PQ_BOOLEAN || l->type == PQ_INT96)
            return colerr(col, err, "BYTE_STREAM_SPLIT values in a %s column", pq_type_name(l->type));
        size_t n = (size_t)(col->vend - col->vp);
        if (n % (size_t)w)
            return colerr(col, err, "BYTE_STREAM_SPLIT data of %zu bytes is not a multiple of %d", n, w);
        col->bss_n = n / (size_t)w;
        col->bss_i = 0;
        return 0;
    }
    default: return colerr(col, err, "encoding %s is not supported", pq_encoding_name(enc));
    }
}

/* Room for a decompressed page of n bytes (and one byte past it) in
 * col->page. It grows by a quarter more than asked: pages a little larger
 * than the one before (a text column's, row group after row group) would
 * each be a new block, and one of that size comes from mmap, so its pages
 * fault in again (FineWeb-shaped files: 6 new 3 MB blocks, 4,500 of a
 * read's 10,700 page faults). */
static void page_room(pq_col *col, size_t n)
{
    if (n + 1 <= col->page_cap)
        return;
    size_t cap = n + 1 + n / 4;
    free(col->page);
    col->page = sl_xmalloc(cap);
    col->page_cap = cap;
}

/* Reads the next data page (dictionary and index pages on the way are
 * handled): 1, 0 when the chunk has no more pages, -1 error. */
static int next_page(pq_col *col, sl_err *err)
{
    for (;;) {
        if (col->pos >= col->end)
            return 0;
        /* the header: read more until it decodes */
        size_t want = 256, used = 0;
        pq_page_header h;
        col->page_off = col->pos;
        col->page_no++;
        for (;;) {
            if (want > col->end - col->pos)
                want = (size_t)(col->end - col->pos);
            if (read_at(col, &col->hdr, want, col->pos, err) < 0)
                return colerr(col, err, "%s", err->msg);
            int rc = pq_page_header_decode((const uint8_t *)col->hdr.data, want, &h, &used, err);
            if (rc < 0)
                return colerr(col, err, "%s", err->msg);
            if (rc == 0)
                break;
            if (want >= col->end - col->pos)
                return colerr(col, err, "page header runs past the end of the column chunk");
            if (want >= MAX_HEADER)
                return colerr(col, err, "page header longer than %zu bytes", MAX_HEADER);
            want *= 8;
        }
        col->pos += used;
        if ((uint64_t)h.compressed > col->end - col->pos)
            return colerr(col, err, "page of %d bytes is larger than what is left of its column chunk (%llu bytes)",
                          h.compressed, (unsigned long long)(col->end - col->pos));
        if (read_at(col, &col->raw, (size_t)h.compressed, col->pos, err) < 0)
            return colerr(col, err, "%s", err->msg);
        col->pos += (uint64_t)h.compressed;
        const uint8_t *raw = (const uint8_t *)col->raw.data;
        size_t rawn = (size_t)h.compressed;
        if (h.type == PQ_INDEX_PAGE)
            continue;
        if (h.type == PQ_DICTIONARY_PAGE) {
            if (!h.has_dict)
                return colerr(col, err, "dictionary page without its header");
            const uint8_t *p = raw;
            if (col->codec != PQ_UNCOMPRESSED) {
                page_room(col, (size_t)h.uncompressed);
                if (pq_decompress(col->codec, raw, rawn, col->page, (size_t)h.uncompressed, &col->zctx, err) < 0)
                    return colerr(col, err, "%s", err->msg);
                p = col->page;
                rawn = (size_t)h.uncompressed;
            }
            if (load_dict(col, p, rawn, h.dict_num_values, h.dict_encoding, err) < 0)
                return -1;
            continue;
        }
        if (h.type != PQ_DATA_PAGE && h.type != PQ_DATA_PAGE_V2)
            return colerr(col, err, "unknown page type %d", h.type);
        if ((h.type == PQ_DATA_PAGE && !h.has_data) || (h.type == PQ_DATA_PAGE_V2 && !h.has_v2))
            return colerr(col, err, "data page without its header");
        col->data_seen = 1;
        if (h.num_values < 0 || h.num_values > col->values_left)
            return colerr(col, err, "page holds %d values, more than the column chunk has left (%lld)", h.num_values,
                          (long long)col->values_left);
        col->values_left -= h.num_values;
        const pq_leafinfo *l = col->leaf;
        const uint8_t *p, *end;
        if (h.type == PQ_DATA_PAGE) {
            p = raw;
            end = raw + rawn;
            if (col->codec != PQ_UNCOMPRESSED) {
                page_room(col, (size_t)h.uncompressed);
                if (pq_decompress(col->codec, raw, rawn, col->page, (size_t)h.uncompressed, &col->zctx, err) < 0)
                    return colerr(col, err, "%s", err->msg);
                p = col->page;
                end = p + h.uncompressed;
            }
            if (l->max_rep > 0 &&
                v1_levels(col, &col->rep_d, &p, end, h.rep_encoding, l->max_rep, h.num_values, "repetition", err) < 0)
                return -1;
            if (l->max_def > 0 &&
                v1_levels(col, &col->def_d, &p, end, h.def_encoding, l->max_def, h.num_values, "definition", err) < 0)
                return -1;
        } else {
            if (h.rep_len < 0 || h.def_len < 0 || (uint64_t)h.rep_len + (uint64_t)h.def_len > rawn)
                return colerr(col, err, "level byte lengths (%d + %d) exceed the page (%zu bytes)", h.rep_len,
                              h.def_len, rawn);
            pq_rle_init(&col->rep_d, raw, raw + h.rep_len, pq_bit_width((uint64_t)l->max_rep));
            pq_rle_init(&col->def_d, raw + h.rep_len, raw + h.rep_len + h.def_len, pq_bit_width((uint64_t)l->max_def));
            size_t lv = (size_t)h.rep_len + (size_t)h.def_len;
            p = raw + lv;
            end = raw + rawn;
            if (h.is_compressed && col->codec != PQ_UNCOMPRESSED) {
                if (h.uncompressed < (int64_t)lv)
                    return colerr(col, err, "uncompressed size smaller than the levels");
                size_t un = (size_t)h.uncompressed - lv;
                page_room(col, un);
                if (pq_decompress(col->codec, p, rawn - lv, col->page, un, &col->zctx, err) < 0)
                    return colerr(col, err, "%s", err->msg);
                p = col->page;
                end = p + un;
            }
        }
        col->vp = p;
        col->vend = end;
        col->page_left = h.num_values;
        col->lv_n = col->lv_i = 0;
        if (values_start(col, h.encoding, h.num_values, err) < 0)
            return -1;
        if (h.num_values > 0)
            return 1;
    }
}

/* ---- values ----------------------------------------------------------------- */

static void put_bytes(pq_colbatch *b, const void *p, size_t n)
{
    if (b->nval + 2 > b->off_cap) {
        b->off_cap = b->off_cap ? 2 * b->off_cap : 1024;
        b->off = sl_xrealloc(b->off, b->off_cap * sizeof *b->off);
    }
    if (b->nval == 0)
        b->off[0] = 0;
    sl_buf_append(&b->bytes, p, n);
    b->off[++b->nval] = b->bytes.len;
}

/* Decodes n values of the current page into b. */
static int take_values(pq_col *col, size_t n, pq_colbatch *b, sl_err *err)
{
    const pq_leafinfo *l = col->leaf;
    int w = pq_value_width(l);
    if (!col->tmp64) {
        col->tmp64 = sl_xmalloc(TMP_N * sizeof *col->tmp64);
        col->tmp32 = sl_xmalloc(TMP_N * sizeof *col->tmp32);
    }
    switch (col->enc) {
    case PQ_PLAIN:
        if (l->type == PQ_BOOLEAN) {
            uint64_t bits = (uint64_t)(col->vend - col->vp) * 8;
            if (col->bool_bit + n > bits)
                return colerr(col, err, "PLAIN values end before the page's count");
            sl_buf_reserve(&b->fixed, n);
            for (size_t i = 0; i < n; i++, col->bool_bit++)
                b->fixed.data[b->fixed.len++] = (char)((col->vp[col->bool_bit >> 3] >> (col->bool_bit & 7)) & 1);
            b->nval += n;
            return 0;
        }
        if (w) {
            if ((uint64_t)n * (uint64_t)w > (uint64_t)(col->vend - col->vp))
                return colerr(col, err, "PLAIN values end before the page's count");
            sl_buf_append(&b->fixed, col->vp, n * (size_t)w);
            col->vp += n * (size_t)w;
            b->nval += n;
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            if (col->vend - col->vp < 4)
                return colerr(col, err, "PLAIN values end before the page's count");
            uint32_t len = sl_get_le32(col->vp);
            col->vp += 4;
            if (len > (size_t)(col->vend - col->vp))
                return colerr(col, err, "PLAIN value of %u bytes runs past the page", len);
            put_bytes(b, col->vp, len);
            col->vp += len;
        }
        return 0;
    case PQ_PLAIN_DICTIONARY:
    case PQ_RLE_DICTIONARY:
        while (n > 0) {
            size_t k = n < TMP_N ? n : TMP_N;
            if (pq_rle_get(&col->idx, col->tmp32, k) < 0)
                return colerr(col, err, "dictionary indices: %s", col->idx.why);
            for (size_t i = 0; i < k; i++)
                if (col->tmp32[i] >= col->dict_n)
                    return colerr(col, err, "dictionary index %u, the dictionary has %u values", col->tmp32[i],
                                  col->dict_n);
            if (w) {
                sl_buf_reserve(&b->fixed, k * (size_t)w);
                char *q = b->fixed.data + b->fixed.len;
                if (w == 4)
                    for (size_t i = 0; i < k; i++)
                        memcpy(q + 4 * i, col->dict_fixed.data + 4 * (size_t)col->tmp32[i], 4);
                else if (w == 8)
                    for (size_t i = 0; i < k; i++)
                        memcpy(q + 8 * i, col->dict_fixed.data + 8 * (size_t)col->tmp32[i], 8);
                else
                    for (size_t i = 0; i < k; i++)
                        memcpy(q + (size_t)w * i, col->dict_fixed.data + (size_t)w * col->tmp32[i], (size_t)w);
                b->fixed.len += k * (size_t)w;
                b->fixed.data[b->fixed.len] = 0;
                b->nval += k;
            } else {
                for (size_t i = 0; i < k; i++) {
                    size_t a = col->dict_off[col->tmp32[i]], z = col->dict_off[col->tmp32[i] + 1];
                    put_bytes(b, col->dict_bytes.data + a, z - a);
                }
            }
            n -= k;
        }
        return 0;
    case PQ_RLE: /* booleans */
        while (n > 0) {
            size_t k = n < TMP_N ? n : TMP_N;
            if (pq_rle_get(&col->idx, col->tmp32, k) < 0)
                return colerr(col, err, "RLE booleans: %s", col->idx.why);
            sl_buf_reserve(&b->fixed, k);
            for (size_t i = 0; i < k; i++)
                b->fixed.data[b->fixed.len++] = (char)(col->tmp32[i] & 1);
            b->fixed.data[b->fixed.len] = 0;
            b->nval += k;
            n -= k;
        }
        return 0;
    case PQ_DELTA_BINARY_PACKED:
        while (n > 0) {
            size_t k = n < TMP_N ? n : TMP_N;
            if (pq_dbp_get(&col->dbp, col->tmp64, k) < 0)
                return colerr(col, err, "%s", col->dbp.why);
            sl_buf_reserve(&b->fixed, k * (size_t)w);
            for (size_t i = 0; i < k; i++) {
                if (w == 4) {
                    int32_t v = (int32_t)col->tmp64[i];
                    memcpy(b->fixed.data + b->fixed.len, &v, 4);
                } else {
                    memcpy(b->fixed.data + b->fixed.len, &col->tmp64[i], 8);
                }
                b->fixed.len += (size_t)w;
            }
            b->fixed.data[b->fixed.len] = 0;
            b->nval += k;
            n -= k;
        }
        return 0;
    case PQ_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_DELTA_BYTE_ARRAY:
        while (n > 0) {
            size_t k = n < TMP_N ? n : TMP_N;
            int64_t *pre = col->tmp64;
            int64_t suf[TMP_N / 2];
            if (k > TMP_N / 2)
                k = TMP_N / 2;
            if (pq_dbp_get(&col->dbp, suf, k) < 0)
                return colerr(col, err, "%s", col->dbp.why);
            if (col->enc == PQ_DELTA_BYTE_ARRAY && pq_dbp_get(&col->dbp2, pre, k) < 0)
                return colerr(col, err, "%s", col->dbp2.why);
            for (size_t i = 0; i < k; i++) {
                if (suf[i] < 0 || (uint64_t)suf[i] > (uint64_t)(col->vend - col->data))
                    return colerr(col, err, "%s value of %lld bytes runs past the page", pq_encoding_name(col->enc),
                                  (long long)suf[i]);
                if (col->enc == PQ_DELTA_LENGTH_BYTE_ARRAY) {
                    if (w)
                        return colerr(col, err, "DELTA_LENGTH_BYTE_ARRAY in a fixed-width column");
                    put_bytes(b, col->data, (size_t)suf[i]);
                } else {
                    if (pre[i] < 0 || (uint64_t)pre[i] > col->prev.len)
                        return colerr(col, err, "DELTA_BYTE_ARRAY prefix of %lld bytes, the previous value has %zu",
                                      (long long)pre[i], col->prev.len);
                    col->prev.len = (size_t)pre[i];
                    sl_buf_append(&col->prev, col->data, (size_t)suf[i]);
                    if (w) {
                        if (col->prev.len != (size_t)w)
                            return colerr(col, err, "DELTA_BYTE_ARRAY value of %zu bytes in a %d-byte column",
                                          col->prev.len, w);
                        sl_buf_append(&b->fixed, col->prev.data, (size_t)w);
                        b->nval++;
                    } else {
                        put_bytes(b, col->prev.data, col->prev.len);
                    }
                }
                col->data += suf[i];
            }
            n -= k;
        }
        return 0;
    case PQ_BYTE_STREAM_SPLIT:
        if (col->bss_i + n > col->bss_n)
            return colerr(col, err, "BYTE_STREAM_SPLIT values end before the page's count");
        sl_buf_reserve(&b->fixed, n * (size_t)w);
        for (size_t i = 0; i < n; i++, col->bss_i++) {
            char *q = b->fixed.data + b->fixed.len;
            for (int k = 0; k < w; k++)
                q[k] = (char)col->vp[(size_t)k * col->bss_n + col->bss_i];
            b->fixed.len += (size_t)w;
        }
        b->fixed.data[b->fixed.len] = 0;
        b->nval += n;
        return 0;
    default: return colerr(col, err, "encoding %s is not supported", pq_encoding_name(col->enc));
    }
}

/* ---- levels and rows --------------------------------------------------------- */

static int fill_levels(pq_col *col, sl_err *err)
{
    const pq_leafinfo *l = col->leaf;
    size_t k = col->page_left < PQ_LEVELS_BUF ? (size_t)col->page_left : PQ_LEVELS_BUF;
    if (l->max_rep > 0 && pq_rle_get_levels(&col->rep_d, col->lv_rep, k, l->max_rep) < 0)
        return colerr(col, err, "repetition levels: %s", col->rep_d.why);
    if (l->max_def > 0 && pq_rle_get_levels(&col->def_d, col->lv_def, k, l->max_def) < 0)
        return colerr(col, err, "definition levels: %s", col->def_d.why);
    if (l->max_rep == 0)
        memset(col->lv_rep, 0, k * sizeof *col->lv_rep);
    if (l->max_def == 0)
        memset(col->lv_def, 0, k * sizeof *col->lv_def);
    col->lv_n = k;
    col->lv_i = 0;
    col->page_left -= (int64_t)k;
    return 0;
}

static void grow_entries(pq_colbatch *b, const pq_leafinfo *l, size_t need)
{
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < need)
        cap *= 2;
    if (l->max_def > 0)
        b->def = sl_xrealloc(b->def, cap * sizeof *b->def);
    if (l->max_rep > 0)
        b->rep = sl_xrealloc(b->rep, cap * sizeof *b->rep);
    b->cap = cap;
}

static void grow_rows(pq_colbatch *b, size_t need)
{
    if (need <= b->rows_cap)
        return;
    size_t cap = b->rows_cap ? b->rows_cap : 1024;
    while (cap < need)
        cap *= 2;
    b->row_e = sl_xrealloc(b->row_e, cap * sizeof *b->row_e);
    b->row_v = sl_xrealloc(b->row_v, cap * sizeof *b->row_v);
    b->rows_cap = cap;
}

int pq_col_read(pq_col *col, size_t nrows, size_t byte_limit, pq_colbatch *b, size_t *got, sl_err *err)
{
    const pq_leafinfo *l = col->leaf;
    b->n = b->nval = b->nrows = 0;
    sl_buf_clear(&b->fixed);
    sl_buf_clear(&b->bytes);
    grow_rows(b, nrows + 1);
    size_t rows = 0;
    for (;;) {
        if (col->lv_i == col->lv_n) {
            if (col->page_left == 0) {
                int rc = next_page(col, err);
                if (rc < 0)
                    return -1;
                if (rc == 0)
                    break; /* end of the chunk */
            }
            if (fill_levels(col, err) < 0)
                return -1;
        }
        /* take entries from the look-ahead up to the start of row nrows + 1 */
        size_t i = col->lv_i, n = col->lv_n, nv = 0;
        int stop = 0;
        if (byte_limit && n - i > 64) /* a text column checks its byte limit every 64 rows */
            n = i + 64;
        grow_entries(b, l, b->n + (n - i));
        for (; i < n; i++) {
            if (rows == 0 && col->lv_rep[i] != 0)
                return colerr(col, err, "repetition level %d where a row must start", col->lv_rep[i]);
            if (col->lv_rep[i] == 0) {
                if (rows == nrows || (byte_limit && b->bytes.len >= byte_limit && rows > 0)) {
                    stop = 1;
                    break;
                }
                grow_rows(b, rows + 2);
                b->row_e[rows] = b->n;
                b->row_v[rows] = b->nval + nv;
                rows++;
            }
            if (l->max_def > 0)
                b->def[b->n] = col->lv_def[i];
            if (l->max_rep > 0)
                b->rep[b->n] = col->lv_rep[i];
            b->n++;
            nv += col->lv_def[i] == l->max_def;
        }
        if (b->n > col->max_entries)
            return colerr(col, err, "more than %zu values in %zu rows (a row this long does not fit --mem-budget)",
                          col->max_entries, rows);
        col->lv_i = i;
        if (nv && take_values(col, nv, b, err) < 0)
            return -1;
        if (stop)
            break;
        if (rows == nrows && l->max_rep == 0)
            break;
    }
    b->nrows = rows;
    if (rows) {
        b->row_e[rows] = b->n;
        b->row_v[rows] = b->nval;
    }
    *got = rows;
    return 0;
}
