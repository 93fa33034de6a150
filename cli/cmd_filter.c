/* `sluice filter`: keep documents of a token stream by their score. The
 * stage is model/filter.h; this file parses options and prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/filter_rules.h"
#include "model/filter.h"
#include "stream/io.h"
#include "stream/parts.h"

static const char help[] =
    "Reads a token stream whose records carry scores in their metadata (from\n"
    "'sluice score --to-stream'), or any token stream plus --scores FILE (the JSON\n"
    "Lines of 'sluice score', joined by id), and writes the documents that pass\n"
    "the selection, unchanged, as a token stream. JSON Lines documents (an input\n"
    "whose first non-blank byte is '{', e.g. from 'sluice classify') are selected\n"
    "by a field of theirs with --min/--max or --in and written as they came.\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "selection (combined with AND; default: keep every scored document):\n"
    "      --max X            keep documents with score <= X (alias --max-ppl)\n"
    "      --min X            keep documents with score >= X (alias --min-ppl)\n"
    "      --keep-pct LO:HI   keep documents between the LO-th and HI-th percentile of the\n"
    "                         score distribution, inclusive (e.g. 10:90 drops the 10% most\n"
    "                         and least perplexing). Percentiles use linear interpolation\n"
    "                         (numpy's default); they come from --scores when given, else\n"
    "                         from a first pass over the input (stdin is spooled to $TMPDIR)\n"
    "      --bucket NAME      keep one CCNet bucket: head (score < p30), middle (p30 <=\n"
    "                         score < p60) or tail (score >= p60)\n"
    "      --cutoffs A:B      percentiles of the head/middle and middle/tail cuts (default 30:60)\n"
    "      --in V1,V2,...     keep documents whose --field is one of these strings (a\n"
    "                         categorical keep, e.g. --field lang --in en,de after\n"
    "                         'sluice classify'); null counts as unscored; not with the\n"
    "                         numeric selections above\n"
    "options:\n"
    "      --scores FILE      scores as JSON Lines with \"id\" and the score field; may be\n"
    "                         repeated, and a directory stands for its part files\n"
    "                         (scores-<R>-of-<N>.jsonl, all present): the percentiles are\n"
    "                         those of all of them (docs/scale-out.md)\n"
    "      --cutoffs-from FILE  take the percentiles of --keep-pct/--bucket from score\n"
    "                         summaries ('sluice score --summary', e.g. one per array task)\n"
    "                         instead of the exact distribution: no first pass, no --scores\n"
    "                         distribution. May be repeated; a directory stands for its part\n"
    "                         files (NAME-<R>-of-<N>..., all present). The merged summaries\n"
    "                         are the same in any order; each cutoff is within relative\n"
    "                         2^-10 of the exact one (of the order statistics it interpolates;\n"
    "                         equal when they are ties or isolated values), so only documents\n"
    "                         that close to a cutoff can be decided differently\n"
    "                         (docs/scale-out.md)\n"
    "      --field NAME       the score to select on (default ppl; e.g. bpb, long_context),\n"
    "                         any numeric metadata field, or the record's own 'tokens'\n"
    "                         (token count) or 'src_bytes' (source bytes; unknown = unscored)\n"
    "      --keep-unscored    keep documents whose score is null (no predicted tokens:\n"
    "                         documents of one token); default: drop them\n"
    "      --summary FILE     write a JSON summary: counts and tokens kept/dropped, the\n"
    "                         thresholds, percentiles and the histogram\n"
    "      --plot FILE        write the histogram as an SVG plot with the thresholds marked\n"
    "      --bins N           histogram bins (default 20)\n"
    "A summary with a text histogram goes to stderr unless --quiet.\n"
    "A document with no score at all (field missing, id not in --scores) is an error.\n"
    "\nrule filters (text documents in, JSON Lines out, as 'sluice read' writes them;\n"
    "docs/filter.md):\n"
    "      --rules LIST       run datatrove 0.10.1's heuristic filters in this order, each on\n"
    "                         the text the one before passes on: gopher-quality,\n"
    "                         gopher-repetition, c4 (keeps only the lines C4 keeps: it\n"
    "                         rewrites the text), fineweb; datatrove's default thresholds\n"
    "      --rule NAME:K=V,...  set parameters of rule NAME (and run it, after those of\n"
    "                         --rules when not among them), e.g.\n"
    "                         gopher-quality:min_doc_words=100,max_doc_words=50000;\n"
    "                         'none' turns off a check that datatrove lets be None\n"
    "      --rejected FILE    JSON Lines, one per dropped document: {\"id\",\"rule\",\"reason\"}\n"
    "                         with datatrove's reason (e.g. gopher_short_doc)\n"
    "      --annotate         drop and rewrite nothing: every rule runs on the input text and\n"
    "                         adds its signals and its reason (null: kept) to the document\n"
    "      --summary FILE     JSON: documents, kept, dropped per rule and reason, parameters\n"
    "  The input is read as 'sluice read' reads it: -f/--field names the text field, and\n"
    "  --format, --lines, --invalid, --on-error, --max-doc-bytes, --mem-budget, --part R/N\n"
    "  and --skip-existing apply. -@ threads; the output is in input order.\n"
    "\nexamples:\n"
    "  sluice score -m mamba-130m/ --to-stream docs.tok | sluice filter --keep-pct 10:90 -o kept.tok\n"
    "  sluice filter --scores scores.jsonl --bucket head --plot ppl.svg docs.tok -o head.tok\n"
    "  sluice filter --field tokens --min 512 docs.tok -o long.tok\n"
    "  sluice classify -m lid.176.ftz docs.jsonl | sluice filter --field lang --in en,de\n"
    "  sluice filter --cutoffs-from summaries/ --keep-pct 10:90 scored-3-of-8.tok -o kept-3-of-8.tok\n"
    "  sluice filter --rules gopher-repetition,gopher-quality,c4,fineweb web.jsonl.zst -o clean.jsonl \\\n"
    "      --rejected why.jsonl\n"
    "  sluice filter --rules gopher-quality --rule gopher-quality:min_stop_words=none --annotate docs.jsonl\n";

static void parse_pair(const sl_cli *cli, const char *opt, const char *arg, double *a, double *b)
{
    char *end;
    *a = strtod(arg, &end);
    if (end == arg || *end != ':')
        sl_cli_usage_error(cli, "%s: '%s' is not LO:HI", opt, arg);
    const char *s2 = end + 1;
    *b = strtod(s2, &end);
    if (end == s2 || *end || !(*a >= 0) || !(*b <= 100) || !(*a <= *b))
        sl_cli_usage_error(cli, "%s: '%s' is not LO:HI with 0 <= LO <= HI <= 100", opt, arg);
}

/* Writes a report file (summary or plot) atomically. */
static int write_file(const char *path, const sl_buf *b, sl_err *err)
{
    sl_output *o = sl_output_open(path, err);
    return !o || sl_output_write(o, b->data, b->len, err) < 0 || sl_output_commit(o, err) < 0 ? -1 : 0;
}

