/* CPU backend kernels against straightforward double-precision references
 * written from the definitions in kernels/kernels.h (and mamba_ssm's
 * selective_scan_ref), plus the properties the model relies on: a sequence
 * split into several calls with carried state equals one call, and results
 * do not depend on the number of threads. */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/cpu_math.h"
#include "kernels/kernels.h"

static uint64_t rng = 88172645463325252ull;
static float frand(float scale)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return scale * ((float)(rng >> 40) / (float)(1ull << 24) * 2.0f - 1.0f);
}
static float *rand_vec(size_t n, float scale)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(scale);
    return p;
}
static double relerr(double got, double want)
{
    return fabs(got - want) / fmax(1e-30, fabs(want));
}

static void test_math_vs_libm(void **st)
{
    (void)st;
    double worst_exp2 = 0, worst_exp = 0, worst_sp = 0, worst_silu = 0;
    for (int i = 0; i <= 200000; i++) {
        float x = -80.0f + 160.0f * (float)i / 200000.0f;
        worst_exp2 = fmax(worst_exp2, relerr(sl_cpu_exp2(x), exp2((double)x)));
        worst_exp = fmax(worst_exp, relerr(sl_cpu_exp(x), exp((double)x)));
        double sp = x > 30 ? (double)x : log1p(exp((double)x));
        worst_sp = fmax(worst_sp, relerr(sl_cpu_softplus(x), sp));
        double si = (double)x / (1.0 + exp(-(double)x));
        if (fabs(si) > 1e-30)
            worst_silu = fmax(worst_silu, relerr(sl_cpu_silu(x), si));
    }
    print_message("max relative error: exp2 %.2e exp %.2e softplus %.2e silu %.2e\n", worst_exp2, worst_exp, worst_sp,
                  worst_silu);
    assert_true(worst_exp2 < 4e-7);
    assert_true(worst_exp < 4e-7);
    assert_true(worst_sp < 1e-6);
    assert_true(worst_silu < 1e-6);
}

static sl_backend *cpu(void)
{
    sl_err err;
    sl_backend *b = sl_backend_open("cpu", 0, &err);
    assert_non_null(b);
    return b;
}

static void test_linear(void **st)
{
    (void)st;
    sl_backend *b = cpu();
    sl_err err;
    const int64_t L = 37, K = 29, N = 150, ldx = 31, ldy = 160;
    float *x = rand_vec((size_t)(L * ldx), 1), *w = rand_vec((size_t)(N * K), 1), *bias = rand_vec((size_t)N, 1);
    sl_weight W;
    assert_int_equal(b->weight_create(b, &W, w, N, K, SL_DT_F32, &err), 0);
    float *y1 = calloc((size_t)(L * ldy), sizeof(float)), *y3 = calloc((size_t)(L * ldy), sizeof(float));
    for (int pass = 0; pass < 2; pass++) {
        omp_set_num_threads(pass ? 3 : 1);
        sl_linear_args a = {.L = L, .x = x, .ldx = ldx, .w = &W, .bias = bias, .y = pass ? y3 : y1, .ldy = ldy};
        assert_int_equal(b->linear(b, &a, &err), 0);
    }
    for (int64_t t = 0; t < L; t++)
        for (int64_t n = 0; n < N; n++) {
            double s = bias[n];
            for (int64_t k = 0; k < K; k++)
                s += (double)x[t * ldx + k] * w[n * K + k];
            assert_true(fabs(y1[t * ldy + n] - s) < 1e-5 * (1 + fabs(s)));
            assert_true(fabs(y3[t * ldy + n] - y1[t * ldy + n]) <= 1e-6 * (1 + fabs(s)));
        }
    omp_set_num_threads(2);
    b->weight_free(b, &W);
    free(x), free(w), free(bias), free(y1), free(y3);
    sl_backend_close(b);
}

