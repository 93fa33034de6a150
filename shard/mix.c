/* Length-aware mixing (see mix.h; the algorithm is specified in
 * docs/longctx.md section 1.1 so that a test can re-derive it). */
#include "shard/mix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "stream/progress.h"
#include "base/rng.h"
#include "stream/spill.h"
#include "stream/stats.h"

#define NB 65            /* length buckets: 0 = empty, k = [2^(k-1), 2^k) */
#define MAX_COPIES 65535 /* copies are stored in 16 bits */
#define PLOT_BINS 30     /* bins of each panel of the plot */
/* Memory for each source's per-document spills (its documents' lengths and
 * their copies, kept from the plan to the end), divided among the sources,
 * and for the sort of the plan (one source at a time). */
#define MIX_SPILL (8u << 20)
#define MIX_SORT_SPILL (16u << 20)

typedef struct {
    char *name, *path;
    double weight;
    /* pass 1 */
    uint64_t n_docs, tokens_in, empty;
    uint32_t min_len, max_len; /* of the non-empty documents */
    sl_spill *len;             /* each document's length (uint32), in input order */
    sl_spill *copies;          /* (document, copies) for copies > 0, by document */
    double *bin_mass;          /* SL_MIX_TARGET: tokens per bin */
    double mass;               /* sum of f_j * n_j */
    double target;             /* T_i */
    double rate;               /* r_i */
    double u;                  /* U_i */
    double e_max;
    uint64_t max_copies;
    uint64_t before_docs[NB], before_tok[NB], after_docs[NB], after_tok[NB];
    double plot_edges[PLOT_BINS + 1];
    uint64_t plot_before[PLOT_BINS], plot_after[PLOT_BINS];
    /* pass 2 */
    sl_ts_reader *r;
    uint64_t epoch, j;
    uint32_t next_copy_doc, next_copy_n; /* the head of copies (next_copy_n 0: none left) */
    sl_doc pend;
    uint64_t pend_epoch;
    int has_pend;
    uint64_t out_docs, out_tokens;
} msrc;

struct sl_mix {
    sl_mix_opts o;
    sl_mix_bin *bins;
    msrc *s;
    size_t n;
    sl_ts_header h;
    int have_h;
    uint64_t out_docs, out_tokens;
};

static int bucket(uint64_t n)
{
    int k = 0;
    while (n) {
        k++;
        n >>= 1;
    }
    return k;
}

sl_mix *sl_mix_new(const sl_mix_opts *o, const sl_mix_source *src, size_t n, sl_err *err)
{
    if (n == 0) {
        sl_err_set(err, SL_E_OPTION, "source", "`source`: at least one source is needed");
        return NULL;
    }
    if (o->tokens == 0) {
        sl_err_set(err, SL_E_OPTION, "tokens", "`tokens` 0: the budget must be positive");
        return NULL;
    }
    if (!(o->max_epochs > 0) || o->max_epochs > MAX_COPIES) {
        sl_err_set(err, SL_E_OPTION, "max_epochs", "`max_epochs` %g: must be in (0, %d]", o->max_epochs, MAX_COPIES);
        return NULL;
    }
    if (o->policy == SL_MIX_UPSAMPLE && (!(o->factor > 0) || !isfinite(o->factor))) {
        sl_err_set(err, SL_E_OPTION, "factor", "`factor` %g: must be positive", o->factor);
        return NULL;
    }
    if (o->policy == SL_MIX_TARGET) {
        double sum = 0;
        for (size_t b = 0; b < o->n_bins; b++) {
            const sl_mix_bin *x = &o->bins[b];
            if (x->hi <= x->lo || !(x->share >= 0) || !isfinite(x->share) || (b && x->lo < o->bins[b - 1].hi)) {
                sl_err_set(err, SL_E_OPTION, "length_target",
                           "`length_target` bin %zu: needs lo < hi, bins sorted and disjoint, share >= 0", b);
                return NULL;
            }
            sum += x->share;
        }
        if (!(sum > 0)) {
            sl_err_set(err, SL_E_OPTION, "length_target", "`length_target`: the shares add up to 0");
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!src[i].name || !*src[i].name || !src[i].path || !*src[i].path) {
            sl_err_set(err, SL_E_OPTION, "source", "`source` %zu: needs a name and a path", i + 1);
            return NULL;
        }
        if (!(src[i].weight > 0) || !isfinite(src[i].weight)) {
            sl_errf(err, "source '%s': `weight` %g must be positive", src[i].name, src[i].weight);
            return NULL;
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(src[k].name, src[i].name)) {
                sl_errf(err, "source '%s' is given twice", src[i].name);
                return NULL;
            }
    }
    sl_mix *m = sl_xcalloc(1, sizeof *m);
    m->o = *o;
    if (o->policy == SL_MIX_TARGET) {
        m->bins = sl_xmalloc(o->n_bins * sizeof *m->bins);
        memcpy(m->bins, o->bins, o->n_bins * sizeof *m->bins);
        double sum = 0;
        for (size_t b = 0; b < o->n_bins; b++)
            sum += m->bins[b].share;
        for (size_t b = 0; b < o->n_bins; b++)
            m->bins[b].share /= sum;
        m->o.bins = m->bins;
    } else {
        m->o.bins = NULL;
        m->o.n_bins = 0;
    }
    m->n = n;
    m->s = sl_xcalloc(n, sizeof *m->s);
    for (size_t i = 0; i < n; i++) {
        m->s[i].name = sl_xstrdup(src[i].name);
        m->s[i].path = sl_xstrdup(src[i].path);
        m->s[i].weight = src[i].weight;
        if (m->o.n_bins)
            m->s[i].bin_mass = sl_xcalloc(m->o.n_bins, sizeof *m->s[i].bin_mass);
    }
    return m;
}

