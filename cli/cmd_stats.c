/* `sluice stats`: counts and length histograms of a token stream (documents
 * or packed rows) or a shard directory, as one JSON object. */
#include "cli/commands.h"
#include "cli/inputs.h"
#include "shard/stats.h"
#include "base/buf.h"
#include "stream/io.h"

static const char help[] = "Prints one JSON object:\n"
                           "  document stream: documents, tokens, empty documents, min/max/mean length and a\n"
                           "    histogram of lengths in power-of-two buckets [lo, hi);\n"
                           "  packed stream (`sluice pack`): rows, pieces, document starts, padding;\n"
                           "  with memory-token slots (--memory-tokens) also memory_tokens, memory_fraction\n"
                           "    and overhead_fraction (padding and memory; pad_tokens excludes memory);\n"
                           "  shard directory: per split rows, tokens, padding fraction, documents and their\n"
                           "    length histogram (lengths include EOS/BOS); per warmup stage the batch, steps,\n"
                           "    tokens per step, and the rows, pieces and document starts of one epoch of\n"
                           "    its view. The directory is verified (checksums) first.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
                           "example:\n"
                           "  sluice stats shards/ | jq .stages\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {SL_CLI_COMMON_LONG, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1)
        sl_cli_common(cli, c, argv[optind - 1]);
    if (argc - optind > 1)
        for (int i = optind; i < argc; i++)
            if (sl_cli_is_shard_dir(argv[i]))
                sl_cli_usage_error(cli, "%s is a shard directory: one at a time (several inputs are token streams)",
                                   argv[i]);
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    sl_buf b = {0};
    sl_stats st;
    int rc = sl_stats_run((const char *const *)argv + optind, (size_t)(argc - optind), &st, &err);
    if (!rc)
        sl_stats_json(&b, &st);
    sl_stats_free(&st);
    sl_output *out = rc ? NULL : sl_output_open(cli->output, &err);
    if (out && (sl_output_write(out, b.data, b.len, &err) || sl_output_commit(out, &err)))
        out = NULL;
    sl_buf_free(&b);
    return out ? 0 : sl_cli_fail(cli, &err);
}

const sl_command sl_cmd_stats = {
    .name = "stats",
    .summary = "rows, documents, tokens and length histograms of a stream or shard directory",
    .usage = "sluice stats [FILE...|DIR]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
