/* Parquet files as documents: one document per row, the text from a string
 * column (--field; a dotted path reaches into structs), the id from a
 * column "id" (a string or a number; null or absent: SOURCE:N with N the
 * row's 1-based number in the file), every other column a field of the
 * document's metadata with the value pyarrow's Table.to_pylist() gives,
 * written as json.dumps writes it (stream/pyjson.h; docs/read.md lists the
 * types).
 *
 * The file is read through a positioned-read callback (a file by pread, or
 * a buffer): the footer first, then each row group's column chunks page by
 * page, a batch of rows at a time, so memory is a batch plus one page per
 * column whatever the file's size. Columns of a batch are decoded on OpenMP
 * threads and rows are assembled in parallel; documents come out in the
 * file's order. Errors name the file, the row group, the column and the
 * page. */
#ifndef SLUICE_STREAM_PARQUET_H
#define SLUICE_STREAM_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "stream/docreader.h"
#include "base/err.h"

typedef struct sl_pq_opts {
    const char *field; /* text column; default "text" */
    int invalid_utf8;  /* SL_UTF8_* for strings */
    int skip_bad;      /* rows whose text is null: skipped and counted (else an error) */
    size_t mem_budget; /* batches of rows hold about a quarter of it in text */
    int64_t rg_first;  /* row groups [rg_first, rg_end) only; rg_end 0: all */
    int64_t rg_end;
    uint64_t byte_begin; /* with byte_end > 0: only the row groups whose first byte is in */
    uint64_t byte_end;   /* [byte_begin, byte_end) (--part: the part's share of the file) */
} sl_pq_opts;

/* Reads n bytes at offset off into buf: 0, or -1 with err set. */
typedef int (*sl_pread_fn)(void *ctx, void *buf, size_t n, uint64_t off, sl_err *err);

typedef struct sl_pq sl_pq;

/* 1 when these first bytes are a Parquet file's ("PAR1"). */
int sl_pq_sniff(const void *head, size_t n);
/* Opens the file of `size` bytes read through rd(ctx, ...); name is used in
 * messages and generated ids. */
sl_pq *sl_pq_open(const char *name, sl_pread_fn rd, void *ctx, uint64_t size, const sl_pq_opts *o, sl_err *err);
/* The next row as a document: 1, 0 at the end, -1 error. */
int sl_pq_next(sl_pq *q, sl_textdoc *d, sl_err *err);
/* Invalid UTF-8 sequences repaired, rows skipped (null text, skip_bad). */
uint64_t sl_pq_invalid_utf8(const sl_pq *q);
uint64_t sl_pq_skipped(const sl_pq *q);
/* Row groups and the compressed bytes of row group i (for --part). */
int64_t sl_pq_row_groups(const sl_pq *q);
uint64_t sl_pq_row_group_bytes(const sl_pq *q, int64_t i);
void sl_pq_close(sl_pq *q);

/* pread over a file descriptor (ctx: an int * holding it). */
int sl_pq_pread_fd(void *ctx, void *buf, size_t n, uint64_t off, sl_err *err);
/* pread over memory (ctx: an sl_pq_mem). */
typedef struct sl_pq_mem {
    const uint8_t *data;
    size_t len;
} sl_pq_mem;
int sl_pq_pread_mem(void *ctx, void *buf, size_t n, uint64_t off, sl_err *err);

#endif