/* conv reference: history is the carried state, zero before a reset */
static void conv_ref(int64_t L, int64_t D, int K, const float *x, int64_t ldx, const float *w, const float *bias,
                     const float *state0, const uint8_t *reset, double *out)
{
    for (int64_t d = 0; d < D; d++) {
        for (int64_t t = 0; t < L; t++) {
            int64_t seg = -1000000;
            for (int64_t s = 0; s <= t; s++)
                if (reset && reset[s])
                    seg = s;
            double acc = bias[d];
            for (int k = 0; k < K; k++) {
                int64_t pos = t - (K - 1) + k;
                double v = pos < seg ? 0 : pos >= 0 ? x[pos * ldx + d] : state0[d * (K - 1) + (K - 1) + pos];
                acc += w[d * K + k] * v;
            }
            out[t * D + d] = acc / (1 + exp(-acc));
        }
    }
}

static void test_conv(void **st)
{
    (void)st;
    sl_backend *b = cpu();
    sl_err err;
    const int64_t L = 50, D = 37, ldx = 40;
    const int K = 4;
    float *x = rand_vec((size_t)(L * ldx), 2), *w = rand_vec((size_t)(D * K), 1), *bias = rand_vec((size_t)D, 1);
    float *state0 = rand_vec((size_t)(D * (K - 1)), 2);
    uint8_t reset[50] = {0};
    reset[20] = reset[22] = reset[49] = 1;
    double *ref = malloc((size_t)(L * D) * sizeof *ref);
    conv_ref(L, D, K, x, ldx, w, bias, state0, reset, ref);
    /* whole */
    float *s1 = malloc((size_t)(D * (K - 1)) * sizeof(float)), *out1 = malloc((size_t)(L * D) * sizeof(float));
    memcpy(s1, state0, (size_t)(D * (K - 1)) * sizeof(float));
    sl_conv_args a = {.L = L,
                      .D = D,
                      .K = K,
                      .x = x,
                      .ldx = ldx,
                      .w = w,
                      .bias = bias,
                      .state = s1,
                      .reset = reset,
                      .out = out1,
                      .ldout = D};
    assert_int_equal(b->conv1d_silu(b, &a, &err), 0);
    for (int64_t i = 0; i < L * D; i++)
        assert_true(fabs(out1[i] - ref[i]) < 1e-5 * (1 + fabs(ref[i])));
    /* in pieces of 1, 2, 17 and the rest, with the state carried: same bits */
    float *s2 = malloc((size_t)(D * (K - 1)) * sizeof(float)), *out2 = malloc((size_t)(L * D) * sizeof(float));
    memcpy(s2, state0, (size_t)(D * (K - 1)) * sizeof(float));
    int64_t cuts[] = {0, 1, 3, 20, L};
    for (int i = 0; i < 4; i++) {
        sl_conv_args p = a;
        p.L = cuts[i + 1] - cuts[i];
        p.x = x + cuts[i] * ldx;
        p.state = s2;
        p.reset = reset + cuts[i];
        p.out = out2 + cuts[i] * D;
        assert_int_equal(b->conv1d_silu(b, &p, &err), 0);
    }
    assert_memory_equal(out1, out2, (size_t)(L * D) * sizeof(float));
    assert_memory_equal(s1, s2, (size_t)(D * (K - 1)) * sizeof(float));
    free(x), free(w), free(bias), free(state0), free(ref), free(s1), free(out1), free(s2), free(out2);
    sl_backend_close(b);
}

