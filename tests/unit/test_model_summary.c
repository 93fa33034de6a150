/* Score summaries (model/summary.h): merging parts in any grouping gives the
 * same bytes as one summary of everything; percentiles are within the
 * stated bound of the exact ones (sl_percentile on the sorted values, the
 * path `filter --scores` takes; numpy's interpolation) on adversarial
 * distributions, and bit-identical on ties; filter decisions differ only for
 * values within the bound of a cutoff; bad files are one-line errors. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <cmocka.h>

#include "model/filter.h"
#include "model/summary.h"
#include "base/byteorder.h"
#include "stream/stats.h"

static uint64_t rng_state;
static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static double unif(void) /* (0, 1] */
{
    return ((double)(next_u64() >> 11) + 1) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

enum { D_UNIFORM, D_LOGNORMAL, D_PARETO, D_CAUCHY, D_SIGNED, D_SPECIAL, D_INTEGERS, D_FEW, D_CLUSTERS, D_N };
static const char *const dnames[D_N] = {"uniform", "lognormal", "pareto", "cauchy",  "signed",
                                        "special", "integers",  "few",    "clusters"};

/* One value of distribution d. */
static double draw(int d)
{
    static const double few[] = {-1e6, -3.5, 0, 1e-300, 2, 17, 1e300};
    double u = unif();
    switch (d) {
    case D_UNIFORM: return u;
    case D_LOGNORMAL: return exp(3 + 1.5 * gauss()); /* perplexity-like */
    case D_PARETO: return 1 / (u * u);               /* heavy tail, up to ~1e31 */
    case D_CAUCHY: return tan(M_PI * (u - 0.5));     /* both signs, heavy tails */
    case D_SIGNED: return (next_u64() & 1 ? -1 : 1) * exp(4 * gauss());
    case D_SPECIAL: {
        int k = (int)(next_u64() % 20);
        return k == 0   ? NAN
               : k == 1 ? INFINITY
               : k == 2 ? -INFINITY
               : k == 3 ? 0.0
               : k == 4 ? -0.0
               : k == 5 ? 1e-310
               : k == 6 ? -4e-320
                        : gauss();
    }
    case D_INTEGERS: return floor(exp(u * 14)); /* token counts: ties, up to 1.2e6 */
    case D_FEW: return few[next_u64() % 7];
    default: /* clusters of 3 close distinct values (one bucket) 5% apart */
        return 100 * pow(1.05, (double)(next_u64() % 40)) * (1 + 1e-5 * (double)(next_u64() % 3));
    }
}

static void put(sl_score_summary *s, double v)
{
    sl_score_summary_doc(s);
    sl_score_summary_add(s, "x", v);
    if (!isnan(v) && v > 0)
        sl_score_summary_add(s, "pos", v); /* a field some documents lack */
}

static sl_buf bytes_of(const sl_score_summary *s)
{
    sl_buf b = {0};
    sl_score_summary_write(&b, s);
    return b;
}

static void assert_same_bytes(const sl_score_summary *a, const sl_buf *want, const char *what, int d, int n)
{
    sl_buf b = bytes_of(a);
    if (b.len != want->len || memcmp(b.data, want->data, b.len))
        fail_msg("%s: %s, %d parts: %zu bytes differ from the summary of everything (%zu bytes)", what, dnames[d], n,
                 b.len, want->len);
    sl_buf_free(&b);
}

/* Merges parts[lo..hi) as a balanced tree. */
static sl_score_summary *tree(sl_score_summary **p, int lo, int hi)
{
    if (hi - lo == 1) {
        sl_score_summary *s = sl_score_summary_new();
        sl_score_summary_merge(s, p[lo]);
        return s;
    }
    int mid = (lo + hi) / 2;
    sl_score_summary *a = tree(p, lo, mid), *b = tree(p, mid, hi);
    sl_score_summary_merge(b, a); /* right into left's sibling: another order */
    sl_score_summary_free(a);
    return b;
}

static void test_groupings_same_bytes(void **st)
{
    (void)st;
    static const int parts[] = {1, 2, 3, 7};
    for (int d = 0; d < D_N; d++)
        for (int pi = 0; pi < 4; pi++) {
            int np = parts[pi];
            rng_state = (uint64_t)(d * 100 + np);
            sl_score_summary *all = sl_score_summary_new(), *p[7];
            for (int k = 0; k < np; k++)
                p[k] = sl_score_summary_new();
            for (int i = 0; i < 4000; i++) {
                double v = draw(d);
                put(all, v);
                put(p[next_u64() % (uint64_t)np], v); /* documents dealt to parts at random */
            }
            sl_buf want = bytes_of(all);
            sl_score_summary *left = sl_score_summary_new(), *right = sl_score_summary_new(),
                             *viabytes = sl_score_summary_new();
            for (int k = 0; k < np; k++) {
                sl_score_summary_merge(left, p[k]);
                sl_score_summary_merge(right, p[np - 1 - k]);
                sl_buf b = bytes_of(p[k]);
                sl_err err = {{0}};
                sl_score_summary *back = sl_score_summary_read(b.data, b.len, "part", &err);
                if (!back)
                    fail_msg("%s: part %d does not read back: %s", dnames[d], k, err.msg);
                sl_score_summary_merge(viabytes, back);
                sl_score_summary_free(back);
                sl_buf_free(&b);
            }
            sl_score_summary *t = tree(p, 0, np);
            assert_same_bytes(left, &want, "in order", d, np);
            assert_same_bytes(right, &want, "reversed", d, np);
            assert_same_bytes(t, &want, "tree", d, np);
            assert_same_bytes(viabytes, &want, "written and read back", d, np);
            sl_buf_free(&want);
            sl_score_summary_free(all);
            sl_score_summary_free(left);
            sl_score_summary_free(right);
            sl_score_summary_free(viabytes);
            sl_score_summary_free(t);
            for (int k = 0; k < np; k++)
                sl_score_summary_free(p[k]);
        }
}

/* The bound of summary.h for the p-th percentile of sorted s[0..n). */
static double bound(const double *s, size_t n, double p, double *si, double *sj)
{
    double pos = p / 100.0 * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    double f = pos - (double)i;
    *si = s[i];
    *sj = i + 1 < n ? s[i + 1] : s[i];
    double m = fmax(fabs(*si), fabs(*sj));
    return ldexp((1 - f) * fabs(*si) + f * fabs(*sj), -SL_SUMMARY_BITS) + 4 * DBL_EPSILON * m + ldexp(1, -1030);
}

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static const double pcts[] = {0, 0.01, 0.1, 1, 5, 10, 25, 30, 33.3, 50, 60, 66.7, 75, 90, 95, 99, 99.9, 99.99, 100};
#define NP (sizeof pcts / sizeof pcts[0])

static void test_percentiles_within_bound(void **st)
{
    (void)st;
    static const size_t sizes[] = {1, 2, 3, 10, 1000, 100000};
    int inexact = 0, checked = 0;
    for (int d = 0; d < D_N; d++)
        for (size_t si_ = 0; si_ < sizeof sizes / sizeof sizes[0]; si_++) {
            size_t n = sizes[si_];
            rng_state = (uint64_t)(7 + d * 31 + (int)si_);
            sl_score_summary *s = sl_score_summary_new();
            double *v = malloc(n * sizeof *v);
            for (size_t i = 0; i < n; i++) {
                v[i] = draw(d);
                put(s, v[i]);
            }
            size_t m = sl_sort_finite(v, n); /* the exact path: NaN dropped, sorted */
            for (size_t k = 0; k < NP + 20; k++) {
                double p = k < NP ? pcts[k] : 100 * unif();
                double exact = sl_percentile(v, m, p), est = sl_score_summary_percentile(s, "x", p);
                checked++;
                if (!m) {
                    assert_true(isnan(est));
                    continue;
                }
                double a, b, bd = bound(v, m, p, &a, &b);
                if (!isfinite(exact) || !isfinite(a) || !isfinite(b)) {
                    /* infinite order statistics are exact (their buckets hold only them) */
                    if (!same_double(exact, est) && !(fabs(est - exact) <= bd))
                        fail_msg("%s n=%zu p=%g: %.17g, exact %.17g", dnames[d], n, p, est, exact);
                    continue;
                }
                if (!(fabs(est - exact) <= bd))
                    fail_msg("%s n=%zu p=%g: estimate %.17g, exact %.17g: error %.3g > bound %.3g", dnames[d], n, p,
                             est, exact, fabs(est - exact), bd);
                inexact += est != exact;
                if (d == D_FEW && est != exact) /* ties: every bucket holds one value */
                    fail_msg("few n=%zu p=%g: %.17g != exact %.17g", n, p, est, exact);
                if (p == 0 || p == 100)
                    assert_true(est == exact); /* the exact minimum and maximum */
            }
            sl_score_summary_free(s);
            free(v);
        }
    /* the bound was exercised: continuous distributions give inexact estimates */
    assert_true(inexact > 100);
    assert_true(checked > 1000);
}

/* Filter decisions: with cuts from the summary, a document is decided
 * differently from the exact run only when its score lies within the bound
 * of a cutoff; with no score that close, the kept documents are the same. */
static void test_filter_decisions(void **st)
{
    (void)st;
    static const double pairs[][2] = {{10, 90}, {25, 75}, {1, 99}, {0, 50}, {50, 100}, {33.3, 66.7}};
    int differed = 0, cuts_differ = 0, clean = 0;
    for (int d = 0; d < D_N; d++)
        for (int round = 0; round < 4; round++) {
            rng_state = (uint64_t)(1000 + d * 10 + round);
            size_t n = round == 0 ? 50 : round == 1 ? 700 : 20000;
            double *v = malloc(n * sizeof *v);
            sl_score_summary *s = sl_score_summary_new();
            for (size_t i = 0; i < n; i++) {
                v[i] = draw(d);
                sl_score_summary_doc(s);
                sl_score_summary_add(s, "ppl", v[i]);
            }
            double *sorted = malloc(n * sizeof *sorted);
            memcpy(sorted, v, n * sizeof *v);
            size_t m = sl_sort_finite(sorted, n);
            for (size_t q = 0; q < sizeof pairs / sizeof pairs[0] + 3; q++) {
                sl_filter_opts o;
                sl_filter_opts_init(&o);
                if (q < sizeof pairs / sizeof pairs[0]) {
                    o.pct_lo = pairs[q][0];
                    o.pct_hi = pairs[q][1];
                } else {
                    o.bucket = (int)(q - sizeof pairs / sizeof pairs[0]);
                }
                sl_filter_dist dist = {0};
                for (size_t i = 0; i < n; i++)
                    sl_filter_dist_add(&dist, v[i]);
                sl_filter_cuts ce, ca;
                sl_err rerr = {{0}};
                assert_int_equal(sl_filter_resolve(&o, &dist, &ce, &rerr), 0);
                sl_err err = {{0}};
                assert_int_equal(sl_filter_resolve_summary(&o, s, "sum", &ca, &err), 0);
                /* the cutoffs in play and their bounds */
                double c_exact[2], c_est[2], bd[2], a, b;
                int nc = 0;
                if (o.bucket >= 0) {
                    c_exact[0] = ce.c_head, c_est[0] = ca.c_head, bd[0] = m ? bound(sorted, m, o.cut_head, &a, &b) : 0;
                    c_exact[1] = ce.c_tail, c_est[1] = ca.c_tail, bd[1] = m ? bound(sorted, m, o.cut_tail, &a, &b) : 0;
                    nc = 2;
                } else {
                    if (o.pct_lo > 0)
                        c_exact[nc] = ce.lo, c_est[nc] = ca.lo, bd[nc++] = m ? bound(sorted, m, o.pct_lo, &a, &b) : 0;
                    if (o.pct_hi < 100)
                        c_exact[nc] = ce.hi, c_est[nc] = ca.hi, bd[nc++] = m ? bound(sorted, m, o.pct_hi, &a, &b) : 0;
                }
                int near = 0;
                for (int k = 0; k < nc; k++) {
                    cuts_differ += !same_double(c_exact[k], c_est[k]);
                    for (size_t i = 0; i < n; i++)
                        near |= fabs(v[i] - c_exact[k]) <= bd[k];
                }
                int diff_here = 0;
                for (size_t i = 0; i < n; i++) {
                    if (sl_filter_keep(&o, &ce, v[i]) == sl_filter_keep(&o, &ca, v[i]))
                        continue;
                    diff_here++;
                    int close = 0;
                    for (int k = 0; k < nc; k++)
                        close |= fabs(v[i] - c_exact[k]) <= bd[k] || !isfinite(c_exact[k]);
                    if (!close)
                        fail_msg("%s n=%zu selection %zu: %.17g decided differently but not within the bound of a "
                                 "cutoff",
                                 dnames[d], n, q, v[i]);
                }
                differed += diff_here;
                if (!near) {
                    clean++;
                    assert_int_equal(diff_here, 0);
                }
                sl_filter_dist_free(&dist);
            }
            sl_score_summary_free(s);
            free(v);
            free(sorted);
        }
    assert_true(cuts_differ > 20); /* estimates were not all exact */
    assert_true(clean > 20);       /* and many selections had no score near a cutoff */
    (void)differed;
}

static void test_counts_and_fields(void **st)
{
    (void)st;
    sl_score_summary *s = sl_score_summary_new();
    const double vals[] = {1, NAN, 2, -0.0, 0, NAN};
    for (int i = 0; i < 6; i++) {
        sl_score_summary_doc(s);
        sl_score_summary_add(s, "ppl", vals[i]);
        if (i < 2)
            sl_score_summary_add(s, "bpb", 1.5);
    }
    uint64_t n, u, miss;
    assert_int_equal(sl_score_summary_count(s, "ppl", &n, &u, &miss), 1);
    assert_int_equal(n, 4);
    assert_int_equal(u, 2);
    assert_int_equal(miss, 0);
    assert_int_equal(sl_score_summary_count(s, "bpb", &n, &u, &miss), 1);
    assert_int_equal(n, 2);
    assert_int_equal(miss, 4);
    assert_int_equal(sl_score_summary_count(s, "nll", &n, &u, &miss), 0);
    assert_int_equal(miss, 6);
    assert_true(sl_score_summary_percentile(s, "ppl", 0) == 0 && !signbit(sl_score_summary_percentile(s, "ppl", 0)));
    assert_true(sl_score_summary_percentile(s, "ppl", 100) == 2);
    assert_true(isnan(sl_score_summary_percentile(s, "nll", 50)));
    size_t nf;
    const char **names = sl_score_summary_fields(s, &nf);
    assert_int_equal(nf, 2);
    assert_string_equal(names[0], "bpb");
    assert_string_equal(names[1], "ppl");
    /* -0 and 0 are one value: the same bytes either way */
    sl_score_summary *a = sl_score_summary_new(), *b = sl_score_summary_new();
    sl_score_summary_doc(a);
    sl_score_summary_add(a, "x", -0.0);
    sl_score_summary_doc(b);
    sl_score_summary_add(b, "x", 0.0);
    sl_buf ba = bytes_of(a), bb = bytes_of(b);
    assert_int_equal(ba.len, bb.len);
    assert_memory_equal(ba.data, bb.data, ba.len);
    sl_buf_free(&ba);
    sl_buf_free(&bb);
    sl_score_summary_free(a);
    sl_score_summary_free(b);

    /* filter's messages: absent field, documents without the field */
    sl_filter_opts o;
    sl_filter_opts_init(&o);
    o.pct_lo = 10, o.pct_hi = 90;
    sl_filter_cuts c;
    sl_err err = {{0}};
    o.field = "nll";
    assert_int_equal(sl_filter_resolve_summary(&o, s, "S.bin", &c, &err), -1);
    assert_string_equal(err.msg, "S.bin: no field nll in the score summary (it has: bpb, ppl)");
    o.field = "bpb";
    assert_int_equal(sl_filter_resolve_summary(&o, s, "S.bin", &c, &err), -1);
    assert_non_null(strstr(err.msg, "S.bin: 4 of the 6 documents of the score summary have no bpb"));
    sl_score_summary_free(s);
}

/* A small valid summary's bytes. */
static sl_buf sample(void)
{
    sl_score_summary *s = sl_score_summary_new();
    rng_state = 5;
    for (int i = 0; i < 300; i++) {
        sl_score_summary_doc(s);
        sl_score_summary_add(s, "ppl", exp(3 + gauss()));
        sl_score_summary_add(s, "tokens", (double)(i % 17));
    }
    sl_buf b = bytes_of(s);
    sl_score_summary_free(s);
    return b;
}

static void expect_bad(const void *data, size_t len, const char *pattern)
{
    sl_err err = {{0}};
    sl_score_summary *s = sl_score_summary_read(data, len, "F.sum", &err);
    if (s)
        fail_msg("accepted a bad summary (%zu bytes; wanted '%s')", len, pattern);
    if (strncmp(err.msg, "F.sum: ", 7) || strchr(err.msg, '\n') || !strstr(err.msg, pattern))
        fail_msg("message '%s' does not name the file or lacks '%s'", err.msg, pattern);
}

/* Rewrites the trailer so that a change of content is not a checksum error. */
static void reseal(unsigned char *p, size_t len)
{
    sl_put_le64(p + len - 8, XXH64(p, len - 8, 0));
}

static void test_bad_files(void **st)
{
    (void)st;
    sl_buf b = sample();
    unsigned char *p = (unsigned char *)b.data, *q = malloc(b.len + 16);
    sl_err err = {{0}};
    sl_score_summary *ok = sl_score_summary_read(p, b.len, "F.sum", &err);
    assert_non_null(ok);
    sl_score_summary_free(ok);
    for (size_t len = 0; len < b.len; len++) /* every truncation */
        expect_bad(p, len, len < 8 ? "not a sluice score summary" : len < 36 ? "truncated" : "checksum");
    for (size_t i = 8; i < b.len; i++) { /* every single-byte change */
        memcpy(q, p, b.len);
        q[i] ^= 0x5a;
        expect_bad(q, b.len, i < 12 ? "version" : i < 16 ? "bucket" : "checksum");
    }
    memcpy(q, p, b.len);
    q[0] = 'X';
    expect_bad(q, b.len, "no SLSUMMRY magic");
    /* changed content with a valid checksum */
    memcpy(q, p, b.len);
    sl_put_le64(q + 16, 299); /* documents: fewer than a field's values */
    reseal(q, b.len);
    expect_bad(q, b.len, "do not fit 299 documents");
    memcpy(q, p, b.len);
    memcpy(q + 30, "zpl", 3); /* "zpl" > "tokens": out of order */
    reseal(q, b.len);
    expect_bad(q, b.len, "out of order");
    memcpy(q, p, b.len);
    q[30] = ' ';
    reseal(q, b.len);
    expect_bad(q, b.len, "bad name");
    memcpy(q, p, b.len);
    memcpy(q + b.len - 8, "\0\0\0\0", 4); /* junk before the trailer */
    memcpy(q + b.len - 4, p + b.len - 8, 8);
    reseal(q, b.len + 4);
    expect_bad(q, b.len + 4, "after the last field");
    memcpy(q, p, b.len);
    sl_put_le64(q + 33, sl_get_le64(q + 33) + 1); /* ppl: one value more than the buckets hold */
    sl_put_le64(q + 16, 1000);
    reseal(q, b.len);
    expect_bad(q, b.len, "bucket counts sum to 300, not 301");
    free(q);
    sl_buf_free(&b);
}

/* sl_score_summary_save writes the canonical bytes; loading the saved
 * summaries of two parts gives the bytes of the summary of all values. */
static void test_save_and_load(void **st)
{
    (void)st;
    char dir[] = "/tmp/sluice-summary-XXXXXX", pa[64], pb[64];
    assert_non_null(mkdtemp(dir));
    snprintf(pa, sizeof pa, "%s/a.sum", dir);
    snprintf(pb, sizeof pb, "%s/b.sum", dir);
    rng_state = 99;
    sl_score_summary *all = sl_score_summary_new(), *a = sl_score_summary_new(), *b = sl_score_summary_new();
    for (int i = 0; i < 5000; i++) {
        double v = draw(i % D_N);
        put(all, v);
        put(i < 1700 ? a : b, v);
    }
    sl_err e = {{0}};
    assert_int_equal(sl_score_summary_save(a, pa, &e), 0);
    assert_int_equal(sl_score_summary_save(b, pb, &e), 0);
    const char *paths[] = {pb, pa};
    sl_score_summary *m = sl_score_summary_load(paths, 2, &e);
    assert_non_null(m);
    sl_buf x = bytes_of(all), y = bytes_of(m);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    /* a path that cannot be written: an error, no file */
    char bad[96];
    snprintf(bad, sizeof bad, "%s/c.sum", pa); /* under a regular file */
    assert_int_equal(sl_score_summary_save(a, bad, &e), -1);
    assert_non_null(strstr(e.msg, "c.sum"));
    sl_buf_free(&x);
    sl_buf_free(&y);
    sl_score_summary_free(m);
    sl_score_summary_free(all);
    sl_score_summary_free(a);
    sl_score_summary_free(b);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groupings_same_bytes),
        cmocka_unit_test(test_percentiles_within_bound),
        cmocka_unit_test(test_filter_decisions),
        cmocka_unit_test(test_counts_and_fields),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_save_and_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
