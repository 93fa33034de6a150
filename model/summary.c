/* Score summaries (see summary.h). */
#include "model/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/hashtab.h"
#include "base/byteorder.h"
#include "stream/io.h"

#define SHIFT (52 - SL_SUMMARY_BITS)
#define LOW_MASK ((UINT64_C(1) << SHIFT) - 1)
#define SIGN UINT64_C(0x8000000000000000)
#define NAME_MAX_LEN 64
static const char magic[8] = {'S', 'L', 'S', 'U', 'M', 'M', 'R', 'Y'};

/* --- keys ---------------------------------------------------------------- */
static uint64_t key_of(double v)
{
    uint64_t b;
    if (v == 0)
        v = 0; /* -0 -> +0 */
    memcpy(&b, &v, sizeof b);
    return b & SIGN ? ~b : b | SIGN;
}

static double value_of(uint64_t k)
{
    uint64_t b = k & SIGN ? k & ~SIGN : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* --- one field ------------------------------------------------------------ */
typedef struct bucket {
    uint64_t b; /* bucket number + 1 (0 = empty slot) */
    uint64_t count;
    uint64_t key; /* the key of the bucket's values while single */
    int single;
} bucket;

typedef struct field {
    char *name;
    uint64_t n, unscored;
    uint64_t kmin, kmax; /* when n > 0 */
    sl_htab t;           /* the buckets */
} field;

struct sl_score_summary {
    uint64_t docs;
    field *f; /* sorted by name */
    size_t nf;
    const char **names;
};

/* The table's key is the bucket number + 1, itself a well-spread number. */
static uint64_t bucket_hash(const void *key, const void *ctx)
{
    (void)ctx;
    uint64_t b1;
    memcpy(&b1, key, 8);
    return (b1 - 1) * UINT64_C(0x9E3779B97F4A7C15) >> 17;
}

static const sl_htab_type bucket_type = {
    .entry_size = sizeof(bucket), .key_size = sizeof(uint64_t), .hash = bucket_hash, .min_cap = 64};

/* Adds count values to bucket b: all equal to key when single. */
static void bucket_add(field *f, uint64_t b, uint64_t count, uint64_t key, int single)
{
    int fresh;
    bucket *x = sl_htab_put(&f->t, &bucket_type, &(uint64_t){b + 1}, &fresh);
    if (fresh) {
        *x = (bucket){.b = b + 1, .count = count, .key = key, .single = single};
        return;
    }
    x->count += count;
    x->single = x->single && single && x->key == key;
}

static field *find(const sl_score_summary *s, const char *name)
{
    size_t lo = 0, hi = s->nf;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->f[mid].name, name);
        if (!c)
            return &s->f[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static field *find_or_add(sl_score_summary *s, const char *name)
{
    field *f = find(s, name);
    if (f)
        return f;
    size_t i = 0;
    while (i < s->nf && strcmp(s->f[i].name, name) < 0)
        i++;
    s->f = sl_xrealloc(s->f, (s->nf + 1) * sizeof *s->f);
    memmove(s->f + i + 1, s->f + i, (s->nf - i) * sizeof *s->f);
    s->f[i] = (field){.name = sl_xstrdup(name)};
    sl_htab_init(&s->f[i].t, NULL);
    s->nf++;
    return &s->f[i];
}

static void add_key(field *f, uint64_t k, uint64_t count)
{
    if (!f->n || k < f->kmin)
        f->kmin = k;
    if (!f->n || k > f->kmax)
        f->kmax = k;
    f->n += count;
    bucket_add(f, k >> SHIFT, count, k, 1);
}

sl_score_summary *sl_score_summary_new(void)
{
    return sl_xcalloc(1, sizeof(sl_score_summary));
}

void sl_score_summary_free(sl_score_summary *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nf; i++) {
        free(s->f[i].name);
        sl_htab_free(&s->f[i].t);
    }
    free(s->f);
    free(s->names);
    free(s);
}

void sl_score_summary_doc(sl_score_summary *s)
{
    s->docs++;
}

void sl_score_summary_add(sl_score_summary *s, const char *name, double v)
{
    field *f = find_or_add(s, name);
    if (isnan(v))
        f->unscored++;
    else
        add_key(f, key_of(v), 1);
}

void sl_score_summary_merge(sl_score_summary *dst, const sl_score_summary *src)
{
    dst->docs += src->docs;
    for (size_t i = 0; i < src->nf; i++) {
        const field *g = &src->f[i];
        field *f = find_or_add(dst, g->name);
        f->unscored += g->unscored;
        if (!g->n)
            continue;
        if (!f->n || g->kmin < f->kmin)
            f->kmin = g->kmin;
        if (!f->n || g->kmax > f->kmax)
            f->kmax = g->kmax;
        f->n += g->n;
        size_t pos = 0;
        const bucket *x;
        while ((x = sl_htab_next(&g->t, &bucket_type, &pos)))
            bucket_add(f, x->b - 1, x->count, x->key, x->single);
    }
}

/* --- queries -------------------------------------------------------------- */
static int cmp_bucket(const void *a, const void *b)
{
    uint64_t x = ((const bucket *)a)->b, y = ((const bucket *)b)->b;
    return x < y ? -1 : x > y;
}

/* The buckets in order (caller frees). */
static bucket *sorted(const field *f)
{
    bucket *v = sl_xmalloc((sl_htab_count(&f->t) ? sl_htab_count(&f->t) : 1) * sizeof *v);
    size_t k = 0, pos = 0;
    const bucket *x;
    while ((x = sl_htab_next(&f->t, &bucket_type, &pos)))
        v[k++] = *x;
    qsort(v, k, sizeof *v, cmp_bucket);
    return v;
}

uint64_t sl_score_summary_docs(const sl_score_summary *s)
{
    return s->docs;
}

const char **sl_score_summary_fields(const sl_score_summary *s, size_t *n)
{
    sl_score_summary *m = (sl_score_summary *)s; /* the name cache only */
    m->names = sl_xrealloc(m->names, (s->nf + 1) * sizeof *m->names);
    for (size_t i = 0; i < s->nf; i++)
        m->names[i] = s->f[i].name;
    *n = s->nf;
    return m->names;
}

int sl_score_summary_count(const sl_score_summary *s, const char *name, uint64_t *n, uint64_t *unscored,
                           uint64_t *missing)
{
    const field *f = find(s, name);
    *n = f ? f->n : 0;
    *unscored = f ? f->unscored : 0;
    *missing = s->docs - *n - *unscored;
    return f != NULL;
}

size_t sl_score_summary_buckets(const sl_score_summary *s, const char *name)
{
    const field *f = find(s, name);
    return f ? sl_htab_count(&f->t) : 0;
}

/* The estimate of the r-th smallest value (0-based). */
static double order_stat(const field *f, const bucket *v, const uint64_t *cum, uint64_t r)
{
    if (r == 0)
        return value_of(f->kmin);
    if (r == f->n - 1)
        return value_of(f->kmax);
    size_t lo = 0, hi = sl_htab_count(&f->t) - 1; /* the bucket j with cum[j] <= r < cum[j] + count */
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (cum[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    const bucket *x = &v[lo];
    if (x->single)
        return value_of(x->key);
    uint64_t b = x->b - 1;
    double a = value_of(lo == 0 ? f->kmin : b << SHIFT);
    double z = value_of(lo == sl_htab_count(&f->t) - 1 ? f->kmax : (b << SHIFT) | LOW_MASK);
    double t = ((double)(r - cum[lo]) + 0.5) / (double)x->count;
    double e = a + (z - a) * t;
    return e < a ? a : e > z ? z : e;
}

double sl_score_summary_percentile(const sl_score_summary *s, const char *name, double p)
{
    const field *f = find(s, name);
    if (!f || !f->n)
        return NAN;
    if (p <= 0)
        return value_of(f->kmin);
    if (p >= 100)
        return value_of(f->kmax);
    bucket *v = sorted(f);
    uint64_t *cum = sl_xmalloc(sl_htab_count(&f->t) * sizeof *cum);
    uint64_t c = 0;
    for (size_t j = 0; j < sl_htab_count(&f->t); j++) {
        cum[j] = c;
        c += v[j].count;
    }
    /* the arithmetic of sl_percentile, on the estimates */
    double pos = p / 100.0 * (double)(f->n - 1);
    uint64_t i = (uint64_t)floor(pos);
    double fr = pos - (double)i, res;
    if (i + 1 >= f->n) {
        res = value_of(f->kmax);
    } else {
        double si = order_stat(f, v, cum, i), sj = order_stat(f, v, cum, i + 1);
        res = si + (sj - si) * fr;
    }
    free(v);
    free(cum);
    return res;
}

/* --- bytes ------------------------------------------------------------------ */
static void put_u32(sl_buf *b, uint32_t v)
{
    unsigned char t[4];
    sl_put_le32(t, v);
    sl_buf_append(b, t, 4);
}

static void put_u64(sl_buf *b, uint64_t v)
{
    unsigned char t[8];
    sl_put_le64(t, v);
    sl_buf_append(b, t, 8);
}

static void put_var(sl_buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    do {
        t[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    sl_buf_append(b, t, n);
}

void sl_score_summary_write(sl_buf *b, const sl_score_summary *s)
{
    size_t start = b->len;
    sl_buf_append(b, magic, sizeof magic);
    put_u32(b, SL_SUMMARY_VERSION);
    put_u32(b, SL_SUMMARY_BITS);
    put_u64(b, s->docs);
    uint32_t nf = 0;
    for (size_t i = 0; i < s->nf; i++)
        nf += s->f[i].n + s->f[i].unscored > 0;
    put_u32(b, nf);
    for (size_t i = 0; i < s->nf; i++) {
        const field *f = &s->f[i];
        if (!f->n && !f->unscored)
            continue;
        size_t len = strlen(f->name);
        unsigned char t[2];
        sl_put_le16(t, (uint16_t)len);
        sl_buf_append(b, t, 2);
        sl_buf_append(b, f->name, len);
        put_u64(b, f->n);
        put_u64(b, f->unscored);
        if (!f->n)
            continue;
        put_u64(b, f->kmin);
        put_u64(b, f->kmax);
        put_var(b, sl_htab_count(&f->t));
        bucket *v = sorted(f);
        uint64_t prev = 0;
        for (size_t j = 0; j < sl_htab_count(&f->t); j++) {
            uint64_t bn = v[j].b - 1;
            put_var(b, (bn - prev) << 1 | (uint64_t)v[j].single);
            put_var(b, v[j].count);
            if (v[j].single)
                put_var(b, v[j].key & LOW_MASK);
            prev = bn;
        }
        free(v);
    }
    put_u64(b, XXH64(b->data + start, b->len - start, 0));
}

typedef struct rd {
    const unsigned char *p, *end;
} rd;

static int get_fixed(rd *r, size_t n, uint64_t *v)
{
    if ((size_t)(r->end - r->p) < n)
        return -1;
    *v = n == 2 ? sl_get_le16(r->p) : n == 4 ? sl_get_le32(r->p) : sl_get_le64(r->p);
    r->p += n;
    return 0;
}

static int get_var(rd *r, uint64_t *v)
{
    *v = 0;
    for (int sh = 0; sh < 64; sh += 7) {
        if (r->p == r->end)
            return -1;
        unsigned char c = *r->p++;
        if (sh == 63 && c > 1)
            return -1;
        *v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

static int valid_name(const unsigned char *p, size_t n)
{
    if (n < 1 || n > NAME_MAX_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x21 || p[i] > 0x7e)
            return 0;
    return 1;
}

#define BAD(...)                                                                                                       \
    do {                                                                                                               \
        sl_errf(err, __VA_ARGS__);                                                                                     \
        goto fail;                                                                                                     \
    } while (0)

sl_score_summary *sl_score_summary_read(const void *data, size_t len, const char *src, sl_err *err)
{
    const unsigned char *d = data;
    if (len < sizeof magic || memcmp(d, magic, sizeof magic)) {
        sl_errf(err, "%s: not a sluice score summary (no SLSUMMRY magic; written by 'sluice score --summary')", src);
        return NULL;
    }
    if (len < 36) {
        sl_errf(err, "%s: truncated score summary (%zu bytes)", src, len);
        return NULL;
    }
    uint32_t ver = sl_get_le32(d + 8), bits = sl_get_le32(d + 12);
    if (ver != SL_SUMMARY_VERSION) {
        sl_errf(err, "%s: score summary version %u; this sluice reads version %d", src, ver, SL_SUMMARY_VERSION);
        return NULL;
    }
    if (bits != SL_SUMMARY_BITS) {
        sl_errf(err, "%s: score summary with %u-bit buckets; this sluice reads %d-bit ones", src, bits,
                SL_SUMMARY_BITS);
        return NULL;
    }
    if (XXH64(d, len - 8, 0) != sl_get_le64(d + len - 8)) {
        sl_errf(err, "%s: score summary checksum mismatch (truncated or damaged)", src);
        return NULL;
    }
    sl_score_summary *s = sl_score_summary_new();
    rd r = {d + 16, d + len - 8};
    uint64_t nf, x;
    get_fixed(&r, 8, &s->docs);
    if (get_fixed(&r, 4, &nf) < 0)
        BAD("%s: truncated score summary (field count)", src);
    const char *prev_name = NULL;
    for (uint64_t i = 0; i < nf; i++) {
        if (get_fixed(&r, 2, &x) < 0 || (uint64_t)(r.end - r.p) < x)
            BAD("%s: truncated score summary (field %llu)", src, (unsigned long long)i + 1);
        if (!valid_name(r.p, (size_t)x))
            BAD("%s: field %llu: bad name (1..%d printable characters)", src, (unsigned long long)i + 1, NAME_MAX_LEN);
        char name[NAME_MAX_LEN + 1];
        memcpy(name, r.p, (size_t)x);
        name[x] = 0;
        r.p += x;
        if (prev_name && strcmp(prev_name, name) >= 0)
            BAD("%s: field `%s` out of order or repeated", src, name);
        field *f = find_or_add(s, name);
        prev_name = f->name;
        uint64_t n, uns;
        if (get_fixed(&r, 8, &n) < 0 || get_fixed(&r, 8, &uns) < 0)
            BAD("%s: field `%s`: truncated", src, name);
        if (n + uns < n || n + uns > s->docs || n + uns == 0)
            BAD("%s: field `%s`: %llu values and %llu unscored do not fit %llu documents", src, name,
                (unsigned long long)n, (unsigned long long)uns, (unsigned long long)s->docs);
        f->unscored = uns;
        if (!n)
            continue;
        uint64_t kmin, kmax, nb;
        if (get_fixed(&r, 8, &kmin) < 0 || get_fixed(&r, 8, &kmax) < 0 || get_var(&r, &nb) < 0)
            BAD("%s: field `%s`: truncated", src, name);
        if (isnan(value_of(kmin)) || isnan(value_of(kmax)) || kmin > kmax || kmin == key_of(0) - 1 ||
            kmax == key_of(0) - 1)
            BAD("%s: field `%s`: bad minimum or maximum", src, name);
        if (nb < 1 || nb > n || nb > (uint64_t)(r.end - r.p) / 2)
            BAD("%s: field `%s`: %llu buckets for %llu values", src, name, (unsigned long long)nb,
                (unsigned long long)n);
        uint64_t prev = 0, total = 0;
        for (uint64_t j = 0; j < nb; j++) {
            uint64_t h, count, low = 0;
            if (get_var(&r, &h) < 0 || get_var(&r, &count) < 0 || ((h & 1) && get_var(&r, &low) < 0))
                BAD("%s: field `%s`: truncated bucket %llu", src, name, (unsigned long long)j + 1);
            uint64_t delta = h >> 1, b = prev + delta;
            int single = (int)(h & 1);
            if ((j && !delta) || b < prev || b > (UINT64_MAX >> SHIFT))
                BAD("%s: field `%s`: bucket %llu out of order", src, name, (unsigned long long)j + 1);
            if (!count || (!single && count < 2) || low > LOW_MASK || total + count < total)
                BAD("%s: field `%s`: bad bucket %llu", src, name, (unsigned long long)j + 1);
            uint64_t key = b << SHIFT | low;
            int first = j == 0, last = j == nb - 1;
            if ((first && (kmin >> SHIFT) != b) || (last && (kmax >> SHIFT) != b) ||
                (single &&
                 (isnan(value_of(key)) || key == key_of(0) - 1 || (first && key != kmin) || (last && key != kmax))) ||
                (!single && (isnan(value_of(b << SHIFT)) || isnan(value_of(b << SHIFT | LOW_MASK)))))
                BAD("%s: field `%s`: bucket %llu disagrees with the minimum or maximum", src, name,
                    (unsigned long long)j + 1);
            total += count;
            bucket_add(f, b, count, key, single);
            prev = b;
        }
        if (total != n)
            BAD("%s: field `%s`: bucket counts sum to %llu, not %llu", src, name, (unsigned long long)total,
                (unsigned long long)n);
        f->n = n;
        f->kmin = kmin;
        f->kmax = kmax;
    }
    if (r.p != r.end)
        BAD("%s: %zu bytes after the last field", src, (size_t)(r.end - r.p));
    return s;
fail:
    sl_score_summary_free(s);
    return NULL;
}

sl_score_summary *sl_score_summary_load(const char *const *paths, size_t n, sl_err *err)
{
    sl_score_summary *acc = sl_score_summary_new();
    for (size_t i = 0; i < n; i++) {
        char *text = NULL;
        size_t len = 0;
        if (sl_read_file(paths[i], &text, &len, err) < 0) {
            sl_score_summary_free(acc);
            return NULL;
        }
        sl_score_summary *s = sl_score_summary_read(text, len, paths[i], err);
        free(text);
        if (!s) {
            sl_score_summary_free(acc);
            return NULL;
        }
        sl_score_summary_merge(acc, s);
        sl_score_summary_free(s);
    }
    return acc;
}

int sl_score_summary_save(const sl_score_summary *s, const char *path, sl_err *err)
{
    sl_buf b = {0};
    sl_score_summary_write(&b, s);
    sl_output *o = sl_output_open(path, err);
    int rc = !o || sl_output_write(o, b.data, b.len, err) < 0 ? -1 : 0;
    if (o && rc)
        sl_output_abort(o);
    else if (o && sl_output_commit(o, err) < 0)
        rc = -1;
    sl_buf_free(&b);
    return rc;
}
