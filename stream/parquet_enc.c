/* Parquet integer encodings (see parquet_enc.h). */
#include "stream/parquet_enc.h"

#include <string.h>

/* bw (<= 57) bits at bit offset `bit` of p[0, end), least significant bit
 * first; bits past end read as 0 (callers check that the values they use
 * are inside). */
static inline uint64_t bits_at(const uint8_t *p, const uint8_t *end, uint64_t bit, int bw)
{
    const uint8_t *q = p + (bit >> 3);
    uint64_t w = 0;
    if (end - q >= 8)
        memcpy(&w, q, 8);
    else if (q < end)
        memcpy(&w, q, (size_t)(end - q));
    w >>= bit & 7;
    return bw >= 64 ? w : w & ((UINT64_C(1) << bw) - 1);
}

/* Up to 64 bits. */
static inline uint64_t bits_at64(const uint8_t *p, const uint8_t *end, uint64_t bit, int bw)
{
    if (bw <= 56)
        return bits_at(p, end, bit, bw);
    uint64_t lo = bits_at(p, end, bit, 32);
    uint64_t hi = bits_at(p, end, bit + 32, bw - 32);
    return lo | hi << 32;
}

static int uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

void pq_rle_init(pq_rle *d, const uint8_t *p, const uint8_t *end, int bw)
{
    memset(d, 0, sizeof *d);
    d->p = p;
    d->end = end;
    d->bw = bw;
}

void pq_rle_init_msb(pq_rle *d, const uint8_t *p, const uint8_t *end, int bw)
{
    pq_rle_init(d, p, end, bw);
    d->msb = 1;
    d->bp = p;
    d->bp_end = end;
    d->bp_left = bw ? (uint64_t)(end - p) * 8 / (uint64_t)bw : UINT64_MAX;
}

static int fail(pq_rle *d, const char *why)
{
    d->why = why;
    return -1;
}

/* Starts the next run. */
static int next_run(pq_rle *d)
{
    if (d->msb)
        return fail(d, "BIT_PACKED levels end before the page's values");
    uint64_t h;
    if (d->p >= d->end)
        return fail(d, "RLE data ends before the page's values");
    if (uvarint(&d->p, d->end, &h) < 0)
        return fail(d, "RLE run header is truncated");
    if (h & 1) {
        uint64_t groups = h >> 1;
        if (!groups)
            return fail(d, "empty bit-packed run");
        uint64_t bytes = groups * (uint64_t)d->bw;
        if (groups > ((uint64_t)1 << 40))
            return fail(d, "bit-packed run longer than its data");
        d->bp = d->p;
        d->bp_end = bytes > (uint64_t)(d->end - d->p) ? d->end : d->p + bytes;
        /* a last run may be cut short: only the values present can be read */
        d->bp_left = d->bw ? (uint64_t)(d->bp_end - d->bp) * 8 / (uint64_t)d->bw : groups * 8;
        if (d->bp_left > groups * 8)
            d->bp_left = groups * 8;
        d->bp_bit = 0;
        d->p = d->bp_end;
        if (!d->bp_left)
            return fail(d, "bit-packed run without data");
    } else {
        int nb = (d->bw + 7) / 8;
        if (d->end - d->p < nb)
            return fail(d, "RLE run value is truncated");
        uint32_t v = 0;
        for (int i = 0; i < nb; i++)
            v |= (uint32_t)d->p[i] << (8 * i);
        d->p += nb;
        if (d->bw < 32 && v >> d->bw)
            return fail(d, "RLE run value wider than its bit width");
        d->rle_value = v;
        d->rle_left = h >> 1;
        if (!d->rle_left)
            return fail(d, "empty RLE run");
    }
    return 0;
}

static uint32_t msb_bits(pq_rle *d)
{
    uint32_t v = 0;
    for (int i = 0; i < d->bw; i++) {
        uint64_t b = d->bp_bit + (uint64_t)i;
        v = v << 1 | ((d->bp[b >> 3] >> (7 - (b & 7))) & 1);
    }
    return v;
}

int pq_rle_get(pq_rle *d, uint32_t *out, size_t n)
{
    while (n > 0) {
        if (d->rle_left) {
            size_t k = d->rle_left < n ? (size_t)d->rle_left : n;
            for (size_t i = 0; i < k; i++)
                out[i] = d->rle_value;
            out += k;
            n -= k;
            d->rle_left -= k;
        } else if (d->bp_left) {
            size_t k = d->bp_left < n ? (size_t)d->bp_left : n;
            if (d->msb)
                for (size_t i = 0; i < k; i++, d->bp_bit += (uint64_t)d->bw)
                    out[i] = msb_bits(d);
            else
                for (size_t i = 0; i < k; i++, d->bp_bit += (uint64_t)d->bw)
                    out[i] = (uint32_t)bits_at(d->bp, d->bp_end, d->bp_bit, d->bw);
            out += k;
            n -= k;
            d->bp_left -= k;
        } else if (next_run(d) < 0)
            return -1;
    }
    return 0;
}

