/* Byte input and atomic output.
 *
 * sl_input: a readable byte stream over a file or stdin ("-"), with
 * transparent decompression chosen by content (magic bytes): zstd, gzip,
 * xz, bzip2, or plain. Archives (tar, zip, ...) are handled one level up
 * by stream/source.h, which yields one sl_input per member.
 *
 * sl_output: a file written atomically: bytes go to "<path>.tmp.<pid>.<n>"
 * next to the target (missing parent directories are created);
 * sl_output_commit() flushes, fsyncs and renames; sl_output_abort() (or
 * process exit through sl_output_abort_all(), which the CLI installs for
 * fatal errors and signals) removes the temporary and the directories
 * created for it. Path "-" writes to stdout directly (a pipe cannot be
 * atomic). sl_outdir: the same for a directory ("<dir>.tmp.<pid>/").
 * Each temporary is flock(2)ed by its writer while it exists; one left by a
 * process that died (SIGKILL) is unlocked, and the next process that writes
 * the same name removes it (see sl_stale_temps_clean), whatever its pid. */
#ifndef SLUICE_STREAM_IO_H
#define SLUICE_STREAM_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

typedef struct sl_input sl_input;
typedef struct sl_output sl_output;

/* Opens the file at path for reading ("-" = standard input). Compression
 * (zstd, gzip, xz, bzip2) is recognised by the first bytes and undone as
 * the input is read. Returns NULL with err set ("<path>: No such file or
 * directory") when the file cannot be opened. The caller closes the input
 * with sl_input_close. */
sl_input *sl_input_open(const char *path, sl_err *err);
/* Closes the input and frees it. NULL is a no-op. */
void sl_input_close(sl_input *in);

/* Creates a file written atomically: bytes go to a temporary file beside
 * path ("<path>.tmp.<pid>.<n>"; missing parent directories are created) and
 * reach path only at sl_output_commit. "-" writes to standard output
 * directly. Returns NULL with err set when the temporary cannot be created
 * (or path is a URL or an existing directory). The caller ends every output
 * with exactly one of sl_output_commit and sl_output_abort. */
sl_output *sl_output_open(const char *path, sl_err *err);
/* Flushes, fsyncs and renames the temporary to its path; frees out, also
 * when it fails (-1 with err set, e.g. a write error on a full disk; the
 * temporary is then removed and path is untouched). */
int sl_output_commit(sl_output *out, sl_err *err);
/* Removes the temporary (path is untouched) and frees out. NULL is a no-op. */
void sl_output_abort(sl_output *out);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

typedef enum {
    SL_COMP_NONE = 0,
    SL_COMP_GZIP,
    SL_COMP_ZSTD,
    SL_COMP_XZ,
    SL_COMP_BZIP2,
} sl_compression;

/* Wraps a memory buffer (not copied; must outlive the input). `name` is used
 * in messages. Compression is detected as for files. */
sl_input *sl_input_mem(const void *data, size_t len, const char *name, sl_err *err);
/* Wraps a byte source given as a callback (e.g. an archive member): read()
 * returns bytes read, 0 at end, or -1 with err set. Compression is detected
 * as for files; ctx must outlive the input. */
typedef long (*sl_read_fn)(void *ctx, void *buf, size_t n, sl_err *err);
sl_input *sl_input_callbacks(sl_read_fn read, void *ctx, const char *name, sl_err *err);
/* The same, taking the bytes as they are (no compression detection): for a
 * range of a plain file, whose first bytes may be anything. */
sl_input *sl_input_callbacks_plain(sl_read_fn read, void *ctx, const char *name, sl_err *err);
/* Reads up to n bytes; returns bytes read (0 at end), or -1 on error
 * (corrupt/truncated compressed data, I/O error) with err set. */
long sl_input_read(sl_input *in, void *buf, size_t n, sl_err *err);
/* Reads exactly n bytes: 0 ok, 1 clean EOF before any byte, -1 error or
 * EOF inside the n bytes ("unexpected end"). */
int sl_input_read_full(sl_input *in, void *buf, size_t n, sl_err *err);
/* Peeks the first decoded bytes without consuming them (n <= 4096). */
long sl_input_peek(sl_input *in, void *buf, size_t n, sl_err *err);
/* Reads one line (without the '\n'; a trailing '\r' is kept) into *line.
 * Returns 1 line read, 0 end, -1 error (incl. line longer than max_len). */
