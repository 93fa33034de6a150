/* The CUDA kernels' decomposition, replayed on the CPU (kernels/scan_emu.c),
 * against plain sequential references written here in double precision:
 * the selective scan (chunks, warp scans, carried prefix, ragged tails,
 * resets, state carried across calls), the causal conv with carried state,
 * and the two row reductions. Also the shared per-element math
 * (kernels/ssm_math.h, kernels/cuda/layout.h) against libm in double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/layout.h"
#include "kernels/scan_emu.h"

/* --- deterministic random numbers ---------------------------------------- */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float rnd(float lo, float hi)
{
    return lo + (hi - lo) * (float)((rng_next() >> 40) / 16777216.0);
}

/* |got - want| <= atol + rtol*|want|, reporting the first violation. */
static int close_to(const char *what, int64_t i, double got, double want, double atol, double rtol)
{
    if (fabs(got - want) <= atol + rtol * fabs(want))
        return 1;
    fprintf(stderr, "%s[%lld]: got %.9g want %.9g (diff %.3g)\n", what, (long long)i, got, want, fabs(got - want));
    return 0;
}

/* --- per-element math ---------------------------------------------------- */
static void test_element_math(void **state)
{
    (void)state;
    for (float x = -30.0f; x <= 30.0f; x += 0.37f) {
        double sp = x > 20.0f ? x : log1p(exp((double)x)); /* torch softplus, threshold 20 */
        assert_true(close_to("softplus", 0, sl_softplus(x), sp, 1e-7, 2e-7));
        assert_true(close_to("silu", 0, sl_silu(x), x / (1.0 + exp(-(double)x)), 1e-7, 2e-7));
    }
    assert_true(sl_softplus(20.5f) == 20.5f);
    for (int i = 0; i < 1000; i++) {
        float delta = rnd(0.0f, 3.0f), A = -expf(rnd(0.0f, 3.0f));
        double want = exp((double)delta * (double)A);
        assert_true(close_to("exp(delta*A)", i, sl_discretize_a(delta, A * SL_LOG2E), want, 1e-30, 2e-5));
    }
    /* rms scale against 1/sqrt(mean+eps) */
    assert_true(close_to("rms", 0, sl_rms_scale(8.0f, 2, 1e-5f), 1.0 / sqrt(4.0 + 1e-5), 0, 1e-6));
}

/* The combine operator is associative (up to rounding) and (1,0) is its
 * identity exactly — the two facts the block scan depends on. */
static void test_combine_properties(void **state)
{
    (void)state;
    for (int i = 0; i < 10000; i++) {
        sl_scan_pair p[3];
        for (int k = 0; k < 3; k++)
            p[k] = (sl_scan_pair){rnd(0.0f, 1.0f), rnd(-2.0f, 2.0f)};
        sl_scan_pair l = sl_scan_combine(sl_scan_combine(p[0], p[1]), p[2]);
        sl_scan_pair r = sl_scan_combine(p[0], sl_scan_combine(p[1], p[2]));
        assert_true(close_to("assoc.a", i, l.a, r.a, 1e-7, 1e-6));
        assert_true(close_to("assoc.b", i, l.b, r.b, 1e-6, 1e-6));
        sl_scan_pair e = sl_scan_identity(), x = sl_scan_combine(e, p[0]), y = sl_scan_combine(p[0], e);
        assert_true(x.a == p[0].a && x.b == p[0].b && y.a == p[0].a && y.b == p[0].b);
        /* applying (a,b) to state h is h' = a*h + b */
        float h = rnd(-1.0f, 1.0f);
        sl_scan_pair s = sl_scan_combine((sl_scan_pair){1.0f, h}, p[0]);
        assert_true(close_to("apply", i, s.b, (double)p[0].a * h + p[0].b, 1e-6, 1e-6));
    }
    assert_int_equal(sl_scan_layout_pick(1), 0);
    assert_int_equal(sl_scan_layout_pick(128), 0);
    assert_int_equal(sl_scan_layout_pick(129), 1);
    assert_int_equal(sl_scan_layout_pick(512), 1);
    assert_int_equal(sl_scan_layout_pick(513), 2);
}