int sl_mix_parse_target(const char *json, size_t len, const char *name, sl_mix_bin **bins, size_t *n, sl_err *err)
{
    *bins = NULL;
    *n = 0;
    sl_json_doc *jd = sl_json_parse(json, len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s", name);
    sl_json *root = sl_json_root(jd);
    sl_json *arr = root->type == SL_JSON_OBJECT ? sl_json_get(root, "bins") : NULL;
    if (!arr || arr->type != SL_JSON_ARRAY || arr->n == 0) {
        sl_json_free(jd);
        return sl_errf(err, "%s: expected {\"bins\":[{\"lo\":L,\"hi\":H|null,\"share\":S},...]}", name);
    }
    sl_mix_bin *out = sl_xcalloc(arr->n, sizeof *out);
    for (size_t i = 0; i < arr->n; i++) {
        const sl_json *e = arr->kids[i];
        int64_t lo, hi = -1;
        double share;
        sl_json *hv = e->type == SL_JSON_OBJECT ? sl_json_get(e, "hi") : NULL;
        int ok = e->type == SL_JSON_OBJECT && !sl_json_get_int(e, "lo", &lo) && lo >= 0 &&
                 !sl_json_get_num(e, "share", &share) && share >= 0 && isfinite(share) &&
                 (!hv || hv->type == SL_JSON_NULL || (sl_json_is_int(hv, &hi) && hi > lo));
        if (ok && i && (uint64_t)lo < out[i - 1].hi)
            ok = 0;
        if (!ok) {
            free(out);
            sl_json_free(jd);
            return sl_errf(err,
                           "%s: bin %zu: expected {\"lo\":L,\"hi\":H|null,\"share\":S} with 0 <= L < H, S >= 0, "
                           "bins sorted by lo and disjoint",
                           name, i);
        }
        out[i].lo = (uint64_t)lo;
        out[i].hi = hi < 0 ? UINT64_MAX : (uint64_t)hi;
        out[i].share = share;
    }
    *bins = out;
    *n = arr->n;
    sl_json_free(jd);
    return 0;
}

/* The bin of a document of n tokens, or -1. */
static long bin_of(const sl_mix *m, uint64_t n)
{
    for (size_t b = 0; b < m->o.n_bins; b++)
        if (n >= m->bins[b].lo && n < m->bins[b].hi)
            return (long)b;
    return -1;
}

/* f_j: the length weight of a document of n tokens in source s. */
static double weight_of(const sl_mix *m, const msrc *s, uint64_t n)
{
    if (n == 0)
        return 0;
    switch (m->o.policy) {
    case SL_MIX_UPSAMPLE: return n >= m->o.long_len ? m->o.factor : 1.0;
    case SL_MIX_TARGET: {
        long b = bin_of(m, n);
        return b < 0 || m->bins[b].share == 0 ? 0 : m->bins[b].share / s->bin_mass[b];
    }
    default: return 1.0;
    }
}

static sl_ts_reader *open_src(const msrc *s, sl_err *err)
{
    char *p = s->path;
    sl_ts_reader *r = sl_ts_reader_open_paths(&p, 1, err);
    if (!r)
        sl_err_prefix(err, "source '%s'", s->name);
    return r;
}

static int scan(sl_mix *m, msrc *s, sl_err *err)
{
    sl_ts_reader *r = open_src(s, err);
    if (!r)
        return -1;
    const sl_ts_header *h = sl_ts_reader_header(r);
    if (!m->have_h) {
        sl_ts_header_copy(&m->h, h);
        m->have_h = 1;
    } else {
        char what[256];
        if (sl_ts_header_diff(&m->h, h, what, sizeof what)) {
            sl_ts_reader_close(r);
            return sl_errf(err, "source '%s' (%s): its header differs from source '%s': %s", s->name, s->path,
                           m->s[0].name, what);
        }
    }
    sl_doc d = {0};
    int k;
    size_t each = MIX_SPILL / m->n > (1u << 20) ? MIX_SPILL / m->n : (1u << 20);
    sl_spill_opts so = {.budget = each, .rec_size = 4, .purpose = "document lengths of mix"};
    s->min_len = UINT32_MAX;
    if (!(s->len = sl_spill_new(&so, err))) {
        sl_ts_reader_close(r);
        return -1;
    }
    while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
        if (d.n_tokens > UINT32_MAX) {
            k = -1;
            sl_errf(err, "document '%s': %zu tokens (at most 2^32-1 per document)", d.id, d.n_tokens);
            break;
        }
        uint32_t l = (uint32_t)d.n_tokens;
        if (sl_spill_add(s->len, &l, sizeof l, err)) {
            k = -2;
            break;
        }
        s->n_docs++;
        if (l) {
            s->min_len = l < s->min_len ? l : s->min_len;
            s->max_len = l > s->max_len ? l : s->max_len;
        }
        s->tokens_in += d.n_tokens;
        s->empty += d.n_tokens == 0;
        int bk = bucket(d.n_tokens);
        s->before_docs[bk]++;
        s->before_tok[bk] += d.n_tokens;
        long b = bin_of(m, d.n_tokens);
        if (b >= 0)
            s->bin_mass[b] += (double)d.n_tokens;
    }
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    if (k == -2)
        return -1;
    if (k < 0)
        return sl_err_prefix(err, "source '%s'", s->name);
    return sl_spill_sort(s->len, err);
}

