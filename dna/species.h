/* The HyenaDNA / Mamba species-classification set: windows sampled from
 * per-species genomes, label = species index (`sluice dna species`).
 *
 * Each argument is one species: a genome file (FASTA, plain or compressed,
 * or .2bit; every record is a chromosome) or a directory with one file per
 * chromosome as in HyenaDNA's species_dir/<species>/chr<N>.fna[.gz] layout.
 * For each sample: a species uniformly, then one of its chromosomes of the
 * chosen split uniformly (or weighted by length), then a start uniformly in
 * [0, length - window], drawn from one base/rng.h generator seeded with
 * `seed`. Each sample is a document with id SPECIES:CHROM:START-END and
 * metadata {"label":INDEX,"species":NAME,"chrom":..,"start":..,"end":..};
 * the header's extra object lists the species. The output does not depend on
 * the thread count. */
#ifndef SLUICE_DNA_SPECIES_H
#define SLUICE_DNA_SPECIES_H

#include <stddef.h>
#include <stdint.h>

#include "dna/nuctok.h"
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { DNA_SPLIT_TRAIN = 0, DNA_SPLIT_VALID = 1, DNA_SPLIT_TEST = 2 };
extern const char *const dna_split_names[3]; /* "train", "valid", "test" */

typedef struct dna_species_opts {
    uint64_t window;  /* bases per sample (default 1024) */
    uint64_t samples; /* number of samples (default 1024) */
    uint64_t seed;    /* default 0 */
    int split;        /* DNA_SPLIT_*: the chromosomes sampled (default train) */
    /* HyenaDNA's chromosome splits, comma-separated: a chromosome belongs to
     * a split when its name is an entry or "chr" + an entry; train is the
     * rest. Defaults "1,3,12,13" and "5,7,9,10,11". */
    const char *valid_chroms, *test_chroms;
    const char *const *names; /* one name per genome, or NULL: the file or directory name without extensions */
    int by_length;            /* pick a chromosome weighted by its length (default uniformly) */
    int tail_quirk;           /* HyenaDNA's fasta[start:min(end, length - window)] */
    dna_tok_opts tok;         /* the nucleotide tokenizer (dna_tok_opts_default) */
    int quiet;                /* no notes (base/log.h: a missing .fai being built) */
    int progress;             /* -1 auto (a terminal), 0 off, 1 on */
    uint64_t first, end;      /* write samples [first, end) only (a part, stream/partition.h; default all) */
} dna_species_opts;

void dna_species_opts_default(dna_species_opts *o);

/* Samples the set from genomes[0..n) into out as a token stream (written
 * and finished, not committed: the caller commits or aborts out). */
int dna_species_run(const dna_species_opts *o, const char *const *genomes, size_t n, sl_output *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
