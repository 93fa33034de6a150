/* Temporary files for the dedup stage: unnamed (unlinked at once) under
 * $TMPDIR (or /tmp), written then read back in order. A minimal stand-in
 * for a shared spill module. */
#ifndef SLUICE_DEDUP_SPOOL_H
#define SLUICE_DEDUP_SPOOL_H

#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"

/* A new unnamed file open for writing and reading, with a 1 MiB stdio
 * buffer; NULL with err. Closed (and its buffer freed) by sl_spool_close. */
FILE *sl_spool_new(const char *what, sl_err *err);
void sl_spool_close(FILE *f);
/* The same as a descriptor (for pread/pwrite); -1 with err. */
int sl_spool_fd(const char *what, sl_err *err);
/* fwrite / fread that fill err (0 ok, -1 error; read: 1 at a clean end). */
int sl_spool_write(FILE *f, const void *p, size_t n, sl_err *err);
int sl_spool_read(FILE *f, void *p, size_t n, sl_err *err);
/* A length-prefixed record (u32 length, then the bytes; 0 ok, -1 with err:
 * over 4 GiB), and reading one back into b (NUL-terminated; 0 ok, -1 with
 * err: the file ends before it or within it). */
int sl_spool_put_blob(FILE *f, const void *p, size_t n, sl_err *err);
int sl_spool_get_blob(FILE *f, sl_buf *b, sl_err *err);

#endif
