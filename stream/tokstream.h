/* The token stream: the binary format between token stages.
 * Specification: docs/formats.md ("Token stream"). This header is the only
 * way modules read or write it.
 *
 * Writer use:
 *   sl_ts_header h; sl_ts_header_init(&h, SL_MOD_TEXT, vocab_size);
 *   h.eos = 0; snprintf(h.fingerprint, sizeof h.fingerprint, "sha256:...");
 *   sl_output *out = sl_output_open("out.tok", &err);       // "-": stdout
 *   sl_ts_writer *w = sl_ts_writer_open(out, &h, &err);
 *   sl_ts_write_doc(w, &doc, &err) ...;
 *   sl_ts_writer_finish(w, &err);     // writes the trailer
 *   sl_output_commit(out, &err);      // renames the temporary into place
 *
 * Reader use:
 *   sl_input *in = sl_input_open("file.tok", &err);          // "-": stdin
 *   sl_ts_reader *r = sl_ts_reader_open(in, &err);
 *   const sl_ts_header *h = sl_ts_reader_header(r);
 *   sl_doc d = {0};
 *   while ((rc = sl_ts_read_doc(r, &d, &err)) == 1) { ... }
 *   rc == 0: clean end (trailer present, counts and checksum verified)
 *   rc < 0: error (truncated, corrupt, checksum mismatch) in err.
 *
 * Concatenation: streams written one after another (`cat a.tok b.tok`) read
 * as one stream when their headers are equal (sl_ts_header_diff), as
 * concatenated gzip members do; each stream's trailer is verified. A
 * different header is an error naming the first difference.
 * Several inputs: sl_ts_reader_open_paths reads files in the order given (a
 * directory stands for its part files in part order, stream/parts.h) as one
 * stream, under the same rule.
 */
#ifndef SLUICE_STREAM_TOKSTREAM_H
#define SLUICE_STREAM_TOKSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

#define SL_TS_NO_ID (-1) /* "no such special token" */

typedef enum {
    SL_MOD_UNKNOWN = 0,
    SL_MOD_TEXT = 1,
    SL_MOD_DNA = 2,
    SL_MOD_AUDIO = 3,
    SL_MOD_IDS = 4, /* pre-tokenized ids of unknown origin */
} sl_modality;

/* What a stream says about its tokens: written first, read back by every
 * reader. Fill one with sl_ts_header_init (or sl_tokenizer_header), set the
 * fields you know, and free it with sl_ts_header_free. */
typedef struct sl_ts_header {
    uint32_t version;
    uint8_t width;       /* bytes per token: 1, 2 or 4 (derived from vocab_size) */
    uint8_t modality;    /* sl_modality */
    uint32_t vocab_size; /* every id is < vocab_size */
    /* Special ids, SL_TS_NO_ID when absent. */
    int64_t eos, bos, pad, unk;
    /* The id every document already ends with (the producer appended it:
     * `tokenize --append-eos`), SL_TS_NO_ID when documents carry no end
     * marker or it is not known (streams of earlier versions). Stages that
     * end documents with EOS (pack, shard, export megatron) append one only
     * to a document that does not already end in it. Header JSON "doc_eos". */
    int64_t doc_eos;
    char fingerprint[72]; /* "sha256:<hex>" of the tokenizer definition, or "" */
    char tokenizer[256];  /* human-readable tokenizer name/path, or "" */
    /* Extra header fields as a JSON object text (e.g. {"sample_rate":16000});
     * owned by the header, "" or NULL when none. */
    char *extra_json;
} sl_ts_header;

/* A document record. Tokens are always held as uint32 in memory. A zeroed
 * sl_doc ({0}) is empty; the calls below grow its arrays (they never fail)
 * and sl_doc_free releases them. */
typedef struct sl_doc {
    char *id;
    size_t id_len;
    uint64_t src_bytes; /* bytes of source text/data the tokens came from (0 = unknown) */
    uint32_t *tokens;
    size_t n_tokens, cap_tokens;
    char *meta; /* JSON object text, NUL-terminated, or NULL/"" for none */
    size_t meta_len, cap_meta;
    size_t cap_id;
} sl_doc;

/* Sets every field of h: version and width for vocab_size (every id of the
 * stream must be below it), the modality (sl_modality), no special ids
 * (SL_TS_NO_ID), no fingerprint, tokenizer name or extra fields. */
void sl_ts_header_init(sl_ts_header *h, int modality, uint32_t vocab_size);
/* Frees what h owns (extra_json), not h itself. */
void sl_ts_header_free(sl_ts_header *h);

/* Copies id[0..n) (any bytes but NUL) as the document's id. */
void sl_doc_set_id(sl_doc *d, const char *id, size_t n);
/* Appends one token to the document. */
void sl_doc_push(sl_doc *d, uint32_t tok);
/* Empties the document (id, tokens, metadata, src_bytes), keeping its memory. */
void sl_doc_clear(sl_doc *d);
/* Frees the document's arrays (not d itself) and zeroes it. */
void sl_doc_free(sl_doc *d);

typedef struct sl_ts_writer sl_ts_writer;
typedef struct sl_ts_reader sl_ts_reader;

/* Starts a stream on out (sl_output_open) by writing the header h (copied).
 * Returns NULL with err set when h is invalid (vocab_size 0) or the write
 * fails. The writer does not own out. */