/* --- selective scan ------------------------------------------------------ */
typedef struct scan_case {
    int64_t L, D;
    int N;
    int64_t ld; /* row stride of u, dt, z, y (>= D) */
    float *u, *dt, *dtb, *A2, *B, *C, *Dk, *z, *state0;
    uint8_t *reset;
} scan_case;

static void scan_case_make(scan_case *c, int64_t L, int64_t D, int N, int gate, int resets)
{
    c->L = L, c->D = D, c->N = N, c->ld = D + 3;
    size_t rows = (size_t)(L > 0 ? L : 1);
    c->u = malloc(rows * c->ld * sizeof(float));
    c->dt = malloc(rows * c->ld * sizeof(float));
    c->z = gate ? malloc(rows * c->ld * sizeof(float)) : NULL;
    c->B = malloc(rows * (N + 1) * sizeof(float));
    c->C = malloc(rows * (N + 1) * sizeof(float));
    c->reset = resets ? calloc(rows, 1) : NULL;
    c->dtb = malloc(D * sizeof(float));
    c->Dk = malloc(D * sizeof(float));
    c->A2 = malloc(D * N * sizeof(float));
    c->state0 = malloc(D * N * sizeof(float));
    for (int64_t i = 0; i < (int64_t)rows * c->ld; i++) {
        c->u[i] = rnd(-2, 2);
        c->dt[i] = rnd(-3, 3);
        if (c->z)
            c->z[i] = rnd(-3, 3);
    }
    for (int64_t i = 0; i < (int64_t)rows * (N + 1); i++)
        c->B[i] = rnd(-2, 2), c->C[i] = rnd(-2, 2);
    for (int64_t d = 0; d < D; d++) {
        c->dtb[d] = rnd(-6, -2); /* softplus^-1 of dt in ~[2e-3, 0.13], as mamba initialises */
        c->Dk[d] = rnd(0.5f, 1.5f);
        for (int n = 0; n < N; n++) {
            c->A2[d * N + n] = -expf(logf((float)(n + 1)) + rnd(-0.5f, 0.5f)) * SL_LOG2E;
            c->state0[d * N + n] = rnd(-1, 1);
        }
    }
    if (resets)
        for (int64_t t = 0; t < L; t++)
            c->reset[t] = (t == 0 && resets > 1) || rng_next() % 61 == 0;
}

static void scan_case_free(scan_case *c)
{
    free(c->u), free(c->dt), free(c->z), free(c->B), free(c->C), free(c->reset);
    free(c->dtb), free(c->Dk), free(c->A2), free(c->state0);
}

static sl_scan_args scan_args(const scan_case *c, int64_t t0, int64_t L, float *state, float *y)
{
    sl_scan_args a = {
        .L = L,
        .D = c->D,
        .N = c->N,
        .u = c->u + t0 * c->ld,
        .ldu = c->ld,
        .dt = c->dt + t0 * c->ld,
        .lddt = c->ld,
        .dt_bias = c->dtb,
        .A_log2e = c->A2,
        .B = c->B + t0 * (c->N + 1),
        .C = c->C + t0 * (c->N + 1),
        .ldbc = c->N + 1,
        .Dskip = c->Dk,
        .z = c->z ? c->z + t0 * c->ld : NULL,
        .ldz = c->ld,
        .state = state,
        .reset = c->reset ? c->reset + t0 : NULL,
        .y = y + t0 * c->ld,
        .ldy = c->ld,
    };
    return a;
}

/* The recurrence as written in mamba_ssm's selective_scan_ref, one token at
 * a time, in double. */
