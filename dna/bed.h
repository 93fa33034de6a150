/* BED intervals: `chrom start end [name] [score] [strand] ...`, 0-based,
 * half-open, fields separated by tabs (runs of blanks are accepted too).
 * Blank lines, '#' comments and `track`/`browser` lines are skipped.
 *
 * A split (train/valid/test) comes from a column (HyenaDNA's
 * sequences_human.bed has `chrom start end split`) or from a separate file
 * mapping chromosome names to splits (dna_split_map). */
#ifndef SLUICE_DNA_BED_H
#define SLUICE_DNA_BED_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dna_bed_rec {
    char *chrom;
    uint64_t start, end;
    char *name;  /* column 4 unless it is the split column, else NULL */
    char *split; /* the split column's value, or NULL */
    char strand; /* '+', '-' or '.' (column 6; '.' when absent) */
    uint64_t line;
} dna_bed_rec;

typedef struct dna_bed {
    dna_bed_rec *rec;
    size_t n, cap;
} dna_bed;

/* split_col: 1-based column holding the split (0 = none; must be >= 4). */
int dna_bed_parse(const char *text, size_t len, const char *src, int split_col, dna_bed *bed, sl_err *err);
/* Reads a (possibly compressed) BED file. */
int dna_bed_load(const char *path, int split_col, dna_bed *bed, sl_err *err);
void dna_bed_free(dna_bed *bed);

/* A "chrom split" table (two blank-separated words per line). */
typedef struct dna_split_map {
    char **chrom, **split;
    size_t n;
} dna_split_map;
int dna_split_map_load(const char *path, dna_split_map *m, sl_err *err);
const char *dna_split_map_get(const dna_split_map *m, const char *chrom); /* NULL when absent */
void dna_split_map_free(dna_split_map *m);

#ifdef __cplusplus
}
#endif

#endif
