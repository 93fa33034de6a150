/* Per-position loss curves (see curve.h). */
#include "model/curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/io.h"
#include "base/json.h"
#include "stream/stats.h"

static void add_group(sl_curve *c, const char *name, size_t len)
{
    if (c->n_groups == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->groups = sl_xrealloc(c->groups, c->cap * sizeof *c->groups);
    }
    sl_curve_group *g = &c->groups[c->n_groups++];
    memset(g, 0, sizeof *g);
    g->name = sl_xmalloc(len + 1);
    memcpy(g->name, name, len);
    g->name[len] = 0;
}

sl_curve *sl_curve_new(const char *group_by)
{
    sl_curve *c = sl_xcalloc(1, sizeof *c);
    if (group_by) {
        c->group_by = sl_xmalloc(strlen(group_by) + 1);
        strcpy(c->group_by, group_by);
    }
    add_group(c, "all", 3);
    return c;
}

void sl_curve_free(sl_curve *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_groups; i++)
        free(c->groups[i].name);
    free(c->groups);
    free(c->group_by);
    free(c);
}

sl_curve_group *sl_curve_group_get(sl_curve *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->n_groups; i++)
        if (strlen(c->groups[i].name) == len && !memcmp(c->groups[i].name, name, len))
            return &c->groups[i];
    add_group(c, name, len);
    return &c->groups[c->n_groups - 1];
}

/* Adds one document's per-bin sums (bins [0, nb)) to a group. */
static void add_to(sl_curve_group *g, const sl_curve_bin *d, int nb)
{
    g->documents++;
    g->nbins = nb > g->nbins ? nb : g->nbins;
    for (int k = 0; k < nb; k++) {
        sl_curve_bin *x = &g->bins[k];
        x->count += d[k].count;
        x->sum_nll += d[k].sum_nll;
        x->sum_sq += d[k].sum_sq;
        x->bytes_count += d[k].bytes_count;
        x->bytes_nll += d[k].bytes_nll;
        x->bytes += d[k].bytes;
    }
}

void sl_curve_add_doc(sl_curve *c, sl_curve_group *g, const float *logp, int64_t n, uint64_t src_bytes)
{
    /* the document's sums per bin first (bin k: predictions t = 2^k - 1 .. 2^(k+1) - 2), then
     * added to its groups: the same numbers whatever documents it is scored or merged with */
    sl_curve_bin d[SL_CURVE_BINS];
    int nb = n > 0 ? sl_curve_bin_of(n) + 1 : 0;
    double bytes_per = src_bytes && n > 0 ? (double)src_bytes / (double)n : 0;
    for (int k = 0; k < nb; k++) {
        int64_t lo = ((int64_t)1 << k) - 1, hi = k >= 62 ? n : ((int64_t)1 << (k + 1)) - 1;
        hi = hi < n ? hi : n;
        double s = 0, sq = 0;
        for (int64_t t = lo; t < hi; t++) {
            double v = -(double)logp[t];
            s += v;
            sq += v * v;
        }
        uint64_t cnt = (uint64_t)(hi - lo);
        d[k] = (sl_curve_bin){.count = cnt, .sum_nll = s, .sum_sq = sq};
        if (bytes_per > 0) {
            d[k].bytes_count = cnt;
            d[k].bytes_nll = s;
            d[k].bytes = bytes_per * (double)cnt;
        }
    }
    add_to(&c->groups[0], d, nb);
    if (g && g != &c->groups[0])
        add_to(g, d, nb);
}