static void scan_reference(const scan_case *c, double *y, double *h)
{
    for (int64_t i = 0; i < c->D * c->N; i++)
        h[i] = c->state0[i];
    for (int64_t t = 0; t < c->L; t++) {
        if (c->reset && c->reset[t])
            for (int64_t i = 0; i < c->D * c->N; i++)
                h[i] = 0;
        for (int64_t d = 0; d < c->D; d++) {
            double x = (double)c->dt[t * c->ld + d] + c->dtb[d];
            double delta = x > 20 ? x : log1p(exp(x));
            double u = c->u[t * c->ld + d], acc = 0;
            for (int n = 0; n < c->N; n++) {
                double A = (double)c->A2[d * c->N + n] / 1.4426950408889634;
                double *hn = &h[d * c->N + n];
                *hn = exp(delta * A) * *hn + delta * c->B[t * (c->N + 1) + n] * u;
                acc += *hn * c->C[t * (c->N + 1) + n];
            }
            acc += c->Dk[d] * u;
            if (c->z) {
                double z = c->z[t * c->ld + d];
                acc *= z / (1 + exp(-z));
            }
            y[t * c->D + d] = acc;
        }
    }
}

/* fp32 rounding bounds: |h| stays O(10) here, the C contraction sums N
 * products; 1e-5 absolute plus 1e-5 relative is ~100 ulp of those values. */
#define SCAN_ATOL 2e-5
#define SCAN_RTOL 2e-5

static int scan_check(const scan_case *c, const float *y, const float *state, const double *yr, const double *hr)
{
    for (int64_t t = 0; t < c->L; t++)
        for (int64_t d = 0; d < c->D; d++)
            if (!close_to("y", t * c->D + d, y[t * c->ld + d], yr[t * c->D + d], SCAN_ATOL, SCAN_RTOL))
                return 0;
    for (int64_t i = 0; i < c->D * c->N; i++)
        if (!close_to("state", i, state[i], hr[i], SCAN_ATOL, SCAN_RTOL))
            return 0;
    return 1;
}

/* Runs one case through the emulation with a block shape and compares. */
static void scan_one(int64_t L, int N, int gate, int resets, int threads, int items)
{
    scan_case c;
    scan_case_make(&c, L, 3, N, gate, resets);
    size_t rows = (size_t)(L > 0 ? L : 1);
    float *y = calloc(rows * c.ld, sizeof(float)), *st = malloc(c.D * N * sizeof(float));
    double *yr = malloc(rows * c.D * sizeof(double)), *hr = malloc(c.D * N * sizeof(double));
    memcpy(st, c.state0, c.D * N * sizeof(float));
    scan_reference(&c, yr, hr);
    sl_err err = {{0}};
    sl_scan_args a = scan_args(&c, 0, L, st, y);
    int rc = threads ? sl_scan_emu_shape(&a, threads, items, &err) : sl_scan_emu(&a, items, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    if (!scan_check(&c, y, st, yr, hr)) {
        fprintf(stderr, "case L=%lld N=%d gate=%d resets=%d shape=%dx%d\n", (long long)L, N, gate, resets, threads,
                items);
        fail();
    }
    free(y), free(st), free(yr), free(hr);
    scan_case_free(&c);
}

static void test_scan_layouts(void **state)
{
    (void)state;
    rng_state = 1;
    /* lengths around every chunk size of every layout: 128, 512, 1024 */
    const int64_t Ls[] = {1, 2, 31, 33, 127, 128, 129, 300, 511, 512, 513, 1023, 1024, 1025, 2500};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++)
        for (int layout = -1; layout < SL_SCAN_NLAYOUTS; layout++) {
            scan_one(Ls[i], 16, 1, 0, 0, layout);
            scan_one(Ls[i], 16, 1, 2, 0, layout);
        }
}

/* Odd shapes stress many chunks, many warps and partial warps. */
static void test_scan_shapes(void **state)
{
    (void)state;
    rng_state = 2;
    const int shapes[][2] = {{32, 1}, {32, 3}, {64, 1}, {96, 2}, {256, 2}};
    const int64_t Ls[] = {1, 40, 95, 97, 191, 700};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++) {
            scan_one(Ls[i], 16, 1, 1, shapes[s][0], shapes[s][1]);
            scan_one(Ls[i], 5, 0, 0, shapes[s][0], shapes[s][1]);
            scan_one(Ls[i], 1, 1, 2, shapes[s][0], shapes[s][1]);
        }
    scan_one(333, SL_SCAN_MAX_N, 1, 1, 0, -1);
}

