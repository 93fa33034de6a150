/* Sources: the byte streams inside a list of input paths.
 * A plain or compressed file is one source; an archive (tar, tar.gz, tar.zst,
 * tar.xz, zip, ...) recognised by content yields one source per regular
 * member, named "<archive>:<member>". "-" is stdin (which may itself be an
 * archive). */
#ifndef SLUICE_STREAM_SOURCE_H
#define SLUICE_STREAM_SOURCE_H

#include "base/err.h"
#include "stream/io.h"
#include "stream/partition.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_sources sl_sources;

/* paths: n input paths; n == 0 means stdin. A folder written by Hugging
 * Face datasets' save_to_disk stands for its data files (sl_sources_expand). */
sl_sources *sl_sources_open(const char *const *paths, size_t n, sl_err *err);
/* 1: *in is the next source (valid until the next call), 0: no more, -1: error. */
int sl_sources_next(sl_sources *s, sl_input **in, sl_err *err);
void sl_sources_close(sl_sources *s);
/* The paths with every `datasets.save_to_disk` folder among them replaced by
 * its data files in order (stream/arrow_ipc.h); *out malloc'd (sl_list_free). */
int sl_sources_expand(const char *const *paths, size_t n, char ***out, size_t *nout, sl_err *err);
/* The file this process writes ("-": the standard output; NULL: none
 * known, the default): a folder read as its files that holds it, and an
 * input that is the standard output when that is a file, are errors (the
 * CLI sets it: "-", or the -o FILE). */
void sl_sources_output(const char *path);
/* Another file this process writes (a side output: --rejected, --removed,
 * --summary): a folder read as its files must not hold it either. */
void sl_sources_output_also(const char *path);

/* The sources of the pieces of a part (stream/partition.h): a whole file as
 * sl_sources_open gives it, a range of a plain file as one source named by
 * the file. No pieces: no sources (not standard input). */
sl_sources *sl_sources_open_slices(const sl_slice *pieces, size_t n, sl_err *err);
/* The piece of the current source when it is a range of a file, else NULL. */
const sl_slice *sl_sources_slice(const sl_sources *s);
/* The path of the current source when it is a whole, uncompressed regular
 * file (not standard input, an archive member or a range of a part): a
 * reader that needs to seek (Parquet) opens it by name. NULL otherwise. */
const char *sl_sources_plain_path(const sl_sources *s);
/* How far the reading is, for progress (sl_progress_pos_fn): the bytes of the
 * files read so far (the current file by its compressed position) and their
 * total size; -1 when unknown (standard input, a pipe, parts). */
int sl_sources_position(void *sources, double *done, double *total);
/* 1 when the first bytes of a (decoded) stream are an archive's. */
int sl_sources_is_archive(const void *head, size_t n);
/* What the bytes from a source's first one that is not white space say of a
 * JSON array (stream/docreader.c): 1 '[' then '{' (white space between), an
 * array of documents; 2 '[' then ']', maybe an empty one; 0 neither; -1 the
 * n bytes end before that is known. */
int sl_sources_json_array(const void *head, size_t n);

#ifdef __cplusplus
}
#endif

#endif
