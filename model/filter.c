/* The filter stage (see filter.h). */
#include "model/filter.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/hashtab.h"

#include "base/json.h"
#include "stream/spill.h"
#include "stream/progress.h"
#include "stream/stats.h"

const char *const sl_bucket_names[3] = {"head", "middle", "tail"};

int sl_ccnet_bucket(double pp, double c_head, double c_tail)
{
    /* cc_net/perplexity.py PerplexityBucket: pp < p30 head, pp < p60 middle, else tail */
    return pp < c_head ? 0 : pp < c_tail ? 1 : 2;
}

/* --- options ------------------------------------------------------------- */
void sl_filter_opts_init(sl_filter_opts *o)
{
    *o = (sl_filter_opts){.field = "ppl",
                          .min = NAN,
                          .max = NAN,
                          .pct_lo = NAN,
                          .pct_hi = NAN,
                          .bucket = SL_BUCKET_NONE,
                          .cut_head = 30,
                          .cut_tail = 60,
                          .bins = 20,
                          .progress = 0};
}

static int builtin_field(const char *f)
{
    return !strcmp(f, SL_FILTER_FIELD_TOKENS) ? 1 : !strcmp(f, SL_FILTER_FIELD_SRC_BYTES) ? 2 : 0;
}

static int pair_ok(double a, double b)
{
    return a >= 0 && b <= 100 && a <= b;
}

int sl_filter_opts_check(const sl_filter_opts *o, sl_err *err)
{
    if (!o->field || !*o->field)
        return sl_errf(err, "field: empty");
    if (isnan(o->pct_lo) != isnan(o->pct_hi) || (!isnan(o->pct_lo) && !pair_ok(o->pct_lo, o->pct_hi)))
        return sl_errf(err, "pct_lo/pct_hi: %g:%g is not 0 <= lo <= hi <= 100", o->pct_lo, o->pct_hi);
    if (!pair_ok(o->cut_head, o->cut_tail))
        return sl_errf(err, "cut_head/cut_tail: %g:%g is not 0 <= head <= tail <= 100", o->cut_head, o->cut_tail);
    if (o->bucket < SL_BUCKET_NONE || o->bucket > SL_BUCKET_TAIL)
        return sl_errf(err, "bucket: %d is not head (0), middle (1) or tail (2)", o->bucket);
    if (o->bins < 1 || o->bins > 1000)
        return sl_errf(err, "bins: %d is not in 1..1000", o->bins);
    if (o->n_cutoffs_from && !sl_filter_needs_dist(o))
        return sl_err_set(err, SL_E_OPTION, "cutoffs_from",
                          "`cutoffs_from` needs a percentile selection (`pct_lo/pct_hi` or `bucket`)");
    if (o->n_in &&
        (!isnan(o->min) || !isnan(o->max) || !isnan(o->pct_lo) || o->bucket >= 0 || o->n_scores || o->n_cutoffs_from))
        return sl_err_set(err, SL_E_OPTION, "in",
                          "`in` (a categorical keep) excludes `min`, `max`, `pct_lo/pct_hi`, `bucket`, `scores` "
                          "and `cutoffs_from`");
    if (o->n_in && builtin_field(o->field))
        return sl_errf(err, "field %s is a count, not a category", o->field);
    if (o->n_scores && builtin_field(o->field))
        return sl_errf(err, "field %s is the record's own count and does not come from score files", o->field);
    return 0;
}

int sl_filter_needs_dist(const sl_filter_opts *o)
{
    return !isnan(o->pct_lo) || o->bucket >= 0;
}

/* --- distribution and cuts ------------------------------------------------- */
/* A double as 8 bytes whose memcmp order is the numeric order (not NaN). */
static void dkey(unsigned char *k, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    b = b >> 63 ? ~b : b | (1ull << 63);
    for (int i = 7; i >= 0; i--, b >>= 8)
        k[i] = (unsigned char)b;
}