/* A document split over several calls of random lengths, state carried
 * between them, equals one pass (each call picks its own layout). */
static void test_scan_across_calls(void **state)
{
    (void)state;
    rng_state = 3;
    for (int rep = 0; rep < 6; rep++) {
        scan_case c;
        int64_t L = 1500 + rep * 77;
        scan_case_make(&c, L, 4, 16, rep % 2, rep % 3);
        float *y = calloc(L * c.ld, sizeof(float)), *st = malloc(c.D * c.N * sizeof(float));
        double *yr = malloc(L * c.D * sizeof(double)), *hr = malloc(c.D * c.N * sizeof(double));
        memcpy(st, c.state0, c.D * c.N * sizeof(float));
        scan_reference(&c, yr, hr);
        sl_err err = {{0}};
        for (int64_t t0 = 0; t0 < L;) {
            int64_t n = 1 + (int64_t)(rng_next() % 700);
            if (n > L - t0)
                n = L - t0;
            sl_scan_args a = scan_args(&c, t0, n, st, y);
            assert_int_equal(sl_scan_emu(&a, -1, &err), 0);
            t0 += n;
        }
        assert_true(scan_check(&c, y, st, yr, hr));
        free(y), free(st), free(yr), free(hr);
        scan_case_free(&c);
    }
}

/* The checks above must be able to fail: a scan that drops the carried
 * prefix between chunks (state zeroed at every chunk) is caught. */
static void test_scan_check_detects_lost_carry(void **state)
{
    (void)state;
    rng_state = 4;
    scan_case c;
    scan_case_make(&c, 300, 2, 16, 1, 0);
    float *y = calloc(300 * c.ld, sizeof(float)), *st = malloc(c.D * c.N * sizeof(float));
    double *yr = malloc(300 * c.D * sizeof(double)), *hr = malloc(c.D * c.N * sizeof(double));
    scan_reference(&c, yr, hr);
    sl_err err = {{0}};
    for (int64_t t0 = 0; t0 < 300; t0 += 64) { /* forgets the state between calls */
        memcpy(st, c.state0, c.D * c.N * sizeof(float));
        sl_scan_args a = scan_args(&c, t0, t0 + 64 > 300 ? 300 - t0 : 64, st, y);
        assert_int_equal(sl_scan_emu(&a, -1, &err), 0);
    }
    assert_false(scan_check(&c, y, st, yr, hr));
    free(y), free(st), free(yr), free(hr);
    scan_case_free(&c);
}

static void test_scan_rejects(void **state)
{
    (void)state;
    scan_case c;
    rng_state = 5;
    scan_case_make(&c, 10, 1, SL_SCAN_MAX_N + 1, 0, 0);
    float y[10 * 4], st[SL_SCAN_MAX_N + 1];
    sl_err err = {{0}};
    sl_scan_args a = scan_args(&c, 0, 10, st, y);
    assert_int_equal(sl_scan_emu(&a, -1, &err), -1);
    assert_non_null(strstr(err.msg, "d_state"));
    a.N = 4;
    assert_int_equal(sl_scan_emu_shape(&a, 48, 2, &err), -1);
    assert_int_equal(sl_scan_emu(&a, SL_SCAN_NLAYOUTS, &err), -1);
    scan_case_free(&c);
}

/* --- conv1d -------------------------------------------------------------- */

