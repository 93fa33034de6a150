/* `sluice dedup exact|lines|minhash`: option parsing for dedup/dedup.h. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/source.h"
#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "cli/scale_opts.h"
#include "dedup/dedup.h"
#include "dedup/lsh.h"
#include "shard/verify.h"
#include "stream/docreader.h"
#include "stream/io.h"

enum {
    OPT_REMOVED = SL_DO_END,
    OPT_SUMMARY,
    OPT_ANNOTATE,
    OPT_NORMALIZE,
    OPT_MIN_LINE_CHARS,
    OPT_NGRAM,
    OPT_BUCKETS,
    OPT_ROWS,
    OPT_SEED,
    OPT_HASH,
    OPT_LANGUAGE,
    OPT_PLOT,
    OPT_JACCARD,
    OPT_STEP,
    OPT_SIGNATURES,
};

#define COMMON_HELP                                                                                                    \
    "      --removed FILE      JSON Lines, one object per removed document\n"                                          \
    "      --summary FILE      JSON: documents, kept, removed, clusters and their sizes\n"                             \
    "      --plot FILE         (exact, minhash) SVG: documents by the size of their cluster\n"                         \
    "  -f, --field NAME        JSON field that holds the text (default: text)\n"                                       \
    "      --format, --lines, --invalid, --on-error, --max-doc-bytes: as for 'sluice read'\n"                          \
    "      --mem-budget SIZE   memory for batches and signature buckets (default 64M);\n"                              \
    "                          (minhash) records beyond it go to sorted runs under $TMPDIR\n"                          \
    "Documents are read as 'sluice read' reads them and written as it writes them,\n"                                  \
    "in input order. Empty documents are counted and kept (datatrove's readers skip\n"                                 \
    "them). The documents are spooled under $TMPDIR (about the output's size).\n"

static const sl_cli_field fields[] = {
    {"ngram", "--ngram"}, {"buckets", "--buckets"},   {"rows", "--rows"},         {"seed", "--seed"},
    {"hash", "--hash"},   {"language", "--language"}, {"annotate", "--annotate"}, {NULL, NULL}};

/* --skip-existing for a step's file: 1 when it is there and verifies. */
static int skip_file(const sl_cli *cli, const char *path)
{
    sl_err err = {{0}};
    int v = sl_output_verify_existing_with(path, sl_lsh_verify, &err);
    if (v == SL_EXISTING_NONE)
        return 0;
    if (v == SL_EXISTING_UNKNOWN) {
        sl_cli_warn(cli, "%s; running the step", err.msg);
        return 0;
    }
    if (v == SL_EXISTING_BAD) {
        fprintf(stderr, "sluice: %s: --skip-existing: %s does not verify (%s); running the step again\n",
                cli->cmd->name, path, err.msg);
        return 0;
    }
    fprintf(stderr, "sluice: %s: --skip-existing: %s exists and verifies; nothing to do\n", cli->cmd->name, path);
    return 1;
}

static void warn_reader(sl_cli *cli, const sl_docreader_stats *rs, const sl_docreader_opts *ro)
{
    if (rs->invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)rs->invalid_utf8,
                    ro->invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (rs->skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)rs->skipped_lines);
}

