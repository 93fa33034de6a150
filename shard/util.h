/* Small file-system helpers for shard directories. */
#ifndef SLUICE_SHARD_UTIL_H
#define SLUICE_SHARD_UTIL_H

#include "stream/err.h"

/* Removes a directory that holds only regular files (no-op when absent). */
void sl_shard_rmdir(const char *dir);
/* Moves directory `tmp` to `dst` (replacing an existing `dst`), syncing the
 * parent directory so the rename is durable. */
int sl_shard_dir_replace(const char *tmp, const char *dst, sl_err *err);
/* 1 when path is a directory, 0 otherwise. */
int sl_shard_is_dir(const char *path);

#endif
