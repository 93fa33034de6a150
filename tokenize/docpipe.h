/* The document -> token stream loop shared by the text tokenizers
 * (`tokenize bpe`, `tokenize char`), on the ordered-parallel engine of
 * stream/batch.h: documents are read into batches (4096 documents or
 * batch_bytes of text), each batch is encoded in parallel (one document per
 * task), and the records are written in input order, so the output does not
 * depend on the thread count. Buffers of a document much larger than the
 * typical one are released after it is written, and the idle slots together
 * keep at most four batches' worth, so memory follows the batch size and
 * the largest documents in flight, not the largest ever seen. */
#ifndef SLUICE_TOKENIZE_DOCPIPE_H
#define SLUICE_TOKENIZE_DOCPIPE_H

#include "stream/docreader.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/bpe.h"

/* Encodes one document's text; `thread` is the OpenMP thread number
 * (index of the caller's per-thread state). Returns 0 or -1 with err. */
typedef int (*sl_encode_fn)(void *ctx, int thread, const char *text, size_t n, sl_ids *out, sl_err *err);

typedef struct sl_docpipe_opts {
    int64_t prepend;    /* id written before each document's tokens, or -1 */
    int64_t append;     /* id written after, or -1 */
    size_t batch_bytes; /* text bytes per batch (0 = 8 MiB) */
} sl_docpipe_opts;

/* Runs until the reader ends. Errors name the document's source and line. */
int sl_docpipe_run(sl_docreader *r, sl_ts_writer *w, sl_encode_fn fn, void *ctx, const sl_docpipe_opts *o,
                   sl_progress *pg, sl_err *err);

#endif
