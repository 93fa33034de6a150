/* From sequences to token-stream records, in batches.
 *
 * The caller hands over one sequence at a time (with its id and metadata
 * fields); the emitter queues them in batches, tokenizes a batch (OpenMP, one
 * document per task, when there are threads to spare) and writes the records
 * in the order they were handed over, so the output does not depend on the
 * thread count. With 2+ threads a worker thread tokenizes and writes one
 * batch while the caller reads the next (so at most two batches are in
 * memory). Reverse complements are
 * applied here: as extra documents (revcomp_extra) or, with probability
 * rc_prob, instead of the forward strand, decided per document from the seed
 * and the document's ordinal. */
#ifndef SLUICE_DNA_EMIT_H
#define SLUICE_DNA_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "dna/nuctok.h"
#include "base/buf.h"
#include "base/err.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dna_emit_opts {
    dna_tok_opts tok;
    int revcomp_extra; /* also emit the reverse complement of every document */
    double rc_prob;    /* replace a document by its reverse complement with this probability */
    uint64_t seed;
} dna_emit_opts;

typedef struct dna_emitter dna_emitter;

/* Fills a header for the tokenizer options (modality dna, vocabulary in extra). */
void dna_emit_header(const dna_tok_opts *o, sl_ts_header *h);

dna_emitter *dna_emitter_new(const dna_emit_opts *o, sl_ts_writer *w, sl_progress *pg);
/* Queues a document. seq's content is taken over (seq is left empty).
 * meta_fields: JSON members without braces ("\"chrom\":\"chr1\",\"start\":0")
 * or NULL. src_bytes: bytes of input behind the sequence (for progress and
 * the record). */
int dna_emit(dna_emitter *e, const char *id, sl_buf *seq, const char *meta_fields, uint64_t src_bytes, sl_err *err);
/* A sequence too long to hold: its len bases are bytes [0, len) of the file
 * `fd` (a spool the caller wrote). Writes what is queued, then the
 * sequence's record(s), exactly as dna_emit would (same ids, metadata,
 * reverse complements, tokens), tokenizing it in pieces twice: once to count
 * the tokens (a record's count comes before its tokens) and collect the
 * soft-mask runs, once to write them. Memory: a few pieces of 4 MiB bases,
 * whatever len is. */
int dna_emit_spooled(dna_emitter *e, const char *id, int fd, uint64_t len, const char *meta_fields, uint64_t src_bytes,
                     sl_err *err);
/* Writes what is queued (and waits until it is written). dna_emit and
 * dna_emit_flush report a failed write of an earlier batch. */
int dna_emit_flush(dna_emitter *e, sl_err *err);
uint64_t dna_emitter_docs(const dna_emitter *e);
void dna_emitter_free(dna_emitter *e);

#ifdef __cplusplus
}
#endif

#endif
