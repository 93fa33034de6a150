/* Text documents from sources: JSON Lines objects or plain text.
 * Each source is JSON Lines when its first non-whitespace byte is '{'
 * (auto), plain text otherwise: one document per file, or per line with
 * `lines`. This is what `sluice read` prints and what `sluice tokenize bpe`
 * and `sluice tokenize char` consume. */
#ifndef SLUICE_STREAM_DOCREADER_H
#define SLUICE_STREAM_DOCREADER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/utf8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

/* The default of sl_docreader_opts.mem_budget. */
#define SL_DOCS_DEFAULT_MEM_BUDGET ((size_t)64 << 20)

enum { SL_DOCS_AUTO = 0, SL_DOCS_JSONL = 1, SL_DOCS_TEXT = 2 };

/* How documents are read. A zeroed struct ({0}) gives every default. */
typedef struct sl_docreader_opts {
    const char *field;    /* text field name in JSON objects (a.b: nested); default "text" */
    int lines;            /* plain text: one document per line */
    int invalid_utf8;     /* SL_UTF8_REPLACE (default), SL_UTF8_SKIP, SL_UTF8_ERROR */
    int skip_bad_json;    /* 1: report malformed JSON lines and skip; 0: fatal */
    size_t max_doc_bytes; /* 0 = default 64 MiB */
    int quiet;            /* no skipped-line warnings (base/log.h) */
    int format;           /* SL_DOCS_AUTO (default), SL_DOCS_JSONL or SL_DOCS_TEXT: force the kind of every source */
    size_t mem_budget;    /* 0 = default 64 MiB: JSON Lines are parsed in batches of a quarter of it, at most 2 MiB per
                             thread */
} sl_docreader_opts;

/* One document. The reader fills the buffers (growing them as needed); the
 * caller owns the struct and frees its buffers with sl_textdoc_free. */
typedef struct sl_textdoc {
    sl_buf id;          /* kept from the "id" field (as text: a JSON number keeps its source text), or "<source>:<n>" */
    sl_buf text;        /* valid UTF-8 */
    sl_buf meta;        /* the other fields as a JSON object text, "{}" when none; "id" and the text field excluded */
    int id_is_string;   /* 1 when id came from a JSON string or was generated */
    const char *source; /* name of the source (valid until next call) */
    uint64_t line;      /* 1-based line number in the source (JSON Lines / --lines), 0 otherwise */
} sl_textdoc;

typedef struct sl_docreader sl_docreader;

/* Opens the n sources paths[0..n) to be read in order as one sequence of
 * documents (n = 0: standard input). A source is a file ("-" = standard
 * input), compressed or not, an archive (tar, zip, ...) whose members are
 * read in order, a Parquet or Arrow file, a dataset folder, or any other
 * folder (its files, as pyarrow.dataset lists them; docs/read.md); text is
 * JSON Lines (one object per line, its text in o->field, a dotted path
 * reaching into nested objects) when its first non-blank byte is '{', a
 * JSON array of such objects when it is '[' before '{', else plain text
 * (one document per file, or per line with o->lines). o may be
 * NULL (defaults); it is copied. Returns NULL with err set when a path
 * cannot be opened (nothing is read before every path is checked). The
 * caller closes the reader with sl_docreader_close. */
sl_docreader *sl_docreader_open(const char *const *paths, size_t n, const sl_docreader_opts *o, sl_err *err);
/* Reads the next document into doc (its previous contents are replaced).
 * Returns 1 when doc was filled, 0 at the end of the last source, -1 with
 * err set ("<source>:<line>: ...": malformed JSON, ill-formed UTF-8 under
 * SL_UTF8_ERROR, a document over max_doc_bytes, a read error). */
int sl_docreader_next(sl_docreader *r, sl_textdoc *doc, sl_err *err);
/* Closes every source and frees r. NULL is a no-op. */
void sl_docreader_close(sl_docreader *r);
/* Frees the buffers of d (not d itself); d may be read into again. */
void sl_textdoc_free(sl_textdoc *d);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */
#include "stream/partition.h"

/* The most text a batch of documents holds: want, but no more than 2 MiB
 * per thread (threads <= 0: omp_get_max_threads()). A larger batch is no
 * faster, and its fresh pages cost page faults and cache misses (16 MiB
 * at the default budget was a fifth of the CPU time of a one-thread
 * Unigram tokenize, in the kernel). The reader's JSON Lines batches,
 * `read`'s formatting and the tokenizers' document pipeline all use it. */
size_t sl_docs_batch_cap(size_t want, int threads);

/* How a stage divides its memory budget (--mem-budget) among its batches;
 * every reader and stage takes its share from here (before the per-thread
 * cap of sl_docs_batch_cap). */
typedef struct sl_mem_split {
    size_t budget;     /* the budget; 0 given: SL_DOCS_DEFAULT_MEM_BUDGET */
    size_t read_batch; /* a quarter: the text of one batch of documents as read (the JSON Lines, Parquet and Arrow
                          readers; `read`'s formatting and `dedup`'s batches) */
    size_t work_batch; /* an eighth: the text of one batch of an encoding pipeline (tokenize's docpipe, classify),
                          which keeps up to four batches in flight */
} sl_mem_split;
sl_mem_split sl_mem_budget_split(size_t budget);

/* The kind tags of a Parquet file's and an Arrow IPC file's pieces
 * (sl_docreader_cut; not a --format). */
enum { SL_DOCS_PARQUET = 3, SL_DOCS_ARROW = 4 };

typedef struct sl_docreader_stats {
    uint64_t docs, bytes, invalid_utf8, skipped_lines;
} sl_docreader_stats;

/* The documents of the pieces of a part (stream/partition.h, --part): ids,
 * line numbers and formats as in a reading of the whole files. */
sl_docreader *sl_docreader_open_slices(const sl_slice *pieces, size_t n, const sl_docreader_opts *o, sl_err *err);
/* How a file may be cut into parts: an sl_cut_fn whose ctx is the
 * sl_docreader_opts the pieces will be read with. */
int sl_docreader_cut(void *ctx, const char *path, int *kind, sl_err *err);
const sl_docreader_stats *sl_docreader_stats_get(const sl_docreader *r);
/* Progress position of the reading (sl_progress_pos_fn; reader is an
 * sl_docreader): input bytes read and their total, when the inputs are files. */
int sl_docreader_position(void *reader, double *done, double *total);
/* Counts one document done in the progress line pg, with the input bytes r
 * has read since *seen (then set to what it has read). */
struct sl_progress;
void sl_docreader_progress(const sl_docreader *r, struct sl_progress *pg, uint64_t *seen);
/* Exchanges the id, text and metadata buffers of a and b (a batch slot hands
 * its document over without copying; the caller sets the other fields). */
void sl_textdoc_swap(sl_textdoc *a, sl_textdoc *b);
/* One JSON Lines line read as the reader reads it (source "line", line 1):
 * d's buffers filled, *gen_id 1 when the id is to be generated, *invalid
 * the repaired sequences; -1 with err for a bad line. dom 1: only through
 * the parsed tree, its strings decoded run by run (SL_JSTR_CAREFUL) (the reference of the one-pass reading; for the
 * tests and the fuzz target). */
int sl_docreader_json_line(const sl_docreader_opts *o, const char *line, size_t n, int dom, sl_textdoc *d, int *gen_id,
                           size_t *invalid, sl_err *err);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
