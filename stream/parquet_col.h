/* One column chunk of a Parquet row group, read page by page into batches
 * of rows (internal to stream/parquet.c). A batch holds, for its rows, the
 * entries' definition and repetition levels and the values of the non-null
 * entries, decoded to their physical form: fixed-width values packed
 * (BOOLEAN as one byte, INT96 as 12), byte arrays concatenated with
 * offsets. */
#ifndef SLUICE_STREAM_PARQUET_COL_H
#define SLUICE_STREAM_PARQUET_COL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/parquet.h"
#include "stream/parquet_enc.h"
#include "stream/parquet_meta.h"

/* What the reader knows of a leaf column. */
typedef struct pq_leafinfo {
    int type, type_length;
    int max_def, max_rep;
    const char *path; /* dotted, for messages */
} pq_leafinfo;

typedef struct pq_colbatch {
    size_t n, cap; /* entries */
    int16_t *def;  /* NULL when max_def == 0 */
    int16_t *rep;  /* NULL when max_rep == 0 */
    size_t nval;   /* values (entries with def == max_def) */
    sl_buf fixed;  /* nval * width bytes (fixed-width types) */
    sl_buf bytes;  /* BYTE_ARRAY: the values end to end */
    size_t *off;   /* BYTE_ARRAY: value i is bytes[off[i], off[i+1]) */
    size_t off_cap;
    size_t nrows;
    size_t *row_e; /* nrows + 1: first entry of each row */
    size_t *row_v; /* nrows + 1: first value of each row */
    size_t rows_cap;
} pq_colbatch;

enum { PQ_LEVELS_BUF = 4096 };

typedef struct pq_col {
    const pq_leafinfo *leaf;
    const char *file; /* for messages */
    int rg;
    int codec;
    sl_pread_fn rd;
    void *rd_ctx;
    uint64_t pos, end;   /* next page header, end of the chunk */
    int64_t values_left; /* entries the chunk still announces */
    int page_no;         /* pages read so far (the current one is page_no - 1) */
    uint64_t page_off;   /* offset of the current page's header */
    size_t max_entries;  /* a batch holding more entries than this is an error */
    sl_buf hdr, raw;     /* page header bytes read, compressed page */
    uint8_t *page;       /* decompressed page (or NULL: raw is used) */
    size_t page_cap;
    void *zctx; /* ZSTD decompression context (pq_decompress), kept as the buffers are */
    /* dictionary */
    int has_dict;
    uint32_t dict_n;
    sl_buf dict_fixed, dict_bytes;
    size_t *dict_off;
    /* the current data page */
    int64_t page_left; /* entries not yet taken */
    pq_rle def_d, rep_d;
    int16_t lv_def[PQ_LEVELS_BUF], lv_rep[PQ_LEVELS_BUF];
    size_t lv_n, lv_i; /* decoded levels not yet taken: [lv_i, lv_n) */
    int enc;
    const uint8_t *vp, *vend; /* the values' bytes; vp advances for PLAIN */
    uint64_t bool_bit;
    pq_rle idx; /* dictionary indices; RLE booleans */
    pq_dbp dbp, dbp2;
    const uint8_t *data; /* DELTA_(LENGTH_)BYTE_ARRAY: next value bytes */
    sl_buf prev;         /* DELTA_BYTE_ARRAY: the previous value */
    uint64_t bss_n, bss_i;
    int64_t *tmp64;
    uint32_t *tmp32;
    int data_seen;
} pq_col;

/* Width in a batch of a fixed-width value (0 for BYTE_ARRAY). */
int pq_value_width(const pq_leafinfo *l);

/* Starts reading chunk c of row group rg; 0 or -1 (err names the file, row
 * group and column). */
int pq_col_open(pq_col *col, const pq_leafinfo *leaf, const pq_chunk *c, int rg, const char *file, uint64_t file_size,
                sl_pread_fn rd, void *ctx, size_t max_entries, sl_err *err);
/* Reads up to nrows rows into b (cleared first); with byte_limit > 0 (flat
 * BYTE_ARRAY columns) stops after the row that brings the value bytes to
 * it. *got: rows read (fewer than nrows only at the chunk's end). */
int pq_col_read(pq_col *col, size_t nrows, size_t byte_limit, pq_colbatch *b, size_t *got, sl_err *err);
/* Frees the chunk's buffers (pq_col_open on a column read before keeps
 * them, emptied, for the next chunk). */
void pq_col_close(pq_col *col);
void pq_colbatch_free(pq_colbatch *b);

#endif
