/* Sources: the byte streams inside a list of input paths.
 * A plain or compressed file is one source; an archive (tar, tar.gz, tar.zst,
 * tar.xz, zip, ...) recognised by content yields one source per regular
 * member, named "<archive>:<member>". "-" is stdin (which may itself be an
 * archive). */
#ifndef SLUICE_STREAM_SOURCE_H
#define SLUICE_STREAM_SOURCE_H

#include "stream/err.h"
#include "stream/io.h"

typedef struct sl_sources sl_sources;

/* paths: n input paths; n == 0 means stdin. */
sl_sources *sl_sources_open(const char *const *paths, int n, sl_err *err);
/* 1: *in is the next source (valid until the next call), 0: no more, -1: error. */
int sl_sources_next(sl_sources *s, sl_input **in, sl_err *err);
void sl_sources_close(sl_sources *s);

#endif
