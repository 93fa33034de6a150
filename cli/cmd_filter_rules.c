/* `sluice filter --rules LIST`: option parsing for text/rules_stage.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/source.h"
#include "cli/doc_opts.h"
#include "cli/filter_rules.h"
#include "cli/scale_opts.h"
#include "stream/io.h"
#include "text/rules_stage.h"

enum { OPT_RULES = SL_DO_END, OPT_RULE, OPT_REJECTED, OPT_ANNOTATE, OPT_SUMMARY };

int sl_filter_rules_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--rules") || !strcmp(argv[i], "--rule") || !strncmp(argv[i], "--rules=", 8) ||
            !strncmp(argv[i], "--rule=", 7))
            return 1;
    }
    return 0;
}

static int write_file(const char *path, const sl_buf *b, sl_err *err)
{
    sl_output *o = sl_output_open(path, err);
    return !o || sl_output_write(o, b->data, b->len, err) < 0 || sl_output_commit(o, err) < 0 ? -1 : 0;
}

int sl_filter_rules_main(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {SL_DOC_LONG_OPTS,
                                         {"rules", required_argument, 0, OPT_RULES},
                                         {"rule", required_argument, 0, OPT_RULE},
                                         {"rejected", required_argument, 0, OPT_REJECTED},
                                         {"annotate", no_argument, 0, OPT_ANNOTATE},
                                         {"summary", required_argument, 0, OPT_SUMMARY},
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    ro.mem_budget = SL_DOCS_DEFAULT_MEM_BUDGET;
    sl_scale_opts so = {0};
    sl_rules_stage_opts o = {0};
    const char *rejected = NULL, *summary = NULL;
    sl_rules *rules = sl_rules_new();
    sl_err err = {{0}};
    int c;
    while ((c = getopt_long(argc, argv, SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case OPT_RULES:
            if (sl_rules_add(rules, optarg, &err) < 0)
                sl_cli_usage_error(cli, "--rules: %s", err.msg);
            break;
        case OPT_RULE:
            if (sl_rules_set(rules, optarg, &err) < 0)
                sl_cli_usage_error(cli, "--rule: %s", err.msg);
            break;
        case OPT_REJECTED: rejected = optarg, sl_sources_output_also(optarg); break;
        case OPT_ANNOTATE: o.annotate = 1; break;
        case OPT_SUMMARY: summary = optarg, sl_sources_output_also(optarg); break;
        default: sl_cli_common(cli, c, argv[optind - 1]); break;
        }
    }
    if (rejected && o.annotate)
        sl_cli_usage_error(cli, "--rejected: with --annotate nothing is dropped");
    ro.quiet = cli->quiet;
    o.field = ro.field;
    o.progress = cli->progress;
    o.threads = sl_cli_threads(cli);
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_LINES)) {
        sl_rules_free(rules);
        return 0;
    }
    if (sl_rules_ready(rules, &err) < 0) {
        sl_rules_free(rules);
        return sl_cli_fail(cli, &err);
    }
    sl_part part;
    sl_docreader *r;
    if (sl_cli_part(cli, &so, &part)) {
        size_t np;
        sl_slice *pc = sl_cli_slices(cli, &part, (const char *const *)argv + optind, (size_t)(argc - optind),
                                     sl_docreader_cut, &ro, &np);
        r = sl_docreader_open_slices(pc, np, &ro, &err);
        sl_slices_free(pc, np);
    } else {
        r = sl_docreader_open((const char *const *)argv + optind, argc - optind, &ro, &err);
    }
    sl_output *out = NULL, *rej = NULL;
    if (!r || !(out = sl_output_open(cli->output, &err)) || (rejected && !(rej = sl_output_open(rejected, &err)))) {
        if (out)
            sl_output_abort(out);
        sl_docreader_close(r);
        sl_rules_free(rules);
        return sl_cli_doc_fail(cli, &err);
    }
    sl_rules_stats st;
    int rc = sl_rules_run(rules, r, &o, out, rej, &st, &err);
    sl_docreader_stats rs = *sl_docreader_stats_get(r);
    sl_docreader_close(r);
    sl_buf b = {0};
    if (rc == 0 && summary) {
        sl_rules_stats_json(rules, &st, o.annotate, &b);
        rc = write_file(summary, &b, &err);
    }
    if (rc == 0 && rej) { /* commit frees it, also on failure */
        rc = sl_output_commit(rej, &err);
        rej = NULL;
    }
    if (rc < 0) {
        sl_output_abort(out);
        out = NULL;
    }
    if (rc < 0 || sl_output_commit(out, &err) < 0) {
        sl_output_abort(rej);
        sl_buf_free(&b);
        sl_rules_stats_free(&st);
        sl_rules_free(rules);
        return sl_cli_doc_fail(cli, &err);
    }
    if (!cli->quiet) {
        sl_buf_clear(&b);
        sl_rules_stats_text(rules, &st, o.annotate, &b);
        fprintf(stderr, "sluice: filter: %s", b.data);
    }
    if (rs.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)rs.invalid_utf8,
                    ro.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (rs.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)rs.skipped_lines);
    sl_buf_free(&b);
    sl_rules_stats_free(&st);
    sl_rules_free(rules);
    return 0;
}
