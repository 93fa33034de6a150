/* What the two columnar fuzz targets (fuzz_parquet.c, fuzz_arrow_ipc.c)
 * share: the reader's options from the input's first byte, and the checks
 * every document and error must pass. */
#ifndef SLUICE_TESTS_FUZZ_COLUMNAR_H
#define SLUICE_TESTS_FUZZ_COLUMNAR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "stream/parquet.h"

/* The text field (top-level or in a struct), the invalid UTF-8 mode,
 * skipping bad rows, and a part's share (the row groups or record batches
 * that start in the first half of the file, len bytes). */
static inline sl_pq_opts columnar_opts(uint8_t flags, size_t len)
{
    sl_pq_opts o = {
        .field = flags & 1   ? "doc.body"
                 : flags & 2 ? "content"
                             : "text",
        .invalid_utf8 = ((flags >> 2) & 3) % 3,
        .skip_bad = (flags >> 4) & 1,
        .mem_budget = (size_t)1 << 20,
    };
    if (flags & 0x20) {
        o.byte_begin = 0;
        o.byte_end = len / 2 + 1;
    }
    return o;
}

/* A document: valid UTF-8 text, an id, a meta object. */
static inline void columnar_check_doc(const sl_textdoc *d)
{
    if (sl_utf8_check(d->text.data ? d->text.data : "", d->text.len) != d->text.len)
        abort();
    if (!d->id.data || !d->meta.data || d->meta.data[0] != '{')
        abort();
}

/* An error: one line. */
static inline void columnar_check_err(const sl_err *err)
{
    if (strchr(err->msg, '\n'))
        abort();
}

#endif
