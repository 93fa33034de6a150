/* FASTA index (.fai, htslib faidx(5)): NAME LENGTH OFFSET LINEBASES LINEWIDTH
 * [QUALOFFSET], tab-separated, one line per record. The byte address of base
 * i of a record is OFFSET + (i / LINEBASES) * LINEWIDTH + i % LINEBASES.
 *
 * An index is loaded from "<file>.fai" when present or built by one pass over
 * the FASTA (with the same rules as `samtools faidx`: every sequence line but
 * the last of a record has the same length). Regions are then read with
 * pread from the uncompressed file, so random access costs the region, not
 * the genome. */
#ifndef SLUICE_DNA_FAIDX_H
#define SLUICE_DNA_FAIDX_H

#include <stddef.h>
#include <stdint.h>

#include "dna/fastx.h"
#include "base/buf.h"
#include "base/err.h"

typedef struct dna_fai_rec {
    char *name;
    uint64_t length, offset, linebases, linewidth, qualoffset; /* qualoffset 0 for FASTA */
} dna_fai_rec;

typedef struct dna_fai {
    dna_fai_rec *rec;
    size_t n, cap;
} dna_fai;

/* Parses .fai text; `src` names it in messages ("src:line: what"). */
int dna_fai_parse(const char *text, size_t len, const char *src, dna_fai *fai, sl_err *err);
/* Builds the index of a FASTA read through r (from its start). Returns -1 if
 * a record cannot be indexed (message names it) or on a parse error. */
int dna_fai_build(dna_fx *r, dna_fai *fai, sl_err *err);
/* Writes the index in samtools' text layout. */
void dna_fai_format(const dna_fai *fai, sl_buf *out);
/* Index of a record by name, or -1. */
long dna_fai_find(const dna_fai *fai, const char *name);
/* Reads bases [start, end) of record `rec` from the uncompressed FASTA open
 * as fd (path names it in messages) into out (end - start bytes). Checks that
 * the bytes read are sequence (so a stale index is reported, not used). */
int dna_fai_fetch(int fd, const char *path, const dna_fai_rec *rec, uint64_t start, uint64_t end, char *out,
                  sl_err *err);
/* The same over any random-access reader of the (uncompressed) bytes, e.g. a
 * BGZF file (dna/bgzf.h): read_at(ctx, offset, buf, n, err) -> 0 / -1. */
typedef int (*dna_read_at_fn)(const void *ctx, uint64_t off, void *buf, size_t n, sl_err *err);
int dna_fai_fetch_with(dna_read_at_fn read_at, const void *ctx, const char *path, const dna_fai_rec *rec,
                       uint64_t start, uint64_t end, char *out, sl_err *err);
void dna_fai_free(dna_fai *fai);

#endif
