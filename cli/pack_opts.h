/* The packing options shared by `sluice pack` and `sluice shard`
 * (--seq-len, --eos, --no-eos, --bos, --pad, --no-split, --long, --layout,
 * --batch, --warmup, --memory-tokens, --memory-id, --memory-write): one option table and one parser, so the two
 * commands cannot drift apart. */
#ifndef SLUICE_CLI_PACK_OPTS_H
#define SLUICE_CLI_PACK_OPTS_H

#include "cli/cli.h"
#include "shard/meta.h"
#include "shard/packed.h"

enum {
    SL_PO_SEQ = SL_OPT_FIRST_FREE,
    SL_PO_EOS,
    SL_PO_NOEOS,
    SL_PO_BOS,
    SL_PO_PAD,
    SL_PO_NOSPLIT,
    SL_PO_LONG,
    SL_PO_LAYOUT,
    SL_PO_BATCH,
    SL_PO_WARMUP,
    SL_PO_MEMK, /* --memory-tokens, --memory-id, --memory-write */
    SL_PO_MEMID,
    SL_PO_MEMW,
    SL_PO_KEEP, /* metadata and id options (SL_META_LONG_OPTS) */
    SL_PO_DROP,
    SL_PO_UNIQUE,
    SL_PO_END /* a command's own options start here */
};

#define SL_PACK_LONG_OPTS                                                                                              \
    {"seq-len", required_argument, 0, SL_PO_SEQ}, {"eos", required_argument, 0, SL_PO_EOS},                            \
        {"no-eos", no_argument, 0, SL_PO_NOEOS}, {"bos", required_argument, 0, SL_PO_BOS},                             \
        {"pad", required_argument, 0, SL_PO_PAD}, {"no-split", no_argument, 0, SL_PO_NOSPLIT},                         \
        {"long", required_argument, 0, SL_PO_LONG}, {"layout", required_argument, 0, SL_PO_LAYOUT},                    \
        {"batch", required_argument, 0, SL_PO_BATCH}, {"memory-tokens", required_argument, 0, SL_PO_MEMK},             \
        {"memory-id", required_argument, 0, SL_PO_MEMID}, {"memory-write", no_argument, 0, SL_PO_MEMW},                \
    {                                                                                                                  \
        "warmup", required_argument, 0, SL_PO_WARMUP                                                                   \
    }

/* --keep-fields LIST, --drop-fields LIST (shard, pack, export megatron) and
 * --unique-ids (shard, pack). */
#define SL_META_LONG_OPTS                                                                                              \
    {"keep-fields", required_argument, 0, SL_PO_KEEP},                                                                 \
    {                                                                                                                  \
        "drop-fields", required_argument, 0, SL_PO_DROP                                                                \
    }
#define SL_IDS_LONG_OPTS                                                                                               \
    {                                                                                                                  \
        "unique-ids", no_argument, 0, SL_PO_UNIQUE                                                                     \
    }

/* Handles --keep-fields / --drop-fields into sel: 1 when opt was one. */
int sl_cli_fields_option(const sl_cli *cli, int opt, sl_meta_sel *sel);

/* The pack and shard stages' options (shard/stage.h): packing, metadata and
 * id options into o; 1 when opt was one of them. */
struct sl_stage_opts;
struct sl_stage_stats;
int sl_cli_stage_option(const sl_cli *cli, int opt, struct sl_stage_opts *o);
/* Usage error (exit 2) for a combination the library rejects without input. */
void sl_cli_stage_check(const sl_cli *cli, const struct sl_stage_opts *o);
/* A failed run (rc from sl_pack_run / sl_shard_run): fields said as flags;
 * SL_STAGE_USAGE is a usage error (exit 2), else exit 1. */
int sl_cli_stage_fail(const sl_cli *cli, sl_err *err, int rc);
/* After a successful run: the warning about repeated ids, if any. */
void sl_cli_stage_report(const sl_cli *cli, const struct sl_stage_stats *st);

/* --eos ID|append|keep|none (pack, shard, export megatron; given twice, an
 * id and a word): a number sets *id, a word *mode (SL_EOS_APPEND,
 * SL_EOS_KEEP, SL_PACK_EOS_NONE). */
void sl_cli_eos_option(const sl_cli *cli, const char *arg, int64_t *id, int *mode);
/* Handles one packing option (value in optarg): 1 when it was one, else 0. */
int sl_cli_pack_option(const sl_cli *cli, int opt, sl_pack_user *u);
/* The packing fields of library messages (shard/packed.h) as flags. */
extern const sl_cli_field sl_cli_pack_fields[];
#endif
