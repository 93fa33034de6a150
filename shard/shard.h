/* Shard directories: writer and reader. Layout and manifest schema:
 * docs/shards.md section 4. */
#ifndef SLUICE_SHARD_SHARD_H
#define SLUICE_SHARD_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shard/pack.h"
#include "base/buf.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h): reading a shard directory ---------------------- */

/* The splits of a shard directory, and their names ("train", "val"). */
enum { SL_SPLIT_TRAIN = 0, SL_SPLIT_VAL = 1, SL_SPLIT_N = 2 };
extern const char *const sl_shard_split_names[SL_SPLIT_N];

/* What the manifest says about the tokens (copied from the stream header). */
typedef struct sl_shard_info {
    uint32_t seq_len;
    int dtype_bytes; /* 2 or 4 */
    uint32_t vocab_size;
    int modality;
    char fingerprint[72];
    char tokenizer[256];
    int64_t eos, bos, pad; /* SL_NO_TOKEN when none */
    int layout;            /* SL_LAYOUT_* */
    uint32_t batch;        /* recurrent layout */
    char *warmup;          /* SPEC or NULL */
    int shuffle;
    uint64_t seed, shuffle_window;
    double val_fraction;
    /* memory-token slots of the recurrent layout (manifest "memory", absent
     * when mem_tokens is 0): positions [0, K) and, with mem_write,
     * [seq_len - K, seq_len) of every row hold mem_id */
    uint32_t mem_tokens;
    int64_t mem_id;
    int mem_write;
    /* sequential layout packed with no_split (manifest "no_split", written
     * only then; directories of older versions never have it): long_mode is
     * SL_LONG_* */
    int no_split, long_mode;
} sl_shard_info;

/* One token file of a split and its boundary index. */
typedef struct sl_shard_file {
    char *tokens, *bounds; /* file names inside the directory */
    uint64_t rows, pieces, first_row;
    char tokens_xxh64[17], bounds_xxh64[17];
} sl_shard_file;

/* What the manifest says about a split. */
typedef struct sl_shard_split {
    int present;
    uint64_t rows, tokens, pad_tokens, pieces;
    uint64_t mem_tokens; /* memory positions (manifest "memory_tokens"; not in pad_tokens) */
    size_t n_files;
    sl_shard_file *files;
} sl_shard_split;

/* A line of documents.jsonl: the document `ordinal` (the piece's doc in a
 * row), its split and whether packing cut it (long_status: SL_DOC_*). */
typedef struct sl_shard_docref {
    uint64_t ordinal;
    uint32_t id_off, id_len;
    uint8_t split, long_status;
    uint8_t has_meta;  /* the line has a "meta" object */
    uint64_t line_off; /* where the line starts in documents.jsonl */
} sl_shard_docref;

/* An open shard directory (its fields are internal: shard/shard_internal.h). */
typedef struct sl_shard sl_shard;

/* Opens the shard directory dir (written by sl_shard_run or `sluice shard`)
 * and checks manifest, documents.jsonl (and documents.idx when the manifest
 * names it: every entry against the lines) and file sizes; with verify != 0
 * also the XXH64 of every file. Returns NULL with err set naming the file
 * that is missing, malformed or corrupted. documents.jsonl stays
 * memory-mapped until sl_shard_close. */
sl_shard *sl_shard_open(const char *dir, int verify, sl_err *err);
/* Closes the directory; every pointer it gave becomes invalid. NULL is a
 * no-op. */
void sl_shard_close(sl_shard *s);

/* What the directory holds; the pointers stay valid until sl_shard_close. */
const sl_shard_info *sl_shard_get_info(const sl_shard *s);
/* SL_SPLIT_TRAIN or SL_SPLIT_VAL; `present` is 0 when the split is empty. */
const sl_shard_split *sl_shard_get_split(const sl_shard *s, int split);
/* The number of lines of documents.jsonl (documents, in ordinal order). */
size_t sl_shard_n_docs(const sl_shard *s);
/* Document i (< sl_shard_n_docs), with its id (d->id_len bytes, not
 * NUL-terminated) in *id when id is not NULL. */
const sl_shard_docref *sl_shard_doc(const sl_shard *s, size_t i, const char **id);
/* The id of document `ordinal` (*len bytes, not NUL-terminated), or NULL
 * when it is not in documents.jsonl. */
const char *sl_shard_doc_id(const sl_shard *s, uint64_t ordinal, size_t *len);

/* Row iterator over a split (file after file). */
typedef struct sl_shard_iter sl_shard_iter;
/* Starts at the first row of split (SL_SPLIT_TRAIN or SL_SPLIT_VAL). Returns
 * NULL with err set when the split is not present (sl_shard_get_split) or a
 * token file cannot be opened. Close it before the sl_shard. */
sl_shard_iter *sl_shard_iter_open(const sl_shard *s, int split, sl_err *err);
/* The next row: 1 = *row filled (seq_len tokens, its pieces with their
 * document ordinals and ids; valid until the next call), 0 = end of the
 * split, -1 = error in err naming the file and record (a piece unsorted,
 * overlapping, outside the row or of a document not in documents.jsonl). */
