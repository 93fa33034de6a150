/* The `read` stage as a library call: the documents of a document reader
 * (stream/docreader.h) written as JSON Lines, {"id":...,"text":...,<the
 * other fields>}, formatted on the ordered-parallel batcher
 * (stream/batch.h) and written in order, in memory bounded by the reader's
 * mem_budget plus a few times the longest document. */
#ifndef SLUICE_STREAM_READ_H
#define SLUICE_STREAM_READ_H

#include "stream/docreader.h"
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends d's output line, {"id":...,"text":...,<the other fields>}\n, to b. */
void sl_read_put_doc(sl_buf *b, const sl_textdoc *d);
/* Appends d's id as JSON to b: a string id quoted, another as its source
 * text (a number), null where there is none. */
void sl_read_put_id(sl_buf *b, const sl_textdoc *d);

/* Writes every document of r to out (not committed: the caller commits or
 * aborts out; the documents before a read error are written, as a stream
 * consumer on standard output has seen them). o are the options r was
 * opened with: with a field other than "text", an input field named "text"
 * would clash with the output's and is dropped from the metadata (one
 * warning to the log callback, base/log.h, unless o->quiet). progress:
 * sl_progress mode. */

int sl_read_run(sl_docreader *r, const sl_docreader_opts *o, sl_output *out, int progress, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