static void test_scan(void **st)
{
    (void)st;
    sl_backend *b = cpu();
    sl_err err;
    const int64_t L = 64, D = 35; /* D not a multiple of the 16 lanes */
    const int N = 16;
    const int64_t ldu = 40, ldbc = 2 * N + 3;
    float *u = rand_vec((size_t)(L * ldu), 2), *dt = rand_vec((size_t)(L * D), 3), *z = rand_vec((size_t)(L * ldu), 3);
    float *bc = rand_vec((size_t)(L * ldbc), 1.5f), *dtb = rand_vec((size_t)D, 1), *Dsk = rand_vec((size_t)D, 1);
    float *A = malloc((size_t)(D * N) * sizeof(float));
    double *Ad = malloc((size_t)(D * N) * sizeof(double));
    for (int64_t i = 0; i < D * N; i++) {
        double alog = log(1.0 + (double)(i % N)) + frand(0.5f);
        Ad[i] = -exp(alog);
        A[i] = (float)(Ad[i] * 1.4426950408889634);
    }
    float *h0 = rand_vec((size_t)(D * N), 1);
    uint8_t reset[64] = {0};
    reset[10] = reset[33] = 1;
    const float *B = bc + 3, *C = bc + 3 + N;
    /* reference: selective_scan_ref in double */
    double *ref = malloc((size_t)(L * D) * sizeof(double)), *h = malloc((size_t)(D * N) * sizeof(double));
    for (int64_t i = 0; i < D * N; i++)
        h[i] = h0[i];
    for (int64_t t = 0; t < L; t++) {
        if (reset[t])
            memset(h, 0, (size_t)(D * N) * sizeof(double));
        for (int64_t d = 0; d < D; d++) {
            double x = (double)dt[t * D + d] + dtb[d];
            double delta = x > 20 ? x : log1p(exp(x)), uu = u[t * ldu + d], y = 0;
            for (int n = 0; n < N; n++) {
                h[d * N + n] = exp(delta * Ad[d * N + n]) * h[d * N + n] + delta * B[t * ldbc + n] * uu;
                y += h[d * N + n] * C[t * ldbc + n];
            }
            double zz = z[t * ldu + d];
            ref[t * D + d] = (y + Dsk[d] * uu) * (zz / (1 + exp(-zz)));
        }
    }
    float *s1 = malloc((size_t)(D * N) * sizeof(float)), *y1 = malloc((size_t)(L * D) * sizeof(float));
    float *s2 = malloc((size_t)(D * N) * sizeof(float)), *y2 = malloc((size_t)(L * D) * sizeof(float));
    memcpy(s1, h0, (size_t)(D * N) * sizeof(float));
    memcpy(s2, h0, (size_t)(D * N) * sizeof(float));
    sl_scan_args a = {.L = L,
                      .D = D,
                      .N = N,
                      .u = u,
                      .ldu = ldu,
                      .dt = dt,
                      .lddt = D,
                      .dt_bias = dtb,
                      .A_log2e = A,
                      .B = B,
                      .C = C,
                      .ldbc = ldbc,
                      .Dskip = Dsk,
                      .z = z,
                      .ldz = ldu,
                      .state = s1,
                      .reset = reset,
                      .y = y1,
                      .ldy = D};
    omp_set_num_threads(1);
    assert_int_equal(b->selective_scan(b, &a, &err), 0);
    double worst = 0;
    for (int64_t i = 0; i < L * D; i++)
        worst = fmax(worst, fabs(y1[i] - ref[i]) / (1e-3 + fabs(ref[i])));
    print_message("scan: max relative error vs double reference %.2e\n", worst);
    assert_true(worst < 1e-4);
    for (int64_t i = 0; i < D * N; i++)
        assert_true(fabs(s1[i] - h[i]) < 1e-4 * (1e-3 + fabs(h[i])));
    /* in pieces, 3 threads: same bits */
    omp_set_num_threads(3);
    int64_t cuts[] = {0, 1, 10, 11, 40, L};
    for (int i = 0; i < 5; i++) {
        sl_scan_args p = a;
        p.L = cuts[i + 1] - cuts[i];
        p.u = u + cuts[i] * ldu;
        p.dt = dt + cuts[i] * D;
        p.B = B + cuts[i] * ldbc;
        p.C = C + cuts[i] * ldbc;
        p.z = z + cuts[i] * ldu;
        p.state = s2;
        p.reset = reset + cuts[i];
        p.y = y2 + cuts[i] * D;
        assert_int_equal(b->selective_scan(b, &p, &err), 0);
    }
    omp_set_num_threads(2);
    assert_memory_equal(y1, y2, (size_t)(L * D) * sizeof(float));
    assert_memory_equal(s1, s2, (size_t)(D * N) * sizeof(float));
    free(u), free(dt), free(z), free(bc), free(dtb), free(Dsk), free(A), free(Ad), free(h0), free(ref), free(h);
    free(s1), free(y1), free(s2), free(y2);
    sl_backend_close(b);
}

