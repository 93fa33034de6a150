/* `sluice score`: per-document log-likelihood under a language model. The
 * stage is model/score_stage.h; this file parses options and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/scale_opts.h"
#include "model/curve.h"
#include "model/score_stage.h"
#include "model/summary.h"
#include "stream/io.h"

static const char help[] =
    "Reads a token stream and scores every document with a Mamba-1,\n"
    "Falcon-Mamba or Mamba-2 language model: the log-probability of each token\n"
    "given the tokens before it (the first token of a document has no prediction).\n"
    "Writes one JSON object per document:\n"
    "  {\"id\":..., \"tokens\":N, \"nll\":X, \"ppl\":P, \"bpb\":B}\n"
    "tokens = predicted tokens (document length - 1; the length with --prepend),\n"
    "nll = their summed negative log-likelihood in nats, ppl = exp(nll / tokens)\n"
    "(null when tokens = 0),\n"
    "bpb = nll / ln 2 / source bytes (only when the stream records source bytes).\n"
    "Documents are packed into chunks with the recurrent state reset at each\n"
    "document start and carried across chunks, so results equal scoring each\n"
    "document alone in one pass, in bounded memory.\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "options:\n"
    "  -m, --model DIR       model directory: config.json + model.safetensors (or\n"
    "                        sharded model-*.safetensors + model.safetensors.index.json);\n"
    "                        Hugging Face MambaForCausalLM or mamba_ssm names, or\n"
    "                        FalconMambaForCausalLM, Mamba2ForCausalLM or mamba_ssm\n"
    "                        Mamba2 (n_groups 1); or pytorch_model.bin (+ index);\n"
    "                        F32/F16/BF16\n"
    "      --device NAME     cpu, cuda, cuda:N (device N) or auto (default auto: cuda\n"
    "                        when a device is found)\n"
    "      --per-token       add \"logprobs\": the natural-log probability of each predicted token\n"
    "      --max-tokens N    score only the first N tokens of each document (default: all)\n"
    "      --long-context W  add \"long_context\": (NLL with the state reset every W tokens\n"
    "                        - NLL with the full context) / tokens, in nats per token: how\n"
    "                        much the document rewards context longer than W; and \"nll_reset\"\n"
    "      --to-stream       write the token stream itself (same header and records) with\n"
    "                        the scores added to each record's metadata (nll, ppl, bpb,\n"
    "                        scored_tokens, long_context), for 'sluice filter'\n"
    "      --force           score even when the stream's tokenizer does not match the\n"
    "                        model (vocabulary size, or tokenizer.json fingerprint when the\n"
    "                        model directory has one)\n"
    "      --prepend ID|eos  put token ID (or the stream's eos id) before each document as\n"
    "                        context, so its first token is predicted too (tokens = length,\n"
    "                        and bpb covers every source byte); e.g. --prepend eos with\n"
    "                        GPT-NeoX-tokenized text (<|endoftext|> = 0). Default: none\n"
    "      --chunk N         tokens per forward pass (default 2048)\n"
    "      --batch-tokens N  tokens read ahead and scored together (default 16384)\n"
    "      --summary FILE    also write a score summary: a small (KBs) mergeable sketch of\n"
    "                        the distribution of each field 'filter' can select on (nll,\n"
    "                        ppl, bpb, long_context, nll_reset, scored_tokens, tokens,\n"
    "                        src_bytes); 'filter --cutoffs-from' merges the parts'\n"
    "                        summaries into percentile cutoffs within relative 2^-10\n"
    "                        of the exact ones (docs/scale-out.md)\n"
    "      --skip-existing   do nothing when the output exists and verifies (a token\n"
    "                        stream with --to-stream, else JSON Lines ending in a newline),\n"
    "                        and so does the --summary file when one is asked for\n"
    "\nposition curves (docs/longctx.md section 3):\n"
    "      --position-curve FILE  write the per-position loss curve as JSON: the NLL of\n"
    "                        the predictions summed by position (tokens of context before\n"
    "                        the predicted token: 1, 2-3, 4-7, ...): count, sum_nll,\n"
    "                        sum_sq, bytes; mean nll, 95% interval and bpb per bin. A\n"
    "                        table per group goes to stderr unless -q\n"
    "      --plot FILE       write the curve as an SVG: mean NLL against position\n"
    "      --group-by FIELD  one curve per value of this metadata field (e.g. source) besides\n"
    "                        \"all\"; documents without it: group \"(none)\"\n"
    "      --max-position N  score only positions < N (the first N tokens; N - 1 with\n"
    "                        --prepend); with a long N: how a model extrapolates\n"
    "      --train-length L  mark the training length L on the curve (the table says\n"
    "                        whether the curve turns up beyond it)\n"
    "      --merge-summaries  no model: the FILEs are score summaries (--summary) of\n"
    "                        parts: write the summary of all of them to -o (the same bytes\n"
    "                        in any order or grouping, and as one run over all the parts)\n"
    "      --merge-curves    no model: the FILEs are curve JSON files (of parts, or runs\n"
    "                        with the same --group-by and --max-position): write their sum\n"
    "                        to -o (and --plot)\n"
    "\nGiven a shard directory (sluice shard), the documents are reassembled from their\n"
    "pieces using the boundary index and scored as document sequences ([BOS] tokens\n"
    "[EOS], as packed), train split then val; each line gets \"split\". Shuffled\n"
    "shards cannot be reassembled: score the token stream they were made from.\n"
    "\nThe stream's vocab size must round up to the model's (padded) vocabulary:\n"
    "e.g. the GPT-NeoX tokenizer (50277) for mamba-130m (50280). A token id the\n"
    "model cannot embed is an error even with --force.\n"
    "\nexamples:\n"
    "  sluice score -m mamba-130m/ docs.tok > scores.jsonl\n"
    "  sluice score -m mamba-130m/ shards/ > shard-scores.jsonl\n"
    "  sluice score -m mamba-130m/ --to-stream docs.tok | sluice filter --keep-pct 10:90 -o kept.tok\n"
    "  sluice score -m mamba-130m/ mixed.tok --group-by source --position-curve curve.json \\\n"
    "    --plot curve.svg -o /dev/null\n"
    "  sluice score --merge-curves part-*.curve.json -o curve.json\n"
    "  sluice score -m mamba-130m/ --to-stream p-3-of-8.tok --summary s-3-of-8.sum -o scored-3-of-8.tok\n";

/* Library messages name option fields; say them as this command's flags. */
static const sl_cli_field fields[] = {{"max_position", "--max-position"}, {"group_by", "--group-by"},
                                      {"train_length", "--train-length"}, {"prepend_eos", "--prepend eos"},
                                      {"prepend", "--prepend"},           {NULL, NULL}};

