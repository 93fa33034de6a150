/* The packing options shared by `sluice pack` and `sluice shard`. */
#include "cli/pack_opts.h"

#include <stdint.h>

int sl_cli_pack_option(const sl_cli *cli, int opt, sl_pack_user *u)
{
    static const char *const longs[] = {"truncate", "drop", "split", NULL};
    static const char *const layouts[] = {"sequential", "recurrent", NULL};
    switch (opt) {
    case SL_PO_SEQ: u->seq_len = sl_cli_int(cli, "--seq-len", optarg, 0, 1ll << 31); return 1;
    case SL_PO_EOS: u->eos = sl_cli_int(cli, "--eos", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_NOEOS: u->no_eos = 1; return 1;
    case SL_PO_BOS: u->bos = sl_cli_int(cli, "--bos", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_PAD: u->pad = sl_cli_int(cli, "--pad", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_NOSPLIT: u->no_split = 1; return 1;
    case SL_PO_LONG: u->long_mode = sl_cli_choice(cli, "--long", optarg, longs); return 1;
    case SL_PO_LAYOUT: u->layout = sl_cli_choice(cli, "--layout", optarg, layouts); return 1;
    case SL_PO_BATCH: u->batch = sl_cli_int(cli, "--batch", optarg, 1, 1 << 24); return 1;
    case SL_PO_WARMUP: u->warmup = optarg; return 1;
    default: return 0;
    }
}

void sl_cli_pack_check(const sl_cli *cli, const sl_pack_user *u)
{
    if (u->seq_len >= 0 && (u->seq_len == 0 || u->seq_len % 8))
        sl_cli_usage_error(cli, "--seq-len %lld: must be a positive multiple of 8", (long long)u->seq_len);
    if (u->no_eos && u->eos >= 0)
        sl_cli_usage_error(cli, "--eos and --no-eos exclude each other");
    /* the combinations sl_pack_resolve also rejects, as usage errors (exit 2) */
    if (u->long_mode >= 0 && !u->no_split)
        sl_cli_usage_error(cli, "--long applies only with --no-split (split mode always continues long documents)");
    if (u->warmup && u->layout == SL_LAYOUT_RECURRENT)
        sl_cli_usage_error(cli, "--warmup cannot be combined with --layout recurrent");
    if (u->layout == SL_LAYOUT_RECURRENT && u->batch <= 0)
        sl_cli_usage_error(cli, "--layout recurrent needs --batch B");
    if (u->batch > 0 && u->layout != SL_LAYOUT_RECURRENT)
        sl_cli_usage_error(cli, "--batch applies to --layout recurrent (use --warmup ...,batch=B for stage batches)");
}

void sl_cli_pack_need_len(const sl_cli *cli, const sl_pack_user *u)
{
    if (u->seq_len < 0 && !u->warmup)
        sl_cli_usage_error(cli, "--seq-len L is required (or --warmup SPEC)");
}
