/* `sluice filter`: keep documents of a token stream by their model score. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "model/filter.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] =
    "Reads a token stream whose records carry scores in their metadata (from\n"
    "'sluice score --to-stream'), or any token stream plus --scores FILE (the JSON\n"
    "Lines of 'sluice score', joined by id), and writes the documents that pass\n"
    "the selection, unchanged, as a token stream.\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "selection (combined with AND; default: keep every scored document):\n"
    "      --max-ppl X        keep documents with score <= X\n"
    "      --min-ppl X        keep documents with score >= X\n"
    "      --keep-pct LO:HI   keep documents between the LO-th and HI-th percentile of the\n"
    "                         score distribution, inclusive (e.g. 10:90 drops the 10% most\n"
    "                         and least perplexing). Percentiles use linear interpolation\n"
    "                         (numpy's default); they come from --scores when given, else\n"
    "                         from a first pass over the input (stdin is spooled to $TMPDIR)\n"
    "      --bucket NAME      keep one CCNet bucket: head (score < p30), middle (p30 <=\n"
    "                         score < p60) or tail (score >= p60)\n"
    "      --cutoffs A:B      percentiles of the head/middle and middle/tail cuts (default 30:60)\n"
    "options:\n"
    "      --scores FILE      scores as JSON Lines with \"id\" and the score field\n"
    "      --field NAME       the score to select on (default ppl; e.g. bpb, long_context)\n"
    "      --keep-unscored    keep documents whose score is null (no predicted tokens:\n"
    "                         documents of one token); default: drop them\n"
    "      --summary FILE     write a JSON summary: counts and tokens kept/dropped, the\n"
    "                         thresholds, percentiles and the histogram\n"
    "      --plot FILE        write the histogram as an SVG plot with the thresholds marked\n"
    "      --bins N           histogram bins (default 20)\n"
    "A summary with a text histogram goes to stderr unless --quiet.\n"
    "A document with no score at all (field missing, id not in --scores) is an error.\n"
    "\nexamples:\n"
    "  sluice score -m mamba-130m/ --to-stream docs.tok | sluice filter --keep-pct 10:90 -o kept.tok\n"
    "  sluice filter --scores scores.jsonl --bucket head --plot ppl.svg docs.tok -o head.tok\n";

/* --- id -> score map for --scores ----------------------------------------- */
typedef struct smap {
    char **ids;
    double *val;
    size_t cap, n;
} smap;

static size_t smap_slot(const smap *m, const char *id, size_t len)
{
    size_t i = (size_t)XXH64(id, len, 0) & (m->cap - 1);
    while (m->ids[i] && !(strlen(m->ids[i]) == len && !memcmp(m->ids[i], id, len)))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void smap_grow(smap *m)
{
    smap o = *m;
    m->cap = o.cap ? o.cap * 2 : 1024;
    m->ids = sl_xcalloc(m->cap, sizeof *m->ids);
    m->val = sl_xcalloc(m->cap, sizeof *m->val);
    for (size_t i = 0; i < o.cap; i++)
        if (o.ids[i]) {
            size_t s = smap_slot(m, o.ids[i], strlen(o.ids[i]));
            m->ids[s] = o.ids[i];
            m->val[s] = o.val[i];
        }
    free(o.ids);
    free(o.val);
}

static void smap_free(smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->ids[i]);
    free(m->ids);
    free(m->val);
}

/* Reads a score value: number, or null (NAN = unscored). 1 ok, 0 absent, -1 bad. */
static int json_score(const sl_json *o, const char *field, double *v)
{
    const sl_json *x = sl_json_get(o, field);
    if (!x)
        return 0;
    if (x->type == SL_JSON_NULL) {
        *v = NAN;
        return 1;
    }
    if (x->type != SL_JSON_NUMBER)
        return -1;
    *v = x->num;
    return 1;
}