/* The next length of s->len: 1, 0 at the end, -1 error. */
static int next_len(msrc *s, uint32_t *len, sl_err *err)
{
    const void *r;
    size_t n;
    int k = sl_spill_next(s->len, &r, &n, err);
    if (k == 1)
        memcpy(len, r, sizeof *len);
    return k;
}

static int by_u64(const void *a, size_t alen, const void *b, size_t blen, void *ctx)
{
    (void)alen, (void)blen, (void)ctx;
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x < y ? -1 : x > y;
}

/* The bin of a panel of the plot that a length falls in. */
static int plot_bin(const msrc *s, uint32_t len)
{
    int k = 0;
    while (k < PLOT_BINS - 1 && (double)len >= s->plot_edges[k + 1])
        k++;
    return k;
}

int sl_mix_plan(sl_mix *m, sl_err *err)
{
    double wsum = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (scan(m, &m->s[i], err))
            return -1;
        wsum += m->s[i].weight;
    }
    for (size_t i = 0; i < m->n; i++) {
        msrc *s = &m->s[i];
        if (s->n_docs > UINT32_MAX)
            return sl_errf(err, "source '%s': %llu documents (at most 2^32-1 per source)", s->name,
                           (unsigned long long)s->n_docs);
        if (m->o.policy == SL_MIX_TARGET)
            for (size_t b = 0; b < m->o.n_bins; b++)
                if (m->bins[b].share > 0 && s->bin_mass[b] == 0) {
                    char hi[32] = "inf";
                    if (m->bins[b].hi != UINT64_MAX)
                        snprintf(hi, sizeof hi, "%llu", (unsigned long long)m->bins[b].hi);
                    return sl_errf(err,
                                   "source '%s': no document with [%llu, %s) tokens for `length_target` bin %zu "
                                   "(share %g)",
                                   s->name, (unsigned long long)m->bins[b].lo, hi, b, m->bins[b].share);
                }
        s->mass = 0;
        s->e_max = 0;
        uint32_t l;
        int k;
        while ((k = next_len(s, &l, err)) == 1)
            s->mass += weight_of(m, s, l) * (double)l;
        if (k < 0 || sl_spill_rewind(s->len, err))
            return -1;
        s->target = (double)m->o.tokens * (s->weight / wsum);
        if (!(s->mass > 0))
            return sl_errf(err, "source '%s' (%s): no document can be selected (%llu documents, %llu tokens%s)",
                           s->name, s->path, (unsigned long long)s->n_docs, (unsigned long long)s->tokens_in,
                           m->o.policy == SL_MIX_TARGET ? ", none inside the length target" : "");
        s->rate = s->target / s->mass;
        while ((k = next_len(s, &l, err)) == 1) {
            double e = s->rate * weight_of(m, s, l);
            s->e_max = e > s->e_max ? e : s->e_max;
        }
        if (k < 0 || sl_spill_rewind(s->len, err))
            return -1;
        if (s->e_max > m->o.max_epochs) {
            /* the most the source can give: the rate at which e_max = max_epochs */
            double can = s->target * (m->o.max_epochs / s->e_max);
            return sl_errf(err,
                           "source '%s': its share (%.0f of %llu tokens) would select documents %.3g times, more "
                           "than `max_epochs` %g: within it the source gives at most %.0f tokens, %.0f (%.1f%%) "
                           "short",
                           s->name, s->target, (unsigned long long)m->o.tokens, s->e_max, m->o.max_epochs, floor(can),
                           s->target - floor(can), 100.0 * (s->target - floor(can)) / s->target);
        }
        /* the plot's bins: log-scale edges from the shortest and longest
         * non-empty document, the same for both panels */
        double ends[2] = {s->min_len == UINT32_MAX ? 1 : (double)s->min_len, s->max_len ? (double)s->max_len : 1};
        sl_histogram_log(ends, 2, PLOT_BINS, s->plot_before, s->plot_edges);
        memset(s->plot_before, 0, sizeof s->plot_before);
        memset(s->plot_after, 0, sizeof s->plot_after);
        /* systematic sampling over the documents sorted by (length, index) */
        sl_spill_opts ko = {.budget = MIX_SORT_SPILL, .rec_size = 8, .cmp = by_u64, .purpose = "plan of mix"};
        sl_spill *keys = sl_spill_new(&ko, err);
        if (!keys)
            return -1;
        for (uint64_t j = 0; (k = next_len(s, &l, err)) == 1; j++) {
            if (l)
                s->plot_before[plot_bin(s, l)]++;
            uint64_t key = (uint64_t)l << 32 | j;
            if (weight_of(m, s, l) > 0 && sl_spill_add(keys, &key, sizeof key, err)) {
                k = -1;
                break;
            }
        }
        if (k < 0 || sl_spill_rewind(s->len, err) || sl_spill_sort(keys, err)) {
            sl_spill_free(keys);
            return -1;
        }
        size_t each = MIX_SPILL / m->n > (1u << 20) ? MIX_SPILL / m->n : (1u << 20);
        sl_spill_opts co = {.budget = each, .rec_size = 8, .cmp = by_u64, .purpose = "copies of mix"};
        if (!(s->copies = sl_spill_new(&co, err))) {
            sl_spill_free(keys);
            return -1;
        }
        s->u = sl_rng_unit_at(m->o.seed, (uint64_t)i);
        double c = s->u;
        s->max_copies = 0;
        const void *rec;
        size_t rl;
        while ((k = sl_spill_next(keys, &rec, &rl, err)) == 1) {
            uint64_t key;
            memcpy(&key, rec, 8);
            uint32_t j = (uint32_t)key, len = (uint32_t)(key >> 32);
            double before = floor(c);
            c += s->rate * weight_of(m, s, len);
            uint64_t n = (uint64_t)(floor(c) - before);
            uint16_t stored = (uint16_t)n;
            /* (document, copies) as one key that sorts by document */
            uint64_t cr = (uint64_t)j << 32 | stored;
            if (stored && sl_spill_add(s->copies, &cr, sizeof cr, err)) {
                k = -1;
                break;
            }
            s->max_copies = n > s->max_copies ? n : s->max_copies;
            int bk = bucket(len);
            s->after_docs[bk] += n;
            s->after_tok[bk] += n * len;
            if (len)
                s->plot_after[plot_bin(s, len)] += stored;
        }
        sl_spill_free(keys);
        if (k < 0 || sl_spill_sort(s->copies, err))
            return -1;
    }
    return 0;
}