int sl_input_getline(sl_input *in, char **line, size_t *len, size_t *cap, size_t max_len, sl_err *err);
const char *sl_input_name(const sl_input *in);
uint64_t sl_input_offset(const sl_input *in);     /* decoded bytes consumed */
uint64_t sl_input_raw_offset(const sl_input *in); /* compressed bytes consumed (progress) */
int64_t sl_input_raw_size(const sl_input *in);    /* file size or -1 */
sl_compression sl_input_compression(const sl_input *in);
/* The compression that these first bytes of a file announce (as sl_input_open decides). */
sl_compression sl_compression_sniff(const void *head, size_t n);

/* Writes to an open descriptor in place (no temporary, no rename; e.g. an
 * unlinked spool from sl_tmpfile); commit flushes and closes it, abort
 * closes it. `name` is used in messages. */
sl_output *sl_output_fd(int fd, const char *name);
int sl_output_write(sl_output *out, const void *p, size_t n, sl_err *err);
int sl_output_printf(sl_output *out, sl_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *sl_output_name(const sl_output *out);
uint64_t sl_output_bytes(const sl_output *out);
/* Removes every temporary file and directory still open, and the parent
 * directories created for them (for fatal errors and signals: it is
 * async-signal-safe). */
void sl_output_abort_all(void);
/* For a signal handler, first: 1 when the signal came while a temporary is
 * being created or a directory replaced (a step that must not be cut in
 * two); the handler then returns, and the signal is raised again when the
 * step is complete. 0: act on it now. Async-signal-safe. */
int sl_io_defer_signal(int sig);

/* A directory written atomically: sl_outdir_open creates "<dir>.tmp.<pid>/"
 * (and missing parents), fails when dir exists unless force; the caller
 * writes files into sl_outdir_tmp() (through sl_output); sl_outdir_commit
 * renames it to dir (replacing an existing one), sl_outdir_abort removes it.
 * "DIR/" and "DIR" name the same directory. */
typedef struct sl_outdir sl_outdir;
sl_outdir *sl_outdir_open(const char *dir, int force, sl_err *err);
const char *sl_outdir_tmp(const sl_outdir *d);
const char *sl_outdir_name(const sl_outdir *d);  /* dir without trailing '/' */
int sl_outdir_commit(sl_outdir *d, sl_err *err); /* frees d */
void sl_outdir_abort(sl_outdir *d);              /* frees d; NULL is a no-op */

/* Removes "<path>.tmp.<pid>[.<n>]" and "<path>.old.<pid>[.<n>]" files and
 * directories beside path whose lock nobody holds (their writer is gone,
 * even when a process of the same pid runs), with an SL_LOG_INFO message
 * (base/log.h) for each (sl_output_open and sl_outdir_open call it). */
void sl_stale_temps_clean(const char *path);
/* Names the stage of those messages; *quiet (when not NULL) silences them. */
void sl_io_set_reporter(const char *stage, const int *quiet);
/* Length of the URL scheme when path starts with "scheme://" (RFC 3986:
 * a letter, then letters, digits, '+', '-', '.'), else 0. sluice reads and
 * writes local paths only: sl_input_open, sl_output_open, sl_outdir_open and
 * sl_output_check refuse such a path (sl_path_url_error) rather than make a
 * folder named "s3:" (docs/cli.md, "Paths"). */
size_t sl_path_url_scheme(const char *path);
/* Fills err with the one-line refusal for a URL path; returns -1. */
int sl_path_url_error(const char *path, sl_err *err);
/* The checks an output can pass before any input is read: not a URL; for a
 * new directory (dir = 1) not an existing path unless force; for a directory
 * that may exist (dir = 2) not an existing non-directory; for a file
 * (dir = 0) not an existing directory; the nearest existing ancestor is a
 * directory this process can write into. "-" (standard output) passes. */
int sl_output_check(const char *path, int dir, int force, sl_err *err);
/* path without trailing slashes ("/" stays "/"); a new string. */
char *sl_path_clean(const char *path);

/* Reads a whole (possibly compressed) file into memory; NUL-terminated. */
int sl_read_file(const char *path, char **data, size_t *len, sl_err *err);
/* A whole file's bytes, as sl_read_file gives them, for reading only: a
 * regular uncompressed file is mapped (no copy, no zeroed pages: XLM-R's
 * 5.5 MB .model loads 6 % sooner), anything else read (then
 * NUL-terminated; a mapped file is not). Release with sl_unmap_file. */
typedef struct sl_mapped {
    const char *data;
    size_t len;
    int mapped;
} sl_mapped;
int sl_map_file(const char *path, sl_mapped *m, sl_err *err);
void sl_unmap_file(sl_mapped *m);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
