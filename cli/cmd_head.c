/* `sluice head`: the first N documents or tokens of a token stream, header
 * kept (stream/head.h). */
#include <stdint.h>
#include <string.h>

#include "cli/commands.h"
#include "stream/head.h"
#include "stream/io.h"

static const char help[] = "Writes the first documents of a token stream as a token stream with the same\n"
                           "header (tokenizer, special ids, \"doc_eos\", packing): a small sample to try a\n"
                           "pipeline on, like head(1). Reading stops when the head is complete, so a\n"
                           "large or endless input is not read to its end.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream.\n\n"
                           "options:\n"
                           "  -n, --docs N        the first N documents (rows of a packed stream); default 10\n"
                           "                      unless --tokens is given\n"
                           "  --tokens T          the first T tokens: documents up to T tokens in all, the\n"
                           "                      last one cut to fit (its id and metadata kept); with -n,\n"
                           "                      whichever limit comes first\n\n"
                           "example:\n"
                           "  sluice head -n 100 corpus.tok -o sample.tok\n"
                           "  sluice head --tokens 1M corpus.tok | sluice shard --seq-len 2048 -o try/\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_DOCS = SL_OPT_FIRST_FREE, O_TOKENS };
    static const struct option opts[] = {{"docs", required_argument, 0, 'n'},
                                         {"tokens", required_argument, 0, O_TOKENS},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    sl_head_opts o = {UINT64_MAX, UINT64_MAX};
    int c;
    while ((c = getopt_long(argc, argv, "n:" SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case 'n': o.docs = (uint64_t)sl_cli_int(cli, "--docs", optarg, 0, INT64_MAX); break;
        case O_TOKENS: o.tokens = (uint64_t)sl_cli_int(cli, "--tokens", optarg, 0, INT64_MAX); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (o.docs == UINT64_MAX && o.tokens == UINT64_MAX)
        o.docs = 10;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    sl_head_stats st;
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = !out || sl_head_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), out, &st, &err);
    static const sl_cli_field fields[] = {{"docs", "-n"}, {NULL, NULL}};
    if (rc)
        sl_cli_map_fields(&err, fields);
    if (!rc && st.cut)
        sl_cli_warn(cli, "the last document (number %llu) was cut to fit --tokens", (unsigned long long)st.docs);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

const sl_command sl_cmd_head = {
    .name = "head",
    .summary = "the first N documents or tokens of a token stream, header kept",
    .usage = "sluice head [-n N] [--tokens T] [FILE...] [-o FILE]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
