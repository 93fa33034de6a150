/* Stages that read token streams take several inputs (files in order, a
 * directory of part files) and read them as one stream (stream/tokstream.h). */
#ifndef SLUICE_CLI_INPUTS_H
#define SLUICE_CLI_INPUTS_H

#include "shard/shard.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

/* The name for messages: the path given when there is one input, else the
 * file being read now. */
static inline const char *sl_cli_src(const sl_ts_reader *r, const char *path)
{
    return !r || sl_ts_reader_n_inputs(r) == 1 ? path : sl_input_name(sl_ts_reader_input(r));
}

/* Percent and ETA follow the input's position when there is one input. */
static inline void sl_cli_track(sl_progress *pg, const sl_ts_reader *r)
{
    if (sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(pg, sl_ts_reader_input(r));
}

/* A shard directory (it has a manifest.json), as opposed to a directory of
 * part files. */
static inline int sl_cli_is_shard_dir(const char *path)
{
    return sl_shard_has_manifest(path);
}

#endif