/* dedup minhash --step STEP --signatures DIR [--part R/N] (docs/dedup.md, "Steps"). */
static int run_step(sl_cli *cli, int argc, char **argv, sl_dedup_opts *o, sl_docreader_opts *ro,
                    const sl_scale_opts *so, int step, const char *dir)
{
    if (step < 0)
        sl_cli_usage_error(cli, "--signatures, --part and --skip-existing go with --step");
    if (!dir)
        sl_cli_usage_error(cli, "--step needs --signatures DIR (the directory of the steps' files)");
    sl_part part = {0, 1};
    int has_part = sl_cli_part(cli, so, &part);
    int nfiles = argc - optind;
    size_t budget = sl_mem_budget_split(ro->mem_budget).budget;
    enum { SIG = SL_LSH_SIGNATURES, BUCKETS = SL_LSH_BUCKETS, CLUSTER = SL_LSH_CLUSTER, FILTER = SL_LSH_FILTER };
    if (step == CLUSTER && has_part)
        sl_cli_usage_error(cli, "--step cluster is one step over all parts: no --part");
    if ((step == BUCKETS || step == CLUSTER) && nfiles)
        sl_cli_usage_error(cli, "--step %s reads the files in %s, not input files",
                           step == BUCKETS ? "buckets" : "cluster", dir);
    if ((step == SIG || step == FILTER) && !nfiles)
        sl_cli_usage_error(cli, "--step %s needs the input files (the same, in the same order, for both steps)",
                           step == SIG ? "signatures" : "filter");
    if (step != FILTER && (o->removed || o->annotate))
        sl_cli_usage_error(cli, "--removed and --annotate go with --step filter");
    if (step != CLUSTER && (o->summary || o->plot))
        sl_cli_usage_error(cli, "--summary and --plot go with --step cluster (it counts the whole corpus)");
    if (step != FILTER && cli->output && strcmp(cli->output, "-") != 0)
        sl_cli_usage_error(cli, "-o goes with --step filter; the other steps write under %s", dir);
    char *path = sl_lsh_step_file(dir, step, part.r, part.n);
    sl_err err = {{0}};
    int rc = 0;
    sl_dedup_stats st;
    if (step != FILTER && so->skip_existing && skip_file(cli, path)) {
        rc = 0;
    } else if (step == FILTER && sl_cli_skip_existing(cli, so, SL_VERIFY_LINES)) {
        rc = 0;
    } else {
        sl_docreader *r = NULL;
        sl_output *out = NULL;
        const char *const *files = (const char *const *)argv + optind;
        if ((step == SIG || step == FILTER) && has_part) {
            size_t np;
            sl_slice *pc = sl_cli_slices(cli, &part, files, (size_t)nfiles, sl_docreader_cut, ro, &np);
            r = sl_docreader_open_slices(pc, np, ro, &err);
            sl_slices_free(pc, np);
            rc = r ? 0 : -1;
        } else if (step == SIG || step == FILTER) {
            r = sl_docreader_open(files, nfiles, ro, &err);
            rc = r ? 0 : -1;
        }
        if (!rc && step == FILTER && !(out = sl_output_open(cli->output, &err)))
            rc = -1;
        if (!rc)
            rc = sl_lsh_step(step, o, budget, dir, part.r, part.n, r, out, &st, &err);
        if (out) {
            if (rc < 0)
                sl_output_abort(out);
            else if (sl_output_commit(out, &err) < 0)
                rc = -1;
        }
        if (r) {
            sl_docreader_stats rs = *sl_docreader_stats_get(r);
            sl_docreader_close(r);
            if (rc == 0)
                warn_reader(cli, &rs, ro);
        }
    }
    free(path);
    if (rc < 0) {
        sl_cli_map_fields(&err, fields);
        return sl_cli_doc_fail(cli, &err);
    }
    return 0;
}