static int load_scores(smap *m, const char *path, const char *field, sl_err *err)
{
    sl_input *in = sl_input_open(path, err);
    if (!in)
        return -1;
    char *line = NULL;
    size_t len = 0, cap = 0;
    uint64_t ln = 0;
    int rc = 0, k;
    while ((k = sl_input_getline(in, &line, &len, &cap, 1 << 26, err)) == 1) {
        ln++;
        if (!len)
            continue;
        sl_err je;
        sl_json_doc *jd = sl_json_parse(line, len, NULL, &je);
        if (!jd) {
            rc = sl_errf(err, "%s:%llu: %s", path, (unsigned long long)ln, je.msg);
            break;
        }
        const sl_json *o = sl_json_root(jd), *id = o->type == SL_JSON_OBJECT ? sl_json_get(o, "id") : NULL;
        double v;
        int s = id ? json_score(o, field, &v) : 0;
        if (!id || id->type != SL_JSON_STRING || s <= 0) {
            sl_json_free(jd);
            rc = sl_errf(err, "%s:%llu: expected an object with a string \"id\" and a numeric \"%s\"", path,
                         (unsigned long long)ln, field);
            break;
        }
        if ((m->n + 1) * 2 > m->cap)
            smap_grow(m);
        size_t slot = smap_slot(m, id->str, id->str_len);
        if (m->ids[slot]) {
            rc = sl_errf(err, "%s:%llu: id '%s' appears twice", path, (unsigned long long)ln, m->ids[slot]);
            sl_json_free(jd);
            break;
        }
        m->ids[slot] = sl_xstrndup(id->str, id->str_len);
        m->val[slot] = v;
        m->n++;
        sl_json_free(jd);
    }
    if (k < 0)
        rc = -1;
    free(line);
    sl_input_close(in);
    return rc;
}

/* --- selection ----------------------------------------------------------- */
typedef struct sel {
    const char *field;
    double min, max;       /* NAN = none */
    double pct_lo, pct_hi; /* NAN = none */
    int bucket;            /* -1 none */
    double cut_a, cut_b;   /* percentiles for buckets */
    int keep_unscored;
    /* resolved thresholds */
    double lo, hi, c_head, c_tail;
} sel;

static int doc_score(const sl_doc *d, const smap *m, const sel *s, const char *src, double *v, sl_err *err)
{
    if (m->cap) {
        size_t slot = smap_slot(m, d->id, d->id_len);
        if (!m->ids[slot])
            return sl_errf(err, "%s: document '%s' has no score in --scores", src, d->id);
        *v = m->val[slot];
        return 0;
    }
    if (!d->meta || !d->meta_len)
        return sl_errf(err, "%s: document '%s' has no \"%s\" in its metadata (run 'sluice score --to-stream', or "
                            "give --scores)",
                       src, d->id, s->field);
    sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s: document '%s': metadata", src, d->id);
    const sl_json *o = sl_json_root(jd);
    int k = o->type == SL_JSON_OBJECT ? json_score(o, s->field, v) : 0;
    sl_json_free(jd);
    if (k < 0)
        return sl_errf(err, "%s: document '%s': \"%s\" in the metadata is not a number", src, d->id, s->field);
    if (k == 0)
        return sl_errf(err, "%s: document '%s' has no \"%s\" in its metadata (run 'sluice score --to-stream', or "
                            "give --scores)",
                       src, d->id, s->field);
    return 0;
}