static double dval(const unsigned char *k)
{
    uint64_t b = 0;
    for (int i = 0; i < 8; i++)
        b = b << 8 | k[i];
    b = b >> 63 ? b & ~(1ull << 63) : ~b;
    double v;
    memcpy(&v, &b, 8);
    return v;
}

static int dkey_cmp(const void *a, size_t al, const void *b, size_t bl, void *ctx)
{
    (void)al, (void)bl, (void)ctx;
    return memcmp(a, b, 8);
}

void sl_filter_dist_add(sl_filter_dist *d, double v)
{
    if (isnan(v) || d->failed)
        return;
    if (!d->sp) {
        sl_spill_opts o = {.budget = SL_FILTER_DIST_BUDGET, .rec_size = 8, .cmp = dkey_cmp, .purpose = "scores"};
        d->sp = sl_spill_new(&o, &d->err);
    }
    unsigned char k[8];
    dkey(k, v);
    if (sl_spill_add(d->sp, k, 8, &d->err)) {
        d->failed = 1;
        return;
    }
    d->n++;
    if (v > 0 && isfinite(v)) {
        d->min_pos = d->min_pos > 0 ? fmin(d->min_pos, v) : v;
        d->max_pos = fmax(d->max_pos, v);
    }
}

/* Sorted (once) and at its first value. */
static int dist_start(sl_filter_dist *d, sl_err *err)
{
    if (d->failed) {
        *err = d->err;
        return -1;
    }
    return d->sp && (sl_spill_sort(d->sp, err) || sl_spill_rewind(d->sp, err)) ? -1 : 0;
}

int sl_filter_dist_percentiles(sl_filter_dist *d, const double *ps, size_t k, double *out, sl_err *err)
{
    /* each percentile as sl_percentile takes it: the values at ranks i and
     * i + 1 and the fraction f between them */
    size_t n = d->n, ri[16];
    double f[16], at[16] = {0}, next[16] = {0};
    int interp[16], want[16];
    if (k > 16)
        return sl_errf(err, "at most 16 percentiles at a time");
    for (size_t q = 0; q < k; q++) {
        double p = ps[q];
        out[q] = NAN;
        want[q] = n && !isnan(p);
        ri[q] = 0, f[q] = 0, interp[q] = 0;
        if (!want[q] || p <= 0)
            continue;
        if (p >= 100) {
            ri[q] = n - 1;
            continue;
        }
        double pos = p / 100.0 * (double)(n - 1);
        ri[q] = (size_t)floor(pos);
        f[q] = pos - (double)ri[q];
        if (ri[q] + 1 >= n)
            ri[q] = n - 1;
        else
            interp[q] = 1;
    }
    if (!n)
        return 0;
    if (dist_start(d, err))
        return -1;
    const void *r;
    size_t len;
    int got;
    for (size_t j = 0; (got = sl_spill_next(d->sp, &r, &len, err)) == 1; j++) {
        double v = dval(r);
        for (size_t q = 0; q < k; q++) {
            if (j == ri[q])
                at[q] = v;
            if (j == ri[q] + 1)
                next[q] = v;
        }
    }
    if (got < 0)
        return -1;
    for (size_t q = 0; q < k; q++)
        if (want[q])
            out[q] = interp[q] ? at[q] + (next[q] - at[q]) * f[q] : at[q];
    return 0;
}