static void test_norm_and_logsoftmax(void **st)
{
    (void)st;
    sl_backend *b = cpu();
    sl_err err;
    const int64_t L = 9, D = 70, V = 1003;
    float *x = rand_vec((size_t)(L * D), 2), *r = rand_vec((size_t)(L * D), 2), *w = rand_vec((size_t)D, 1);
    float *r0 = malloc((size_t)(L * D) * sizeof(float)), *out = malloc((size_t)(L * D) * sizeof(float));
    memcpy(r0, r, (size_t)(L * D) * sizeof(float));
    sl_norm_args na = {.L = L, .D = D, .x = x, .residual = r, .residual_init = 0, .w = w, .eps = 1e-5f, .out = out};
    assert_int_equal(b->add_rmsnorm(b, &na, &err), 0);
    for (int64_t t = 0; t < L; t++) {
        double ss = 0;
        for (int64_t d = 0; d < D; d++)
            ss += ((double)r0[t * D + d] + x[t * D + d]) * ((double)r0[t * D + d] + x[t * D + d]);
        double sc = 1 / sqrt(ss / D + 1e-5);
        for (int64_t d = 0; d < D; d++) {
            double want = ((double)r0[t * D + d] + x[t * D + d]) * sc * w[d];
            assert_true(fabs(out[t * D + d] - want) < 1e-5 * (1 + fabs(want)));
            assert_true(r[t * D + d] == r0[t * D + d] + x[t * D + d]);
        }
    }
    float *logits = rand_vec((size_t)(L * V), 30), logp[9];
    int32_t target[9] = {0, 5, 1002, -1, 77, 500, 999, 3, 1};
    sl_logsoftmax_args la = {.T = L, .V = V, .logits = logits, .ld = V, .target = target, .logp = logp};
    assert_int_equal(b->logsoftmax_gather(b, &la, &err), 0);
    for (int64_t t = 0; t < L; t++) {
        if (target[t] < 0) {
            assert_true(logp[t] == 0.0f);
            continue;
        }
        double m = -1e300, s = 0;
        for (int64_t v = 0; v < V; v++)
            m = fmax(m, logits[t * V + v]);
        for (int64_t v = 0; v < V; v++)
            s += exp(logits[t * V + v] - m);
        double want = logits[t * V + target[t]] - m - log(s);
        assert_true(fabs(logp[t] - want) < 1e-5 * (1 + fabs(want)));
    }
    int32_t bad[1] = {1003};
    la.T = 1;
    la.target = bad;
    assert_int_equal(b->logsoftmax_gather(b, &la, &err), -1);
    assert_non_null(strstr(err.msg, "outside the vocabulary"));
    free(x), free(r), free(w), free(r0), free(out), free(logits);
    sl_backend_close(b);
}

static void test_backend_open(void **st)
{
    (void)st;
    sl_err err;
    assert_null(sl_backend_open("tpu", 0, &err));
    assert_non_null(strstr(err.msg, "unknown device 'tpu'"));
    sl_backend *b = sl_backend_open("auto", 0, &err);
    assert_non_null(b);
    assert_string_equal(b->name, sl_cuda_device_count() > 0 ? "cuda" : "cpu");
    sl_backend_close(b);
    if (sl_cuda_device_count() == 0) {
        assert_null(sl_backend_open("cuda", 0, &err));
        assert_non_null(strstr(err.msg, "cuda"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_math_vs_libm),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_norm_and_logsoftmax),
        cmocka_unit_test(test_backend_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