/* Reference: the whole document history kept explicitly, in double. */
static void conv_reference(int64_t L, int64_t D, int K, const float *x, int64_t ldx, const float *w, const float *bias,
                           const float *state0, const uint8_t *reset, double *out, double *state_out)
{
    int64_t H = K - 1;
    double *hist = malloc((size_t)(H + L) * D * sizeof(double)); /* time -H .. L-1 */
    for (int64_t d = 0; d < D; d++)
        for (int64_t j = 0; j < H; j++)
            hist[j * D + d] = state0[d * H + j];
    for (int64_t t = 0; t < L; t++) {
        if (reset && reset[t]) /* history before t is gone */
            for (int64_t s = 0; s < H + t; s++)
                for (int64_t d = 0; d < D; d++)
                    hist[s * D + d] = 0;
        for (int64_t d = 0; d < D; d++)
            hist[(H + t) * D + d] = x[t * ldx + d];
        for (int64_t d = 0; d < D; d++) {
            double acc = bias[d];
            for (int k = 0; k < K; k++)
                acc += (double)w[d * K + k] * hist[(t + k) * D + d];
            out[t * D + d] = acc / (1 + exp(-acc));
        }
    }
    for (int64_t d = 0; d < D; d++)
        for (int64_t j = 0; j < H; j++)
            state_out[d * H + j] = hist[(L + j) * D + d];
    free(hist);
}

static void conv_one(int64_t L, int K, int resets, int ncalls)
{
    int64_t D = 5, ld = D + 2, H = K - 1;
    size_t rows = (size_t)(L > 0 ? L : 1);
    float *x = malloc(rows * ld * sizeof(float)), *out = calloc(rows * ld, sizeof(float));
    float *w = malloc(D * K * sizeof(float)), *bias = malloc(D * sizeof(float));
    float *st0 = malloc((D * H + 1) * sizeof(float)), *st = malloc((D * H + 1) * sizeof(float));
    uint8_t *reset = resets ? calloc(rows, 1) : NULL;
    double *ref = malloc(rows * D * sizeof(double)), *refst = malloc((D * H + 1) * sizeof(double));
    for (size_t i = 0; i < rows * ld; i++)
        x[i] = rnd(-2, 2);
    for (int64_t i = 0; i < D * K; i++)
        w[i] = rnd(-1, 1);
    for (int64_t i = 0; i < D; i++)
        bias[i] = rnd(-0.5f, 0.5f);
    for (int64_t i = 0; i < D * H; i++)
        st0[i] = st[i] = rnd(-2, 2);
    if (reset)
        for (int64_t t = 0; t < L; t++)
            reset[t] = rng_next() % 5 == 0;
    conv_reference(L, D, K, x, ld, w, bias, st0, reset, ref, refst);
    sl_err err = {{0}};
    for (int64_t t0 = 0, i = 0; t0 < L; i++) {
        int64_t n = i == ncalls - 1 ? L - t0 : 1 + (int64_t)(rng_next() % (size_t)(L - t0));
        sl_conv_args a = {.L = n,
                          .D = D,
                          .K = K,
                          .x = x + t0 * ld,
                          .ldx = ld,
                          .w = w,
                          .bias = bias,
                          .state = st,
                          .reset = reset ? reset + t0 : NULL,
                          .out = out + t0 * ld,
                          .ldout = ld};
        assert_int_equal(sl_conv_emu(&a, &err), 0);
        t0 += n;
    }
    for (int64_t t = 0; t < L; t++)
        for (int64_t d = 0; d < D; d++)
            assert_true(close_to("conv", t * D + d, out[t * ld + d], ref[t * D + d], 1e-6, 1e-5));
    for (int64_t i = 0; i < D * H; i++)
        assert_true(close_to("conv state", i, st[i], refst[i], 0, 0));
    free(x), free(out), free(w), free(bias), free(st0), free(st), free(reset), free(ref), free(refst);
}

static void test_conv(void **state)
{
    (void)state;
    rng_state = 6;
    const int64_t Ls[] = {1, 2, 3, 4, 7, 100};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++)
        for (int K = 1; K <= 5; K++) {
            conv_one(Ls[i], K, 0, 1);
            conv_one(Ls[i], K, 1, 1);
            conv_one(Ls[i], K, 1, 4);
            conv_one(Ls[i], K, 0, 9);
        }
}