static int run_mode(sl_cli *cli, int argc, char **argv, int mode)
{
    static const struct option opts[] = {SL_DOC_LONG_OPTS,
                                         {"removed", required_argument, 0, OPT_REMOVED},
                                         {"summary", required_argument, 0, OPT_SUMMARY},
                                         {"annotate", no_argument, 0, OPT_ANNOTATE},
                                         {"normalize", no_argument, 0, OPT_NORMALIZE},
                                         {"min-line-chars", required_argument, 0, OPT_MIN_LINE_CHARS},
                                         {"ngram", required_argument, 0, OPT_NGRAM},
                                         {"buckets", required_argument, 0, OPT_BUCKETS},
                                         {"rows", required_argument, 0, OPT_ROWS},
                                         {"seed", required_argument, 0, OPT_SEED},
                                         {"hash", required_argument, 0, OPT_HASH},
                                         {"language", required_argument, 0, OPT_LANGUAGE},
                                         {"plot", required_argument, 0, OPT_PLOT},
                                         {"jaccard", required_argument, 0, OPT_JACCARD},
                                         {"step", required_argument, 0, OPT_STEP},
                                         {"signatures", required_argument, 0, OPT_SIGNATURES},
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const hashes[] = {"xxhash64", "xxhash32", "sha1-64", "sha1-32", NULL};
    static const char *const steps[] = {"signatures", "buckets", "cluster", "filter", NULL};
    int step = -1;
    const char *sigdir = NULL;
    sl_scale_opts so = {0};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    ro.mem_budget = SL_DOCS_DEFAULT_MEM_BUDGET;
    sl_dedup_opts o = SL_DEDUP_OPTS_INIT;
    o.mode = mode;
    int c;
    while ((c = getopt_long(argc, argv, SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro))
            continue;
        if (sl_cli_scale_option(&so, c, optarg)) {
            if (mode != SL_DEDUP_MINHASH)
                sl_cli_usage_error(cli, "%s is not an option of '%s'", argv[optind - 1], cli->cmd->name);
            continue;
        }
        int ok = 1;
        switch (c) {
        case OPT_REMOVED: o.removed = optarg, sl_sources_output_also(optarg); break;
        case OPT_SUMMARY: o.summary = optarg, sl_sources_output_also(optarg); break;
        case OPT_ANNOTATE: ok = mode != SL_DEDUP_LINES, o.annotate = 1; break;
        case OPT_NORMALIZE: ok = mode == SL_DEDUP_EXACT, o.normalize = 1; break;
        case OPT_MIN_LINE_CHARS:
            ok = mode == SL_DEDUP_LINES;
            o.min_line_chars = (size_t)sl_cli_int(cli, "--min-line-chars", optarg, 0, 1 << 30);
            break;
        case OPT_NGRAM:
            ok = mode == SL_DEDUP_MINHASH, o.mh.ngram = (int)sl_cli_int(cli, "--ngram", optarg, 1, 1000);
            break;
        case OPT_BUCKETS:
            ok = mode == SL_DEDUP_MINHASH, o.mh.buckets = (int)sl_cli_int(cli, "--buckets", optarg, 1, 1024);
            break;
        case OPT_ROWS:
            ok = mode == SL_DEDUP_MINHASH, o.mh.rows = (int)sl_cli_int(cli, "--rows", optarg, 1, 1024);
            break;
        case OPT_SEED:
            ok = mode == SL_DEDUP_MINHASH, o.mh.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, 4294967295LL);
            break;
        case OPT_HASH: ok = mode == SL_DEDUP_MINHASH, o.mh.hash = sl_cli_choice(cli, "--hash", optarg, hashes); break;
        case OPT_LANGUAGE: ok = mode == SL_DEDUP_MINHASH, o.mh.language = optarg; break;
        case OPT_PLOT: ok = mode != SL_DEDUP_LINES, o.plot = optarg; break;
        case OPT_JACCARD:
            ok = mode == SL_DEDUP_MINHASH, o.jaccard_on = 1;
            o.jaccard = sl_cli_double(cli, "--jaccard", optarg, 0, 1);
            break;
        case OPT_STEP: ok = mode == SL_DEDUP_MINHASH, step = sl_cli_choice(cli, "--step", optarg, steps); break;
        case OPT_SIGNATURES: ok = mode == SL_DEDUP_MINHASH, sigdir = optarg; break;
        default: sl_cli_common(cli, c, argv[optind - 1]); break;
        }
        if (!ok)
            sl_cli_usage_error(cli, "%s is not an option of '%s'", argv[optind - 1], cli->cmd->name);
    }
    ro.quiet = cli->quiet;
    o.progress = cli->progress;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, o.removed, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, o.summary, SL_OUT_FILE, 0);
    sl_cli_check_output(cli, o.plot, SL_OUT_FILE, 0);
    if (step >= 0 || sigdir || so.part || so.skip_existing)
        return run_step(cli, argc, argv, &o, &ro, &so, step, sigdir);
    sl_err err = {{0}};
    sl_docreader *r = sl_docreader_open((const char *const *)argv + optind, argc - optind, &ro, &err);
    if (!r)
        return sl_cli_doc_fail(cli, &err);
    sl_output *out = sl_output_open(cli->output, &err);
    if (!out) {
        sl_docreader_close(r);
        return sl_cli_doc_fail(cli, &err);
    }
    sl_dedup_stats st;
    int rc = sl_dedup_run(r, &ro, &o, out, &st, &err);
    sl_docreader_stats rs = *sl_docreader_stats_get(r);
    sl_docreader_close(r);
    if (rc < 0) {
        sl_output_abort(out);
        sl_cli_map_fields(&err, fields);
        return sl_cli_doc_fail(cli, &err);
    }
    if (sl_output_commit(out, &err) < 0)
        return sl_cli_doc_fail(cli, &err);
    if (rs.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)rs.invalid_utf8,
                    ro.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (rs.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)rs.skipped_lines);
    return 0;
}

