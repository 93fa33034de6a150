/* The packing options shared by `sluice pack` and `sluice shard`. */
#include "cli/pack_opts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/stage.h"
#include "base/err.h"

int sl_cli_pack_option(const sl_cli *cli, int opt, sl_pack_user *u)
{
    static const char *const longs[] = {"truncate", "drop", "split", NULL};
    static const char *const layouts[] = {"sequential", "recurrent", NULL};
    switch (opt) {
    case SL_PO_SEQ: u->seq_len = sl_cli_int(cli, "--seq-len", optarg, 0, 1ll << 31); return 1;
    case SL_PO_EOS: sl_cli_eos_option(cli, optarg, &u->eos, &u->eos_mode); return 1;
    case SL_PO_NOEOS: u->no_eos = 1; return 1;
    case SL_PO_BOS: u->bos = sl_cli_int(cli, "--bos", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_PAD: u->pad = sl_cli_int(cli, "--pad", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_NOSPLIT: u->no_split = 1; return 1;
    case SL_PO_LONG: u->long_mode = sl_cli_choice(cli, "--long", optarg, longs); return 1;
    case SL_PO_LAYOUT: u->layout = sl_cli_choice(cli, "--layout", optarg, layouts); return 1;
    case SL_PO_BATCH: u->batch = sl_cli_int(cli, "--batch", optarg, 1, 1 << 24); return 1;
    case SL_PO_WARMUP: u->warmup = optarg; return 1;
    case SL_PO_MEMK: u->mem_tokens = sl_cli_int(cli, "--memory-tokens", optarg, 1, 1ll << 30); return 1;
    case SL_PO_MEMID: u->mem_id = sl_cli_int(cli, "--memory-id", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_MEMW: u->mem_write = 1; return 1;
    default: return 0;
    }
}

void sl_cli_eos_option(const sl_cli *cli, const char *arg, int64_t *id, int *mode)
{
    static const char *const modes[] = {"append", "keep", "none", NULL};
    static const int values[] = {SL_EOS_APPEND, SL_EOS_KEEP, SL_PACK_EOS_NONE};
    if (arg && arg[0] >= '0' && arg[0] <= '9')
        *id = sl_cli_int(cli, "--eos", arg, 0, UINT32_MAX);
    else
        *mode = values[sl_cli_choice(cli, "--eos", arg, modes)];
}

const sl_cli_field sl_cli_pack_fields[] = {
    {"seq_len", "--seq-len"},
    {"eos", "--eos"},
    {"no_eos", "--no-eos"},
    {"bos", "--bos"},
    {"pad", "--pad"},
    {"layout", "--layout"},
    {"batch", "--batch"},
    {"no_split", "--no-split"},
    {"long_mode", "--long"},
    {"warmup", "--warmup"},
    {"shuffle", "--shuffle"},
    {"shuffle_window", "--shuffle-window"},
    {"val_fraction", "--val-fraction"},
    {"dtype", "--dtype"},
    {"unique_ids", "--unique-ids"},
    {"mem_tokens", "--memory-tokens"},
    {"mem_id", "--memory-id"},
    {"mem_write", "--memory-write"},
    {NULL, NULL},
};

int sl_cli_fields_option(const sl_cli *cli, int opt, sl_meta_sel *sel)
{
    if (opt != SL_PO_KEEP && opt != SL_PO_DROP)
        return 0;
    int mode = opt == SL_PO_KEEP ? SL_META_KEEP : SL_META_DROP;
    if (sel->mode != SL_META_ALL && sel->mode != mode)
        sl_cli_usage_error(cli, "--keep-fields and --drop-fields exclude each other");
    sl_err err = {{0}};
    if (sl_meta_sel_parse(sel, mode, optarg, &err))
        sl_cli_usage_error(cli, "%s %s", mode == SL_META_KEEP ? "--keep-fields" : "--drop-fields", err.msg);
    return 1;
}

int sl_cli_stage_option(const sl_cli *cli, int opt, sl_stage_opts *o)
{
    if (sl_cli_pack_option(cli, opt, &o->pack) || sl_cli_fields_option(cli, opt, &o->fields))
        return 1;
    if (opt == SL_PO_UNIQUE) {
        o->unique_ids = 1;
        return 1;
    }
    return 0;
}

void sl_cli_stage_check(const sl_cli *cli, const sl_stage_opts *o)
{
    sl_err err = {{0}};
    if (sl_stage_opts_check(o, &err)) {
        sl_cli_map_fields(&err, sl_cli_pack_fields);
        sl_cli_usage_error(cli, "%s", err.msg);
    }
}

int sl_cli_stage_fail(const sl_cli *cli, sl_err *err, int rc)
{
    sl_cli_map_fields(err, sl_cli_pack_fields);
    if (rc == SL_STAGE_USAGE)
        sl_cli_usage_error(cli, "%s", err->msg);
    return sl_cli_fail(cli, err);
}

void sl_cli_stage_report(const sl_cli *cli, const sl_stage_stats *st)
{
    if (st->dup_ids)
        sl_cli_warn(cli,
                    "%llu document(s) repeat an earlier id; the first is document %llu, id '%s' (--unique-ids makes "
                    "this an error)",
                    (unsigned long long)st->dup_ids, (unsigned long long)st->first_dup_doc, st->first_dup);
}