/* --- row reductions ------------------------------------------------------ */
static void test_norm(void **state)
{
    (void)state;
    rng_state = 7;
    /* widths, and (last four) rows normalized in groups of columns (Mamba-2's ngroups) */
    const int64_t Ds[] = {1, 31, 256, 257, 768, 1000, 768, 1000, 64, 3072}, Gs[] = {0, 0, 0, 0, 0, 0, 384, 250, 1, 768};
    for (size_t i = 0; i < sizeof Ds / sizeof *Ds; i++)
        for (int mode = 0; mode < 3; mode++) { /* add, init from x, no x */
            int64_t L = 3, D = Ds[i], G = Gs[i] ? Gs[i] : D;
            float *x = malloc(L * D * sizeof(float)), *res = malloc(L * D * sizeof(float));
            float *out = malloc(L * D * sizeof(float)), *w = malloc(D * sizeof(float));
            double *r = malloc(L * D * sizeof(double));
            for (int64_t k = 0; k < L * D; k++)
                x[k] = rnd(-3, 3), res[k] = rnd(-10, 10);
            for (int64_t k = 0; k < D; k++)
                w[k] = rnd(0.5f, 1.5f);
            for (int64_t k = 0; k < L * D; k++)
                r[k] = mode == 0 ? (double)res[k] + x[k] : mode == 1 ? x[k] : res[k];
            sl_norm_args a = {.L = L,
                              .D = D,
                              .x = mode == 2 ? NULL : x,
                              .residual = res,
                              .residual_init = mode == 1,
                              .w = w,
                              .eps = 1e-5f,
                              .out = out,
                              .group = Gs[i]};
            sl_err err = {{0}};
            assert_int_equal(sl_norm_emu(&a, &err), 0);
            for (int64_t t = 0; t < L; t++)
                for (int64_t c0 = 0; c0 < D; c0 += G) {
                    double ss = 0;
                    for (int64_t k = c0; k < c0 + G; k++)
                        ss += r[t * D + k] * r[t * D + k];
                    double scale = 1 / sqrt(ss / G + 1e-5);
                    for (int64_t k = c0; k < c0 + G; k++) {
                        assert_true(close_to("residual", k, res[t * D + k], r[t * D + k], 0, 1e-6));
                        assert_true(close_to("norm", k, out[t * D + k], r[t * D + k] * scale * w[k], 1e-6, 1e-5));
                    }
                }
            free(x), free(res), free(out), free(w), free(r);
        }
}

static void test_logsoftmax(void **state)
{
    (void)state;
    rng_state = 8;
    const int64_t Vs[] = {1, 7, 256, 300, 50277};
    for (size_t i = 0; i < sizeof Vs / sizeof *Vs; i++) {
        int64_t T = 6, V = Vs[i], ld = V + 3; /* padded columns must be ignored */
        float *lg = malloc(T * ld * sizeof(float)), logp[6];
        int32_t tg[6];
        for (int64_t t = 0; t < T; t++) {
            float spread = t == 0 ? 0.01f : t == 1 ? 80.0f : 10.0f;
            for (int64_t k = 0; k < ld; k++)
                lg[t * ld + k] = k >= V ? 1e30f : rnd(-spread, spread) + (t == 2 ? 500.0f : 0.0f);
            if (t == 3 && V > 2)
                lg[t * ld + 1] = -INFINITY;
            tg[t] = t == 4 ? -1 : (int32_t)(rng_next() % (uint64_t)V);
        }
        sl_logsoftmax_args a = {.T = T, .V = V, .logits = lg, .ld = ld, .target = tg, .logp = logp};
        sl_err err = {{0}};
        assert_int_equal(sl_logsoftmax_emu(&a, &err), 0);
        for (int64_t t = 0; t < T; t++) {
            if (tg[t] < 0) {
                assert_true(logp[t] == 0.0f);
                continue;
            }
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < V; k++)
                m = fmax(m, lg[t * ld + k]);
            for (int64_t k = 0; k < V; k++)
                s += exp((double)lg[t * ld + k] - m);
            double want = lg[t * ld + tg[t]] - (m + log(s));
            assert_true(close_to("logp", t, logp[t], want, 2e-5, 1e-5));
        }
        free(lg);
    }
}

