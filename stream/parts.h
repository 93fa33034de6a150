/* Parts: how the outputs of a partitioned run are named and found again, and
 * which part of the work a process does (part R of N: "R/N").
 *
 * A part file's name holds "<R>-of-<N>" (decimal, any zero padding), e.g.
 * "part-00003-of-00008.tok" or "tokens-3-of-8.tok": the last "-of-" with
 * digits on both sides. A directory given where a stream is read stands for
 * all its part files in part order; they must share the text around the
 * numbers and N, and every R in 0..N-1 must be there exactly once. Names
 * starting with '.' and temporaries of unfinished outputs ("NAME.tmp.<pid>...")
 * are not parts; any other file in the directory is an error, so a stray or
 * misnamed file can never make the dataset silently smaller. */
#ifndef SLUICE_STREAM_PARTS_H
#define SLUICE_STREAM_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when name (a file name, no directory) is a part file name: *pre is the
 * length of the text before R, *post the offset of the text after N. */
int sl_parts_parse_name(const char *name, uint64_t *r, uint64_t *n, size_t *pre, size_t *post);

/* When path is a directory: its part files (full paths, malloc'd; free each
 * and the array) in part order, and 1. When it is not a directory (or "-"):
 * 0 and nothing. -1 with err set for a directory with missing, duplicated or
 * inconsistent parts, no parts, or files that are not parts. */
int sl_parts_list(const char *path, char ***paths, size_t *n, sl_err *err);

/* Which part of the work this process does: part r of n (0 <= r < n). */
typedef struct {
    uint64_t r, n;
} sl_part;

/* Parses "R/N" or "slurm" (R = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN,
 * N = SLURM_ARRAY_TASK_COUNT; an error outside a Slurm array job or when
 * the array is not a contiguous range). */
int sl_part_parse(const char *spec, sl_part *p, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