int pq_rle_get_levels(pq_rle *d, int16_t *out, size_t n, int max)
{
    uint32_t tmp[256];
    while (n > 0) {
        if (d->rle_left) { /* runs are the common case for levels: no copy */
            if (d->rle_value > (uint32_t)max)
                return fail(d, "level above the column's maximum");
            size_t k = d->rle_left < n ? (size_t)d->rle_left : n;
            for (size_t i = 0; i < k; i++)
                out[i] = (int16_t)d->rle_value;
            out += k;
            n -= k;
            d->rle_left -= k;
            continue;
        }
        if (!d->bp_left) {
            if (next_run(d) < 0)
                return -1;
            continue;
        }
        size_t k = n < 256 ? n : 256;
        if (k > d->bp_left)
            k = (size_t)d->bp_left;
        if (pq_rle_get(d, tmp, k) < 0)
            return -1;
        for (size_t i = 0; i < k; i++) {
            if (tmp[i] > (uint32_t)max)
                return fail(d, "level above the column's maximum");
            out[i] = (int16_t)tmp[i];
        }
        out += k;
        n -= k;
    }
    return 0;
}

/* ---- DELTA_BINARY_PACKED ------------------------------------------------ */

static int dfail(pq_dbp *d, const char *why)
{
    d->why = why;
    return -1;
}

int pq_dbp_init(pq_dbp *d, const uint8_t *p, const uint8_t *end, int width64)
{
    memset(d, 0, sizeof *d);
    d->width64 = width64;
    uint64_t bs, nm, total, first;
    if (uvarint(&p, end, &bs) < 0 || uvarint(&p, end, &nm) < 0 || uvarint(&p, end, &total) < 0 ||
        uvarint(&p, end, &first) < 0)
        return dfail(d, "DELTA_BINARY_PACKED header is truncated");
    if (!bs || bs % 128 || bs > (1u << 20) || !nm || bs % nm || (bs / nm) % 32)
        return dfail(d, "DELTA_BINARY_PACKED block sizes are invalid");
    d->block_size = bs;
    d->nmini = nm;
    d->per_mini = bs / nm;
    d->left = total;
    d->last = first >> 1 ^ -(first & 1);
    d->first = total > 0;
    d->p = p;
    d->end = end;
    d->mini = nm; /* no block started */
    return 0;
}

uint64_t pq_dbp_count(const pq_dbp *d)
{
    return d->left + 0; /* only meaningful before the first get */
}

/* Moves to the next miniblock (reading a block header when needed). */
static int next_mini(pq_dbp *d)
{
    if (d->mini + 1 >= d->nmini) { /* a new block */
        uint64_t md;
        if (uvarint(&d->p, d->end, &md) < 0)
            return dfail(d, "DELTA_BINARY_PACKED block header is truncated");
        d->min_delta = md >> 1 ^ -(md & 1);
        if ((uint64_t)(d->end - d->p) < d->nmini)
            return dfail(d, "DELTA_BINARY_PACKED bit widths are truncated");
        d->widths = d->p;
        d->p += d->nmini;
        d->mini = 0;
    } else {
        d->mini++;
    }
    d->bw = d->widths[d->mini];
    if (d->bw > 64)
        return dfail(d, "DELTA_BINARY_PACKED bit width over 64");
    uint64_t bytes = d->per_mini * (uint64_t)d->bw / 8;
    d->mini_p = d->p;
    /* the last miniblock holding values may be cut to the values it holds */
    uint64_t need = (d->left < d->per_mini ? d->left : d->per_mini) * (uint64_t)d->bw;
    if ((need + 7) / 8 > (uint64_t)(d->end - d->p))
        return dfail(d, "DELTA_BINARY_PACKED miniblock is truncated");
    d->p = bytes > (uint64_t)(d->end - d->p) ? d->end : d->p + bytes;
    d->mini_left = d->per_mini;
    d->mini_bit = 0;
    return 0;
}

int pq_dbp_get(pq_dbp *d, int64_t *out, size_t n)
{
    if (n > d->left)
        return dfail(d, "DELTA_BINARY_PACKED data holds fewer values than the page");
    if (n && d->first) {
        *out++ = d->width64 ? (int64_t)d->last : (int64_t)(int32_t)(uint32_t)d->last;
        d->first = 0;
        d->left--;
        n--;
    }
    while (n > 0) {
        if (!d->mini_left && next_mini(d) < 0)
            return -1;
        size_t k = d->mini_left < n ? (size_t)d->mini_left : n;
        for (size_t i = 0; i < k; i++, d->mini_bit += (uint64_t)d->bw) {
            uint64_t delta = bits_at64(d->mini_p, d->end, d->mini_bit, d->bw);
            d->last += d->min_delta + delta;
            out[i] = d->width64 ? (int64_t)d->last : (int64_t)(int32_t)(uint32_t)d->last;
        }
        out += k;
        n -= k;
        d->mini_left -= k;
        d->left -= k;
    }
    return 0;
}

const uint8_t *pq_dbp_end(const pq_dbp *d0)
{
    pq_dbp d = *d0;
    uint64_t left = d.left - (d.first ? 1 : 0);
    while (left > 0) {
        uint64_t md;
        if (uvarint(&d.p, d.end, &md) < 0 || (uint64_t)(d.end - d.p) < d.nmini) {
            ((pq_dbp *)d0)->why = "DELTA_BINARY_PACKED block is truncated";
            return NULL;
        }
        const uint8_t *w = d.p;
        d.p += d.nmini;
        for (uint64_t m = 0; m < d.nmini && left > 0; m++) {
            if (w[m] > 64) {
                ((pq_dbp *)d0)->why = "DELTA_BINARY_PACKED bit width over 64";
                return NULL;
            }
            uint64_t bytes = d.per_mini * w[m] / 8;
            if (bytes > (uint64_t)(d.end - d.p)) {
                ((pq_dbp *)d0)->why = "DELTA_BINARY_PACKED miniblock is truncated";
                return NULL;
            }
            d.p += bytes;
            left = left > d.per_mini ? left - d.per_mini : 0;
        }
    }
    return d.p;
}
