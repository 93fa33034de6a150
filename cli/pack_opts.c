/* The packing options shared by `sluice pack` and `sluice shard`. */
#include "cli/pack_opts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/stage.h"
#include "stream/err.h"

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
    case SL_PO_MEMK: u->mem_tokens = sl_cli_int(cli, "--memory-tokens", optarg, 1, 1ll << 30); return 1;
    case SL_PO_MEMID: u->mem_id = sl_cli_int(cli, "--memory-id", optarg, 0, UINT32_MAX); return 1;
    case SL_PO_MEMW: u->mem_write = 1; return 1;
    default: return 0;
    }
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

int sl_cli_meta_option(const sl_cli *cli, int opt, sl_cli_meta *m)
{
    if (opt == SL_PO_UNIQUE) {
        m->unique = 1;
        return 1;
    }
    if (opt != SL_PO_KEEP && opt != SL_PO_DROP)
        return 0;
    int mode = opt == SL_PO_KEEP ? SL_META_KEEP : SL_META_DROP;
    if (m->sel.mode != SL_META_ALL && m->sel.mode != mode)
        sl_cli_usage_error(cli, "--keep-fields and --drop-fields exclude each other");
    sl_err err = {{0}};
    if (sl_meta_sel_parse(&m->sel, mode, optarg, &err))
        sl_cli_usage_error(cli, "%s %s", mode == SL_META_KEEP ? "--keep-fields" : "--drop-fields", err.msg);
    return 1;
}

int sl_cli_meta_select(sl_cli_meta *m, const char *meta, size_t len, const char *src, const char *id, size_t id_len,
                       sl_err *err)
{
    sl_buf_clear(&m->buf);
    if (sl_meta_select(&m->sel, meta, len, &m->buf, err)) {
        char q[96];
        return sl_err_prefix(err, "%s: document '%s'", src, sl_err_quote(id, id_len, q, sizeof q));
    }
    return 0;
}

int sl_cli_meta_id(sl_cli_meta *m, const char *id, size_t len, uint64_t ordinal, const char *src, sl_err *err)
{
    if (!m->ids)
        m->ids = sl_idset_new();
    if (!sl_idset_add(m->ids, id, len))
        return 0;
    char q[96];
    if (m->unique)
        return sl_errf(err, "%s: document %llu: duplicate id '%s' (--unique-ids)", src, (unsigned long long)ordinal,
                       sl_err_quote(id, len, q, sizeof q));
    if (!m->dups++) {
        m->first_dup = sl_xstrdup(sl_err_quote(id, len, q, sizeof q));
        m->first_dup_doc = ordinal;
    }
    return 0;
}

void sl_cli_meta_report(const sl_cli *cli, const sl_cli_meta *m)
{
    if (m->dups)
        sl_cli_warn(cli,
                    "%llu document(s) repeat an earlier id; the first is document %llu, id '%s' (--unique-ids makes "
                    "this an error)",
                    (unsigned long long)m->dups, (unsigned long long)m->first_dup_doc, m->first_dup);
}

void sl_cli_meta_free(sl_cli_meta *m)
{
    sl_meta_sel_free(&m->sel);
    sl_idset_free(m->ids);
    free(m->first_dup);
    sl_buf_free(&m->buf);
    memset(m, 0, sizeof *m);
}

int sl_cli_stage_option(const sl_cli *cli, int opt, sl_stage_opts *o)
{
    if (sl_cli_pack_option(cli, opt, &o->pack))
        return 1;
    if (opt == SL_PO_UNIQUE) {
        o->unique_ids = 1;
        return 1;
    }
    if (opt != SL_PO_KEEP && opt != SL_PO_DROP)
        return 0;
    int mode = opt == SL_PO_KEEP ? SL_META_KEEP : SL_META_DROP;
    if (o->fields.mode != SL_META_ALL && o->fields.mode != mode)
        sl_cli_usage_error(cli, "--keep-fields and --drop-fields exclude each other");
    sl_err err = {{0}};
    if (sl_meta_sel_parse(&o->fields, mode, optarg, &err))
        sl_cli_usage_error(cli, "%s %s", mode == SL_META_KEEP ? "--keep-fields" : "--drop-fields", err.msg);
    return 1;
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