int sl_filter_dist_histogram(sl_filter_dist *d, int bins, uint64_t *counts, double *edges, sl_err *err)
{
    /* sl_histogram_log's edges and bins, from the extremes kept while adding
     * (log10 is monotonic: the log of the extreme is the extreme of the logs) */
    double lo = d->max_pos > 0 ? log10(d->min_pos) : INFINITY, hi = d->max_pos > 0 ? log10(d->max_pos) : -INFINITY;
    memset(counts, 0, (size_t)bins * sizeof *counts);
    if (!(lo <= hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi - lo < 1e-9) {
        lo -= 0.5;
        hi += 0.5;
    }
    double w = (hi - lo) / bins;
    for (int i = 0; i <= bins; i++)
        edges[i] = pow(10.0, lo + w * i);
    if (!d->n)
        return 0;
    if (dist_start(d, err))
        return -1;
    const void *r;
    size_t len;
    int got;
    while ((got = sl_spill_next(d->sp, &r, &len, err)) == 1) {
        double v = dval(r);
        if (!(v > 0 && isfinite(v)))
            continue;
        int b = (int)((log10(v) - lo) / w);
        b = b < 0 ? 0 : b >= bins ? bins - 1 : b;
        counts[b]++;
    }
    return got < 0 ? -1 : 0;
}

void sl_filter_dist_free(sl_filter_dist *d)
{
    sl_spill_free(d->sp);
    *d = (sl_filter_dist){0};
}

int sl_filter_resolve(const sl_filter_opts *o, sl_filter_dist *d, sl_filter_cuts *c, sl_err *err)
{
    c->lo = o->n_in ? 1 : o->min; /* categorical: the value is 1 for a match */
    c->hi = o->max;
    double ps[4] = {o->pct_lo, o->pct_hi, o->cut_head, o->cut_tail}, v[4];
    if (sl_filter_dist_percentiles(d, ps, 4, v, err))
        return -1;
    if (!isnan(o->pct_lo) && o->pct_lo > 0)
        c->lo = isnan(c->lo) ? v[0] : fmax(c->lo, v[0]);
    if (!isnan(o->pct_hi) && o->pct_hi < 100)
        c->hi = isnan(c->hi) ? v[1] : fmin(c->hi, v[1]);
    c->c_head = v[2];
    c->c_tail = v[3];
    return 0;
}

int sl_filter_resolve_summary(const sl_filter_opts *o, const sl_score_summary *s, const char *src, sl_filter_cuts *c,
                              sl_err *err)
{
    uint64_t n, uns, missing;
    if (!sl_score_summary_count(s, o->field, &n, &uns, &missing)) {
        size_t nf;
        const char **names = sl_score_summary_fields(s, &nf);
        char list[512] = "";
        size_t at = 0;
        for (size_t i = 0; i < nf && at + 2 < sizeof list; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
        return sl_errf(err, "%s: no field %s in the score summary (it has: %s)", src, o->field, nf ? list : "none");
    }
    if (missing)
        return sl_errf(err,
                       "%s: %llu of the %llu documents of the score summary have no %s, so its percentiles "
                       "are not those of the documents",
                       src, (unsigned long long)missing, (unsigned long long)sl_score_summary_docs(s), o->field);
    c->lo = o->n_in ? 1 : o->min; /* categorical: the value is 1 for a match */
    c->hi = o->max;
    if (!isnan(o->pct_lo) && o->pct_lo > 0) {
        double p = sl_score_summary_percentile(s, o->field, o->pct_lo);
        c->lo = isnan(c->lo) ? p : fmax(c->lo, p);
    }
    if (!isnan(o->pct_hi) && o->pct_hi < 100) {
        double p = sl_score_summary_percentile(s, o->field, o->pct_hi);
        c->hi = isnan(c->hi) ? p : fmin(c->hi, p);
    }
    c->c_head = sl_score_summary_percentile(s, o->field, o->cut_head);
    c->c_tail = sl_score_summary_percentile(s, o->field, o->cut_tail);
    return 0;
}

int sl_filter_keep(const sl_filter_opts *o, const sl_filter_cuts *c, double v)
{
    if (isnan(v))
        return o->keep_unscored;
    if (!isnan(c->lo) && v < c->lo)
        return 0;
    if (!isnan(c->hi) && v > c->hi)
        return 0;
    if (o->bucket >= 0 && sl_ccnet_bucket(v, c->c_head, c->c_tail) != o->bucket)
        return 0;
    return 1;
}

/* --- id -> score map ------------------------------------------------------ */
typedef struct {
    char *id; /* NULL: an empty slot */
    double val;
} smap_entry;

typedef struct {
    const char *s;
    size_t len;
} smap_key;

static uint64_t smap_hash(const void *key, const void *ctx)
{
    (void)ctx;
    const smap_key *k = key;
    return XXH64(k->s, k->len, 0);
}

static uint64_t smap_entry_hash(const void *entry, const void *ctx)
{
    (void)ctx;
    const char *id = ((const smap_entry *)entry)->id;
    return XXH64(id, strlen(id), 0);
}

static int smap_eq(const void *key, const void *entry, const void *ctx)
{
    (void)ctx;
    const smap_key *k = key;
    const char *id = ((const smap_entry *)entry)->id;
    return strlen(id) == k->len && !memcmp(id, k->s, k->len);
}

static const sl_htab_type smap_type = {.entry_size = sizeof(smap_entry),
                                       .key_size = sizeof(char *),
                                       .hash = smap_hash,
                                       .entry_hash = smap_entry_hash,
                                       .eq = smap_eq,
                                       .max_load = 50,
                                       .min_cap = 1024};

struct sl_scoremap {
    sl_htab t;
    char *desc; /* the file, or "the score files", for messages */
};

void sl_scoremap_free(sl_scoremap *m)
{
    if (!m)
        return;
    size_t pos = 0;
    smap_entry *e;
    while ((e = sl_htab_next(&m->t, &smap_type, &pos)))
        free(e->id);
    sl_htab_free(&m->t);
    free(m->desc);
    free(m);
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

int sl_filter_json_value(const sl_filter_opts *o, const sl_json *obj, double *v)
{
    if (!o->n_in)
        return json_score(obj, o->field, v);
    const sl_json *x = sl_json_get(obj, o->field);
    if (!x)
        return 0;
    if (x->type == SL_JSON_NULL) {
        *v = NAN;
        return 1;
    }
    if (x->type != SL_JSON_STRING)
        return -1;
    *v = 0;
    for (size_t i = 0; i < o->n_in && *v == 0; i++)
        if (strlen(o->in[i]) == x->str_len && !memcmp(o->in[i], x->str, x->str_len))
            *v = 1;
    return 1;
}

static int load_one(sl_scoremap *m, const char *path, const char *field, sl_err *err)
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
        int fresh;
        smap_entry *e = sl_htab_put(&m->t, &smap_type, &(smap_key){id->str, id->str_len}, &fresh);
        if (!fresh) {
            rc = sl_errf(err, "%s:%llu: id '%s' appears twice", path, (unsigned long long)ln, e->id);
            sl_json_free(jd);
            break;
        }
        e->id = sl_xstrndup(id->str, id->str_len);
        e->val = v;
        sl_json_free(jd);
    }
    if (k < 0)
        rc = -1;
    free(line);
    sl_input_close(in);
    return rc;
}

sl_scoremap *sl_scoremap_load(const char *const *paths, size_t n, const char *field, sl_err *err)
{
    sl_scoremap *m = sl_xcalloc(1, sizeof *m); /* an empty map still means "scores come from the files" */
    sl_htab_init(&m->t, NULL);
    m->desc = sl_xstrdup(n == 1 ? paths[0] : "the score files");
    for (size_t i = 0; i < n; i++)
        if (load_one(m, paths[i], field, err) < 0) {
            sl_scoremap_free(m);
            return NULL;
        }
    return m;
}

void sl_scoremap_dist(const sl_scoremap *m, sl_filter_dist *d)
{
    size_t pos = 0;
    const smap_entry *e;
    while ((e = sl_htab_next(&m->t, &smap_type, &pos)))
        sl_filter_dist_add(d, e->val);
}

/* --- one document's score ---------------------------------------------------- */
int sl_filter_score(const sl_filter_opts *o, const sl_scoremap *m, const sl_doc *d, const char *src, double *v,
                    int *missing, sl_err *err)
{
    int b = builtin_field(o->field);
    if (b == 1) {
        *v = (double)d->n_tokens;
        return 0;
    }
    if (b == 2) {
        *v = d->src_bytes ? (double)d->src_bytes : NAN;
        return 0;
    }
    if (m) {
        const smap_entry *e = sl_htab_find(&m->t, &smap_type, &(smap_key){d->id, d->id_len});
        if (!e) {
            *missing = 1;
            return sl_errf(err, "%s: document '%s' has no score in %s", src, d->id, m->desc);
        }
        *v = e->val;
        return 0;
    }
    int k = 0;
    if (d->meta && d->meta_len) {
        sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
        if (!jd)
            return sl_err_prefix(err, "%s: document '%s': metadata", src, d->id);
        const sl_json *r = sl_json_root(jd);
        k = r->type == SL_JSON_OBJECT ? sl_filter_json_value(o, r, v) : 0;
        sl_json_free(jd);
    }
    if (k < 0)
        return sl_errf(err, "%s: document '%s': \"%s\" in the metadata is not a %s", src, d->id, o->field,
                       o->n_in ? "string" : "number");
    if (k == 0) {
        *missing = 1;
        return sl_errf(err, "%s: document '%s' has no \"%s\" in its metadata", src, d->id, o->field);
    }
    return 0;
}

/* --- the selection pass ---------------------------------------------------- */
void sl_filter_result_free(sl_filter_result *r)
{
    sl_filter_dist_free(&r->seen);
    free(r->counts);
    free(r->edges);
    r->counts = NULL;
    r->edges = NULL;
}

static const char *reader_src(const sl_ts_reader *r, const char *first)
{
    return sl_ts_reader_n_inputs(r) == 1 ? sl_input_name(sl_ts_reader_input(r)) : first;
}

int sl_filter_select(const sl_filter_opts *o, const sl_filter_cuts *c, const sl_scoremap *m, sl_ts_reader *r,
                     const char *src, sl_ts_writer *w, sl_filter_result *res, sl_err *err)
{
    if (!src)
        src = sl_input_name(sl_ts_reader_input(r));
    res->cuts = *c;
    sl_doc d = {0};
    int k;
    sl_progress *pg = sl_progress_start("filter", "docs", o->progress);
    if (sl_ts_reader_n_inputs(r) == 1)
        sl_progress_track_input(pg, sl_ts_reader_input(r));
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        double v;
        if (sl_filter_score(o, m, &d, src, &v, &res->missing, err) < 0) {
            k = -1;
            break;
        }
        res->docs++;
        res->tokens += d.n_tokens;
        res->unscored += isnan(v);
        sl_filter_dist_add(&res->seen, v);
        if (sl_filter_keep(o, c, v)) {
            res->kept++;
            res->kept_tokens += d.n_tokens;
            if (sl_ts_write_doc(w, &d, err) < 0) {
                k = -1;
                break;
            }
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    sl_progress_done(pg);
    sl_doc_free(&d);
    if (k < 0)
        return -1;
    /* the histogram over every value seen (log scale ignores NaN and <= 0) */
    res->bins = o->bins;
    res->counts = sl_xcalloc((size_t)o->bins, sizeof *res->counts);
    res->edges = sl_xcalloc((size_t)o->bins + 1, sizeof *res->edges);
    static const double ps[7] = {0, 10, 30, 50, 60, 90, 100};
    if (sl_filter_dist_histogram(&res->seen, o->bins, res->counts, res->edges, err) ||
        sl_filter_dist_percentiles(&res->seen, ps, 7, res->pcts, err))
        return -1;
    return 0;
}

/* First pass: the distribution of the input's scores; standard input is
 * copied on the way to *spool, an unlinked file in the temporary directory
 * (so that the second pass can read it again, and so that no spool is left
 * however the process ends). */
static int dist_pass(const sl_filter_opts *o, sl_ts_reader *r0, const char *const *paths, size_t n,
                     sl_filter_dist *dist, int *spool, const char **src, int *missing, sl_err *err)
{
    sl_ts_reader *r = r0 ? r0 : sl_ts_reader_open_paths((char *const *)paths, n, err);
    if (!r)
        return -1;
    *src = reader_src(r, paths[0]);
    sl_output *sout = NULL;
    sl_ts_writer *w = NULL;
    sl_doc d = {0};
    int k = 0;
    if (!strcmp(paths[0], "-")) {
        int fd = sl_tmpfile(o->tmpdir, err), wfd = fd >= 0 ? dup(fd) : -1;
        if (fd >= 0 && wfd < 0)
            sl_errf(err, "cannot duplicate the spool's descriptor: %s", strerror(errno));
        if (wfd < 0) {
            if (fd >= 0)
                close(fd);
            goto fail;
        }
        *spool = fd;
        sout = sl_output_fd(wfd, "the spool of standard input");
        if (!(w = sl_ts_writer_open(sout, sl_ts_reader_header(r), err)))
            goto fail;
    }
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        double v;
        if (sl_filter_score(o, NULL, &d, *src, &v, missing, err) < 0 || (w && sl_ts_write_doc(w, &d, err) < 0))
            goto fail;
        sl_filter_dist_add(dist, v);
    }
    if (k < 0)
        goto fail;
    if (w) {
        k = sl_ts_writer_finish(w, err);
        w = NULL;
        if (k < 0 || sl_output_commit(sout, err) < 0) {
            sout = NULL;
            goto fail;
        }
    }
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return 0;
fail:
    if (w)
        sl_ts_writer_abort(w);
    sl_output_abort(sout);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return -1;
}

/* The spool read back from its start (the descriptor stays the caller's). */
static long spool_read(void *ctx, void *buf, size_t n, sl_err *err)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t k = read(fd, buf, n);
        if (k >= 0)
            return (long)k;
        if (errno != EINTR)
            return sl_errf(err, "the spool of standard input: %s", strerror(errno));
    }
}