/* --- Mamba-2 SSD, chunked ------------------------------------------------ */

/* The recurrence itself, token by token, in double (no chunks, no decays
 * across sums): S = exp(delta A) S + delta x B^T, y = C.S + D x, gated. */
static void ssd_reference(const sl_ssd_args *a, double *S, double *y)
{
    const int H = a->H, P = a->P, N = a->N, hpg = a->H / a->G;
    for (int64_t t = 0; t < a->L; t++)
        for (int h = 0; h < H; h++) {
            const int g = h / hpg;
            double d = (double)a->dt[t * a->lddt + h] + a->dt_bias[h];
            d = d > 20.0 ? d : log1p(exp(d));
            d = d < a->dt_min ? a->dt_min : d > a->dt_max ? a->dt_max : d;
            const double dA = exp(d * a->A[h]);
            for (int p = 0; p < P; p++) {
                const int64_t col = (int64_t)h * P + p;
                const double x = a->x[t * a->ldx + col];
                double acc = 0.0;
                for (int n = 0; n < N; n++) {
                    double *s = &S[col * N + n];
                    if (a->reset && a->reset[t])
                        *s = 0.0;
                    *s = dA * *s + d * x * a->B[t * a->ldbc + (int64_t)g * N + n];
                    acc += a->C[t * a->ldbc + (int64_t)g * N + n] * *s;
                }
                double v = acc + a->Dskip[h] * x;
                if (a->z) {
                    double z = a->z[t * a->ldz + col];
                    v *= z / (1.0 + exp(-z));
                }
                y[t * P * H + col] = v;
            }
        }
}

/* L tokens through the emulation in `pieces` calls (state carried) against
 * the reference in one pass: G groups of N states, H heads of P channels. */
static void ssd_case(int64_t L, int H, int P, int G, int N, int gate, int resets, int clamp, int pieces)
{
    const int64_t D = (int64_t)H * P, ldx = D + 3, ldbc = 2 * (int64_t)G * N + 1;
    float *x = malloc((size_t)(L * ldx + 1) * sizeof *x), *dt = malloc((size_t)(L * H + 1) * sizeof *dt);
    float *bc = malloc((size_t)(L * ldbc + 1) * sizeof *bc), *y = calloc((size_t)(L * D + 1), sizeof *y);
    float *st = malloc((size_t)(D * N) * sizeof *st), bias[64], A[64], Dk[64];
    double *Sr = malloc((size_t)(D * N) * sizeof *Sr), *yr = calloc((size_t)(L * D + 1), sizeof *yr);
    uint8_t *rs = calloc((size_t)L + 1, 1);
    for (int64_t i = 0; i < L * ldx; i++)
        x[i] = rnd(-2, 2);
    for (int64_t i = 0; i < L * H; i++)
        dt[i] = rnd(-3, 3);
    for (int64_t i = 0; i < L * ldbc; i++)
        bc[i] = rnd(-1, 1);
    for (int h = 0; h < H; h++) {
        bias[h] = rnd(-4, -1);
        A[h] = -expf(rnd(-1, 2));
        Dk[h] = rnd(0.5f, 1.5f);
    }
    for (int64_t i = 0; i < D * N; i++)
        Sr[i] = st[i] = rnd(-1, 1);
    for (int64_t t = 0; t < L; t++)
        rs[t] = resets && rnd(0, 1) < 0.03f;
    ssd_reference(&(sl_ssd_args){.L = L,
                                 .H = H,
                                 .P = P,
                                 .G = G,
                                 .N = N,
                                 .x = x,
                                 .ldx = ldx,
                                 .dt = dt,
                                 .lddt = H,
                                 .dt_bias = bias,
                                 .A = A,
                                 .Dskip = Dk,
                                 .dt_min = clamp ? 0.01f : 0.0f,
                                 .dt_max = clamp ? 0.2f : INFINITY,
                                 .B = bc + 1,
                                 .C = bc + 1 + (int64_t)G * N,
                                 .ldbc = ldbc,
                                 .z = gate ? x + 3 : NULL,
                                 .ldz = ldx,
                                 .reset = resets ? rs : NULL},
                  Sr, yr);
    for (int i = 0; i < pieces; i++) {
        int64_t t0 = L * i / pieces, t1 = L * (i + 1) / pieces;
        sl_ssd_args a = {.L = t1 - t0,
                         .H = H,
                         .P = P,
                         .G = G,
                         .N = N,
                         .x = x + t0 * ldx,
                         .ldx = ldx,
                         .dt = dt + t0 * H,
                         .lddt = H,
                         .dt_bias = bias,
                         .A = A,
                         .Dskip = Dk,
                         .dt_min = clamp ? 0.01f : 0.0f,
                         .dt_max = clamp ? 0.2f : INFINITY,
                         .B = bc + t0 * ldbc + 1,
                         .C = bc + t0 * ldbc + 1 + (int64_t)G * N,
                         .ldbc = ldbc,
                         .z = gate ? x + t0 * ldx + 3 : NULL,
                         .ldz = ldx,
                         .state = st,
                         .reset = resets ? rs + t0 : NULL,
                         .y = y + t0 * D,
                         .ldy = D};
        sl_err err = {{0}};
        assert_int_equal(sl_ssd_emu(&a, &err), 0);
    }
    char what[96];
    snprintf(what, sizeof what, "ssd L=%lld H=%d P=%d G=%d N=%d", (long long)L, H, P, G, N);
    int ok = 1;
    for (int64_t i = 0; i < L * D && ok; i++)
        ok = close_to(what, i, y[i], yr[i], 2e-4, 2e-4);
    for (int64_t i = 0; i < D * N && ok; i++)
        ok = close_to("ssd state", i, st[i], Sr[i], 2e-4, 2e-4);
    assert_true(ok);
    free(x), free(dt), free(bc), free(y), free(st), free(Sr), free(yr), free(rs);
}

