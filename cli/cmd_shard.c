/* `sluice shard`: a document token stream (packed here with the options of
 * `sluice pack`) or a packed stream in, a shard directory out
 * (docs/shards.md section 4). */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/pack_opts.h"
#include "cli/scale_opts.h"
#include "shard/stage.h"

static const char help[] = "Writes a shard directory: manifest.json; documents.jsonl, one line per\n"
                           "document (ordinal, id, split and its metadata under \"meta\": e.g. the label\n"
                           "of `sluice dna species` or the fields of a JSONL input) with its byte-offset\n"
                           "index documents.idx; and per split (train, val) token files that numpy.memmap\n"
                           "opens directly (uint16 when the vocab fits, else uint32; rows of --seq-len\n"
                           "tokens) with a boundary index (.bounds) beside each. The input is a document\n"
                           "token stream, packed with the options below, or a packed stream from\n"
                           "`sluice pack` (then no packing options).\n"
                           "Layout and manifest schema: docs/shards.md.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
                           "packing options (as `sluice pack`):\n"
                           "  --seq-len L, --eos ID|append|keep|none, --no-eos, --bos ID, --pad ID,\n"
                           "  --no-split,\n"
                           "  --long truncate|drop|split, --layout sequential|recurrent, --batch B,\n"
                           "  --memory-tokens K --memory-id ID [--memory-write]  memory-token slots of the\n"
                           "                      recurrent layout (manifest \"memory\"; docs/longctx.md)\n"
                           "  --warmup SPEC       stages recorded in the manifest (steps resolved against the\n"
                           "                      train split's token count); the data is stored once at the\n"
                           "                      longest length and every stage is a view of it\n\n"
                           "shard options:\n"
                           "  -o DIR              the output directory (required); written as DIR.tmp.<pid>\n"
                           "                      and renamed at the end\n"
                           "  --force             replace an existing DIR (default: error)\n"
                           "  --skip-existing     do nothing when DIR exists and verifies (manifest, sizes,\n"
                           "                      checksums); replace it when it does not\n"
                           "  --dtype TYPE        auto (default: uint16 when vocab <= 65536), uint16 or uint32\n"
                           "  --max-file-bytes N  cap each token file at N bytes (whole rows; k/M/G suffixes;\n"
                           "                      default: one file per split)\n"
                           "  --shuffle           permute rows within windows (bounded memory)\n"
                           "  --seed S            shuffle seed (default 0)\n"
                           "  --shuffle-window W  rows per shuffle window (default: 256 MiB of rows)\n"
                           "  --val-fraction F    send a document to the val split when XXH64(id)/2^64 < F\n"
                           "                      (default 0: no val split)\n"
                           "  --keep-fields LIST  keep only these metadata fields (comma-separated)\n"
                           "  --drop-fields LIST  drop these metadata fields\n"
                           "  --unique-ids        a repeated document id is an error (default: a warning\n"
                           "                      naming the first one; ids are checked by shard and pack,\n"
                           "                      with a 128-bit hash per document, 32 bytes of memory each)\n\n"
                           "example:\n"
                           "  sluice shard --seq-len 2048 --warmup double:256..2048,epochs=1,batch=64 \\\n"
                           "      --shuffle --seed 1 --val-fraction 0.01 tokens.tok -o shards/\n";

enum { O_FORCE = SL_PO_END, O_DTYPE, O_MAXB, O_SHUF, O_SEED, O_WIN, O_VAL };

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {SL_PACK_LONG_OPTS,
                                         SL_META_LONG_OPTS,
                                         SL_IDS_LONG_OPTS,
                                         {"force", no_argument, 0, O_FORCE},
                                         {"dtype", required_argument, 0, O_DTYPE},
                                         {"max-file-bytes", required_argument, 0, O_MAXB},
                                         {"shuffle", no_argument, 0, O_SHUF},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"shuffle-window", required_argument, 0, O_WIN},
                                         {"val-fraction", required_argument, 0, O_VAL},
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const dtypes[] = {"auto", "uint16", "uint32", NULL};
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_stage_option(cli, c, &o) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_FORCE: o.force = 1; break;
        case O_DTYPE: o.dtype_bytes = 2 * sl_cli_choice(cli, "--dtype", optarg, dtypes); break; /* 0, 2, 4 */
        case O_MAXB: o.max_file_bytes = (uint64_t)sl_cli_int(cli, "--max-file-bytes", optarg, 1, 1ll << 50); break;
        case O_SHUF: o.shuffle = 1; break;
        case O_SEED: o.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_WIN: o.shuffle_window = (uint64_t)sl_cli_int(cli, "--shuffle-window", optarg, 1, 1ll << 32); break;
        case O_VAL: o.val_fraction = sl_cli_double(cli, "--val-fraction", optarg, 0, 1); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o DIR (a shard directory cannot go to standard output)");
    sl_cli_stage_check(cli, &o);
    o.progress = cli->progress;
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_SHARDS)) {
        sl_meta_sel_free(&o.fields);
        return 0;
    }
    if (so.skip_existing && sl_cli_has_manifest(cli->output))
        o.force = 1; /* a shard directory that does not verify: it is replaced */

    sl_cli_check_output(cli, cli->output, SL_OUT_DIR, o.force);
    sl_err err = {{0}};
    sl_stage_stats st;
    int rc = sl_shard_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), cli->output, &st, &err);
    sl_meta_sel_free(&o.fields);
    if (rc)
        return sl_cli_stage_fail(cli, &err, rc);
    if (st.truncated || st.dropped)
        sl_cli_warn(cli, "%llu document(s) truncated, %llu dropped", (unsigned long long)st.truncated,
                    (unsigned long long)st.dropped);
    sl_cli_stage_report(cli, &st);
    return 0;
}

const sl_command sl_cmd_shard = {
    .name = "shard",
    .summary = "write a shard directory (manifest, token files, boundary index), with warmup",
    .usage = "sluice shard [options] [FILE...] -o DIR",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
