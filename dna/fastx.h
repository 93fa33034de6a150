/* Streaming FASTA / FASTQ parser.
 *
 * Reads records from any byte source in bounded memory: the caller gets the
 * record's name and description, then pulls the sequence in pieces of any
 * size (dna_fx_read) or whole (dna_fx_read_all). Line breaks (LF or CRLF),
 * spaces and tabs inside sequence lines are removed; blank lines are skipped;
 * a missing final newline, empty records and empty names are accepted.
 * Names follow the samtools rule: leading blanks after '>' are skipped, the
 * name is the first blank-delimited word, the rest (after the blanks) is the
 * description.
 *
 * FASTQ records may span several sequence and quality lines; quality lines may
 * begin with '@', '+' or '>' because the parser counts quality characters
 * until they equal the sequence length and never resynchronises on them.
 *
 * The format (FASTA or FASTQ) is chosen by the first non-blank byte: '>' or
 * '@'; anything else is an error ("no FASTA/FASTQ header").
 *
 * While reading FASTA the parser also measures what `samtools faidx` stores
 * (sequence offset, bases per line, bytes per line) so an index can be built
 * in the same pass (dna/faidx.h). */
#ifndef SLUICE_DNA_FASTX_H
#define SLUICE_DNA_FASTX_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum { DNA_FMT_UNKNOWN = 0, DNA_FMT_FASTA = 1, DNA_FMT_FASTQ = 2 };

/* A byte source: returns bytes read, 0 at end, -1 on error (err set). */
typedef long (*dna_read_fn)(void *ctx, void *buf, size_t n, sl_err *err);

typedef struct dna_fx dna_fx;

/* Longest header line accepted (a guard against binary input). */
#define DNA_FX_MAX_HEADER (1u << 20)

/* `name` is used in error messages ("name:line: what"); it is copied. */
dna_fx *dna_fx_open(dna_read_fn fn, void *ctx, const char *name);
/* A parser over a memory buffer (not copied). */
dna_fx *dna_fx_open_mem(const void *data, size_t len, const char *name);
void dna_fx_close(dna_fx *r);

/* Advances to the next record (skipping what is left of the current one).
 * 1: a record header was read, 0: end of input, -1: error. */
int dna_fx_next(dna_fx *r, sl_err *err);
/* Copies up to n sequence bytes of the current record into buf; returns the
 * number copied, 0 at the end of the record, -1 on error. */
long dna_fx_read(dna_fx *r, char *buf, size_t n, sl_err *err);
/* Appends the rest of the current record's sequence to seq. 0 ok, -1 error. */
int dna_fx_read_all(dna_fx *r, sl_buf *seq, sl_err *err);

const char *dna_fx_name(const dna_fx *r); /* NUL-terminated */
size_t dna_fx_name_len(const dna_fx *r);
const char *dna_fx_desc(const dna_fx *r); /* "" when none */
int dna_fx_format(const dna_fx *r);       /* DNA_FMT_* (UNKNOWN before the first record) */
const char *dna_fx_source(const dna_fx *r);

/* faidx facts about the current record, valid once its sequence has been
 * read to the end. `ok` is 0 when the record cannot be indexed the samtools
 * way (lines of different lengths, blanks inside lines, a blank line between
 * sequence lines). */
typedef struct dna_fx_fai {
    uint64_t length;     /* bases */
    uint64_t offset;     /* byte offset of the first sequence byte */
    uint64_t linebases;  /* bases per full line */
    uint64_t linewidth;  /* bytes per full line, terminator included */
    uint64_t qualoffset; /* FASTQ: byte offset of the first quality byte */
    int ok;
} dna_fx_fai;
const dna_fx_fai *dna_fx_fai_info(const dna_fx *r);

#endif
