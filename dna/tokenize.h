/* `sluice tokenize dna` as a library call: FASTA/FASTQ/2bit records, or
 * windows over them, or BED intervals (HyenaDNA's modes), tokenized with
 * HyenaDNA's character vocabulary or DNABERT k-mers into a token stream
 * (dna/emit.h does the batching, reverse complements and the stream). */
#ifndef SLUICE_DNA_TOKENIZE_H
#define SLUICE_DNA_TOKENIZE_H

#include <stdint.h>

#include "dna/emit.h"
#include "base/err.h"
#include "stream/io.h"
#include "stream/partition.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dna_tokenize_opts {
    dna_emit_opts em;
    uint64_t window, stride; /* window 0: whole records; stride: the window step */
    uint64_t in_memory;      /* longest record held in memory (without a window); longer ones are spooled */
    int drop_last;           /* no shorter last window */
    int stride_set, kstride_set;
    const char *bed;         /* BED intervals over one genome (files[0]) instead of records */
    const char *split;       /* only intervals of this split */
    const char *split_file;  /* chromosome -> split map */
    int split_col, bed_mode; /* BED column of the split (0: none); DNA_BED_* */
    int quiet;               /* no notes (base/log.h: a missing index) */
    int progress;            /* sl_progress mode */
    /* --part: files[i] is slices[i]'s file, read whole or, for a cut FASTQ,
     * its byte range (stream/partition.h); NULL: every file whole */
    const sl_slice *slices;
} dna_tokenize_opts;

/* Defaults: dna_tok_opts_default, whole records, 64M bases in memory. */
void dna_tokenize_opts_default(dna_tokenize_opts *o);

/* Tokenizes files[0..nfiles) (with o->bed: the genome files[0]) into a
 * token stream written to out (finished, not committed: the caller commits
 * or aborts out). */
int dna_tokenize_run(const dna_tokenize_opts *o, const char *const *files, size_t nfiles, sl_output *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