/* The head of s->copies into next_copy_doc/next_copy_n (n 0 at the end). */
static int next_copy(msrc *s, sl_err *err)
{
    const void *r;
    size_t n;
    int k = sl_spill_next(s->copies, &r, &n, err);
    s->next_copy_n = 0;
    if (k == 1) {
        uint64_t cr;
        memcpy(&cr, r, 8);
        s->next_copy_doc = (uint32_t)(cr >> 32);
        s->next_copy_n = (uint16_t)cr;
    }
    return k < 0 ? -1 : 0;
}

const sl_ts_header *sl_mix_header(const sl_mix *m)
{
    return &m->h;
}

/* Loads the source's next output document (epoch by epoch, in input order)
 * into s->pend. */
static int next_doc(msrc *s, sl_err *err)
{
    s->has_pend = 0;
    for (;;) {
        if (s->epoch >= s->max_copies)
            return 0;
        if (!s->r) {
            /* an epoch: the lengths and copies from the first */
            if (!(s->r = open_src(s, err)) || sl_spill_rewind(s->len, err) || sl_spill_rewind(s->copies, err) ||
                next_copy(s, err))
                return -1;
        }
        int k = sl_ts_read_doc(s->r, &s->pend, err);
        if (k < 0)
            return sl_err_prefix(err, "source '%s'", s->name);
        if (k == 0) {
            sl_ts_reader_close(s->r);
            s->r = NULL;
            if (s->j != s->n_docs)
                return sl_errf(err, "source '%s' (%s): %llu documents now, %llu in the first pass: the input changed",
                               s->name, s->path, (unsigned long long)s->j, (unsigned long long)s->n_docs);
            s->epoch++;
            s->j = 0;
            continue;
        }
        uint32_t l = 0;
        int kl = s->j < s->n_docs ? next_len(s, &l, err) : 0;
        if (kl < 0)
            return -1;
        if (kl == 0 || s->pend.n_tokens != l)
            return sl_errf(err, "source '%s' (%s): document %llu differs from the first pass: the input changed",
                           s->name, s->path, (unsigned long long)s->j);
        uint64_t copies = 0;
        if (s->next_copy_n && s->next_copy_doc == s->j) {
            copies = s->next_copy_n;
            if (next_copy(s, err))
                return -1;
        }
        s->j++;
        if (copies > s->epoch) {
            s->pend_epoch = s->epoch;
            s->has_pend = 1;
            return 1;
        }
    }
}