static void test_ssd(void **state)
{
    (void)state;
    rng_state = 11;
    /* chunk edges (32), a partial last chunk, 1- and 2-token calls */
    const int64_t Ls[] = {1, 2, 31, 32, 33, 100};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++) {
        ssd_case(Ls[i], 2, 8, 1, 16, 1, 0, 0, 1);
        ssd_case(Ls[i], 4, 40, 2, 16, 0, 1, 0, 1); /* two channel tiles, the second ragged; 2 groups */
    }
    ssd_case(300, 4, 64, 4, 128, 1, 1, 1, 3); /* the largest d_state, a group per head, clamped dt, carried */
    ssd_case(77, 6, 16, 3, 64, 0, 1, 0, 7);   /* calls shorter than a chunk */
    ssd_case(64, 2, 33, 1, 5, 1, 0, 0, 2);    /* d_state not a multiple of 4 */
}

static void test_ssd_rejects(void **state)
{
    (void)state;
    float f[4] = {0};
    sl_err err = {{0}};
    sl_ssd_args a = {.L = 1,
                     .H = 3,
                     .P = 1,
                     .G = 2,
                     .N = 4,
                     .x = f,
                     .dt = f,
                     .dt_bias = f,
                     .A = f,
                     .Dskip = f,
                     .B = f,
                     .C = f,
                     .state = f,
                     .y = f};
    assert_int_equal(sl_ssd_emu(&a, &err), -1); /* 3 heads in 2 groups */
    a.G = 1, a.N = SL_SSD_MAX_N + 1;
    assert_int_equal(sl_ssd_emu(&a, &err), -1);
    assert_non_null(strstr(err.msg, "d_state"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_element_math),
        cmocka_unit_test(test_combine_properties),
        cmocka_unit_test(test_scan_layouts),
        cmocka_unit_test(test_scan_shapes),
        cmocka_unit_test(test_scan_across_calls),
        cmocka_unit_test(test_scan_check_detects_lost_carry),
        cmocka_unit_test(test_scan_rejects),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_norm),
        cmocka_unit_test(test_logsoftmax),
        cmocka_unit_test(test_ssd),
        cmocka_unit_test(test_ssd_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
