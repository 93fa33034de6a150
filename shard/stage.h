/* The pack and shard stages as library calls (what `sluice pack` and
 * `sluice shard` run): token streams in (several inputs, or a directory of
 * part files, read as one stream: stream/tokstream.h), a packed stream
 * (sl_pack_run) or a shard directory (sl_shard_run) out. docs/shards.md.
 *
 *   sl_stage_opts o;
 *   sl_stage_opts_default(&o);
 *   o.pack.seq_len = 2048;
 *   o.val_fraction = 0.01;
 *   sl_stage_stats st;
 *   if (sl_shard_run(&o, inputs, n, "shards/", &st, &err)) ... err.msg
 *
 * Messages name the file and position, and the option field that is wrong
 * in backquotes ("`val_fraction` splits documents, ..."). */
#ifndef SLUICE_SHARD_STAGE_H
#define SLUICE_SHARD_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "shard/meta.h"
#include "shard/packed.h"
#include "stream/err.h"
#include "stream/io.h"

typedef struct sl_stage_opts {
    sl_pack_user pack;  /* packing a document stream; nothing set for a packed input */
    sl_meta_sel fields; /* the metadata fields kept (SL_META_ALL: every one) */
    int unique_ids;     /* a repeated document id is an error (else counted) */
    /* shard only */
    int force;               /* replace an existing directory */
    int dtype_bytes;         /* 0 = auto (2 when the vocab fits, else 4), 2 or 4 */
    uint64_t max_file_bytes; /* 0 = one token file per split */
    int shuffle;
    uint64_t seed, shuffle_window; /* shuffle_window 0 = 256 MiB of rows */
    double val_fraction;
    int progress; /* sl_progress mode: -1 auto, 0 off, 1 on */
} sl_stage_opts;

void sl_stage_opts_default(sl_stage_opts *o);
/* The checks that need no input (sl_pack_user_check, and shuffle with the
 * recurrent layout or a window without shuffle); the runs make them too. */
int sl_stage_opts_check(const sl_stage_opts *o, sl_err *err);

/* What a run did, for the caller's warnings. */
typedef struct sl_stage_stats {
    uint64_t docs, truncated, dropped, cut_tokens;
    uint64_t dup_ids, first_dup_doc; /* repeated ids (not an error unless unique_ids) */
    char first_dup[96];              /* the first repeated id, quoted */
} sl_stage_stats;

/* What the runs return for an option combination that the input makes
 * invalid (a document stream with neither pack.seq_len nor pack.warmup):
 * a usage error rather than bad input. Other failures return -1. */
#define SL_STAGE_USAGE (-2)

/* Packs the documents of the inputs into a packed stream written to out
 * (not committed: the caller commits or aborts it). */
int sl_pack_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, sl_output *out, sl_stage_stats *st,
                sl_err *err);
/* Writes the shard directory dir (atomically: DIR.tmp.<pid>, renamed at the
 * end) from a document stream, packed with o->pack, or from a packed
 * stream. */
int sl_shard_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, const char *dir,
                 sl_stage_stats *st, sl_err *err);

#endif
