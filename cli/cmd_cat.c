/* `sluice cat`: any token stream (or shard directory) as JSON Lines. */
#include "cli/commands.h"
#include "cli/inputs.h"
#include "shard/cat.h"
#include "stream/cat.h"
#include "tokenize/tokenizer.h"

static const char help[] =
    "Prints each document of a token stream as one JSON object per line:\n"
    "  {\"id\":..., \"ids\":[...], \"src_bytes\":N, <metadata fields>}\n"
    "(src_bytes only when known). Given a shard directory, prints every document\n"
    "piece of every row, one object per piece:\n"
    "  {\"id\":..., \"ids\":[...], \"stage\":S, \"row\":R, \"offset\":O, \"doc\":D,\n"
    "   \"doc_offset\":K, \"split\":..., \"meta\":{the document's metadata}}\n"
    "(see 'sluice help shard').\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "options:\n"
    "  --text              add a \"text\" field decoded with --tokenizer\n"
    "  --tokenizer PATH    tokenizer for --text (tokenizer.json, or a vocab.json+merges.txt directory)\n"
    "  --no-ids            leave out the \"ids\" array (with --text: just the text)\n"
    "  --header            print the stream header as one JSON object and stop\n"
    "  --stage K           shard directory: print the rows of warmup stage K (0-based;\n"
    "                      default: the last stage, the stored rows)\n"
    "\nA truncated or corrupted stream is an error (exit 1) after the documents\n"
    "read so far; with -o FILE nothing is written in that case.\n";

static int decode(void *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    return sl_tokenizer_decode(t, ids, n, out, err);
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_TEXT = SL_OPT_FIRST_FREE, O_TOK, O_NOIDS, O_HEADER, O_STAGE };
    static const struct option opts[] = {{"text", no_argument, 0, O_TEXT},
                                         {"tokenizer", required_argument, 0, O_TOK},
                                         {"no-ids", no_argument, 0, O_NOIDS},
                                         {"header", no_argument, 0, O_HEADER},
                                         {"stage", required_argument, 0, O_STAGE},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const sl_cli_field fields[] = {{"stage", "--stage"}, {NULL, NULL}};
    sl_cat_opts o = SL_CAT_OPTS_INIT;
    int text = 0, c;
    const char *stage = NULL, *tokp = NULL;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_TEXT: text = 1; break;
        case O_TOK: tokp = optarg; break;
        case O_NOIDS: o.no_ids = 1; break;
        case O_HEADER: o.header_only = 1; break;
        case O_STAGE: stage = optarg; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (text && !tokp)
        sl_cli_usage_error(cli, "--text needs --tokenizer PATH");
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    const char *path = optind < argc ? argv[optind] : "-";
    if (argc - optind == 1 && sl_cli_is_shard_dir(path)) {
        int rc =
            sl_cat_shard_run(path, stage ? (long)sl_cli_int(cli, "--stage", stage, 0, 1000000) : -1, cli->output, &err);
        sl_cli_map_fields(&err, fields);
        if (rc == SL_SHARD_CAT_NO_STAGE)
            sl_cli_usage_error(cli, "%s", err.msg);
        return rc ? sl_cli_fail(cli, &err) : 0;
    }
    if (stage)
        sl_cli_usage_error(cli, "--stage applies to shard directories only");
    sl_tokenizer *dt = NULL;
    if (text && !(dt = sl_tokenizer_load(tokp, NULL, &err)))
        return sl_cli_fail(cli, &err);
    o.decode = dt ? decode : NULL;
    o.decode_ctx = dt;
    o.progress = "cat";
    o.progress_mode = cli->progress;
    int rc = sl_cat_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), cli->output, &err);
    sl_tokenizer_free(dt);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_cat = {
    .name = "cat",
    .summary = "print a token stream or shard directory as JSON Lines",
    .usage = "sluice cat [options] [FILE...|DIR]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
