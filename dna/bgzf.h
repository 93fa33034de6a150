/* Random access into a BGZF file (bgzip: a series of gzip members of at
 * most 64 KiB, each with a 'BC' extra subfield giving its size) through its
 * .gzi index (`bgzip -i`: u64 count, then (compressed offset, uncompressed
 * offset) u64 pairs for every block but the first). Reading uncompressed
 * bytes at an offset inflates only the blocks that hold them (zlib), so a
 * region of a bgzipped genome costs a few blocks, not the genome.
 * Thread-safe (pread, no shared state after open). */
#ifndef SLUICE_DNA_BGZF_H
#define SLUICE_DNA_BGZF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct dna_bgzf dna_bgzf;

/* Opens `path` and its index `gzi_path`; checks that the index is ordered
 * and inside the file and that the first block is a BGZF block. */
dna_bgzf *dna_bgzf_open(const char *path, const char *gzi_path, sl_err *err);
/* Copies n uncompressed bytes from offset uoff into buf. 0 ok, -1 error. */
int dna_bgzf_read_at(const dna_bgzf *z, uint64_t uoff, void *buf, size_t n, sl_err *err);
void dna_bgzf_close(dna_bgzf *z);

#endif
