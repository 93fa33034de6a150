/* `sluice merge`: merges shard directories (into the shard directory of their
 * concatenated documents, or concatenating their rows) or Megatron datasets (as Megatron's
 * IndexedDatasetBuilder.add_index does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/pack_opts.h"
#include "shard/merge.h"
#include "shard/util.h"

static const char help[] = "Shard directories: every SRC must have the same seq_len, dtype, vocab,\n"
                           "tokenizer fingerprint, special ids, layout, memory slots and warmup SPEC, and\n"
                           "each is verified (checksums) first. By default the SRCs are merged as one\n"
                           "stream: the documents of each SRC (in order, rebuilt from the pieces in its\n"
                           "rows) are packed again, in argument order, with the packing options, shuffle\n"
                           "(seed, window) and val fraction their manifests record (which must be equal\n"
                           "too). DST is then byte for byte the directory `sluice shard` writes from the\n"
                           "concatenated token streams with those options (and --max-file-bytes), e.g.\n"
                           "the per-part shard directories of a partitioned run merge into the directory\n"
                           "of one process. A SRC packed with --no-split by a sluice that did not record\n"
                           "it in the manifest is refused (shard that part again, or use --concat-rows).\n"
                           "--concat-rows concatenates the rows of each split as they are instead: each\n"
                           "SRC keeps its own last padded row, the rows are not shuffled again, and the\n"
                           "shuffle and val fraction of the SRCs need not agree; document ordinals are\n"
                           "renumbered after the previous sources, warmup stages are resolved again for\n"
                           "the merged size. Either way documents.jsonl keeps every line's metadata,\n"
                           "documents.idx is rebuilt and DST is written atomically. A document id\n"
                           "repeated across SRCs is a warning. A SRC directory without a manifest.json\n"
                           "stands for the part shard directories in it (names with <R>-of-<N>, e.g.\n"
                           "shards-3-of-8/, in part order); a part missing or there twice is an error.\n\n"
                           "Megatron datasets (SRC = a prefix with SRC.idx and SRC.bin): the .bin files\n"
                           "are concatenated and sizes/pointers/document indices rebased, as Megatron's\n"
                           "add_index / tools/merge_datasets.py do; dtypes must match. When every SRC\n"
                           "has a sidecar SRC.documents.jsonl (from `sluice export megatron`), DST gets\n"
                           "their lines with documents renumbered.\n\n"
                           "options:\n"
                           "  -o DST              output directory or prefix (required)\n"
                           "  --force             replace an existing DST directory\n"
                           "  --max-file-bytes N  cap token files of a merged shard directory\n"
                           "  --concat-rows       shard directories: concatenate their rows as they are\n"
                           "                      (the merge of older sluice versions)\n\n"
                           "example:\n"
                           "  sluice merge part-0/ part-1/ part-2/ -o shards/\n"
                           "  sluice merge parts/ -o shards/   # parts/shards-0-of-8/ ... parts/shards-7-of-8/\n"
                           "  sluice merge data/a_text_document data/b_text_document -o data/ab_text_document\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_FORCE = SL_OPT_FIRST_FREE, O_MAXB, O_CONCAT };
    static const struct option opts[] = {{"force", no_argument, 0, O_FORCE},
                                         {"concat-rows", no_argument, 0, O_CONCAT},
                                         {"max-file-bytes", required_argument, 0, O_MAXB},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    int force = 0, concat = 0, c;
    long long maxb = 0;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_FORCE: force = 1; break;
        case O_CONCAT: concat = 1; break;
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
    sl_cli_check_output(cli, cli->output, dirs == n ? SL_OUT_DIR : SL_OUT_PREFIX, force);
    if (dirs == n) {
        sl_merge_opts mo = {.force = force, .max_file_bytes = (uint64_t)maxb, .concat_rows = concat};
        sl_stage_stats st;
        rc = sl_merge_run((const char *const *)srcs, (size_t)n, cli->output, &mo, &st, &err);
        if (rc) {
            static const sl_cli_field fields[] = {{"concat_rows", "--concat-rows"}, {NULL, NULL}};
            sl_cli_map_fields(&err, fields);
            return sl_cli_stage_fail(cli, &err, -1);
        }
        if (st.dup_ids)
            sl_cli_warn(cli, "%llu document(s) repeat an earlier id; the first is document %llu, id '%s'",
                        (unsigned long long)st.dup_ids, (unsigned long long)st.first_dup_doc, st.first_dup);
    } else if (dirs == 0) {
        if (force || maxb || concat)
            sl_cli_usage_error(cli, "--force, --max-file-bytes and --concat-rows apply to shard directories");
        int without = sl_mega_merge_missing_docs((const char *const *)srcs, (size_t)n);
        if (without >= 0)
            sl_cli_warn(cli, "%s has no %s.documents.jsonl: the merged dataset gets no document ids or metadata",
                        srcs[without], srcs[without]);
        rc = sl_merge_megatron_run((const char *const *)srcs, (size_t)n, cli->output, &err);
    } else {
        sl_cli_usage_error(cli, "cannot mix shard directories and Megatron prefixes");
    }
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_merge = {
    .name = "merge",
    .summary = "merge shard directories (as one stream) or Megatron datasets",
    .usage = "sluice merge [options] SRC... -o DST",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
