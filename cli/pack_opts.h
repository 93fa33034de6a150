/* The packing options shared by `sluice pack` and `sluice shard`
 * (--seq-len, --eos, --no-eos, --bos, --pad, --no-split, --long, --layout,
 * --batch, --warmup): one option table and one parser, so the two commands
 * cannot drift apart. */
#ifndef SLUICE_CLI_PACK_OPTS_H
#define SLUICE_CLI_PACK_OPTS_H

#include "cli/cli.h"
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
    SL_PO_END /* a command's own options start here */
};

#define SL_PACK_LONG_OPTS                                                                                              \
    {"seq-len", required_argument, 0, SL_PO_SEQ}, {"eos", required_argument, 0, SL_PO_EOS},                            \
        {"no-eos", no_argument, 0, SL_PO_NOEOS}, {"bos", required_argument, 0, SL_PO_BOS},                             \
        {"pad", required_argument, 0, SL_PO_PAD}, {"no-split", no_argument, 0, SL_PO_NOSPLIT},                         \
        {"long", required_argument, 0, SL_PO_LONG}, {"layout", required_argument, 0, SL_PO_LAYOUT},                    \
        {"batch", required_argument, 0, SL_PO_BATCH},                                                                  \
    {                                                                                                                  \
        "warmup", required_argument, 0, SL_PO_WARMUP                                                                   \
    }

/* Handles one packing option (value in optarg): 1 when it was one, else 0. */
int sl_cli_pack_option(const sl_cli *cli, int opt, sl_pack_user *u);
/* Checks the combination (--seq-len a positive multiple of 8, --eos vs
 * --no-eos); usage error (exit 2) otherwise. */
void sl_cli_pack_check(const sl_cli *cli, const sl_pack_user *u);
/* Usage error (exit 2) when neither --seq-len nor --warmup is given (packing
 * a document stream needs a row length). */
void sl_cli_pack_need_len(const sl_cli *cli, const sl_pack_user *u);

#endif
