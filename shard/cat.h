/* A shard directory as JSON Lines: the stage behind `sluice cat DIR`.
 * Every document piece of every row, one object per piece,
 *   {"id":...,"ids":[...],"stage":S,"row":R,"offset":O,"doc":D,
 *    "doc_offset":K,"split":...,"meta":{the document's metadata}}
 * so documents can be reassembled (concatenate the pieces of an id in
 * doc_offset order). Train rows are those of warmup stage `stage` over one
 * epoch of the data (docs/shards.md section 3); the val split has no stages
 * ("stage":null) and is read at the stored length. */
#ifndef SLUICE_SHARD_CAT_H
#define SLUICE_SHARD_CAT_H

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sl_cat_shard_run's answer when `stage` is not a stage of the shard. */
enum { SL_SHARD_CAT_NO_STAGE = -2 };

/* Prints the directory dir to output (NULL or "-": standard output); stage
 * -1 is the last stage (the stored rows). Returns 0, -1 with err set (the
 * output is then discarded), or SL_SHARD_CAT_NO_STAGE with err "`stage` K:
 * the shard has N stage(s)" before anything is written. */
int sl_cat_shard_run(const char *dir, long stage, const char *output, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