static int run_exact(sl_cli *cli, int argc, char **argv)
{
    return run_mode(cli, argc, argv, SL_DEDUP_EXACT);
}

static int run_lines(sl_cli *cli, int argc, char **argv)
{
    return run_mode(cli, argc, argv, SL_DEDUP_LINES);
}

static int run_minhash(sl_cli *cli, int argc, char **argv)
{
    /* One malloc arena for all threads: with one per thread, each keeps up
     * to M_TRIM_THRESHOLD (cli/main.c) of freed batch memory, and the peak
     * resident size crept up with the corpus (-@ 2: +12% at 4x, flat with
     * one arena; docs/performance.md). The workers allocate next to nothing
     * once their buffers have grown, so they do not contend for it. */
    mallopt(M_ARENA_MAX, 1);
    return run_mode(cli, argc, argv, SL_DEDUP_MINHASH);
}

const sl_command sl_cmd_dedup_exact = {
    .name = "dedup exact",
    .summary = "drop documents whose text is identical (or identical after --normalize)",
    .usage = "sluice dedup exact [options] [FILES...]",
    .help = "Keeps the first document of each text, in input order.\n\n"
            "options:\n"
            "      --normalize         compare the texts after datatrove's simplify_text\n"
            "                          (lowercase, numbers -> 0, punctuation -> space,\n"
            "                          whitespace runs -> one space, accents dropped)\n"
            "      --annotate          drop nothing: add \"dup_cluster\" (the kept document's\n"
            "                          number, from 0) and \"dup_count\" to every document\n" COMMON_HELP
            "--removed lines: {\"id\":...,\"cluster\":N,\"kept\":<id of the kept one>}.\n"
            "\nexamples:\n"
            "  sluice dedup exact corpus.jsonl.zst -o unique.jsonl --removed removed.jsonl\n"
            "  sluice read dump/*.gz | sluice dedup exact --normalize --summary dedup.json\n",
    .run = run_exact,
};

const sl_command sl_cmd_dedup_lines = {
    .name = "dedup lines",
    .summary = "CCNet's line dedup: drop lines seen in an earlier document",
    .usage = "sluice dedup lines [options] [FILES...]",
    .help = "A line (text between newlines) whose simplify_text form occurs in an earlier\n"
            "document is removed; the first document that has it keeps it (every copy\n"
            "in that document). A document that lost lines and has only whitespace left\n"
            "is dropped.\n\n"
            "options:\n"
            "      --min-line-chars N  lines whose normalized form is shorter (code points)\n"
            "                          are never removed (default 1: blank lines stay)\n" COMMON_HELP
            "--removed lines: {\"id\":...,\"lines_removed\":N,\"dropped\":true|false}.\n"
            "\nexample:\n"
            "  sluice dedup lines crawl.jsonl.zst -o clean.jsonl --summary lines.json\n",
    .run = run_lines,
};

