/* Whether a stage's output is already there and complete, so that a rerun
 * of one part of a scaled-out job may skip it (`--skip-existing`,
 * docs/scale-out.md). Outputs are renamed into place complete, so a file or
 * directory that exists was finished, unless something else cut it short or
 * damaged it; the checks read it back:
 *   SL_VERIFY_TOKENS  a token stream read to its end: trailer, counts and
 *                     checksums (stream/tokstream.h);
 *   SL_VERIFY_LINES   JSON Lines: empty, or ending with a newline;
 *   SL_VERIFY_SHARDS  a shard directory: manifest, documents, file sizes and
 *                     every file's checksum (sl_shard_open with verify). */
#ifndef SLUICE_SHARD_VERIFY_H
#define SLUICE_SHARD_VERIFY_H

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_VERIFY_TOKENS = 1, SL_VERIFY_LINES = 2, SL_VERIFY_SHARDS = 3 };

/* What sl_output_verify_existing found. */
enum {
    SL_EXISTING_NONE = 0,     /* path does not exist */
    SL_EXISTING_OK = 1,       /* path exists and verifies as kind */
    SL_EXISTING_BAD = -1,     /* path exists but does not verify; err says why ("PATH: not a directory", ...) */
    SL_EXISTING_UNKNOWN = -2, /* path cannot be looked at (stat failed but not "no such file"); err: "PATH: why" */
};

/* Checks the output at path as kind (SL_VERIFY_*): SL_EXISTING_*. */
int sl_output_verify_existing(const char *path, int kind, sl_err *err);
/* The same with the check given: path exists and verify(path) returns 0
 * (e.g. sl_lsh_verify for the files of dedup's steps). */
typedef int (*sl_verify_fn)(const char *path, sl_err *err);
int sl_output_verify_existing_with(const char *path, sl_verify_fn verify, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