/* id ("NAME/" first with source_ids; "#k" for copy k >= 1) and metadata
 * {"source":NAME, other fields}. */
static int make_out(const msrc *s, int source_ids, sl_doc *out, sl_buf *b, sl_err *err)
{
    const sl_doc *d = &s->pend;
    sl_buf_clear(b);
    if (source_ids) {
        sl_buf_puts(b, s->name);
        sl_buf_putc(b, '/');
    }
    sl_buf_append(b, d->id, d->id_len);
    if (s->pend_epoch)
        sl_buf_printf(b, "#%llu", (unsigned long long)s->pend_epoch);
    sl_doc_set_id(out, b->data, b->len);
    sl_buf_clear(b);
    sl_buf_puts(b, "{\"source\":");
    sl_json_put_cstr(b, s->name);
    if (d->meta && d->meta_len) {
        sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
        sl_json *root = jd ? sl_json_root(jd) : NULL;
        if (!root || root->type != SL_JSON_OBJECT) {
            sl_json_free(jd);
            return sl_errf(err, "source '%s': document '%s': metadata is not a JSON object", s->name, d->id);
        }
        for (size_t i = 0; i < root->n; i++) {
            if (root->keys[i]->str_len == 6 && !memcmp(root->keys[i]->str, "source", 6))
                continue;
            sl_buf_putc(b, ',');
            sl_json_put_str(b, root->keys[i]->str, root->keys[i]->str_len);
            sl_buf_putc(b, ':');
            sl_json_put_value(b, root->kids[i]);
        }
        sl_json_free(jd);
    }
    sl_buf_putc(b, '}');
    sl_doc_set_meta(out, b->data, b->len);
    sl_doc_reserve(out, d->n_tokens);
    if (d->n_tokens)
        memcpy(out->tokens, d->tokens, d->n_tokens * sizeof *d->tokens);
    out->n_tokens = d->n_tokens;
    out->src_bytes = d->src_bytes;
    return 0;
}

