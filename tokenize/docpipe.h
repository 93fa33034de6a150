/* Text documents -> token stream with any tokenizer of tokenizer.h (the
 * stage behind `tokenize bpe` and `tokenize char`), on the ordered-parallel
 * engine of stream/batch.h: documents are read into batches (4096 documents
 * or batch_bytes of text), each batch is encoded in parallel (one document
 * per task, each thread with its own tokenizer state), and the records are
 * written in input order, so the output does not depend on the thread
 * count. Buffers of a document much larger than the typical one are
 * released after it is written, and the idle slots together keep at most
 * four batches' worth, so memory follows the batch size and the largest
 * documents in flight, not the largest ever seen. */
#ifndef SLUICE_TOKENIZE_DOCPIPE_H
#define SLUICE_TOKENIZE_DOCPIPE_H

#include "stream/docreader.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Documents whose text holds a special token's text (sl_tokenizer_find_special):
 * how many, and the first one's token, source, line and byte offset. */
typedef struct sl_docpipe_specials {
    uint64_t docs;
    char token[64]; /* cut to fit */
    char source[256];
    uint64_t line; /* 0: not a line of a JSON Lines / --lines input */
    size_t at;
} sl_docpipe_specials;

typedef struct sl_docpipe_opts {
    int64_t prepend;    /* id written before each document's tokens, or -1 */
    int64_t append;     /* id written after, or -1 */
    size_t batch_bytes; /* text bytes per batch (0 = 8 MiB; at most 2 MiB per thread) */
    int threads;        /* encoding threads (0 = omp_get_max_threads()) */
    /* sl_tokenize_text: a progress line (stream/progress.h) named `progress`
     * ("tokenize bpe") in mode progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
    /* out, or NULL (not looked for): documents holding a special token's text */
    sl_docpipe_specials *specials;
} sl_docpipe_opts;
#define SL_DOCPIPE_OPTS_INIT                                                                                           \
    {                                                                                                                  \
        -1, -1, 0, 0, NULL, 0, NULL                                                                                    \
    }

/* Encodes the reader's documents with t and writes them to w, until the
 * reader ends. Errors name the document's source and line. */
int sl_docpipe_run(const sl_tokenizer *t, sl_docreader *r, sl_ts_writer *w, const sl_docpipe_opts *o, sl_progress *pg,
                   sl_err *err);

/* The whole stage: the documents of inputs[0..n_inputs) (none: standard
 * input; read as ro says) become a token stream at output (NULL or "-":
 * standard output) whose header is the tokenizer's (sl_tokenizer_header),
 * with eos = o->append and bos = o->prepend where those are set. On failure
 * nothing is left at output. stats (may be NULL) gets the reader's counts
 * (invalid UTF-8 repaired, lines skipped), also after a failure. */
int sl_tokenize_text(const sl_tokenizer *t, const char *const *inputs, int n_inputs, const sl_docreader_opts *ro,
                     const sl_docpipe_opts *o, const char *output, sl_docreader_stats *stats, sl_err *err);

/* The same on the pieces of files of one part (--part, stream/partition.h;
 * sl_docreader_cut says which files are cut): the parts' outputs in part
 * order read as one stream are the output of sl_tokenize_text on the files. */
int sl_tokenize_slices(const sl_tokenizer *t, const sl_slice *pieces, size_t n, const sl_docreader_opts *ro,
                       const sl_docpipe_opts *o, const char *output, sl_docreader_stats *stats, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