sl_ts_writer *sl_ts_writer_open(sl_output *out, const sl_ts_header *h, sl_err *err);
/* Appends document d. Fails (-1, err naming the document and position) if a
 * token id is not below the header's vocab_size, or on a write error. */
int sl_ts_write_doc(sl_ts_writer *w, const sl_doc *d, sl_err *err);
/* Writes the trailer (document count and checksum) and frees the writer.
 * The sl_output stays open: the caller then commits it (sl_output_commit)
 * or, on -1, aborts it. */
int sl_ts_writer_finish(sl_ts_writer *w, sl_err *err);
/* Frees the writer without a trailer (the caller aborts the output). NULL is
 * a no-op. */
void sl_ts_writer_abort(sl_ts_writer *w);

/* Reads and validates the header of the stream on in (sl_input_open). The
 * reader does not own in: close the reader, then the input. Returns NULL
 * with err set ("<name>:<offset>: ...") when the bytes are not a token
 * stream or the header is corrupt. */
sl_ts_reader *sl_ts_reader_open(sl_input *in, sl_err *err);
/* Opens the n paths (none = standard input) as one stream: files in order,
 * a directory as its part files (part-00000.tok, ...). Their headers must be
 * equal (the error names the first difference). The reader opens and closes
 * the inputs itself. */
sl_ts_reader *sl_ts_reader_open_paths(char *const *paths, size_t n, sl_err *err);
/* The header (of the first stream); valid until sl_ts_reader_close. */
const sl_ts_header *sl_ts_reader_header(const sl_ts_reader *r);
/* Reads the next document into d (its previous contents are replaced).
 * 1 = a document was read, 0 = clean end of stream (trailer present, counts
 * and checksum verified), -1 = error in err (truncated, corrupt, checksum
 * mismatch, a token not below vocab_size), naming the input and offset. */
int sl_ts_read_doc(sl_ts_reader *r, sl_doc *d, sl_err *err);
/* Frees the reader (and the inputs it opened itself). NULL is a no-op. */
void sl_ts_reader_close(sl_ts_reader *r);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

#define SL_TS_MAGIC "SLUICETS" /* 8 bytes, no NUL */
#define SL_TS_VERSION 1
#define SL_TS_MAX_ID_LEN (1u << 16)
#define SL_TS_MAX_META_LEN (1u << 26)
#define SL_TS_MAX_HEADER_JSON (1u << 24)

const char *sl_modality_name(int m);
int sl_modality_parse(const char *s); /* -1 when unknown */

void sl_ts_header_copy(sl_ts_header *dst, const sl_ts_header *src);
uint8_t sl_ts_width_for_vocab(uint64_t vocab_size);
void sl_ts_header_set_extra(sl_ts_header *h, const char *json);

void sl_doc_set_meta(sl_doc *d, const char *json, size_t n);
void sl_doc_reserve(sl_doc *d, size_t n_tokens);

/* Writes a document whose n tokens are already in the stream's width
 * (sl_ts_writer_width bytes each, little-endian): a fast path for encoders
 * that produce narrow ids directly. d gives the id, metadata and src_bytes
 * (its tokens are ignored). The caller guarantees every id <= max_token; the
 * call fails when max_token is not below the vocab size (the ids are not
 * scanned). */
int sl_ts_write_doc_raw(sl_ts_writer *w, const sl_doc *d, const void *tokens, size_t n, uint32_t max_token,
                        sl_err *err);
/* A document too long to hold, written in pieces: sl_ts_write_doc_begin
 * writes the record's head for n tokens (d gives the id, metadata and
 * src_bytes; the caller guarantees every id <= max_token, checked as in
 * sl_ts_write_doc_raw), then sl_ts_write_doc_part appends tokens in the
 * stream's width until exactly n are written. The format is unchanged (the
 * count comes first, so the caller must know it up front). Writing another
 * document, or finishing the stream, before the record is complete is an
 * error; so are more tokens than n. */
int sl_ts_write_doc_begin(sl_ts_writer *w, const sl_doc *d, uint64_t n, uint32_t max_token, sl_err *err);
int sl_ts_write_doc_part(sl_ts_writer *w, const void *tokens, size_t n, sl_err *err);
uint8_t sl_ts_writer_width(const sl_ts_writer *w);
uint64_t sl_ts_writer_count(const sl_ts_writer *w);

/* The input being read now (its name and position, for progress). */
const sl_input *sl_ts_reader_input(const sl_ts_reader *r);
/* How many inputs the reader goes through (1 for sl_ts_reader_open). */
size_t sl_ts_reader_n_inputs(const sl_ts_reader *r);
/* How many streams (concatenated or in separate inputs) were begun so far. */
uint64_t sl_ts_reader_streams(const sl_ts_reader *r);
/* 0 when streams with headers a and b read as one; else 1 and a description
 * of the first difference in what ("vocab size 256 vs 512"). */
int sl_ts_header_diff(const sl_ts_header *a, const sl_ts_header *b, char *what, size_t n);
uint64_t sl_ts_reader_count(const sl_ts_reader *r); /* documents read, all streams */

/* True when the first bytes look like a token stream. */
int sl_ts_sniff(const void *p, size_t n);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
