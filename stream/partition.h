/* Partitions: which input a process reads when it does part R of N of a
 * stage's work (--part R/N, docs/scale-out.md).
 *
 * The input files, in the order given, are laid end to end: file i occupies
 * the bytes [o_i, o_i + size_i) of a total of S bytes, and part r owns the
 * bytes [floor(S*r/N), floor(S*(r+1)/N)). A file that may be cut (an
 * uncompressed, regular file of line records, says the stage) is read by
 * each part from the first record start at or after the part's first byte
 * up to the first record start at or after its end, so every record is read
 * by exactly one part: the one that owns its first byte. Any other file is
 * read whole by the part that owns its first byte (an empty file, or one
 * that starts at S, by the part that owns byte o_i, else the last part).
 * Parts in order therefore read the records in the order of the whole
 * input, for any N: concatenating their outputs gives the output of one
 * process when the stage's output of a record depends only on the record
 * and on the counts the pieces carry (lines and non-blank lines before a
 * piece's first byte). */
#ifndef SLUICE_STREAM_PARTITION_H
#define SLUICE_STREAM_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "stream/io.h"
#include "stream/parts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a file may be cut: not at all, at line starts, between the records
 * of a 4-line FASTQ file, before the '>' header lines of a FASTA file, or
 * (SL_CUT_BYTES) anywhere: the piece is then the part's share of the file's
 * bytes, [begin, end), left for the reader to map to its records (a Parquet
 * reader takes the row groups whose first byte lies there). */
enum { SL_CUT_WHOLE = 0, SL_CUT_LINES = 1, SL_CUT_FASTQ = 2, SL_CUT_FASTA = 3, SL_CUT_BYTES = 4 };

/* One file, or a range of one, read by this part. */
typedef struct sl_slice {
    char *path;
    int whole;           /* 1: the whole file (begin, end, line, ndoc are 0) */
    uint64_t begin, end; /* else the bytes [begin, end), cut at line starts */
    uint64_t line;       /* '\n' bytes before begin (SL_CUT_LINES) */
    uint64_t ndoc;       /* non-blank lines before begin (blank: only ' ', '\t', '\r'; a
                            UTF-8 byte order mark at the file's start is not counted) */
    int kind;            /* what the classifier returned in *kind (the stage's tag) */
} sl_slice;

/* Says how path may be cut (SL_CUT_*) and may set *kind, a tag kept in the
 * pieces of that file; -1 with err set when the file cannot be read. */
typedef int (*sl_cut_fn)(void *ctx, const char *path, int *kind, sl_err *err);

/* The pieces of part p of paths[0..n) in input order (*out malloc'd, free
 * with sl_slices_free; none is a valid answer). cut NULL: whole files only.
 * Standard input ("-") and directories are errors: a part must be able to
 * find its share of the input without reading the rest. */
int sl_partition(const sl_part *p, const char *const *paths, size_t n, sl_cut_fn cut, void *ctx, sl_slice **out,
                 size_t *nout, sl_err *err);
void sl_slices_free(sl_slice *pieces, size_t n);

/* Whole files only: (*mine)[i] (malloc'd) is 1 when paths[i] is part p's. */
int sl_partition_whole(const sl_part *p, const char *const *paths, size_t n, unsigned char **mine, sl_err *err);

/* An sl_cut_fn for files of line records: a plain (uncompressed) file is cut
 * at line starts, a compressed one is read whole. */
int sl_lines_cut(void *ctx, const char *path, int *kind, sl_err *err);

/* An sl_cut_fn for sequence files: a plain FASTQ file whose first record
 * has 4 lines (header, sequence, '+', quality of the same length) is cut
 * between records, a plain FASTA file (first non-blank byte '>' at a line
 * start) before its header lines; anything else (2bit, compressed,
 * multi-line FASTQ) is read whole. */
int sl_fastq_cut(void *ctx, const char *path, int *kind, sl_err *err);

/* The index range [*first, *end) of part p of n items (floor(n*r/N)). */
void sl_part_range(const sl_part *p, uint64_t n, uint64_t *first, uint64_t *end);

/* An input over the bytes [begin, end) of a plain file, named path in
 * messages (no decompression: the range is taken as it is). */
typedef struct sl_range sl_range;
sl_range *sl_range_open(const char *path, uint64_t begin, uint64_t end, sl_err *err);
sl_input *sl_range_input(sl_range *r);
void sl_range_close(sl_range *r); /* closes its input too; NULL is a no-op */

/* 1 when path is a regular file whose first bytes are not compressed data
 * (head[0..*n) then holds up to cap of its first bytes), 0 otherwise, -1
 * when it cannot be opened. */
int sl_plain_file_head(const char *path, unsigned char *head, size_t cap, size_t *n, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
