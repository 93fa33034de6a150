/* `sluice classify`: documents -> the same documents with a fastText
 * model's labels in their metadata. The model is model/fasttext.h, the
 * stage model/classify.h; this file parses options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "cli/scale_opts.h"
#include "model/classify.h"
#include "model/fasttext.h"
#include "stream/docreader.h"
#include "stream/io.h"

static const char help[] = "Reads documents as 'sluice read' does (JSON Lines, JSON arrays, Parquet, Arrow,\n"
                           "plain text, folders of them), classifies each with a fastText supervised\n"
                           "model and writes it as JSON Lines with the best labels and their\n"
                           "probabilities added to its fields:\n"
                           "  {\"id\":...,\"text\":...,<its other fields>,\"lang\":\"en\",\"lang_score\":0.97}\n"
                           "(\"lang\" is the --field-prefix; labels lose fastText's \"__label__\" prefix; with\n"
                           "-k other than 1 also \"lang_labels\" and \"lang_scores\", every label returned,\n"
                           "best first). Labels and probabilities are those of the Python fasttext\n"
                           "package's predict(text, k, threshold): it drops labels whose probability is\n"
                           "below 1e-5 in hierarchical-softmax models, so fewer than k can come back\n"
                           "(none: null), and a probability is p + 1e-5, so it can exceed 1.\n\n"
                           "Models: any 'fasttext supervised' model, .bin or quantized .ftz (e.g. the\n"
                           "language identifier lid.176.ftz / lid.176.bin, quality classifiers such as\n"
                           "DCLM's), with hierarchical softmax, softmax, one-vs-all or negative-sampling\n"
                           "loss. Output order never depends on -@.\n\n"
                           "options:\n"
                           "  -m, --model FILE        the fastText model (.bin or .ftz; required)\n"
                           "  -k N|all                labels per document (default 1)\n"
                           "      --threshold P       only labels with probability >= P (default 0)\n"
                           "      --prepare MODE      how the text is prepared, as datatrove does before\n"
                           "                          predict: langid (default; every newline becomes a\n"
                           "                          space, as its LanguageFilter) or classifier (white space\n"
                           "                          stripped at both ends, newlines removed, as its\n"
                           "                          FastTextClassifierFilter)\n"
                           "      --field-prefix NAME names of the added fields: NAME, NAME_score, and with -k\n"
                           "                          NAME_labels, NAME_scores (default lang; 'language' gives\n"
                           "                          datatrove's language and language_score); fields of those\n"
                           "                          names in the input are replaced\n"
                           "  -f, --field NAME        JSON field that holds the text (default: text)\n"
                           "  -l, --lines             plain text: one document per line\n"
                           "      --invalid MODE      invalid UTF-8: replace (default, U+FFFD), skip or error\n"
                           "      --on-error MODE     malformed JSON line: fail (default) or skip\n"
                           "      --max-doc-bytes N   longest document (default 64M)\n"
                           "      --mem-budget SIZE   memory for batches (default 64M; at least 1M)\n"
                           "      --format KIND       auto (default), jsonl or text\n"
                           "      --part R/N|slurm    classify only part R of N of the input (the parts'\n"
                           "                          outputs in order are the output of one run)\n"
                           "      --skip-existing     do nothing when the output file exists and is whole\n"
                           "\nexamples:\n"
                           "  sluice classify -m lid.176.ftz docs.jsonl -o docs.lang.jsonl\n"
                           "  sluice classify -m lid.176.ftz -k 3 --field-prefix language docs.jsonl.zst\n"
                           "  sluice classify -m quality.bin --prepare classifier --field-prefix hq docs.jsonl \\\n"
                           "    | sluice filter --field lang --in en,de\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_MODEL = SL_DO_END, O_THRESH, O_PREP, O_PREFIX };
    static const struct option opts[] = {{"model", required_argument, 0, 'm'},
                                         {"threshold", required_argument, 0, O_THRESH},
                                         {"prepare", required_argument, 0, O_PREP},
                                         {"field-prefix", required_argument, 0, O_PREFIX},
                                         SL_DOC_LONG_OPTS,
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const preps[] = {"langid", "classifier", NULL};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    ro.mem_budget = SL_DOCS_DEFAULT_MEM_BUDGET;
    sl_classify_opts co = SL_CLASSIFY_OPTS_INIT;
    sl_scale_opts so = {0};
    const char *model = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "m:k:" SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case 'm': model = optarg; break;
        case 'k': co.k = strcmp(optarg, "all") ? (int)sl_cli_int(cli, "-k", optarg, 1, 1 << 30) : -1; break;
        case O_THRESH: co.threshold = (float)sl_cli_double(cli, "--threshold", optarg, 0, 1e30); break;
        case O_PREP: co.prepare = sl_cli_choice(cli, "--prepare", optarg, preps); break;
        case O_PREFIX:
            if (!optarg[0])
                sl_cli_usage_error(cli, "--field-prefix needs a non-empty name");
            co.field_prefix = optarg;
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!model)
        sl_cli_usage_error(cli, "--model FILE is required (a fastText .bin or .ftz)");
    if (!strcmp(co.field_prefix, "text") || !strcmp(co.field_prefix, "id"))
        sl_cli_usage_error(cli, "--field-prefix %s would replace the document's own \"%s\"", co.field_prefix,
                           co.field_prefix);
    ro.quiet = cli->quiet;
    co.threads = sl_cli_threads(cli);
    co.progress = cli->progress;
    co.batch_bytes = sl_mem_budget_split(ro.mem_budget).work_batch;
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_LINES))
        return 0;

    sl_err err = {{0}};
    sl_ft_model *m = sl_ft_load(model, &err);
    if (!m)
        return sl_cli_fail(cli, &err);
    sl_docreader *r;
    sl_part part;
    if (sl_cli_part(cli, &so, &part)) { /* this part's files and ranges of files */
        size_t np;
        sl_slice *pc = sl_cli_slices(cli, &part, (const char *const *)argv + optind, (size_t)(argc - optind),
                                     sl_docreader_cut, &ro, &np);
        r = sl_docreader_open_slices(pc, np, &ro, &err);
        sl_slices_free(pc, np);
    } else {
        r = sl_docreader_open((const char *const *)argv + optind, argc - optind, &ro, &err);
    }
    sl_output *out = r ? sl_output_open(cli->output, &err) : NULL;
    int rc = !out || sl_classify_run(m, r, &co, out, NULL, &err) < 0;
    sl_docreader_stats st = r ? *sl_docreader_stats_get(r) : (sl_docreader_stats){0};
    sl_docreader_close(r);
    sl_ft_free(m);
    if (rc || sl_output_commit(out, &err) < 0) {
        if (rc && out)
            sl_output_abort(out);
        return sl_cli_doc_fail(cli, &err);
    }
    if (st.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)st.invalid_utf8,
                    ro.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (st.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)st.skipped_lines);
    return 0;
}

const sl_command sl_cmd_classify = {
    .name = "classify",
    .summary = "label documents with a fastText model (language ID, quality classifiers)",
    .usage = "sluice classify --model FILE [options] [FILES...]",
    .help = help,
    .run = run,
};