int sl_mix_each(sl_mix *m, sl_mix_doc_fn fn, void *ctx, sl_err *err)
{
    int rc = -1;
    sl_doc out = {0};
    sl_buf b = {0};
    for (size_t i = 0; i < m->n; i++)
        if (next_doc(&m->s[i], err) < 0)
            goto done;
    for (;;) {
        /* the source furthest behind its target (tokens emitted / target) */
        msrc *best = NULL;
        double best_q = 0;
        for (size_t i = 0; i < m->n; i++) {
            msrc *s = &m->s[i];
            if (!s->has_pend)
                continue;
            double q = (double)s->out_tokens / s->target;
            if (!best || q < best_q) {
                best = s;
                best_q = q;
            }
        }
        if (!best)
            break;
        if (make_out(best, m->o.source_ids, &out, &b, err) || fn(ctx, &out, err))
            goto done;
        best->out_docs++;
        best->out_tokens += out.n_tokens;
        m->out_docs++;
        m->out_tokens += out.n_tokens;
        if (next_doc(best, err) < 0)
            goto done;
    }
    rc = 0;
done:
    sl_doc_free(&out);
    sl_buf_free(&b);
    return rc;
}

static void put_hist(sl_buf *b, const uint64_t *docs, const uint64_t *tok)
{
    sl_buf_puts(b, "[");
    int first = 1;
    for (int k = 0; k < NB; k++) {
        if (!docs[k])
            continue;
        unsigned long long lo = k ? 1ull << (k - 1) : 0, hi = k < 64 ? 1ull << k : 0;
        sl_buf_printf(b, "%s{\"lo\": %llu, \"hi\": %llu, \"documents\": %llu, \"tokens\": %llu}", first ? "" : ", ", lo,
                      k ? hi : 1, (unsigned long long)docs[k], (unsigned long long)tok[k]);
        first = 0;
    }
    sl_buf_puts(b, "]");
}

