/* `sluice merge`: concatenates shard directories (into a shard directory) or
 * Megatron datasets (as Megatron's IndexedDatasetBuilder.add_index does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "shard/merge.h"
#include "shard/util.h"

static const char help[] = "Shard directories: every SRC must have the same seq_len, dtype, vocab,\n"
                           "tokenizer fingerprint, special ids, layout, memory slots and warmup SPEC.\n"
                           "Rows of each split are concatenated in argument order, document ordinals are\n"
                           "renumbered after the previous sources, warmup stages are resolved again for the\n"
                           "merged size; documents.jsonl keeps every line's metadata and documents.idx is\n"
                           "rebuilt.\n"
                           "Each SRC is verified (checksums) first. DST is written atomically. Document\n"
                           "ids are not checked for duplicates here (shard and pack check them).\n\n"
                           "Megatron datasets (SRC = a prefix with SRC.idx and SRC.bin): the .bin files\n"
                           "are concatenated and sizes/pointers/document indices rebased, as Megatron's\n"
                           "add_index / tools/merge_datasets.py do; dtypes must match. When every SRC\n"
                           "has a sidecar SRC.documents.jsonl (from `sluice export megatron`), DST gets\n"
                           "their lines with documents renumbered.\n\n"
                           "options:\n"
                           "  -o DST              output directory or prefix (required)\n"
                           "  --force             replace an existing DST directory\n"
                           "  --max-file-bytes N  cap token files of a merged shard directory\n\n"
                           "example:\n"
                           "  sluice merge part-0/ part-1/ part-2/ -o shards/\n"
                           "  sluice merge data/a_text_document data/b_text_document -o data/ab_text_document\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_FORCE = SL_OPT_FIRST_FREE, O_MAXB };
    static const struct option opts[] = {{"force", no_argument, 0, O_FORCE},
                                         {"max-file-bytes", required_argument, 0, O_MAXB},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    int force = 0, c;
    long long maxb = 0;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_FORCE: force = 1; break;
        case O_MAXB: maxb = sl_cli_int(cli, "--max-file-bytes", optarg, 1, 1ll << 50); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    int n = argc - optind;
    if (n < 1)
        sl_cli_usage_error(cli, "needs at least one SRC");
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o DST");
    char **srcs = argv + optind;
    int dirs = 0;
    for (int i = 0; i < n; i++)
        dirs += sl_shard_is_dir(srcs[i]);
    sl_err err = {{0}};
    int rc;
    if (dirs == n) {
        rc = sl_shard_merge((const char *const *)srcs, (size_t)n, cli->output, force, (uint64_t)maxb, &err);
    } else if (dirs == 0) {
        if (force || maxb)
            sl_cli_usage_error(cli, "--force and --max-file-bytes apply to shard directories");
        int without = sl_mega_merge_missing_docs((const char *const *)srcs, (size_t)n);
        if (without >= 0)
            sl_cli_warn(cli, "%s has no %s.documents.jsonl: the merged dataset gets no document ids or metadata",
                        srcs[without], srcs[without]);
        rc = sl_mega_merge((const char *const *)srcs, (size_t)n, cli->output, &err);
    } else {
        sl_cli_usage_error(cli, "cannot mix shard directories and Megatron prefixes");
    }
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_merge = {
    .name = "merge",
    .summary = "concatenate shard directories or Megatron datasets",
    .usage = "sluice merge [options] SRC... -o DST",
    .help = help,
    .run = run,
};