int sl_filter_run(const sl_filter_opts *o, const char *const *paths, size_t n, sl_output *out, sl_filter_result *res,
                  sl_err *err)
{
    *res = (sl_filter_result){0};
    if (sl_filter_opts_check(o, err) < 0)
        return -1;
    static const char *const stdin_path[] = {"-"};
    if (!n) {
        paths = stdin_path;
        n = 1;
    }
    for (size_t i = 0; n > 1 && i < n; i++)
        if (!strcmp(paths[i], "-"))
            return sl_errf(err, "standard input ('-') cannot be one of several inputs");
    /* JSON Lines documents (the first non-blank byte is '{') or a token stream */
    struct stat st;
    int is_dir = stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode); /* part files: a token stream */
    sl_input *in = is_dir ? NULL : sl_input_open(paths[0], err);
    char head[256];
    long got = is_dir ? 0 : in ? sl_input_peek(in, head, sizeof head, err) : -1;
    if (got < 0) {
        sl_input_close(in);
        return -1;
    }
    long i0 = 0;
    while (i0 < got && (head[i0] == ' ' || head[i0] == '\t' || head[i0] == '\n' || head[i0] == '\r'))
        i0++;
    if (i0 < got && head[i0] == '{')
        return sl_filter_docs(o, in, paths, n, out, res, err);
    /* standard input cannot be opened again: its reader is made from `in` */
    int is_stdin = !strcmp(paths[0], "-");
    sl_ts_reader *r = NULL, *r0 = NULL;
    if (is_stdin && !(r0 = sl_ts_reader_open(in, err))) {
        sl_input_close(in);
        return -1;
    }
    if (!is_stdin) {
        sl_input_close(in);
        in = NULL;
    }
    sl_scoremap *m = NULL;
    sl_filter_dist dist = {0};
    sl_filter_cuts cuts;
    sl_ts_writer *w = NULL;
    int spool = -1;
    sl_input *spool_in = NULL;
    const char *src = NULL;
    int rc = -1;
    if (o->n_scores && !(m = sl_scoremap_load(o->scores, o->n_scores, o->field, err)))
        goto done;
    if (o->n_cutoffs_from) {
        sl_score_summary *s = sl_score_summary_load(o->cutoffs_from, o->n_cutoffs_from, err);
        int k = s ? sl_filter_resolve_summary(o, s, o->n_cutoffs_from == 1 ? o->cutoffs_from[0] : "the score summaries",
                                              &cuts, err)
                  : -1;
        sl_score_summary_free(s);
        if (k < 0)
            goto done;
    } else if (sl_filter_needs_dist(o) && m) {
        sl_scoremap_dist(m, &dist);
    } else if (sl_filter_needs_dist(o)) {
        int k = dist_pass(o, r0, paths, n, &dist, &spool, &src, &res->missing, err);
        r0 = NULL; /* closed by dist_pass */
        if (k < 0)
            goto done;
    }
    if (!o->n_cutoffs_from) {
        if (sl_filter_resolve(o, &dist, &cuts, err))
            goto done;
        sl_filter_dist_free(&dist); /* its spill is not needed in the second pass */
    }

    r = r0;
    r0 = NULL;
    if (spool >= 0) {
        spool_in = lseek(spool, 0, SEEK_SET) == 0
                       ? sl_input_callbacks_plain(spool_read, &spool, "the spool of standard input", err)
                       : NULL;
        if (!spool_in || !(r = sl_ts_reader_open(spool_in, err)))
            goto done;
    } else {
        if (!r && !(r = sl_ts_reader_open_paths((char *const *)paths, n, err)))
            goto done;
        src = reader_src(r, paths[0]);
    }
    if (!(w = sl_ts_writer_open(out, sl_ts_reader_header(r), err)))
        goto done;
    if (sl_filter_select(o, &cuts, m, r, src, w, res, err) < 0)
        goto done;
    rc = sl_ts_writer_finish(w, err);
    w = NULL;