int sl_shard_iter_next(sl_shard_iter *it, sl_row *row, sl_err *err);
/* Frees the iterator. NULL is a no-op. */
void sl_shard_iter_close(sl_shard_iter *it);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */
#include "shard/warmup.h"

#define SL_SHARD_FORMAT "sluice-shards"
#define SL_SHARD_VERSION 1
#define SL_BOUNDS_RECORD 32 /* bytes per piece in a .bounds file */

/* --- writer ---------------------------------------------------------------- */
typedef struct sl_shard_writer sl_shard_writer;

/* Creates DIR.tmp.<pid>/. Fails if DIR exists (unless force). info->warmup is
 * parsed here (an error names the SPEC). max_file_bytes 0 = one file per split. */
sl_shard_writer *sl_shard_writer_open(const char *dir, const sl_shard_info *info, uint64_t max_file_bytes, int force,
                                      sl_err *err);
/* A line of documents.jsonl (and its documents.idx entry); long_status is
 * SL_DOC_* (TRUNCATED / DROPPED noted). Ordinals must increase; an ordinal
 * skipped gets a line with an empty id and "long":"dropped", so line k is
 * always document k. meta: the document's metadata as a one-line JSON object
 * (sl_meta_select writes one), or NULL / meta_len 0 for none. */
int sl_shard_writer_doc(sl_shard_writer *w, uint64_t ordinal, const char *id, size_t id_len, int split, int long_status,
                        sl_err *err);
int sl_shard_writer_doc_meta(sl_shard_writer *w, uint64_t ordinal, const char *id, size_t id_len, int split,
                             int long_status, const char *meta, size_t meta_len, sl_err *err);
/* One packed row of `split` (goes through the shuffle window when enabled). */
int sl_shard_writer_row(sl_shard_writer *w, int split, const sl_row *row, sl_err *err);
/* Flushes, writes manifest.json, renames the directory into place; frees w. */
int sl_shard_writer_finish(sl_shard_writer *w, sl_err *err);
/* Removes the temporary directory; frees w. NULL is a no-op. */
void sl_shard_writer_abort(sl_shard_writer *w);

/* As sl_shard_open, with the same checks, but the document table is not
 * kept: each line of documents.jsonl is handed to fn in order as it is
 * checked (id: d->id_len bytes, valid during the call; d->id_off is 0), and
 * memory does not grow with the number of documents. A non-zero return from
 * fn (with err set) fails the open. Of the document accessors below only
 * sl_shard_n_docs may be used on the result, and its row iterator does not
 * check that a piece's document is in documents.jsonl (the caller does,
 * naming the piece's bounds file and record: sl_shard_iter_pos); its
 * pieces have no id (NULL). */
typedef int (*sl_shard_doc_fn)(void *ctx, const sl_shard_docref *d, const char *id, sl_err *err);
sl_shard *sl_shard_open_docs(const char *dir, int verify, sl_shard_doc_fn fn, void *ctx, sl_err *err);
/* 1 when path is a shard directory (a directory with a manifest.json), as
 * opposed to a token stream or a directory of part files. */
int sl_shard_has_manifest(const char *path);

const char *sl_shard_dir(const sl_shard *s);
/* The resolved warmup stages of the train split (one stage without warmup). */
const sl_warmup *sl_shard_get_warmup(const sl_shard *s);
/* The position i of document `ordinal` in documents.jsonl, or SIZE_MAX. */
size_t sl_shard_doc_find(const sl_shard *s, uint64_t ordinal);
/* Appends the metadata object of document i (compact JSON) to out; appends
 * nothing when the document has none. */
int sl_shard_doc_meta(const sl_shard *s, size_t i, sl_buf *out, sl_err *err);

/* After a row of n pieces: the file it came from (index in its split's
 * files) and the bounds record after its last piece (piece i is record
 * next_record - n + i). */
void sl_shard_iter_pos(const sl_shard_iter *it, size_t *file, uint64_t *next_record);
/* For a directory opened by sl_shard_open_docs: fn(ctx, doc, file, record)
 * says whether the document of piece `record` of file `file` (index in the
 * split's files) is in documents.jsonl; where it says no (0), the iterator
 * fails there as that of sl_shard_open does ("record R: document D is not in
 * documents.jsonl"), after the checks of the piece itself. */
typedef int (*sl_shard_has_doc_fn)(void *ctx, uint64_t doc, size_t file, uint64_t record);
void sl_shard_iter_check_docs(sl_shard_iter *it, sl_shard_has_doc_fn fn, void *ctx);

/* The split of a document: SL_SPLIT_VAL when XXH64(id, seed 0) / 2^64 < fraction. */
int sl_split_of(const char *id, size_t len, double fraction);

/* XXH64 (seed 0) of a whole file as 16 hex digits. */
int sl_file_xxh64(const char *path, char hex[17], sl_err *err);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
