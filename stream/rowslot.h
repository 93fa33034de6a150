/* Documents made from the rows of a columnar file, shared by the Parquet
 * and Arrow IPC readers (parquet.c, arrow_ipc.c). A reader decodes a batch
 * of rows, assembles each row into a slot on OpenMP threads (its text, its
 * id, its other columns as JSON), then hands the slots out in row order.
 * Internal to stream/. */
#ifndef SLUICE_STREAM_ROWSLOT_H
#define SLUICE_STREAM_ROWSLOT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/docreader.h"

typedef struct sl_rowslot {
    sl_textdoc d;
    int status;     /* 0 a document, 1 its text is null (a bad row), -1 fatal */
    int gen_id;     /* its id is FILE:ROW (no id column, or the id is null) */
    size_t invalid; /* invalid UTF-8 sequences repaired in it */
    sl_err err;     /* why, where status != 0 */
    uint64_t row;   /* 1-based row number in the file */
} sl_rowslot;

/* A batch's slots, handed out from next. */
typedef struct sl_rowslots {
    sl_rowslot *v;
    size_t n, next, cap;
} sl_rowslots;

/* Room for n slots, numbered rows first_row, first_row + 1, ...; none
 * handed out yet. */
void sl_rowslots_fill(sl_rowslots *rs, size_t n, uint64_t first_row);

/* Empties slot s for its row (status 0, a string id), keeping its buffers
 * unless one grew large. */
void sl_rowslot_reset(sl_rowslot *s);

/* The row's text t[0..n) into s, invalid UTF-8 as mode (SL_UTF8_*) says:
 * 0, or -1 with s's status and err set (SL_UTF8_ERROR; name: the file). */
int sl_rowslot_text(sl_rowslot *s, const char *name, const char *t, size_t n, int mode);

/* A string id p[0..n) into s (invalid UTF-8 replaced, counted in *invalid). */
void sl_rowslot_string_id(sl_rowslot *s, const char *p, size_t n, size_t *invalid);

/* A string column's value s[0..n) as a JSON string into out, invalid UTF-8
 * as mode says: SL_UTF8_ERROR writes "" and sets *error, the others repair
 * it and count the sequences in *invalid. */
void sl_rowslot_put_string(sl_buf *out, const char *s, size_t n, int mode, int *error, size_t *invalid);

/* The next slot as document d (source name): 1; 0 when none is left; -1
 * with *err where the slot's row failed (a bad row is skipped instead
 * when skip_bad, counted in *skipped). Invalid UTF-8 repaired in the
 * documents handed out is counted in *invalid. */
int sl_rowslots_next(sl_rowslots *rs, sl_textdoc *d, const char *name, int skip_bad, uint64_t *invalid,
                     uint64_t *skipped, sl_err *err);

void sl_rowslots_free(sl_rowslots *rs);

#endif