done:
    if (w)
        sl_ts_writer_abort(w);
    sl_ts_reader_close(r);
    sl_ts_reader_close(r0);
    sl_input_close(in);
    sl_input_close(spool_in);
    if (spool >= 0)
        close(spool);
    sl_scoremap_free(m);
    sl_filter_dist_free(&dist);
    return rc;
}

/* --- reports ------------------------------------------------------------------ */
void sl_filter_report_text(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *r)
{
    const sl_filter_cuts *c = &r->cuts;
    sl_buf_printf(b, "kept %llu of %llu documents (%.1f%%)", (unsigned long long)r->kept, (unsigned long long)r->docs,
                  r->docs ? 100.0 * (double)r->kept / (double)r->docs : 0.0);
    if (!r->docs_mode)
        sl_buf_printf(b, ", %llu of %llu tokens", (unsigned long long)r->kept_tokens, (unsigned long long)r->tokens);
    if (o->n_in) {
        sl_buf_printf(b, "; %s in {", o->field);
        for (size_t i = 0; i < o->n_in; i++)
            sl_buf_printf(b, "%s%s", i ? "," : "", o->in[i]);
        sl_buf_putc(b, '}');
    } else if (!isnan(c->lo))
        sl_buf_printf(b, "; %s >= %.6g", o->field, c->lo);
    if (!isnan(c->hi))
        sl_buf_printf(b, "; %s <= %.6g", o->field, c->hi);
    if (o->bucket >= 0)
        sl_buf_printf(b, "; bucket %s (p%g = %.6g, p%g = %.6g)", sl_bucket_names[o->bucket], o->cut_head, c->c_head,
                      o->cut_tail, c->c_tail);
    if (r->unscored)
        sl_buf_printf(b, "; %llu unscored (%s)", (unsigned long long)r->unscored,
                      o->keep_unscored ? "kept" : "dropped");
    if (o->n_cutoffs_from)
        sl_buf_printf(b, "; percentiles from %zu score summar%s (within relative 2^-%d)", o->n_cutoffs_from,
                      o->n_cutoffs_from == 1 ? "y" : "ies", SL_SUMMARY_BITS);
    sl_buf_putc(b, '\n');
    if (r->seen.n && !o->n_in)
        sl_histogram_text(b, r->counts, r->edges, r->bins, o->field);
}

