/* Arrow IPC files ("ARROW1" magic) and streams (a continuation marker
 * 0xFFFFFFFF before each flatbuffer Message) as documents, one per row,
 * with the same options and the same output as Parquet (stream/parquet.h):
 * the text from the --field column (a dotted path reaches into structs), the
 * id from a column "id" (a string or a number; null or absent: SOURCE:N with
 * N the row's 1-based number in the file), every other column a field of the
 * document's metadata with the value pyarrow's Table.to_pylist() gives,
 * written as json.dumps writes it (stream/pyjson.h).
 *
 * A stream's messages are read in the order they were written, a file's in
 * the order its footer lists them (as pyarrow reads a file: the dictionary
 * batches, then the record batches), one record batch at
 * a time (its body whole, its buffers decompressed when the batch says
 * LZ4_FRAME or ZSTD), so memory is the dictionaries plus about one record
 * batch whatever the file's size. Rows of a batch are written on OpenMP
 * threads; documents come out in the file's order. The flatbuffers (Schema,
 * RecordBatch, DictionaryBatch) are decoded by hand, every offset checked.
 * Errors name the file, the record batch (0-based, in the file's order),
 * the column and the byte offset of the message.
 *
 * A Hugging Face `datasets.save_to_disk` folder (state.json naming its
 * data-*.arrow files, which are IPC streams; or a dataset_dict.json naming
 * the splits' folders) is read as its data files in order
 * (sl_arrow_dataset_files). */
#ifndef SLUICE_STREAM_ARROW_IPC_H
#define SLUICE_STREAM_ARROW_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "stream/docreader.h"
#include "base/err.h"
#include "stream/parquet.h"

typedef struct sl_arrow sl_arrow;

enum { SL_ARROW_FILE = 1, SL_ARROW_STREAM = 2 };

/* SL_ARROW_FILE when these first bytes are an Arrow IPC file's ("ARROW1"),
 * SL_ARROW_STREAM when they start an IPC stream (0xFFFFFFFF, a metadata
 * length, and a flatbuffer whose root is a Schema Message), else 0. The
 * stream check needs up to 64 bytes. */
int sl_arrow_sniff(const void *head, size_t n);
/* Opens the file or stream of `size` bytes read through rd(ctx, ...) (the
 * options of parquet.h: field, invalid_utf8, skip_bad, mem_budget, and
 * byte_begin/byte_end: only the record batches whose message starts there);
 * name is used in messages and generated ids. */
sl_arrow *sl_arrow_open(const char *name, sl_pread_fn rd, void *ctx, uint64_t size, const sl_pq_opts *o, sl_err *err);
/* The next row as a document: 1, 0 at the end, -1 error. */
int sl_arrow_next(sl_arrow *a, sl_textdoc *d, sl_err *err);
uint64_t sl_arrow_invalid_utf8(const sl_arrow *a);
uint64_t sl_arrow_skipped(const sl_arrow *a);
void sl_arrow_close(sl_arrow *a);

/* What the Arrow schema pyarrow stores in a Parquet file (its ARROW:schema
 * metadata, base64 of an IPC schema message) says of a column beyond its
 * Parquet type, in the schema's shape (a struct's fields, a list's element,
 * a map's entries struct), for the Parquet reader (parquet.c). */
typedef struct sl_arrow_hint {
    int bool8; /* the arrow.bool8 extension (Parquet INT(8)): booleans, nonzero true */
    int tz;    /* a Timestamp with a time zone */
    int tzoff; /* its fixed offset in minutes east; 0 for UTC and for a named zone (written in UTC) */
    int nkids;
    struct sl_arrow_hint *kids;
} sl_arrow_hint;
/* The hints of the top-level fields (*n_fields) of the schema message
 * msg[0..n), or NULL where it is not a schema message this reader can read
 * (then the Parquet types stand alone). */
sl_arrow_hint *sl_arrow_schema_hints(const void *msg, size_t n, int *n_fields);
void sl_arrow_hints_free(sl_arrow_hint *h, int n);

/* The data files of a `datasets.save_to_disk` folder: state.json's
 * "_data_files" in order, or for a DatasetDict (dataset_dict.json) those of
 * each split's folder in the order of its "splits". 1 with *files (malloc'd,
 * sl_list_free) and *n set; 0 when dir is no such folder; -1 with err set
 * when it is one but cannot be read. */
int sl_arrow_dataset_files(const char *dir, char ***files, size_t *n, sl_err *err);

#endif
