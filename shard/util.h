/* Small file-system helpers for shard directories. */
#ifndef SLUICE_SHARD_UTIL_H
#define SLUICE_SHARD_UTIL_H

#include "base/err.h"

/* Removes a directory that holds only regular files (no-op when absent). */
void sl_shard_rmdir(const char *dir);
/* 1 when path is a directory, 0 otherwise. */
int sl_shard_is_dir(const char *path);

#endif