/* One --scores or --cutoffs-from argument: a file, or a directory of part
 * files in part order (an incomplete or mixed directory is an error naming
 * what is wrong). */
static void add_files(const sl_cli *cli, const char *arg, char ***files, size_t *n)
{
    sl_err err = {{0}};
    char **parts = NULL;
    size_t np = 0;
    int rc = sl_parts_list(arg, &parts, &np, &err);
    if (rc < 0)
        exit(sl_cli_fail(cli, &err));
    *files = sl_xrealloc(*files, (*n + (rc ? np : 1)) * sizeof **files);
    if (rc == 0)
        (*files)[(*n)++] = sl_xstrdup(arg);
    for (size_t i = 0; i < np; i++)
        (*files)[(*n)++] = parts[i];
    free(parts);
}

enum {
    O_MAX = SL_OPT_FIRST_FREE,
    O_MIN,
    O_MAXP,
    O_MINP,
    O_PCT,
    O_BUCKET,
    O_CUTS,
    O_SCORES,
    O_FIELD,
    O_UNSC,
    O_SUM,
    O_PLOT,
    O_BINS,
    O_CUTFROM,
    O_IN
};
static const struct option lo[] = {{"max", required_argument, 0, O_MAX},
                                   {"min", required_argument, 0, O_MIN},
                                   {"max-ppl", required_argument, 0, O_MAXP},
                                   {"min-ppl", required_argument, 0, O_MINP},
                                   {"keep-pct", required_argument, 0, O_PCT},
                                   {"bucket", required_argument, 0, O_BUCKET},
                                   {"cutoffs", required_argument, 0, O_CUTS},
                                   {"scores", required_argument, 0, O_SCORES},
                                   {"field", required_argument, 0, O_FIELD},
                                   {"keep-unscored", no_argument, 0, O_UNSC},
                                   {"summary", required_argument, 0, O_SUM},
                                   {"plot", required_argument, 0, O_PLOT},
                                   {"bins", required_argument, 0, O_BINS},
                                   {"cutoffs-from", required_argument, 0, O_CUTFROM},
                                   {"in", required_argument, 0, O_IN},
                                   SL_CLI_COMMON_LONG,
                                   {0, 0, 0, 0}};