void sl_mix_report_json(const sl_mix *m, sl_buf *b)
{
    sl_buf_printf(
        b, "{\n  \"format\": \"sluice-mix-report\",\n  \"version\": 1,\n  \"tokens\": %llu,\n  \"seed\": %llu,\n",
        (unsigned long long)m->o.tokens, (unsigned long long)m->o.seed);
    sl_buf_puts(b, "  \"max_epochs\": ");
    sl_json_put_num(b, m->o.max_epochs);
    sl_buf_puts(b, ",\n  \"policy\": ");
    if (m->o.policy == SL_MIX_UPSAMPLE) {
        sl_buf_printf(
            b, "{\"kind\": \"upsample-long\", \"min_length\": %llu, \"factor\": ", (unsigned long long)m->o.long_len);
        sl_json_put_num(b, m->o.factor);
        sl_buf_puts(b, "}");
    } else if (m->o.policy == SL_MIX_TARGET) {
        sl_buf_puts(b, "{\"kind\": \"length-target\", \"bins\": [");
        for (size_t i = 0; i < m->o.n_bins; i++) {
            sl_buf_printf(b, "%s{\"lo\": %llu, \"hi\": ", i ? ", " : "", (unsigned long long)m->bins[i].lo);
            if (m->bins[i].hi == UINT64_MAX)
                sl_buf_puts(b, "null");
            else
                sl_buf_printf(b, "%llu", (unsigned long long)m->bins[i].hi);
            sl_buf_puts(b, ", \"share\": ");
            sl_json_put_num(b, m->bins[i].share);
            sl_buf_puts(b, "}");
        }
        sl_buf_puts(b, "]}");
    } else {
        sl_buf_puts(b, "{\"kind\": \"none\"}");
    }
    sl_buf_printf(b, ",\n  \"documents\": %llu,\n  \"achieved_tokens\": %llu,\n  \"sources\": [",
                  (unsigned long long)m->out_docs, (unsigned long long)m->out_tokens);
    double wsum = 0;
    for (size_t i = 0; i < m->n; i++)
        wsum += m->s[i].weight;
    for (size_t i = 0; i < m->n; i++) {
        const msrc *s = &m->s[i];
        sl_buf_printf(b, "%s\n    {\"name\": ", i ? "," : "");
        sl_json_put_cstr(b, s->name);
        sl_buf_puts(b, ", \"input\": ");
        sl_json_put_cstr(b, s->path);
        sl_buf_puts(b, ", \"weight\": ");
        sl_json_put_num(b, s->weight);
        sl_buf_puts(b, ", \"target_share\": ");
        sl_json_put_num(b, s->weight / wsum);
        sl_buf_puts(b, ", \"target_tokens\": ");
        sl_json_put_num(b, s->target);
        sl_buf_printf(b, ",\n     \"tokens\": %llu, \"share\": ", (unsigned long long)s->out_tokens);
        sl_json_put_num(b, m->out_tokens ? (double)s->out_tokens / (double)m->out_tokens : 0);
        sl_buf_printf(b, ", \"documents\": %llu, \"documents_in\": %llu, \"tokens_in\": %llu, \"empty_in\": %llu",
                      (unsigned long long)s->out_docs, (unsigned long long)s->n_docs, (unsigned long long)s->tokens_in,
                      (unsigned long long)s->empty);
        sl_buf_puts(b, ",\n     \"effective_epochs\": ");
        sl_json_put_num(b, s->tokens_in ? (double)s->out_tokens / (double)s->tokens_in : 0);
        sl_buf_printf(b, ", \"max_copies\": %llu, \"rate\": ", (unsigned long long)s->max_copies);
        sl_json_put_num(b, s->rate);
        sl_buf_puts(b, ", \"uniform\": ");
        sl_json_put_num(b, s->u);
        sl_buf_puts(b, ",\n     \"length_histogram_before\": ");
        put_hist(b, s->before_docs, s->before_tok);
        sl_buf_puts(b, ",\n     \"length_histogram_after\": ");
        put_hist(b, s->after_docs, s->after_tok);
        sl_buf_puts(b, "}");
    }
    sl_buf_puts(b, "\n  ]\n}\n");
}

void sl_mix_summary_text(const sl_mix *m, sl_buf *b)
{
    double wsum = 0;
    for (size_t i = 0; i < m->n; i++)
        wsum += m->s[i].weight;
    sl_buf_printf(b, "mix: %llu documents, %llu tokens (budget %llu)\n", (unsigned long long)m->out_docs,
                  (unsigned long long)m->out_tokens, (unsigned long long)m->o.tokens);
    for (size_t i = 0; i < m->n; i++) {
        const msrc *s = &m->s[i];
        sl_buf_printf(b, "  %-16s %12llu tokens  %6.2f%% (target %6.2f%%)  %.3g epochs, at most %llu copies\n", s->name,
                      (unsigned long long)s->out_tokens,
                      m->out_tokens ? 100.0 * (double)s->out_tokens / (double)m->out_tokens : 0.0,
                      100.0 * s->weight / wsum, s->tokens_in ? (double)s->out_tokens / (double)s->tokens_in : 0.0,
                      (unsigned long long)s->max_copies);
    }
}

/* One panel: the histogram SVG of stream/stats.h placed at (x, y). */
static void panel(sl_buf *b, int x, int y, const uint64_t *counts, const double *edges, int nb, const char *what,
                  const double *lines, int nlines)
{
    sl_buf p = {0};
    sl_histogram_svg(&p, counts, edges, nb, what, lines, nlines);
    sl_buf_printf(b, "<svg x=\"%d\" y=\"%d\"", x, y);
    sl_buf_append(b, p.data + 4, p.len - 4); /* after "<svg" */
    sl_buf_free(&p);
}