int sl_curve_doc_group(sl_curve *c, const char *meta, size_t meta_len, sl_curve_group **g, sl_err *err)
{
    *g = NULL;
    if (!c->group_by)
        return 0;
    size_t i = 0;
    while (i < meta_len && (meta[i] == ' ' || meta[i] == '\t' || meta[i] == '\n' || meta[i] == '\r'))
        i++;
    if (i == meta_len) {
        *g = sl_curve_group_get(c, SL_CURVE_NONE, strlen(SL_CURVE_NONE));
        return 0;
    }
    sl_json_doc *jd = sl_json_parse(meta, meta_len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "metadata");
    const sl_json *o = sl_json_root(jd);
    if (o->type != SL_JSON_OBJECT) {
        sl_json_free(jd);
        return sl_errf(err, "metadata is not a JSON object (`group_by` %s needs one)", c->group_by);
    }
    const sl_json *v = sl_json_get(o, c->group_by);
    if (!v)
        *g = sl_curve_group_get(c, SL_CURVE_NONE, strlen(SL_CURVE_NONE));
    else if (v->type == SL_JSON_STRING)
        *g = sl_curve_group_get(c, v->str, v->str_len);
    else {
        sl_buf b = {0};
        sl_json_put_value(&b, v);
        *g = sl_curve_group_get(c, b.data, b.len);
        sl_buf_free(&b);
    }
    sl_json_free(jd);
    return 0;
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

int sl_curve_merge(sl_curve *a, const sl_curve *b, sl_err *err)
{
    if (!same_str(a->group_by, b->group_by))
        return sl_errf(err, "`group_by` differs (%s vs %s): curves of different groupings do not add up",
                       a->group_by ? a->group_by : "none", b->group_by ? b->group_by : "none");
    if (a->max_position != b->max_position)
        return sl_errf(err, "`max_position` differs (%lld vs %lld)", (long long)a->max_position,
                       (long long)b->max_position);
    if (a->train_length != b->train_length)
        return sl_errf(err, "`train_length` differs (%lld vs %lld)", (long long)a->train_length,
                       (long long)b->train_length);
    for (size_t i = 0; i < b->n_groups; i++) {
        const sl_curve_group *gb = &b->groups[i];
        sl_curve_group *ga = sl_curve_group_get(a, gb->name, strlen(gb->name));
        ga->documents += gb->documents;
        ga->nbins = gb->nbins > ga->nbins ? gb->nbins : ga->nbins;
        for (int k = 0; k < gb->nbins; k++) {
            sl_curve_bin *x = &ga->bins[k];
            const sl_curve_bin *y = &gb->bins[k];
            x->count += y->count;
            x->bytes_count += y->bytes_count;
            x->sum_nll += y->sum_nll;
            x->sum_sq += y->sum_sq;
            x->bytes_nll += y->bytes_nll;
            x->bytes += y->bytes;
        }
    }
    return 0;
}

double sl_curve_mean(const sl_curve_bin *b)
{
    return b->count ? b->sum_nll / (double)b->count : NAN;
}

double sl_curve_ci95(const sl_curve_bin *b)
{
    if (b->count < 2)
        return NAN;
    double n = (double)b->count, m = b->sum_nll / n;
    double var = (b->sum_sq - n * m * m) / (n - 1);
    return 1.96 * sqrt(var > 0 ? var : 0) / sqrt(n);
}

double sl_curve_bpb(const sl_curve_bin *b)
{
    return b->bytes > 0 ? b->bytes_nll / M_LN2 / b->bytes : NAN;
}

static int64_t bin_lo(int k)
{
    return (int64_t)1 << k;
}
static int64_t bin_hi(int k)
{
    return k >= 62 ? INT64_MAX : ((int64_t)1 << (k + 1)) - 1;
}

int64_t sl_curve_turn_up(const sl_curve_group *g)
{
    int best = -1;
    for (int k = 0; k < g->nbins; k++)
        if (g->bins[k].count && (best < 0 || sl_curve_mean(&g->bins[k]) < sl_curve_mean(&g->bins[best])))
            best = k;
    if (best < 0)
        return 0;
    double ci = sl_curve_ci95(&g->bins[best]), top = sl_curve_mean(&g->bins[best]) + (isnan(ci) ? 0 : ci);
    for (int k = best + 1; k < g->nbins; k++) {
        double c = sl_curve_ci95(&g->bins[k]);
        if (g->bins[k].count && !isnan(c) && sl_curve_mean(&g->bins[k]) - c > top)
            return bin_lo(k);
    }
    return 0;
}

/* %.17g: doubles round trip exactly. */
static void put_exact(sl_buf *b, double v)
{
    if (isfinite(v))
        sl_buf_printf(b, "%.17g", v);
    else
        sl_buf_puts(b, "null");
}

void sl_curve_json(sl_buf *b, const sl_curve *c)
{
    sl_buf_puts(b, "{\"format\":\"sluice-position-curve\",\"version\":1,\n \"position\":\"tokens of context before the "
                   "predicted token (1 = the first prediction)\",\n \"group_by\":");
    if (c->group_by)
        sl_json_put_cstr(b, c->group_by);
    else
        sl_buf_puts(b, "null");
    sl_buf_printf(b, ",\"max_position\":%lld,\"train_length\":%lld,\n \"groups\":[", (long long)c->max_position,
                  (long long)c->train_length);
    for (size_t i = 0; i < c->n_groups; i++) {
        const sl_curve_group *g = &c->groups[i];
        sl_buf_puts(b, i ? ",\n  {\"name\":" : "\n  {\"name\":");
        sl_json_put_cstr(b, g->name);
        sl_buf_printf(b, ",\"documents\":%llu,\"turn_up\":", (unsigned long long)g->documents);
        int64_t tu = sl_curve_turn_up(g);
        if (tu)
            sl_buf_printf(b, "%lld", (long long)tu);
        else
            sl_buf_puts(b, "null");
        sl_buf_puts(b, ",\"bins\":[");
        for (int k = 0; k < g->nbins; k++) {
            const sl_curve_bin *x = &g->bins[k];
            double m = sl_curve_mean(x), ci = sl_curve_ci95(x);
            sl_buf_printf(b, "%s\n   {\"lo\":%lld,\"hi\":%lld,\"count\":%llu,\"sum_nll\":", k ? "," : "",
                          (long long)bin_lo(k), (long long)bin_hi(k), (unsigned long long)x->count);
            put_exact(b, x->sum_nll);
            sl_buf_puts(b, ",\"sum_sq\":");
            put_exact(b, x->sum_sq);
            sl_buf_printf(b, ",\"bytes_count\":%llu,\"bytes_nll\":", (unsigned long long)x->bytes_count);
            put_exact(b, x->bytes_nll);
            sl_buf_puts(b, ",\"bytes\":");
            put_exact(b, x->bytes);
            sl_buf_puts(b, ",\"mean_nll\":");
            sl_json_put_num(b, m);
            sl_buf_puts(b, ",\"ci95\":[");
            sl_json_put_num(b, m - ci);
            sl_buf_putc(b, ',');
            sl_json_put_num(b, m + ci);
            sl_buf_puts(b, "],\"bpb\":");
            sl_json_put_num(b, sl_curve_bpb(x));
            sl_buf_putc(b, '}');
        }
        sl_buf_puts(b, "]}");
    }
    sl_buf_puts(b, "]}\n");
}

static int get_u64(const sl_json *o, const char *key, uint64_t *v, const char *src, const char *where, sl_err *err)
{
    int64_t x;
    if (sl_json_get_int(o, key, &x) || x < 0)
        return sl_errf(err, "%s: %s: `%s` is missing or not a non-negative integer", src, where, key);
    *v = (uint64_t)x;
    return 0;
}

static int get_dbl(const sl_json *o, const char *key, double *v, const char *src, const char *where, sl_err *err)
{
    const sl_json *x = sl_json_get(o, key);
    if (!x || x->type != SL_JSON_NUMBER || !isfinite(x->num))
        return sl_errf(err, "%s: %s: `%s` is missing or not a finite number", src, where, key);
    *v = x->num;
    return 0;
}

sl_curve *sl_curve_read(const char *text, size_t len, const char *src, sl_err *err)
{
    sl_json_doc *jd = sl_json_parse(text, len, NULL, err);
    if (!jd) {
        sl_err_prefix(err, "%s", src);
        return NULL;
    }
    const sl_json *r = sl_json_root(jd);
    sl_curve *c = NULL;
    const char *fmt = r->type == SL_JSON_OBJECT ? sl_json_get_str(r, "format") : NULL;
    int64_t ver = 0;
    if (!fmt || strcmp(fmt, "sluice-position-curve") || sl_json_get_int(r, "version", &ver) || ver != 1) {
        sl_errf(err, "%s: not a position curve (`format` \"sluice-position-curve\", `version` 1)", src);
        goto fail;
    }
    const sl_json *gb = sl_json_get(r, "group_by");
    if (gb && gb->type != SL_JSON_NULL && gb->type != SL_JSON_STRING) {
        sl_errf(err, "%s: `group_by` is not a string or null", src);
        goto fail;
    }
    c = sl_curve_new(gb && gb->type == SL_JSON_STRING ? gb->str : NULL);
    c->n_groups = 0; /* the file lists its groups, "all" among them */
    free(c->groups[0].name);
    if (sl_json_get_int(r, "max_position", &c->max_position) || c->max_position < 0 ||
        sl_json_get_int(r, "train_length", &c->train_length) || c->train_length < 0) {
        sl_errf(err, "%s: `max_position` and `train_length` must be integers >= 0", src);
        goto fail;
    }
    const sl_json *gs = sl_json_get(r, "groups");
    if (!gs || gs->type != SL_JSON_ARRAY || !gs->n) {
        sl_errf(err, "%s: `groups` is missing or empty", src);
        goto fail;
    }
    for (size_t i = 0; i < gs->n; i++) {
        const sl_json *g = gs->kids[i];
        const sl_json *nm = g->type == SL_JSON_OBJECT ? sl_json_get(g, "name") : NULL;
        char where[64];
        snprintf(where, sizeof where, "group %zu", i);
        if (!nm || nm->type != SL_JSON_STRING) {
            sl_errf(err, "%s: %s: `name` is missing or not a string", src, where);
            goto fail;
        }
        for (size_t j = 0; j < c->n_groups; j++)
            if (strlen(c->groups[j].name) == nm->str_len && !memcmp(c->groups[j].name, nm->str, nm->str_len)) {
                sl_errf(err, "%s: %s: `name` \"%s\" appears twice", src, where, c->groups[j].name);
                goto fail;
            }
        if (i == 0 && !(nm->str_len == 3 && !memcmp(nm->str, "all", 3))) {
            sl_errf(err, "%s: the first group is not \"all\"", src);
            goto fail;
        }
        add_group(c, nm->str, nm->str_len);
        sl_curve_group *cg = &c->groups[c->n_groups - 1];
        const sl_json *bins = sl_json_get(g, "bins");
        if (get_u64(g, "documents", &cg->documents, src, where, err))
            goto fail;
        if (!bins || bins->type != SL_JSON_ARRAY || bins->n > SL_CURVE_BINS) {
            sl_errf(err, "%s: %s: `bins` is missing or has more than %d bins", src, where, SL_CURVE_BINS);
            goto fail;
        }
        cg->nbins = (int)bins->n;
        for (size_t k = 0; k < bins->n; k++) {
            const sl_json *x = bins->kids[k];
            sl_curve_bin *y = &cg->bins[k];
            int64_t lo;
            snprintf(where, sizeof where, "group %zu bin %zu", i, k);
            if (x->type != SL_JSON_OBJECT || sl_json_get_int(x, "lo", &lo) || lo != bin_lo((int)k)) {
                sl_errf(err, "%s: %s: `lo` is not %lld", src, where, (long long)bin_lo((int)k));
                goto fail;
            }
            if (get_u64(x, "count", &y->count, src, where, err) ||
                get_u64(x, "bytes_count", &y->bytes_count, src, where, err) ||
                get_dbl(x, "sum_nll", &y->sum_nll, src, where, err) ||
                get_dbl(x, "sum_sq", &y->sum_sq, src, where, err) ||
                get_dbl(x, "bytes_nll", &y->bytes_nll, src, where, err) ||
                get_dbl(x, "bytes", &y->bytes, src, where, err))
                goto fail;
        }
    }
    sl_json_free(jd);
    return c;
fail:
    sl_json_free(jd);
    sl_curve_free(c);
    return NULL;
}

/* "%.4f", or "-" for NaN */
static void fmt_or_dash(char *s, size_t n, double v)
{
    if (isnan(v))
        snprintf(s, n, "-");
    else
        snprintf(s, n, "%.4f", v);
}

void sl_curve_text(sl_buf *b, const sl_curve *c)
{
    for (size_t i = 0; i < c->n_groups; i++) {
        const sl_curve_group *g = &c->groups[i];
        uint64_t n = 0;
        double s = 0;
        for (int k = 0; k < g->nbins; k++) {
            n += g->bins[k].count;
            s += g->bins[k].sum_nll;
        }
        sl_buf_printf(b, "position curve%s%s%s: %s: %llu documents, %llu predictions, mean nll %.4f\n",
                      c->group_by ? " (" : "", c->group_by ? c->group_by : "", c->group_by ? ")" : "", g->name,
                      (unsigned long long)g->documents, (unsigned long long)n, n ? s / (double)n : NAN);
        sl_buf_printf(b, "  %21s %12s %10s %10s %8s\n", "positions", "predictions", "mean nll", "ci95 +-", "bpb");
        for (int k = 0; k < g->nbins; k++) {
            const sl_curve_bin *x = &g->bins[k];
            char pos[48];
            if (bin_lo(k) == bin_hi(k))
                snprintf(pos, sizeof pos, "%lld", (long long)bin_lo(k));
            else
                snprintf(pos, sizeof pos, "%lld-%lld", (long long)bin_lo(k), (long long)bin_hi(k));
            char ci[32], bpb[32];
            fmt_or_dash(ci, sizeof ci, sl_curve_ci95(x));
            fmt_or_dash(bpb, sizeof bpb, sl_curve_bpb(x));
            sl_buf_printf(b, "  %21s %12llu %10.4f %10s %8s\n", pos, (unsigned long long)x->count, sl_curve_mean(x), ci,
                          bpb);
        }
        int64_t tu = sl_curve_turn_up(g);
        if (tu)
            sl_buf_printf(b, "  turns up at position %lld%s\n", (long long)tu,
                          c->train_length ? (tu > c->train_length ? " (beyond train_length)" : " (within train_length)")
                                          : "");
    }
}

void sl_curve_svg(sl_buf *b, const sl_curve *c)
{
    size_t ng = c->n_groups;
    sl_svg_series *s = sl_xcalloc(ng, sizeof *s);
    double *v = sl_xcalloc(ng * 4 * SL_CURVE_BINS, sizeof *v);
    for (size_t i = 0; i < ng; i++) {
        const sl_curve_group *g = &c->groups[i];
        double *x = v + i * 4 * SL_CURVE_BINS, *y = x + SL_CURVE_BINS, *lo = y + SL_CURVE_BINS,
               *hi = lo + SL_CURVE_BINS;
        for (int k = 0; k < g->nbins; k++) {
            double m = sl_curve_mean(&g->bins[k]), ci = sl_curve_ci95(&g->bins[k]);
            /* the bin's geometric middle */
            x[k] = sqrt((double)bin_lo(k) * (double)bin_hi(k));
            y[k] = m;
            lo[k] = m - ci;
            hi[k] = m + ci;
        }
        s[i] = (sl_svg_series){.name = g->name, .x = x, .y = y, .lo = lo, .hi = hi, .n = g->nbins};
    }
    double lines[2] = {(double)c->train_length, (double)c->max_position};
    char title[256];
    snprintf(title, sizeof title, "mean NLL by token position%s%s (bars: 95%% interval)", c->group_by ? ", by " : "",
             c->group_by ? c->group_by : "");
    sl_lines_svg(b, s, (int)ng, title, "position (tokens of context)", "mean NLL (nats/token)", lines, 2);
    free(v);
    free(s);
}

sl_curve *sl_curve_load(const char *const *paths, size_t n, sl_err *err)
{
    sl_curve *sum = NULL;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *text = NULL;
        size_t len;
        sl_curve *c = NULL;
        if (sl_read_file(paths[i], &text, &len, err) < 0 || !(c = sl_curve_read(text, len, paths[i], err)))
            rc = -1;
        else if (!sum) {
            sum = c;
            c = NULL;
        } else if (sl_curve_merge(sum, c, err) < 0)
            rc = sl_err_prefix(err, "%s", paths[i]);
        free(text);
        sl_curve_free(c);
    }
    if (rc || !sum) {
        if (!rc)
            sl_errf(err, "no curve files");
        sl_curve_free(sum);
        return NULL;
    }
    return sum;
}

int sl_curve_save(const sl_curve *c, const char *json_path, const char *svg_path, sl_err *err)
{
    const char *path[2] = {json_path, svg_path};
    sl_buf b[2] = {{0}};
    sl_output *o[2] = {NULL, NULL};
    int rc = 0;
    if (json_path)
        sl_curve_json(&b[0], c);
    if (svg_path)
        sl_curve_svg(&b[1], c);
    for (int i = 0; i < 2 && !rc; i++)
        if (path[i] && (!(o[i] = sl_output_open(path[i], err)) || sl_output_write(o[i], b[i].data, b[i].len, err) < 0))
            rc = -1;
    for (int i = 0; i < 2; i++) {
        if (o[i] && (rc || sl_output_commit(o[i], err) < 0)) {
            if (!rc)
                rc = -1;
            else
                sl_output_abort(o[i]);
        }
        sl_buf_free(&b[i]);
    }
    return rc;
}
