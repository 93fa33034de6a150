/* UCSC .2bit reader (kent src/lib/twoBit.c layout, UCSC FAQ "twoBit").
 *
 * Header: magic 0x1A412743 (byte-swapped = big-endian file), version 0
 * (32-bit offsets) or 1 (64-bit offsets), sequence count, reserved. Index:
 * per sequence u8 name length, name, offset. Record: dnaSize, N blocks
 * (count, starts[], sizes[]), mask blocks (count, starts[], sizes[]),
 * reserved, then 2 bits per base, T=0 C=1 A=2 G=3, first base in the most
 * significant bits.
 *
 * dna_2bit_open reads and validates the whole index and every record header
 * up front: every offset, count and block is checked against the file size
 * and the sequence length, so a lying file fails at open with a message
 * naming the record and the offset, never later. Bases are decoded per base:
 * upper case, N inside N blocks, lower case inside mask blocks. Fetching is
 * thread-safe (pread on a file, or a memory image). */
#ifndef SLUICE_DNA_TWOBIT_H
#define SLUICE_DNA_TWOBIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct dna_2bit dna_2bit;

/* True when p starts with the .2bit magic (either byte order). */
int dna_2bit_sniff(const void *p, size_t n);
/* Opens a file through pread (fd is owned and closed by dna_2bit_close). */
dna_2bit *dna_2bit_open_fd(int fd, const char *name, sl_err *err);
/* Over a memory image (not copied; must outlive the reader). */
dna_2bit *dna_2bit_open_mem(const void *data, size_t len, const char *name, sl_err *err);
void dna_2bit_close(dna_2bit *t);

size_t dna_2bit_count(const dna_2bit *t);
const char *dna_2bit_name(const dna_2bit *t, size_t i);
uint64_t dna_2bit_length(const dna_2bit *t, size_t i);
/* Writes bases [start, end) of sequence i to out (end - start bytes, no NUL).
 * 0 ok, -1 error (range outside the sequence, I/O error). */
int dna_2bit_fetch(const dna_2bit *t, size_t i, uint64_t start, uint64_t end, char *out, sl_err *err);

#endif