void sl_mix_plot_svg(const sl_mix *m, sl_buf *b)
{
    enum { PW = 640, PH = 360 };
    sl_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" font-family=\"sans-serif\" "
                  "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  2 * PW, (size_t)PH * m->n);
    double line = (double)m->o.long_len;
    for (size_t i = 0; i < m->n; i++) {
        const msrc *s = &m->s[i];
        char what[256];
        snprintf(what, sizeof what, "tokens per document: %s, input", s->name);
        panel(b, 0, (int)(i * PH), s->plot_before, s->plot_edges, PLOT_BINS, what, &line,
              m->o.policy == SL_MIX_UPSAMPLE);
        snprintf(what, sizeof what, "tokens per document: %s, mixed", s->name);
        panel(b, PW, (int)(i * PH), s->plot_after, s->plot_edges, PLOT_BINS, what, &line,
              m->o.policy == SL_MIX_UPSAMPLE);
    }
    sl_buf_puts(b, "</svg>\n");
}

void sl_mix_free(sl_mix *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        msrc *s = &m->s[i];
        free(s->name);
        free(s->path);
        sl_spill_free(s->len);
        sl_spill_free(s->copies);
        free(s->bin_mass);
        sl_ts_reader_close(s->r);
        sl_doc_free(&s->pend);
    }
    free(m->s);
    free(m->bins);
    if (m->have_h)
        sl_ts_header_free(&m->h);
    free(m);
}

/* ---- the stage ------------------------------------------------------------ */

typedef struct {
    sl_ts_writer *w;
    sl_progress *pg;
} stage_ctx;

static int stage_doc(void *vc, const sl_doc *d, sl_err *err)
{
    stage_ctx *c = vc;
    sl_progress_add(c->pg, 1, 0);
    sl_progress_add_tokens(c->pg, d->n_tokens);
    return sl_ts_write_doc(c->w, d, err);
}

static int write_file(const char *path, const sl_buf *b, sl_err *err)
{
    sl_output *o = sl_output_open(path, err);
    if (!o || sl_output_write(o, b->data, b->len, err) < 0) {
        sl_output_abort(o);
        return -1;
    }
    return sl_output_commit(o, err) < 0 ? -1 : 0;
}

int sl_mix_run(const sl_mix_opts *o, const sl_mix_source *src, size_t n, const char *target_path, sl_output *out,
               const char *report, const char *plot, int progress, sl_mix **done, sl_err *err)
{
    sl_mix_opts oo = *o;
    sl_mix_bin *bins = NULL;
    sl_mix *m = NULL;
    sl_ts_writer *w = NULL;
    sl_buf b = {0};
    sl_progress *pg = NULL;
    int rc = -1;
    *done = NULL;
    if (oo.policy == SL_MIX_TARGET) {
        char *text = NULL;
        size_t tlen = 0;
        int k = sl_read_file(target_path, &text, &tlen, err);
        if (!k)
            k = sl_mix_parse_target(text ? text : "", tlen, target_path, &bins, &oo.n_bins, err);
        free(text);
        if (k)
            goto out;
        oo.bins = bins;
    }
    if (!(m = sl_mix_new(&oo, src, n, err)) || sl_mix_plan(m, err))
        goto out;
    if (!(w = sl_ts_writer_open(out, sl_mix_header(m), err)))
        goto out;
    pg = sl_progress_start("mix", "docs", progress);
    stage_ctx ctx = {w, pg};
    if (sl_mix_each(m, stage_doc, &ctx, err))
        goto out;
    sl_progress_done(pg);
    pg = NULL;
    if (report) {
        sl_mix_report_json(m, &b);
        if (write_file(report, &b, err))
            goto out;
    }
    if (plot) {
        sl_buf_clear(&b);
        sl_mix_plot_svg(m, &b);
        if (write_file(plot, &b, err))
            goto out;
    }
    rc = sl_ts_writer_finish(w, err);
    w = NULL;
out:
    sl_progress_done(pg);
    sl_ts_writer_abort(w);
    free(bins);
    sl_buf_free(&b);
    if (rc)
        sl_mix_free(m);
    else
        *done = m;
    return rc;
}