const sl_command sl_cmd_dedup_minhash = {
    .name = "dedup minhash",
    .summary = "near-duplicate removal with datatrove 0.10.1's MinHash LSH, exactly",
    .usage = "sluice dedup minhash [options] [FILES...]",
    .help = "Signatures as datatrove's MinhashDedupSignature computes them (simplify_text,\n"
            "spaCy's English word tokenizer, word n-grams, hashed, permuted by numpy's\n"
            "RandomState(seed) draws), LSH buckets, union-find clusters; the document\n"
            "datatrove keeps in each cluster is kept. Documents with fewer words than\n"
            "--ngram have no signature and are kept. See docs/dedup.md.\n\n"
            "options:\n"
            "      --ngram N           words per shingle (default 5)\n"
            "      --buckets B         LSH bands (default 14)\n"
            "      --rows R            hashes per band (default 8): similarity threshold\n"
            "                          about (1/B)^(1/R), 0.72 for 14x8\n"
            "      --seed S            permutation seed, 0..2^32-1 (default 1)\n"
            "      --hash H            xxhash64 (default), xxhash32, sha1-64 or sha1-32\n"
            "      --language L        word tokenizer (default en, the only one so far)\n"
            "      --jaccard T         keep a candidate pair only when the Jaccard similarity\n"
            "                          of the two shingle sets is at least T (0..1); off by\n"
            "                          default (datatrove has no such check)\n"
            "      --annotate          drop nothing: add \"dup_cluster\" (the kept document's\n"
            "                          number, from 0) and \"dup_count\" to every document\n" COMMON_HELP
            "--removed lines: {\"id\":...,\"cluster\":N,\"kept\":<id of the kept one>}.\n"
            "\nsteps (scale-out, docs/dedup.md): the same result as one run, for any N and M;\n"
            "give every step the same minhash options:\n"
            "      --step S            signatures, buckets, cluster or filter\n"
            "      --signatures DIR    the steps' files: DIR/sigs/, DIR/pairs/, DIR/clusters.mhclu\n"
            "      --part R/N|slurm    signatures, filter: part R of N of the input files (the\n"
            "                          same N for both); buckets: bands [B*R/N, B*(R+1)/N)\n"
            "      --skip-existing     do nothing when the step's output exists and verifies\n"
            "  sluice dedup minhash --step signatures --part R/N --signatures w FILES...\n"
            "  sluice dedup minhash --step buckets --part R/M --signatures w\n"
            "  sluice dedup minhash --step cluster --signatures w [--summary F --plot F]\n"
            "  sluice dedup minhash --step filter --part R/N --signatures w FILES... -o kept-R-of-N.jsonl\n"
            "                       [--removed removed-R-of-N.jsonl] [--annotate]\n"
            "\nexamples:\n"
            "  sluice dedup minhash corpus.jsonl -o dedup.jsonl --removed removed.jsonl\n"
            "  sluice dedup minhash --hash sha1-64 --buckets 20 --rows 10 web/*.zst -o out.jsonl\n",
    .run = run_minhash,
};

static const sl_command *const subs[] = {&sl_cmd_dedup_exact, &sl_cmd_dedup_lines, &sl_cmd_dedup_minhash, NULL};

const sl_command sl_cmd_dedup = {
    .name = "dedup",
    .summary = "remove duplicate documents (exact, lines, MinHash as datatrove)",
    .usage = "sluice dedup {exact|lines|minhash} [options] [FILES...]",
    .help = "Writes the documents that are kept, as JSON Lines in input order.\n"
            "See 'sluice help dedup <kind>' and docs/dedup.md.\n",
    .subs = subs,
};