static int run(sl_cli *cli, int argc, char **argv)
{
    if (sl_filter_rules_wanted(argc, argv)) /* rule filters on text documents: cli/cmd_filter_rules.c */
        return sl_filter_rules_main(cli, argc, argv);
    static const char *const buckets[] = {"head", "middle", "tail", NULL};
    sl_filter_opts o;
    sl_filter_opts_init(&o);
    const char *scores = NULL, *summary = NULL, *plot = NULL;
    char **score_files = NULL; /* --scores, repeated; directories replaced by their part files */
    size_t n_score_files = 0;
    char **sum_files = NULL; /* --cutoffs-from, likewise */
    size_t n_sum_files = 0;
    char **in_values = NULL; /* --in */
    size_t n_in = 0;
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, lo, NULL)) != -1) {
        switch (c) {
        case O_MAX: o.max = sl_cli_double(cli, "--max", optarg, -1e308, 1e308); break;
        case O_MIN: o.min = sl_cli_double(cli, "--min", optarg, -1e308, 1e308); break;
        case O_MAXP: o.max = sl_cli_double(cli, "--max-ppl", optarg, -1e308, 1e308); break;
        case O_MINP: o.min = sl_cli_double(cli, "--min-ppl", optarg, -1e308, 1e308); break;
        case O_PCT: parse_pair(cli, "--keep-pct", optarg, &o.pct_lo, &o.pct_hi); break;
        case O_BUCKET: o.bucket = sl_cli_choice(cli, "--bucket", optarg, buckets); break;
        case O_CUTS: parse_pair(cli, "--cutoffs", optarg, &o.cut_head, &o.cut_tail); break;
        case O_SCORES:
            scores = optarg;
            add_files(cli, optarg, &score_files, &n_score_files);
            break;
        case O_FIELD: o.field = optarg; break;
        case O_UNSC: o.keep_unscored = 1; break;
        case O_SUM: summary = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_BINS: o.bins = (int)sl_cli_int(cli, "--bins", optarg, 1, 1000); break;
        case O_CUTFROM: add_files(cli, optarg, &sum_files, &n_sum_files); break;
        case O_IN:
            sl_list_free(in_values, n_in);
            n_in = sl_list_split(optarg, 1, &in_values);
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    o.scores = (const char *const *)score_files;
    o.n_scores = n_score_files;
    o.cutoffs_from = (const char *const *)sum_files;
    o.n_cutoffs_from = n_sum_files;
    for (size_t i = 0; i < n_sum_files; i++) /* a summary counted twice would skew the cutoffs */
        for (size_t j = 0; j < i; j++) {
            char *a = realpath(sum_files[i], NULL), *b = realpath(sum_files[j], NULL);
            int same = a && b && !strcmp(a, b);
            free(a);
            free(b);
            if (same)
                sl_cli_usage_error(cli, "--cutoffs-from: %s is given twice (as %s)", sum_files[i], sum_files[j]);
        }
    if (n_sum_files && !sl_filter_needs_dist(&o))
        sl_cli_usage_error(cli, "--cutoffs-from gives percentile cutoffs: it needs --keep-pct or --bucket");
    o.in = (const char *const *)in_values;
    o.n_in = n_in;
    if (n_in && (!isnan(o.min) || !isnan(o.max) || !isnan(o.pct_lo) || o.bucket >= 0 || n_score_files || n_sum_files))
        sl_cli_usage_error(cli, "--in excludes --min, --max, --keep-pct, --bucket, --scores and --cutoffs-from");
    if (n_in && (!strcmp(o.field, SL_FILTER_FIELD_TOKENS) || !strcmp(o.field, SL_FILTER_FIELD_SRC_BYTES)))
        sl_cli_usage_error(cli, "--in: --field %s is a count, not a category", o.field);
    o.progress = cli->progress;
    sl_err err = {{0}};
    if (sl_filter_opts_check(&o, &err) < 0) /* the only value not checked above */
        sl_cli_usage_error(cli, "--field %s cannot be combined with --scores (it is the record's own)", o.field);
    int n = argc - optind;
    for (int i = 0; n > 1 && i < n; i++)
        if (!strcmp(argv[optind + i], "-"))
            sl_cli_usage_error(cli, "standard input ('-') cannot be one of several inputs");

    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, summary, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, plot, SL_OUT_FILE, 0);
    sl_filter_result res = {0};
    sl_buf b = {0};
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = !out || sl_filter_run(&o, (const char *const *)argv + optind, (size_t)n, out, &res, &err) < 0;
    if (rc && res.missing && !scores && !res.docs_mode && out)
        snprintf(err.msg + strlen(err.msg), sizeof err.msg - strlen(err.msg),
                 " (run 'sluice score --to-stream', or give --scores)");
    if (!rc && !cli->quiet) {
        sl_filter_report_text(&b, &o, &res);
        fprintf(stderr, "sluice: filter: %s", b.data);
    }
    if (!rc && summary) {
        sl_buf_clear(&b);
        sl_filter_summary_json(&b, &o, &res);
        rc = write_file(summary, &b, &err);
    }
    if (!rc && plot) {
        sl_buf_clear(&b);
        sl_filter_plot_svg(&b, &o, &res);
        rc = write_file(plot, &b, &err);
    }
    sl_filter_result_free(&res);
    sl_buf_free(&b);
    for (size_t i = 0; i < n_score_files; i++)
        free(score_files[i]);
    free(score_files);
    for (size_t i = 0; i < n_sum_files; i++)
        free(sum_files[i]);
    free(sum_files);
    sl_list_free(in_values, n_in);
    if (rc || sl_output_commit(out, &err) < 0) {
        if (rc)
            sl_output_abort(out);
        return sl_cli_fail(cli, &err);
    }
    return 0;
}

const sl_command sl_cmd_filter = {
    .name = "filter",
    .summary = "keep documents by perplexity thresholds, percentiles, CCNet buckets or labels",
    .usage = "sluice filter [options] [FILE...]",
    .help = help,
    .run = run,
};
