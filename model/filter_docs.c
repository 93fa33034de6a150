/* `filter` over JSON Lines documents (model/filter.h, sl_filter_docs): each
 * line is parsed, its field tested (numeric bounds or a categorical keep),
 * and a line that passes is written as it came, byte for byte. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/filter.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/stats.h"

#define MAX_LINE ((size_t)1 << 30)

static int one_input(const sl_filter_opts *o, const sl_filter_cuts *c, sl_input *in, sl_output *out,
                     sl_filter_result *res, sl_progress *pg, sl_err *err)
{
    const char *name = sl_input_name(in);
    char *line = NULL;
    size_t len = 0, cap = 0;
    uint64_t ln = 0;
    int k, rc = 0;
    while ((k = sl_input_getline(in, &line, &len, &cap, MAX_LINE, err)) == 1) {
        ln++;
        size_t n = len;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        size_t s = 0;
        while (s < n && (line[s] == ' ' || line[s] == '\t'))
            s++;
        if (s == n)
            continue; /* a blank line is no document */
        sl_err jerr;
        sl_json_doc *jd = sl_json_parse(line + s, n - s, NULL, &jerr);
        if (!jd) {
            rc = sl_errf(err, "%s:%llu: not a JSON object: %s", name, (unsigned long long)ln, jerr.msg);
            break;
        }
        const sl_json *obj = sl_json_root(jd);
        double v = NAN;
        int got = obj->type == SL_JSON_OBJECT ? sl_filter_json_value(o, obj, &v) : -2;
        sl_json_free(jd);
        if (got == -2) {
            rc = sl_errf(err, "%s:%llu: not a JSON object", name, (unsigned long long)ln);
            break;
        }
        if (got == 0) {
            res->missing = 1;
            rc = sl_errf(err, "%s:%llu: the document has no \"%s\"", name, (unsigned long long)ln, o->field);
            break;
        }
        if (got < 0) {
            rc = sl_errf(err, "%s:%llu: \"%s\" is not a %s", name, (unsigned long long)ln, o->field,
                         o->n_in ? "string" : "number");
            break;
        }
        res->docs++;
        res->unscored += isnan(v);
        if (!o->n_in)
            sl_filter_dist_add(&res->seen, v);
        if (sl_filter_keep(o, c, v)) {
            res->kept++;
            if (sl_output_write(out, line + s, n - s, err) < 0 || sl_output_write(out, "\n", 1, err) < 0) {
                rc = -1;
                break;
            }
        }
        sl_progress_add(pg, 1, len);
    }
    if (k < 0)
        rc = -1;
    free(line);
    return rc;
}

int sl_filter_docs(const sl_filter_opts *o, sl_input *first, const char *const *paths, size_t n, sl_output *out,
                   sl_filter_result *res, sl_err *err)
{
    *res = (sl_filter_result){0};
    if (sl_filter_needs_dist(o) || o->n_scores || o->n_cutoffs_from) {
        sl_input_close(first);
        return sl_errf(err,
                       "%s: JSON Lines documents are filtered by `min`, `max` or `in` on a field of theirs; "
                       "percentiles (`pct_lo/pct_hi`, `bucket`) and `scores` need a token stream",
                       paths[0]);
    }
    if (!strcmp(o->field, SL_FILTER_FIELD_TOKENS) || !strcmp(o->field, SL_FILTER_FIELD_SRC_BYTES)) {
        sl_input_close(first);
        return sl_errf(err, "%s: JSON Lines documents have no %s count (that is a token stream's)", paths[0], o->field);
    }
    sl_filter_cuts c;
    sl_filter_dist none = {0};
    int k = sl_filter_resolve(o, &none, &c, err); /* no percentiles: nothing to read */
    sl_filter_dist_free(&none);
    if (k < 0) {
        sl_input_close(first);
        return -1;
    }
    res->cuts = c;
    sl_progress *pg = sl_progress_start("filter", "docs", o->progress);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        sl_input *in = i == 0 && first ? first : sl_input_open(paths[i], err);
        if (!in) {
            rc = -1;
            break;
        }
        rc = one_input(o, &c, in, out, res, pg, err);
        sl_input_close(in);
    }
    sl_progress_done(pg);
    res->bins = o->bins;
    res->counts = sl_xcalloc((size_t)o->bins, sizeof *res->counts);
    res->edges = sl_xcalloc((size_t)o->bins + 1, sizeof *res->edges);
    static const double ps[7] = {0, 10, 30, 50, 60, 90, 100};
    if (!rc && (sl_filter_dist_histogram(&res->seen, o->bins, res->counts, res->edges, err) ||
                sl_filter_dist_percentiles(&res->seen, ps, 7, res->pcts, err)))
        rc = -1;
    res->docs_mode = 1;
    return rc;
}