static int keep(const sel *s, double v)
{
    if (isnan(v))
        return s->keep_unscored;
    if (!isnan(s->lo) && v < s->lo)
        return 0;
    if (!isnan(s->hi) && v > s->hi)
        return 0;
    if (s->bucket >= 0 && sl_ccnet_bucket(v, s->c_head, s->c_tail) != s->bucket)
        return 0;
    return 1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct vec {
    double *v;
    size_t n, cap;
} vec;
static void vpush(vec *a, double x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = sl_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

/* Resolves percentile thresholds from the scored values (sorted in place). */
static void resolve(sel *s, vec *vals)
{
    size_t n = 0;
    for (size_t i = 0; i < vals->n; i++)
        if (!isnan(vals->v[i]))
            vals->v[n++] = vals->v[i];
    vals->n = n;
    if (n)
        qsort(vals->v, n, sizeof *vals->v, cmp_d);
    s->lo = s->min;
    s->hi = s->max;
    if (!isnan(s->pct_lo) && s->pct_lo > 0) {
        double c = sl_percentile(vals->v, n, s->pct_lo);
        s->lo = isnan(s->lo) ? c : fmax(s->lo, c);
    }
    if (!isnan(s->pct_hi) && s->pct_hi < 100) {
        double c = sl_percentile(vals->v, n, s->pct_hi);
        s->hi = isnan(s->hi) ? c : fmin(s->hi, c);
    }
    s->c_head = sl_percentile(vals->v, n, s->cut_a);
    s->c_tail = sl_percentile(vals->v, n, s->cut_b);
}

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

static void put_num_or_null(sl_buf *b, double v) { sl_json_put_num(b, v); /* NaN -> null */ }

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_MAX = SL_OPT_FIRST_FREE, O_MIN, O_PCT, O_BUCKET, O_CUTS, O_SCORES, O_FIELD, O_UNSC, O_SUM, O_PLOT, O_BINS };
    static const struct option lo[] = {{"max-ppl", required_argument, 0, O_MAX},
                                       {"min-ppl", required_argument, 0, O_MIN},
                                       {"keep-pct", required_argument, 0, O_PCT},
                                       {"bucket", required_argument, 0, O_BUCKET},
                                       {"cutoffs", required_argument, 0, O_CUTS},
                                       {"scores", required_argument, 0, O_SCORES},
                                       {"field", required_argument, 0, O_FIELD},
                                       {"keep-unscored", no_argument, 0, O_UNSC},
                                       {"summary", required_argument, 0, O_SUM},
                                       {"plot", required_argument, 0, O_PLOT},
                                       {"bins", required_argument, 0, O_BINS},
                                       SL_CLI_COMMON_LONG,
                                       {0, 0, 0, 0}};
    sel s = {.field = "ppl", .min = NAN, .max = NAN, .pct_lo = NAN, .pct_hi = NAN, .bucket = -1, .cut_a = 30,
             .cut_b = 60};
    const char *scores = NULL, *summary = NULL, *plot = NULL;
    int bins = 20, c;
    static const char *const buckets[] = {"head", "middle", "tail", NULL};
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, lo, NULL)) != -1) {
        switch (c) {
        case O_MAX: s.max = sl_cli_double(cli, "--max-ppl", optarg, -1e308, 1e308); break;
        case O_MIN: s.min = sl_cli_double(cli, "--min-ppl", optarg, -1e308, 1e308); break;
        case O_PCT: parse_pair(cli, "--keep-pct", optarg, &s.pct_lo, &s.pct_hi); break;
        case O_BUCKET: s.bucket = sl_cli_choice(cli, "--bucket", optarg, buckets); break;
        case O_CUTS: parse_pair(cli, "--cutoffs", optarg, &s.cut_a, &s.cut_b); break;
        case O_SCORES: scores = optarg; break;
        case O_FIELD: s.field = optarg; break;
        case O_UNSC: s.keep_unscored = 1; break;
        case O_SUM: summary = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_BINS: bins = (int)sl_cli_int(cli, "--bins", optarg, 1, 1000); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    const char *path = optind < argc ? argv[optind] : "-";
    int need_dist = !isnan(s.pct_lo) || s.bucket >= 0;
    /* several inputs read as one stream (cli/inputs.h); standard input only alone */
    char **paths = argv + optind;
    size_t n_paths = (size_t)(argc - optind);
    for (size_t i = 0; n_paths > 1 && i < n_paths; i++)
        if (!strcmp(paths[i], "-"))
            sl_cli_usage_error(cli, "standard input ('-') cannot be one of several inputs");

    sl_err err = {{0}};
    smap m = {0};
    vec vals = {0}, all = {0};
    char spool[4200] = "", *spool_path = spool;
    const char *src = path;
    sl_ts_reader *r = NULL;
    sl_output *out = NULL, *sout = NULL;
    sl_ts_writer *w = NULL;
    sl_doc d = {0};
    sl_buf b = {0};
    int rc = 0, k = 0;
    uint64_t n_docs = 0, n_kept = 0, n_unscored = 0, tok = 0, tok_kept = 0;
    if (scores && load_scores(&m, scores, s.field, &err) < 0)
        goto fail;
    if (scores && !m.cap)
        smap_grow(&m); /* an empty scores file still means "scores come from the file" */
    if (need_dist && scores) {
        for (size_t i = 0; i < m.cap; i++)
            if (m.ids[i])
                vpush(&vals, m.val[i]);
    } else if (need_dist) {
        /* pass 1: the score distribution; stdin is spooled for pass 2 */
        if (!(r = sl_ts_reader_open_paths(paths, n_paths, &err)))
            goto fail;
        src = sl_ts_reader_n_inputs(r) == 1 ? sl_input_name(sl_ts_reader_input(r)) : path;
        if (!strcmp(path, "-")) {
            const char *td = getenv("TMPDIR");
            snprintf(spool, sizeof spool, "%s/sluice-filter-%ld.tok", td && *td ? td : "/tmp", (long)getpid());
            if (!(sout = sl_output_open(spool, &err)) || !(w = sl_ts_writer_open(sout, sl_ts_reader_header(r), &err)))
                goto fail;
        }
        while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
            double v;
            if (doc_score(&d, &m, &s, src, &v, &err) < 0 || (w && sl_ts_write_doc(w, &d, &err) < 0))
                goto fail;
            vpush(&vals, v);
        }
        if (k < 0)
            goto fail;
        if (w) {
            k = sl_ts_writer_finish(w, &err);
            w = NULL;
            if (k < 0 || sl_output_commit(sout, &err) < 0) {
                sout = NULL;
                goto fail;
            }
            sout = NULL;
            path = spool;
            paths = &spool_path;
            n_paths = 1;
        }
        sl_ts_reader_close(r);
        r = NULL;
    }
    resolve(&s, &vals);

    /* pass 2: select */
    if (!(r = sl_ts_reader_open_paths(paths, n_paths, &err)))
        goto fail;
    if (!spool[0])
        src = sl_ts_reader_n_inputs(r) == 1 ? sl_input_name(sl_ts_reader_input(r)) : path;
    if (!(out = sl_output_open(cli->output, &err)) || !(w = sl_ts_writer_open(out, sl_ts_reader_header(r), &err)))
        goto fail;
    sl_progress *pg = sl_progress_start("filter", "docs", cli->progress);
    sl_cli_track(pg, r);
    while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
        double v;
        if (doc_score(&d, &m, &s, src, &v, &err) < 0) {
            k = -1;
            break;
        }
        n_docs++;
        tok += d.n_tokens;
        n_unscored += isnan(v);
        vpush(&all, v);
        if (keep(&s, v)) {
            n_kept++;
            tok_kept += d.n_tokens;
            if (sl_ts_write_doc(w, &d, &err) < 0) {
                k = -1;
                break;
            }
        }
        sl_progress_add(pg, 1, d.n_tokens);
    }
    sl_progress_done(pg);
    if (k < 0)
        goto fail;
    k = sl_ts_writer_finish(w, &err);
    w = NULL;
    if (k < 0)
        goto fail;

    /* summary, histogram, plot */
    uint64_t *counts = sl_xcalloc((size_t)bins, sizeof *counts);
    double *edges = sl_xcalloc((size_t)bins + 1, sizeof *edges);
    sl_histogram_log(all.v, all.n, bins, counts, edges);
    vec sorted = {0};
    for (size_t i = 0; i < all.n; i++)
        if (!isnan(all.v[i]))
            vpush(&sorted, all.v[i]);
    if (sorted.n)
        qsort(sorted.v, sorted.n, sizeof *sorted.v, cmp_d);
    double lines[4] = {s.lo, s.hi, s.bucket >= 0 ? s.c_head : NAN, s.bucket >= 0 ? s.c_tail : NAN};
    if (!cli->quiet) {
        sl_buf_clear(&b);
        sl_buf_printf(&b, "sluice: filter: kept %llu of %llu documents (%.1f%%), %llu of %llu tokens", (unsigned long long)n_kept,
                      (unsigned long long)n_docs, n_docs ? 100.0 * (double)n_kept / (double)n_docs : 0.0,
                      (unsigned long long)tok_kept, (unsigned long long)tok);
        if (!isnan(s.lo))
            sl_buf_printf(&b, "; %s >= %.6g", s.field, s.lo);
        if (!isnan(s.hi))
            sl_buf_printf(&b, "; %s <= %.6g", s.field, s.hi);
        if (s.bucket >= 0)
            sl_buf_printf(&b, "; bucket %s (p%g = %.6g, p%g = %.6g)", sl_bucket_names[s.bucket], s.cut_a, s.c_head,
                          s.cut_b, s.c_tail);
        if (n_unscored)
            sl_buf_printf(&b, "; %llu unscored (%s)", (unsigned long long)n_unscored,
                          s.keep_unscored ? "kept" : "dropped");
        sl_buf_putc(&b, '\n');
        if (sorted.n)
            sl_histogram_text(&b, counts, edges, bins, s.field);
        fputs(b.data, stderr);
    }
    int frc = 0;
    if (summary) {
        sl_buf_clear(&b);
        sl_buf_puts(&b, "{\"field\":");
        sl_json_put_cstr(&b, s.field);
        sl_buf_printf(&b, ",\"documents\":%llu,\"kept\":%llu,\"dropped\":%llu,\"unscored\":%llu,\"tokens\":%llu,"
                          "\"kept_tokens\":%llu,\"dropped_tokens\":%llu,\"thresholds\":{\"min\":",
                      (unsigned long long)n_docs, (unsigned long long)n_kept, (unsigned long long)(n_docs - n_kept),
                      (unsigned long long)n_unscored, (unsigned long long)tok, (unsigned long long)tok_kept,
                      (unsigned long long)(tok - tok_kept));
        put_num_or_null(&b, s.lo);
        sl_buf_puts(&b, ",\"max\":");
        put_num_or_null(&b, s.hi);
        sl_buf_puts(&b, ",\"bucket\":");
        if (s.bucket >= 0) {
            sl_json_put_cstr(&b, sl_bucket_names[s.bucket]);
            sl_buf_puts(&b, ",\"head_below\":");
            put_num_or_null(&b, s.c_head);
            sl_buf_puts(&b, ",\"tail_from\":");
            put_num_or_null(&b, s.c_tail);
        } else {
            sl_buf_puts(&b, "null");
        }
        sl_buf_puts(&b, "},\"percentiles\":{");
        static const int ps[] = {0, 10, 30, 50, 60, 90, 100};
        for (int i = 0; i < 7; i++) {
            sl_buf_printf(&b, "%s\"p%d\":", i ? "," : "", ps[i]);
            put_num_or_null(&b, sl_percentile(sorted.v, sorted.n, ps[i]));
        }
        sl_buf_puts(&b, "},\"histogram\":{\"scale\":\"log10\",\"edges\":[");
        for (int i = 0; i <= bins; i++) {
            if (i)
                sl_buf_putc(&b, ',');
            sl_json_put_num(&b, edges[i]);
        }
        sl_buf_puts(&b, "],\"counts\":[");
        for (int i = 0; i < bins; i++)
            sl_buf_printf(&b, "%s%llu", i ? "," : "", (unsigned long long)counts[i]);
        sl_buf_puts(&b, "]}}\n");
        sl_output *so = sl_output_open(summary, &err);
        frc = !so || sl_output_write(so, b.data, b.len, &err) < 0 || sl_output_commit(so, &err) < 0;
    }
    if (!frc && plot) {
        sl_buf_clear(&b);
        sl_histogram_svg(&b, counts, edges, bins, s.field, lines, 4);
        sl_output *po = sl_output_open(plot, &err);
        frc = !po || sl_output_write(po, b.data, b.len, &err) < 0 || sl_output_commit(po, &err) < 0;
    }
    free(counts);
    free(edges);
    free(sorted.v);
    if (frc)
        goto fail;
    if (sl_output_commit(out, &err) < 0) {
        out = NULL;
        goto fail;
    }
    out = NULL;
    goto done;
fail:
    rc = 1;
done:
    if (w)
        sl_ts_writer_abort(w);
    sl_ts_reader_close(r);
    if (spool[0])
        unlink(spool);
    sl_doc_free(&d);
    sl_buf_free(&b);
    smap_free(&m);
    free(vals.v);
    free(all.v);
    if (rc) {
        sl_output_abort(out);
        sl_output_abort(sout);
        return sl_cli_fail(cli, &err);
    }
    return 0;
}

const sl_command sl_cmd_filter = {
    .name = "filter",
    .summary = "keep documents by perplexity thresholds, percentiles or CCNet buckets",
    .usage = "sluice filter [options] [FILE...]",
    .help = help,
    .run = run,
};