void sl_filter_summary_json(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *r)
{
    const sl_filter_cuts *c = &r->cuts;
    sl_buf_puts(b, "{\"field\":");
    sl_json_put_cstr(b, o->field);
    sl_buf_printf(b,
                  ",\"documents\":%llu,\"kept\":%llu,\"dropped\":%llu,\"unscored\":%llu,\"tokens\":%llu,"
                  "\"kept_tokens\":%llu,\"dropped_tokens\":%llu,\"thresholds\":{\"min\":",
                  (unsigned long long)r->docs, (unsigned long long)r->kept, (unsigned long long)(r->docs - r->kept),
                  (unsigned long long)r->unscored, (unsigned long long)r->tokens, (unsigned long long)r->kept_tokens,
                  (unsigned long long)(r->tokens - r->kept_tokens));
    sl_json_put_num(b, o->n_in ? NAN : c->lo); /* NaN -> null */
    sl_buf_puts(b, ",\"max\":");
    sl_json_put_num(b, c->hi);
    sl_buf_puts(b, ",\"bucket\":");
    if (o->bucket >= 0) {
        sl_json_put_cstr(b, sl_bucket_names[o->bucket]);
        sl_buf_puts(b, ",\"head_below\":");
        sl_json_put_num(b, c->c_head);
        sl_buf_puts(b, ",\"tail_from\":");
        sl_json_put_num(b, c->c_tail);
    } else {
        sl_buf_puts(b, "null");
    }
    if (o->n_in) { /* only then, as below */
        sl_buf_puts(b, ",\"in\":[");
        for (size_t i = 0; i < o->n_in; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_cstr(b, o->in[i]);
        }
        sl_buf_putc(b, ']');
    }
    if (o->n_cutoffs_from) /* only then: the summary of a run without it is unchanged */
        sl_buf_printf(b, ",\"from_summaries\":%zu,\"relative_bound\":%.17g", o->n_cutoffs_from,
                      ldexp(1, -SL_SUMMARY_BITS));
    sl_buf_puts(b, "},\"percentiles\":{");
    static const int ps[] = {0, 10, 30, 50, 60, 90, 100};
    for (int i = 0; i < 7; i++) {
        sl_buf_printf(b, "%s\"p%d\":", i ? "," : "", ps[i]);
        sl_json_put_num(b, r->pcts[i]);
    }
    sl_buf_puts(b, "},\"histogram\":{\"scale\":\"log10\",\"edges\":[");
    for (int i = 0; i <= r->bins; i++) {
        if (i)
            sl_buf_putc(b, ',');
        sl_json_put_num(b, r->edges[i]);
    }
    sl_buf_puts(b, "],\"counts\":[");
    for (int i = 0; i < r->bins; i++)
        sl_buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)r->counts[i]);
    sl_buf_puts(b, "]}}\n");
}

void sl_filter_plot_svg(sl_buf *b, const sl_filter_opts *o, const sl_filter_result *r)
{
    const sl_filter_cuts *c = &r->cuts;
    double lines[4] = {c->lo, c->hi, o->bucket >= 0 ? c->c_head : NAN, o->bucket >= 0 ? c->c_tail : NAN};
    sl_histogram_svg(b, r->counts, r->edges, r->bins, o->field, lines, 4);
}
