/* Parquet's integer encodings as streaming decoders: each keeps its place
 * between calls, so a page's values are taken a batch at a time and a page
 * whose few bytes claim billions of values (a run of 2^31 nulls) costs no
 * memory until its values are asked for. Every read is bounds-checked
 * against the encoded bytes.
 *
 *  - pq_rle: the RLE / bit-packed hybrid (levels, dictionary indices,
 *    booleans), and the deprecated BIT_PACKED level encoding (MSB first);
 *  - pq_dbp: DELTA_BINARY_PACKED (also the lengths inside
 *    DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY). */
#ifndef SLUICE_STREAM_PARQUET_ENC_H
#define SLUICE_STREAM_PARQUET_ENC_H

#include <stddef.h>
#include <stdint.h>

typedef struct pq_rle {
    const uint8_t *p, *end;
    int bw;             /* bits per value, 0..32 */
    int msb;            /* the old BIT_PACKED encoding: one bit-packed run, most significant bit first */
    uint64_t rle_left;  /* values left in the current RLE run */
    uint32_t rle_value; /* its value */
    uint64_t bp_left;   /* values left in the current bit-packed run */
    uint64_t bp_bit;    /* bit position in it */
    const uint8_t *bp;  /* its first byte */
    const uint8_t *bp_end;
    const char *why; /* the error, when a call returned -1 */
} pq_rle;

void pq_rle_init(pq_rle *d, const uint8_t *p, const uint8_t *end, int bw);
/* The old BIT_PACKED level encoding over p[0, end). */
void pq_rle_init_msb(pq_rle *d, const uint8_t *p, const uint8_t *end, int bw);
/* Decodes n values into out: 0, or -1 when the data ends first or is bad
 * (d->why). */
int pq_rle_get(pq_rle *d, uint32_t *out, size_t n);
/* The same into 16-bit levels, each checked to be at most max. */
int pq_rle_get_levels(pq_rle *d, int16_t *out, size_t n, int max);

typedef struct pq_dbp {
    const uint8_t *p, *end;
    uint64_t block_size, nmini, per_mini;
    uint64_t left; /* values not yet returned */
    uint64_t last; /* the previous value (wrapping arithmetic) */
    int first;     /* the first value (in the header) not yet returned */
    uint64_t min_delta;
    const uint8_t *widths; /* bit widths of the current block's miniblocks */
    uint64_t mini;         /* current miniblock in the block; nmini = none started */
    uint64_t mini_left;    /* values left in it */
    uint64_t mini_bit;
    const uint8_t *mini_p;
    int bw;
    int width64; /* 0: INT32 values (wrap at 32 bits) */
    const char *why;
} pq_dbp;

/* Starts a decoder over p[0, end): 0, or -1 with d->why. */
int pq_dbp_init(pq_dbp *d, const uint8_t *p, const uint8_t *end, int width64);
/* The next n values: 0, or -1 with d->why. */
int pq_dbp_get(pq_dbp *d, int64_t *out, size_t n);
/* Total values the header announces. */
uint64_t pq_dbp_count(const pq_dbp *d);
/* Where the encoded values end (found without decoding them), or NULL with
 * d->why: the data after a DELTA_LENGTH_BYTE_ARRAY's lengths starts there.
 * d must be freshly initialised; it is left as it was. */
const uint8_t *pq_dbp_end(const pq_dbp *d);

/* Bits needed for values 0..max. */
static inline int pq_bit_width(uint64_t max)
{
    int w = 0;
    while (max) {
        w++;
        max >>= 1;
    }
    return w;
}

#endif
