/* `sluice mix`: length-aware mixing of token streams (shard/mix.h;
 * docs/longctx.md section 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "shard/mix.h"
#include "stream/io.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] = "Mixes several token streams (sources) into one of about --tokens tokens:\n"
                           "each source gets weight/sum(weights) of the budget, and within a source a\n"
                           "length policy decides how often each document is taken (Fu et al. 2024,\n"
                           "\"Data Engineering for Scaling Language Models to 128K Context\": up-sample\n"
                           "long documents within each source, keeping the sources' shares). Documents\n"
                           "are whole; a source smaller than its share repeats them in later epochs.\n"
                           "Each output document carries its source in its metadata (\"source\"); copy k\n"
                           "(k >= 1) of a document has the id ID#k. Deterministic under --seed: the\n"
                           "selection is specified in docs/longctx.md. Inputs are read twice (lengths,\n"
                           "then documents, once per epoch): files or part directories, not stdin.\n\n"
                           "options:\n"
                           "  --source NAME=FILE:WEIGHT  a source (repeat; at least one); WEIGHT > 0\n"
                           "  --tokens N          the token budget (required; k/M/G = powers of 1024)\n"
                           "  --upsample-long L:FACTOR  documents of >= L tokens are taken FACTOR times\n"
                           "                      as often as the others of their source\n"
                           "  --length-target FILE  JSON {\"bins\":[{\"lo\":L,\"hi\":H|null,\"share\":S},...]}:\n"
                           "                      within each source, documents of lo <= tokens < hi make\n"
                           "                      share S of its tokens (documents in no bin are not taken)\n"
                           "  --seed S            seed of the selection (default 0)\n"
                           "  --max-epochs E      no document is taken more than E times (default 4); a\n"
                           "                      source that cannot give its share within that is an error\n"
                           "  --report FILE       JSON report: tokens, share, effective epochs and length\n"
                           "                      histograms before/after per source\n"
                           "  --plot FILE         SVG of the length distributions per source, input and mixed\n"
                           "  --source-ids        output ids NAME/ID (copies NAME/ID#k): documents of different\n"
                           "                      sources that share an id (a.jsonl:1 in both) stay apart;\n"
                           "                      `shard --unique-ids` then holds for the mix\n\n"
                           "A one-line-per-source summary goes to stderr unless --quiet.\n\n"
                           "example:\n"
                           "  sluice mix --source web=web.tok:0.7 --source books=books.tok:0.3 --tokens 1G \\\n"
                           "      --upsample-long 4096:3 --seed 1 --report mix.json -o mixed.tok\n";

enum { O_SOURCE = SL_OPT_FIRST_FREE, O_TOKENS, O_UPS, O_TARGET, O_SEED, O_EPOCHS, O_REPORT, O_PLOT, O_SRCIDS };

static const sl_cli_field fields[] = {
    {"tokens", "--tokens"}, {"max_epochs", "--max-epochs"}, {"factor", "--upsample-long"},
    {"weight", "--source"}, {"source", "--source"},         {"length_target", "--length-target"},
    {NULL, NULL},
};

static void parse_source(const sl_cli *cli, char *spec, sl_mix_source *s)
{
    char *eq = strchr(spec, '='), *colon = strrchr(spec, ':');
    if (!eq || eq == spec || !colon || colon < eq + 2)
        sl_cli_usage_error(cli, "--source '%s': expected NAME=FILE:WEIGHT", spec);
    *eq = 0;
    *colon = 0;
    s->name = spec;
    s->path = eq + 1;
    if (!strcmp(s->path, "-"))
        sl_cli_usage_error(cli, "--source %s: mix reads its inputs twice, so not from standard input", s->name);
    char *end;
    s->weight = strtod(colon + 1, &end);
    if (end == colon + 1 || *end || !(s->weight > 0) || !isfinite(s->weight))
        sl_cli_usage_error(cli, "--source %s: weight '%s' is not a positive number", s->name, colon + 1);
}

static const struct option opts[] = {{"source", required_argument, 0, O_SOURCE},
                                     {"tokens", required_argument, 0, O_TOKENS},
                                     {"upsample-long", required_argument, 0, O_UPS},
                                     {"length-target", required_argument, 0, O_TARGET},
                                     {"seed", required_argument, 0, O_SEED},
                                     {"max-epochs", required_argument, 0, O_EPOCHS},
                                     {"report", required_argument, 0, O_REPORT},
                                     {"plot", required_argument, 0, O_PLOT},
                                     {"source-ids", no_argument, 0, O_SRCIDS},
                                     SL_CLI_COMMON_LONG,
                                     {0, 0, 0, 0}};

static int run(sl_cli *cli, int argc, char **argv)
{
    sl_mix_source *src = NULL;
    size_t n_src = 0;
    sl_mix_opts o = {.max_epochs = 4, .policy = SL_MIX_NONE};
    const char *target = NULL, *report = NULL, *plot = NULL;
    long long tokens = -1;
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_SOURCE:
            src = sl_xrealloc(src, (n_src + 1) * sizeof *src);
            parse_source(cli, optarg, &src[n_src++]);
            break;
        case O_TOKENS: tokens = sl_cli_int(cli, "--tokens", optarg, 1, INT64_MAX); break;
        case O_UPS: {
            char *colon = strchr(optarg, ':');
            if (!colon)
                sl_cli_usage_error(cli, "--upsample-long '%s': expected L:FACTOR", optarg);
            *colon = 0;
            o.long_len = (uint64_t)sl_cli_int(cli, "--upsample-long", optarg, 1, UINT32_MAX);
            o.factor = sl_cli_double(cli, "--upsample-long", colon + 1, 1e-9, 1e9);
            if (o.policy == SL_MIX_TARGET)
                sl_cli_usage_error(cli, "--upsample-long and --length-target exclude each other");
            o.policy = SL_MIX_UPSAMPLE;
            break;
        }
        case O_TARGET:
            if (o.policy == SL_MIX_UPSAMPLE)
                sl_cli_usage_error(cli, "--upsample-long and --length-target exclude each other");
            target = optarg;
            o.policy = SL_MIX_TARGET;
            break;
        case O_SEED: o.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_EPOCHS: o.max_epochs = sl_cli_double(cli, "--max-epochs", optarg, 1e-9, 65535); break;
        case O_REPORT: report = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_SRCIDS: o.source_ids = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (optind < argc)
        sl_cli_usage_error(cli, "unexpected argument '%s' (inputs are given with --source NAME=FILE:WEIGHT)",
                           argv[optind]);
    if (!n_src)
        sl_cli_usage_error(cli, "needs at least one --source NAME=FILE:WEIGHT");
    if (tokens < 0)
        sl_cli_usage_error(cli, "--tokens N is required");
    o.tokens = (uint64_t)tokens;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);

    sl_err err = {{0}};
    sl_mix *m = NULL;
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = out ? sl_mix_run(&o, src, n_src, target, out, report, plot, cli->progress, &m, &err) : -1;
    if (!rc && (rc = sl_output_commit(out, &err) < 0 ? -1 : 0) == 0)
        out = NULL;
    sl_output_abort(out);
    free(src);
    if (rc) {
        sl_cli_map_fields(&err, fields);
        return sl_cli_fail(cli, &err);
    }
    if (!cli->quiet) {
        sl_buf b = {0};
        sl_mix_summary_text(m, &b);
        fputs(b.data, stderr);
        sl_buf_free(&b);
    }
    sl_mix_free(m);
    return 0;
}

const sl_command sl_cmd_mix = {
    .name = "mix",
    .summary = "mix token streams by source weights with length-aware up-sampling",
    .usage = "sluice mix --source NAME=FILE:WEIGHT... --tokens N [options]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
