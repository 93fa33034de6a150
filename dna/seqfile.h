/* Sequence files of any kind, by content: FASTA or FASTQ (plain, gzip,
 * BGZF, zstd, xz, bzip2 — decompression through stream/io.h) and UCSC .2bit.
 *
 * dna_reader walks the records in file order, streaming each sequence in
 * pieces (bounded memory) or whole.
 *
 * dna_genome gives random access to regions (BED intervals, sampled
 * windows): .2bit directly; an uncompressed FASTA through its .fai (read from
 * "<file>.fai" when present, otherwise built by one pass); a bgzipped FASTA
 * with "<file>.gzi" likewise, inflating only the blocks a region needs;
 * anything else (gzip without .gzi, zstd, unindexable FASTA, FASTQ) is loaded
 * into memory once. */
#ifndef SLUICE_DNA_SEQFILE_H
#define SLUICE_DNA_SEQFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dna_reader dna_reader;
dna_reader *dna_reader_open(const char *path, sl_err *err);
/* FASTA/FASTQ records from an open input that the caller keeps and closes
 * after the reader (e.g. a byte range of a file: a part, stream/partition.h). */
dna_reader *dna_reader_open_input(sl_input *in);
/* 1: next record, 0: no more, -1: error. */
int dna_reader_next(dna_reader *r, sl_err *err);
const char *dna_reader_name(const dna_reader *r);
const char *dna_reader_desc(const dna_reader *r);
/* Sequence bytes of the current record: count, 0 at its end, -1 error. */
long dna_reader_read(dna_reader *r, char *buf, size_t n, sl_err *err);
/* Appends the rest of the current record to seq. */
int dna_reader_read_all(dna_reader *r, sl_buf *seq, sl_err *err);
/* "fasta", "fastq" or "2bit" */
const char *dna_reader_format(const dna_reader *r);
void dna_reader_close(dna_reader *r);

typedef struct dna_genome dna_genome;
/* quiet: do not print the note that a file is loaded into memory. */
dna_genome *dna_genome_open(const char *path, int quiet, sl_err *err);
size_t dna_genome_count(const dna_genome *g);
const char *dna_genome_name(const dna_genome *g, size_t i);
uint64_t dna_genome_length(const dna_genome *g, size_t i);
long dna_genome_find(const dna_genome *g, const char *name); /* -1 when absent */
/* Bases [start, end) of sequence i into out (end - start bytes). Thread-safe. */
int dna_genome_fetch(const dna_genome *g, size_t i, uint64_t start, uint64_t end, char *out, sl_err *err);
const char *dna_genome_path(const dna_genome *g);
/* "2bit", "fai", "bgzf+fai" or "memory": how regions are read. */
const char *dna_genome_backend(const dna_genome *g);
/* 1 when the index was read from "<path>.fai" rather than built (samtools
 * faidx leaves empty records out of it). */
int dna_genome_fai_file(const dna_genome *g);
void dna_genome_close(dna_genome *g);

#ifdef __cplusplus
}
#endif

#endif
