/* `sluice tokenize char`: documents -> UTF-8 byte or code point tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/source.h"
#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "cli/scale_opts.h"
#include "stream/docreader.h"
#include "tokenize/chartok.h"
#include "tokenize/docpipe.h"

static const char help[] = "Reads documents as 'sluice read' does (JSON Lines, JSON arrays, Parquet, Arrow,\n"
                           "plain text, folders of them) and writes a token stream of characters. The\n"
                           "vocabulary is written into the stream header (\"extra\"), so 'sluice\n"
                           "detokenize' and 'sluice cat' need no other file.\n\n"
                           "units:\n"
                           "  byte       (default) each UTF-8 byte is its id 0..255; 256 = <|endoftext|>,\n"
                           "             257 = <|bos|> (vocab size 258)\n"
                           "  codepoint  each Unicode code point is one id from a vocabulary: the code\n"
                           "             points sorted ascending, then <|endoftext|>, <|bos|>, <|unk|>;\n"
                           "             a code point missing from a given vocabulary becomes <|unk|>\n\n"
                           "options:\n"
                           "      --unit UNIT       byte or codepoint (codepoint needs --build-vocab or\n"
                           "                        --vocab)\n"
                           "      --build-vocab     build the code point vocabulary from the input (reads\n"
                           "                        the FILES twice, so standard input is not accepted)\n"
                           "      --vocab FILE      use a vocabulary file written by --save-vocab\n"
                           "      --save-vocab FILE also write the vocabulary (JSON) to FILE\n"
                           "      --append-eos      end every document with <|endoftext|>\n"
                           "      --prepend-bos     start every document with <|bos|>\n"
                           "  -f, --field NAME      JSON field that holds the text (default: text)\n"
                           "  -l, --lines           plain text: one document per line\n"
                           "      --invalid MODE    invalid UTF-8: replace (default, U+FFFD), skip or error\n"
                           "      --on-error MODE   malformed JSON line: fail (default) or skip\n"
                           "      --max-doc-bytes N longest document (default 64M)\n"
                           "      --mem-budget SIZE memory for batches (default 64M; at least 1M): a quarter\n"
                           "                        for the reader's batches, an eighth for the text encoded\n"
                           "                        at a time; peak memory is about SIZE + 8 x the longest doc\n"
                           "      --format KIND     auto (default: JSON Lines when a source starts with '{'),\n"
                           "                        jsonl or text: read every source as that kind\n"
                           "      --part R/N|slurm  tokenize only part R of N of the input files (the part\n"
                           "                        files in order read as one stream are the output of one\n"
                           "                        run; 'slurm': R, N from the job array; not with\n"
                           "                        --build-vocab or --save-vocab: build the vocabulary once,\n"
                           "                        then give it to every part with --vocab)\n"
                           "\nexamples:\n"
                           "  sluice tokenize char --append-eos docs.jsonl -o bytes.tok\n"
                           "  sluice tokenize char --build-vocab --save-vocab v.json docs.jsonl -o c.tok\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_UNIT = SL_DO_END, O_BUILD, O_VOCAB, O_SAVE, O_EOS, O_BOS };
    static const struct option opts[] = {{"unit", required_argument, 0, O_UNIT},
                                         {"build-vocab", no_argument, 0, O_BUILD},
                                         {"vocab", required_argument, 0, O_VOCAB},
                                         {"save-vocab", required_argument, 0, O_SAVE},
                                         {"append-eos", no_argument, 0, O_EOS},
                                         {"prepend-bos", no_argument, 0, O_BOS},
                                         SL_DOC_LONG_OPTS,
                                         SL_PART_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const units[] = {"byte", "codepoint", NULL};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    int unit = -1, build = 0, eos = 0, bos = 0;
    const char *vocab_path = NULL, *save = NULL;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_UNIT: unit = sl_cli_choice(cli, "--unit", optarg, units); break;
        case O_BUILD: build = 1; break;
        case O_VOCAB: vocab_path = optarg; break;
        case O_SAVE: save = optarg, sl_sources_output_also(optarg); break;
        case O_EOS: eos = 1; break;
        case O_BOS: bos = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    ro.quiet = cli->quiet;
    int nfiles = argc - optind;
    char **files = argv + optind;
    if (build && vocab_path)
        sl_cli_usage_error(cli, "--build-vocab and --vocab exclude each other");
    if (build && unit == 0)
        sl_cli_usage_error(cli, "--build-vocab builds a codepoint vocabulary (not --unit byte)");
    if (unit == 1 && !build && !vocab_path)
        sl_cli_usage_error(cli, "--unit codepoint needs --build-vocab or --vocab FILE");
    sl_part part;
    int parted = sl_cli_part(cli, &so, &part);
    /* a part sees only its share of the input: a vocabulary built from it
     * would differ from part to part */
    if (parted && build)
        sl_cli_usage_error(cli, "--part and --build-vocab exclude each other: build the vocabulary once "
                                "(--build-vocab --save-vocab FILE, without --part), then give every part --vocab FILE");
    if (parted && save)
        sl_cli_usage_error(cli, "--part and --save-vocab exclude each other: every part would write FILE; "
                                "save the vocabulary once, without --part");
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, save, SL_OUT_FILE, 0);
    if (build) {
        if (nfiles == 0)
            sl_cli_usage_error(cli, "--build-vocab reads the input twice: give FILES (not standard input)");
        for (int i = 0; i < nfiles; i++)
            if (!strcmp(files[i], "-"))
                sl_cli_usage_error(cli, "--build-vocab reads the input twice: '-' (standard input) is not allowed");
    }

    sl_err err = {{0}};
    sl_charvocab *v = build        ? sl_charvocab_build((const char *const *)files, nfiles, &ro, &err)
                      : vocab_path ? sl_charvocab_load(vocab_path, &err)
                                   : sl_charvocab_bytes();
    if (!v)
        return sl_cli_fail(cli, &err);
    if (unit >= 0 && sl_charvocab_unit(v) != unit) {
        sl_charvocab_free(v);
        sl_cli_usage_error(cli, "--unit %s does not match the vocabulary's unit", units[unit]);
    }
    sl_tokenizer *t = sl_chartok_tokenizer(v);
    sl_docpipe_opts po = SL_DOCPIPE_OPTS_INIT;
    po.prepend = bos ? sl_tokenizer_special(t, SL_TOK_BOS) : -1;
    po.append = eos ? sl_tokenizer_special(t, SL_TOK_EOS) : -1;
    po.threads = sl_cli_threads(cli);
    po.batch_bytes = sl_mem_budget_split(ro.mem_budget).work_batch; /* 8 MiB at the default budget */
    po.progress = "tokenize char";
    po.progress_mode = cli->progress;
    int rc;
    if (parted) { /* this part's files and ranges of files */
        size_t np;
        sl_slice *pc =
            sl_cli_slices(cli, &part, (const char *const *)files, (size_t)nfiles, sl_docreader_cut, &ro, &np);
        rc = sl_tokenize_slices(t, pc, np, &ro, &po, cli->output, NULL, &err);
        sl_slices_free(pc, np);
    } else {
        rc = sl_tokenize_text(t, (const char *const *)files, nfiles, &ro, &po, cli->output, NULL, &err);
    }
    /* the vocabulary file only when the run succeeds: no file left by a run that fails */
    if (rc == 0 && save && sl_charvocab_save(v, save, &err)) {
        sl_tokenizer_free(t);
        return sl_cli_fail(cli, &err);
    }
    sl_tokenizer_free(t);
    return rc ? sl_cli_doc_fail(cli, &err) : 0;
}

const sl_command sl_cmd_tokenize_char = {
    .name = "tokenize char",
    .summary = "UTF-8 byte or Unicode code point tokens",
    .usage = "sluice tokenize char [options] [FILES...]",
    .help = help,
    .run = run,
    .serial = 1, /* encoding a byte or a code point costs less than handing it to another core */
};
