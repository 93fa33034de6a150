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
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h): writing a shard directory ---------------------- */

/* The options of the pack and shard stages: set them with
 * sl_stage_opts_default, then change what you need. */
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

/* Sets every option to its default (`sluice shard` without flags): no
 * seq_len (a document stream needs pack.seq_len or pack.warmup), eos and pad
 * from the stream header, all metadata fields kept, no validation split, no
 * shuffle, one token file per split, progress on a terminal (set progress
 * to 0 in a program that owns its stderr). */
void sl_stage_opts_default(sl_stage_opts *o);

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

/* Writes the shard directory dir from the token streams inputs[0..n_inputs)
 * read as one (n_inputs = 0: standard input; a directory stands for its part
 * files): a document stream, packed into rows of o->pack.seq_len tokens, or
 * an already packed stream. The directory appears atomically (written as
 * DIR.tmp.<pid>, renamed at the end) or not at all; it must not exist unless
 * o->force. st receives the counts (documents, truncated, dropped, repeated
 * ids). Returns 0; -1 with err set
 * naming the input and position, or an option field in backquotes
 * ("`val_fraction` ..."); or SL_STAGE_USAGE for options the input makes
 * invalid. */
int sl_shard_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, const char *dir,
                 sl_stage_stats *st, sl_err *err);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

/* The checks that need no input (sl_pack_user_check, and shuffle with the
 * recurrent layout or a window without shuffle); the runs make them too. */
int sl_stage_opts_check(const sl_stage_opts *o, sl_err *err);
/* Packs the documents of the inputs into a packed stream written to out
 * (not committed: the caller commits or aborts it). */
int sl_pack_run(const sl_stage_opts *o, const char *const *inputs, size_t n_inputs, sl_output *out, sl_stage_stats *st,
                sl_err *err);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