/* The curve's files (sl_curve_save), then its table to stderr unless quiet. */
static int write_curve(const sl_cli *cli, const sl_curve *c, const char *curve_path, const char *plot_path, sl_err *err)
{
    if (sl_curve_save(c, curve_path, plot_path, err) < 0)
        return -1;
    if (!cli->quiet) {
        sl_buf t = {0};
        sl_curve_text(&t, c);
        fwrite(t.data, 1, t.len, stderr);
        sl_buf_free(&t);
    }
    return 0;
}

/* --merge-summaries: the merged summary to -o. */
static int merge_summaries(sl_cli *cli, char **files, int n)
{
    if (n < 1)
        sl_cli_usage_error(cli, "--merge-summaries needs at least one summary file");
    sl_err err = {{0}};
    sl_score_summary *s = sl_score_summary_load((const char *const *)files, (size_t)n, &err);
    int rc = !s || sl_score_summary_save(s, cli->output ? cli->output : "-", &err) < 0;
    sl_score_summary_free(s);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

/* --skip-existing with --summary: the stage is skipped only when the summary
 * also exists and reads back; else it runs (and says why). 1 = may skip. */
static int summary_verifies(const sl_cli *cli, const sl_scale_opts *so, const char *path)
{
    if (!so->skip_existing || !path)
        return 1;
    sl_err err = {{0}};
    sl_score_summary *s = sl_score_summary_load(&path, 1, &err);
    struct stat st;
    if (s || !cli->output || stat(cli->output, &st) != 0) { /* no output: nothing to skip, nothing to say */
        sl_score_summary_free(s);
        return 1;
    }
    fprintf(stderr, "sluice: %s: --skip-existing: the summary does not verify (%s); running the stage\n",
            cli->cmd->name, err.msg);
    return 0;
}

/* --merge-curves: the sum of the curve files to -o. */
static int merge_curves(sl_cli *cli, char **files, int n, const char *plot)
{
    if (n < 1)
        sl_cli_usage_error(cli, "--merge-curves needs at least one curve JSON file");
    sl_err err = {{0}};
    sl_curve *sum = sl_curve_load((const char *const *)files, (size_t)n, &err);
    int rc = sum ? 0 : -1;
    if (!rc)
        rc = write_curve(cli, sum, cli->output, plot, &err);
    sl_curve_free(sum);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

enum {
    O_DEV = SL_OPT_FIRST_FREE,
    O_PER,
    O_MAX,
    O_LC,
    O_TS,
    O_FORCE,
    O_CHUNK,
    O_BATCH,
    O_PRE,
    O_CURVE,
    O_PLOT,
    O_GROUP,
    O_MAXPOS,
    O_TRAIN,
    O_MERGE,
    O_SUMMARY,
    O_MERGE_SUM
};
static const struct option lo[] = {{"model", required_argument, 0, 'm'},
                                   {"device", required_argument, 0, O_DEV},
                                   {"per-token", no_argument, 0, O_PER},
                                   {"max-tokens", required_argument, 0, O_MAX},
                                   {"long-context", required_argument, 0, O_LC},
                                   {"to-stream", no_argument, 0, O_TS},
                                   {"force", no_argument, 0, O_FORCE},
                                   {"chunk", required_argument, 0, O_CHUNK},
                                   {"batch-tokens", required_argument, 0, O_BATCH},
                                   {"prepend", required_argument, 0, O_PRE},
                                   SL_SKIP_LONG_OPT,
                                   {"position-curve", required_argument, 0, O_CURVE},
                                   {"plot", required_argument, 0, O_PLOT},
                                   {"group-by", required_argument, 0, O_GROUP},
                                   {"max-position", required_argument, 0, O_MAXPOS},
                                   {"train-length", required_argument, 0, O_TRAIN},
                                   {"merge-curves", no_argument, 0, O_MERGE},
                                   {"summary", required_argument, 0, O_SUMMARY},
                                   {"merge-summaries", no_argument, 0, O_MERGE_SUM},
                                   SL_CLI_COMMON_LONG,
                                   {0, 0, 0, 0}};

static int run(sl_cli *cli, int argc, char **argv)
{
    sl_score_opts o;
    sl_score_opts_default(&o);
    static const char *const devices[] = {"cpu", "cuda", "auto", NULL};
    sl_scale_opts so = {0};
    const char *curve_path = NULL, *plot = NULL, *group_by = NULL, *summary = NULL;
    int64_t train_length = 0;
    int merge = 0, merge_sum = 0, c;
    while ((c = getopt_long(argc, argv, "m:" SL_CLI_COMMON_SHORT, lo, NULL)) != -1) {
        if (sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case 'm': o.model_dir = optarg; break;
        case O_DEV:
            /* cuda:N picks device N; the backend validates the number */
            o.device = strncmp(optarg, "cuda:", 5) ? devices[sl_cli_choice(cli, "--device", optarg, devices)] : optarg;
            break;
        case O_PER: o.per_token = 1; break;
        case O_MAX: o.max_tokens = sl_cli_int(cli, "--max-tokens", optarg, 1, INT64_MAX / 4); break;
        case O_LC: o.long_context = sl_cli_int(cli, "--long-context", optarg, 1, INT64_MAX / 4); break;
        case O_TS: o.to_stream = 1; break;
        case O_FORCE: o.force = 1; break;
        case O_CHUNK: o.chunk = sl_cli_int(cli, "--chunk", optarg, 1, 1 << 20); break;
        case O_BATCH: o.batch_tokens = sl_cli_int(cli, "--batch-tokens", optarg, 1, 1LL << 32); break;
        case O_PRE:
            o.prepend_eos = !strcmp(optarg, "eos");
            if (!o.prepend_eos)
                o.prepend = sl_cli_int(cli, "--prepend", optarg, 0, UINT32_MAX);
            break;
        case O_CURVE: curve_path = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_GROUP: group_by = optarg; break;
        case O_MAXPOS: o.max_position = sl_cli_int(cli, "--max-position", optarg, 2, INT64_MAX / 4); break;
        case O_TRAIN: train_length = sl_cli_int(cli, "--train-length", optarg, 1, INT64_MAX / 4); break;
        case O_MERGE: merge = 1; break;
        case O_SUMMARY: summary = optarg; break;
        case O_MERGE_SUM: merge_sum = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (merge_sum) {
        if (merge || o.model_dir || curve_path || plot || group_by || o.max_position || train_length || summary)
            sl_cli_usage_error(cli, "--merge-summaries takes summary files and -o only");
        return merge_summaries(cli, argv + optind, argc - optind);
    }
    if (merge) {
        if (o.model_dir || curve_path || group_by || o.max_position || train_length || summary)
            sl_cli_usage_error(cli, "--merge-curves takes curve files, -o and --plot only");
        return merge_curves(cli, argv + optind, argc - optind, plot);
    }
    if ((group_by || train_length) && !curve_path && !plot)
        sl_cli_usage_error(cli, "--group-by and --train-length need --position-curve or --plot");
    if (!o.model_dir)
        sl_cli_usage_error(cli, "-m MODEL_DIR is required");
    if (o.to_stream && o.per_token)
        sl_cli_usage_error(cli, "--per-token writes JSON Lines; it cannot be combined with --to-stream");
    const char *path = optind < argc ? argv[optind] : "-";
    for (int i = optind; argc - optind > 1 && i < argc; i++)
        if (sl_cli_is_shard_dir(argv[i]))
            sl_cli_usage_error(cli, "%s is a shard directory: one at a time (several inputs are token streams)",
                               argv[i]);
    if (argc - optind == 1 && sl_cli_is_shard_dir(path) && o.to_stream)
        sl_cli_usage_error(cli, "--to-stream needs a token stream, not a shard directory");
    o.threads = sl_cli_threads(cli);
    o.progress = cli->progress;
    if (summary && (!strcmp(summary, "-") || (cli->output && !strcmp(summary, cli->output))))
        sl_cli_usage_error(cli, "--summary needs a file of its own (not standard output, not -o)");
    if (summary_verifies(cli, &so, summary) &&
        sl_cli_skip_existing(cli, &so, o.to_stream ? SL_VERIFY_TOKENS : SL_VERIFY_LINES))
        return 0;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, summary, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, curve_path, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, plot, SL_OUT_FILE, 0);

    if (summary)
        o.summary = sl_score_summary_new();
    if (curve_path || plot) {
        o.curve = sl_curve_new(group_by);
        o.curve->train_length = train_length;
    }

    sl_err err = {{0}};
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = !out || sl_score_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), out, &err) < 0;
    if (!rc && o.curve) /* the curve files and summary, then the output: none of them after an error */
        rc = write_curve(cli, o.curve, curve_path, plot, &err) < 0;
    if (!rc && o.summary)
        rc = sl_score_summary_save(o.summary, summary, &err) < 0;
    sl_curve_free(o.curve);
    sl_score_summary_free(o.summary);
    sl_cli_map_fields(&err, fields);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

const sl_command sl_cmd_score = {
    .name = "score",
    .summary = "score documents with a Mamba language model (nll, ppl, bpb)",
    .usage = "sluice score -m MODEL_DIR [options] [FILE...|DIR]",
    .help = help,
    .run = run,
};
