/* `sluice detokenize text`: token stream -> JSON Lines documents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "tokenize/detok.h"

static const char help[] = "Reads a token stream (FILE, '-' or none: standard input) and writes one JSON\n"
                           "object per document: {\"id\":...,\"text\":...,<metadata fields>}, the form\n"
                           "'sluice read' writes, so read | tokenize | detokenize gives the documents back\n"
                           "(text after the tokenizer's normalization, e.g. NFC for GPT-NeoX-20B).\n"
                           "Byte sequences that are not valid UTF-8 (possible only for ids that end inside\n"
                           "a character) are written as U+FFFD and counted in a warning.\n\n"
                           "options:\n"
                           "  -t, --tokenizer PATH  the tokenizer: tokenizer.json, a vocab.json + merges.txt\n"
                           "                        directory, a tiktoken rank file (its pattern and\n"
                           "                        special tokens come from the stream's header), a\n"
                           "                        tekken JSON, or a character vocabulary file. Not needed\n"
                           "                        for streams written by 'tokenize char' (the\n"
                           "                        vocabulary is in the header)\n"
                           "      --pattern P       a tiktoken rank file's pattern (a name as 'tokenize text'\n"
                           "                        takes: gpt2, cl100k, llama3, qwen2, o200k, tekken, or a\n"
                           "                        regex), for streams whose header does not record it\n"
                           "                        (e.g. from 'tokenize ids'); given, it is used instead\n"
                           "      --special NAME=ID[,...]  a tiktoken rank file's special tokens (with\n"
                           "                        --pattern; else those of the header)\n"
                           "      --skip-special    leave out the stream's eos/bos/pad ids\n"
                           "      --force           decode even when the tokenizer's fingerprint differs\n"
                           "                        from the one recorded in the stream (default: error)\n"
                           "\nexample:\n"
                           "  sluice detokenize -t gpt-neox-20b/tokenizer.json docs.tok | jq -r .text\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_SKIP = SL_OPT_FIRST_FREE, O_FORCE, O_PATTERN, O_SPECIAL };
    static const struct option opts[] = {{"tokenizer", required_argument, 0, 't'},
                                         {"skip-special", no_argument, 0, O_SKIP},
                                         {"force", no_argument, 0, O_FORCE},
                                         {"pattern", required_argument, 0, O_PATTERN},
                                         {"special", required_argument, 0, O_SPECIAL},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    sl_detok_opts o = SL_DETOK_OPTS_INIT;
    int c;
    while ((c = getopt_long(argc, argv, "t:" SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case 't': o.tokenizer = optarg; break;
        case O_SKIP: o.skip_special = 1; break;
        case O_FORCE: o.force = 1; break;
        case O_PATTERN: o.pattern = optarg; break;
        case O_SPECIAL:
            if (!strchr(optarg, '='))
                sl_cli_usage_error(cli, "--special takes NAME=ID[,...] (a tiktoken rank file's special tokens)");
            o.specials = optarg;
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        sl_cli_usage_error(cli, "one input stream at most");
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    o.progress = "detokenize";
    o.progress_mode = cli->progress;
    sl_err err = {{0}};
    sl_detok_stats st;
    int rc = sl_detok_run(&o, optind < argc ? argv[optind] : "-", cli->output, &st, &err);
    if (rc == SL_DETOK_MISMATCH || rc == SL_DETOK_NO_TOKENIZER) {
        size_t n = strlen(err.msg);
        snprintf(err.msg + n, sizeof err.msg - n, "%s",
                 rc == SL_DETOK_MISMATCH ? " (--force decodes anyway)" : "; give --tokenizer PATH");
    }
    if (rc)
        return sl_cli_fail(cli, &err);
    if (st.repaired)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) in decoded text written as U+FFFD",
                    (unsigned long long)st.repaired);
    return 0;
}

const sl_command sl_cmd_detokenize_text = {
    .name = "detokenize text",
    .summary = "token stream back to text with a tokenizer",
    .usage = "sluice detokenize text [--tokenizer PATH] [options] [FILE]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
