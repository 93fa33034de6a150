/* The CPU backend's Mamba-2 operators (kernels/cpu_ssd.c) against a
 * double-precision token-by-token recurrence written here from the
 * definition in kernels/kernels.h (mamba_ssm's Mamba2.step: S = exp(dt A) S +
 * dt x B^T, y = S C + D x): chunk lengths 1 to larger than the sequence,
 * lengths that are and are not multiples of the chunk, ngroups > 1, resets
 * (document starts) inside a call, state carried across calls, dt limits;
 * the same bits for any thread count; the grouped RMSNorm and x * silu(z). */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kernels.h"

static uint64_t rng = 0x243F6A8885A308D3ull;
static float frand(float scale)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return scale * ((float)(rng >> 40) / (float)(1ull << 24) * 2.0f - 1.0f);
}
static float *rand_vec(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(scale);
    return p;
}

typedef struct problem {
    int64_t L;
    int H, P, G, N;
    float *x, *dt, *B, *C, *z, *bias, *A, *D, *state0;
    uint8_t *reset;
    int64_t ldx, lddt, ldbc, ldz;
    float dt_min, dt_max;
} problem;

/* Activations laid out as the model has them: x, z inside wider rows. */
static problem make(int64_t L, int H, int P, int G, int N, int with_reset, int gate)
{
    problem p = {.L = L, .H = H, .P = P, .G = G, .N = N, .dt_min = 0.0f, .dt_max = INFINITY};
    p.ldx = H * P + 3, p.lddt = H + 1, p.ldbc = 2 * G * N + 2, p.ldz = H * P + 5;
    p.x = rand_vec((size_t)(L * p.ldx), 1.0f);
    p.dt = rand_vec((size_t)(L * p.lddt), 2.0f);
    float *bc = rand_vec((size_t)(L * p.ldbc), 1.0f);
    p.B = bc, p.C = bc + G * N + 1;
    p.z = gate ? rand_vec((size_t)(L * p.ldz), 2.0f) : NULL;
    p.bias = rand_vec((size_t)H, 1.0f);
    p.A = malloc((size_t)H * sizeof(float));
    for (int h = 0; h < H; h++)
        p.A[h] = -expf(frand(1.5f)); /* A = -exp(A_log), A_log in [-1.5, 1.5] */
    p.D = rand_vec((size_t)H, 1.0f);
    p.state0 = rand_vec((size_t)H * P * N, 0.5f);
    p.reset = calloc((size_t)L + 1, 1);
    if (with_reset)
        for (int64_t t = 1; t < L; t++)
            p.reset[t] = (t % 29 == 7) || t == 3 || t == L - 1;
    return p;
}
static void drop(problem *p)
{
    free(p->x), free(p->dt), free(p->B), free(p->z), free(p->bias), free(p->A), free(p->D), free(p->state0);
    free(p->reset);
}

/* The recurrence in double: y [L][H*P], state [H][P][N] in/out. */
static void reference(const problem *p, double *state, double *y)
{
    const int H = p->H, P = p->P, N = p->N, per = H / p->G;
    for (int64_t t = 0; t < p->L; t++) {
        if (p->reset[t])
            memset(state, 0, sizeof(double) * (size_t)H * P * N);
        for (int h = 0; h < H; h++) {
            const int g = h / per;
            double v = (double)p->dt[t * p->lddt + h] + p->bias[h];
            double d = v > 20 ? v : log1p(exp(v));
            d = fmin(fmax(d, p->dt_min), p->dt_max);
            double dA = exp(d * p->A[h]);
            for (int q = 0; q < P; q++) {
                double xv = p->x[t * p->ldx + h * P + q], acc = 0;
                double *s = state + ((size_t)h * P + q) * N;
                for (int n = 0; n < N; n++) {
                    s[n] = dA * s[n] + d * xv * p->B[t * p->ldbc + g * N + n];
                    acc += s[n] * p->C[t * p->ldbc + g * N + n];
                }
                acc += p->D[h] * xv;
                if (p->z) {
                    double zv = p->z[t * p->ldz + h * P + q];
                    acc *= zv / (1 + exp(-zv));
                }
                y[t * H * P + h * P + q] = acc;
            }
        }
    }
}

/* Runs tokens [t0, t0+n) in one call. */
static void run(sl_backend *be, const problem *p, int chunk, int64_t t0, int64_t n, float *state, float *y, int64_t ldy)
{
    sl_ssd_args a = {.L = n,
                     .H = p->H,
                     .P = p->P,
                     .G = p->G,
                     .N = p->N,
                     .chunk = chunk,
                     .x = p->x + t0 * p->ldx,
                     .ldx = p->ldx,
                     .dt = p->dt + t0 * p->lddt,
                     .lddt = p->lddt,
                     .dt_bias = p->bias,
                     .A = p->A,
                     .Dskip = p->D,
                     .dt_min = p->dt_min,
                     .dt_max = p->dt_max,
                     .B = p->B + t0 * p->ldbc,
                     .C = p->C + t0 * p->ldbc,
                     .ldbc = p->ldbc,
                     .z = p->z ? p->z + t0 * p->ldz : NULL,
                     .ldz = p->ldz,
                     .state = state,
                     .reset = p->reset + t0,
                     .y = y + t0 * ldy,
                     .ldy = ldy};
    sl_err err;
    if (be->ssd_chunked(be, &a, &err) < 0)
        fail_msg("%s", err.msg);
}

/* Worst error of y and the final state, relative to the largest magnitude. */
static void compare(const problem *p, const float *y, int64_t ldy, const float *st, const double *ry, const double *rs,
                    double *ey, double *es)
{
    const int64_t HP = (int64_t)p->H * p->P;
    double my = 1e-30, ms = 1e-30, dy = 0, ds = 0;
    for (int64_t t = 0; t < p->L; t++)
        for (int64_t c = 0; c < HP; c++) {
            my = fmax(my, fabs(ry[t * HP + c]));
            dy = fmax(dy, fabs(y[t * ldy + c] - ry[t * HP + c]));
        }
    for (int64_t i = 0; i < HP * p->N; i++) {
        ms = fmax(ms, fabs(rs[i]));
        ds = fmax(ds, fabs(st[i] - rs[i]));
    }
    *ey = dy / my, *es = ds / ms;
}

static void check_case(sl_backend *be, int64_t L, int H, int P, int G, int N, int with_reset, int gate, int chunk)
{
    problem p = make(L, H, P, G, N, with_reset, gate);
    const int64_t HP = (int64_t)H * P, ldy = HP + 7;
    double *ry = malloc(sizeof(double) * (size_t)(L * HP)), *rs = malloc(sizeof(double) * (size_t)(HP * N));
    for (int64_t i = 0; i < HP * N; i++)
        rs[i] = p.state0[i];
    reference(&p, rs, ry);
    float *y = calloc((size_t)(L * ldy), sizeof(float)), *st = malloc(sizeof(float) * (size_t)(HP * N));
    memcpy(st, p.state0, sizeof(float) * (size_t)(HP * N));
    run(be, &p, chunk, 0, L, st, y, ldy);
    double ey, es;
    compare(&p, y, ldy, st, ry, rs, &ey, &es);
    if (ey > 2e-5 || es > 2e-5)
        fail_msg("L %lld H %d P %d G %d N %d reset %d gate %d chunk %d: y error %.2e state error %.2e", (long long)L, H,
                 P, G, N, with_reset, gate, chunk, ey, es);
    /* the same tokens in several calls, state carried */
    float *y2 = calloc((size_t)(L * ldy), sizeof(float)), *st2 = malloc(sizeof(float) * (size_t)(HP * N));
    memcpy(st2, p.state0, sizeof(float) * (size_t)(HP * N));
    int64_t cuts[] = {L / 3, L / 3 + 1, L / 2 + 5, L}, prev = 0;
    for (int i = 0; i < 4; i++) {
        int64_t c = cuts[i] < L ? cuts[i] : L;
        if (c > prev)
            run(be, &p, chunk, prev, c - prev, st2, y2, ldy);
        prev = c > prev ? c : prev;
    }
    compare(&p, y2, ldy, st2, ry, rs, &ey, &es);
    if (ey > 2e-5 || es > 2e-5)
        fail_msg("split calls, L %lld chunk %d: y error %.2e state error %.2e", (long long)L, chunk, ey, es);
    free(ry), free(rs), free(y), free(st), free(y2), free(st2);
    drop(&p);
}

static void test_ssd_vs_recurrence(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 2, &err);
    assert_non_null(be);
    assert_non_null(be->ssd_chunked);
    /* L, H, P, G, N, reset, gate, chunk */
    check_case(be, 1, 2, 4, 1, 8, 0, 1, 0);
    check_case(be, 2, 2, 4, 2, 8, 0, 1, 0);
    check_case(be, 37, 4, 8, 1, 16, 0, 1, 16);
    check_case(be, 64, 4, 8, 2, 16, 0, 0, 16); /* a multiple of the chunk */
    check_case(be, 100, 6, 8, 3, 8, 1, 1, 16);
    check_case(be, 100, 6, 8, 3, 8, 1, 1, 1);
    check_case(be, 100, 6, 8, 6, 8, 1, 0, 7);
    check_case(be, 300, 4, 16, 2, 32, 1, 1, 0);   /* the default chunk */
    check_case(be, 300, 4, 16, 4, 32, 0, 1, 512); /* one chunk longer than the sequence */
    check_case(be, 200, 2, 64, 1, 128, 1, 1, 64); /* mamba2-130m's head shape */
    sl_backend_close(be);
}

/* dt limits (mamba_ssm's dt_limit) clamp delta. */
static void test_ssd_dt_limit(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 2, &err);
    problem p = make(50, 4, 8, 2, 8, 1, 1);
    p.dt_min = 0.3f, p.dt_max = 0.9f;
    const int64_t HP = 32;
    double *ry = malloc(sizeof(double) * 50 * HP), *rs = calloc((size_t)(HP * 8), sizeof(double));
    for (int64_t i = 0; i < HP * 8; i++)
        rs[i] = p.state0[i];
    reference(&p, rs, ry);
    float *y = calloc(50 * HP, sizeof(float)), *s = malloc(sizeof(float) * HP * 8);
    memcpy(s, p.state0, sizeof(float) * HP * 8);
    run(be, &p, 16, 0, 50, s, y, HP);
    double ey, es;
    compare(&p, y, HP, s, ry, rs, &ey, &es);
    assert_true(ey < 2e-5 && es < 2e-5);
    /* and the limits matter: without them the output differs */
    p.dt_min = 0.0f, p.dt_max = INFINITY;
    float *y2 = calloc(50 * HP, sizeof(float));
    memcpy(s, p.state0, sizeof(float) * HP * 8);
    run(be, &p, 16, 0, 50, s, y2, HP);
    double diff = 0;
    for (int i = 0; i < 50 * HP; i++)
        diff = fmax(diff, fabs(y2[i] - y[i]));
    assert_true(diff > 1e-2);
    free(ry), free(rs), free(y), free(y2), free(s);
    drop(&p);
    sl_backend_close(be);
}

/* 1, 2 and 3 threads: the same bits. */
static void test_ssd_threads(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 1, &err);
    problem p = make(333, 6, 16, 2, 32, 1, 1);
    const int64_t HP = 96;
    float *ys[3], *ss[3];
    for (int th = 1; th <= 3; th++) {
        omp_set_num_threads(th);
        ys[th - 1] = calloc(333 * HP, sizeof(float));
        ss[th - 1] = malloc(sizeof(float) * HP * 32);
        memcpy(ss[th - 1], p.state0, sizeof(float) * HP * 32);
        run(be, &p, 0, 0, 333, ss[th - 1], ys[th - 1], HP);
    }
    for (int th = 1; th < 3; th++) {
        assert_memory_equal(ys[th], ys[0], sizeof(float) * 333 * HP);
        assert_memory_equal(ss[th], ss[0], sizeof(float) * HP * 32);
    }
    for (int i = 0; i < 3; i++)
        free(ys[i]), free(ss[i]);
    drop(&p);
    omp_set_num_threads(2);
    sl_backend_close(be);
}

static void test_ssd_bad_shape(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 1, &err);
    sl_ssd_args a = {.L = 4, .H = 3, .P = 4, .G = 2, .N = 4};
    assert_int_equal(be->ssd_chunked(be, &a, &err), -1);
    assert_non_null(strstr(err.msg, "3 heads of 4 channels in 2 groups"));
    sl_backend_close(be);
}

/* RMSNorm in groups against a double reference; x * silu(z). */
static void test_grouped_norm_and_gate(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 2, &err);
    const int64_t L = 5, D = 24;
    for (int64_t group = 0; group <= D; group += 6) {
        if (group == 18)
            continue;
        float *r = rand_vec((size_t)(L * D), 2.0f), *w = rand_vec((size_t)D, 1.0f),
              *out = malloc(sizeof(float) * L * D);
        float *r0 = malloc(sizeof(float) * L * D);
        memcpy(r0, r, sizeof(float) * L * D);
        sl_norm_args na = {.L = L, .D = D, .residual = r, .w = w, .eps = 1e-5f, .out = out, .group = group};
        assert_int_equal(be->add_rmsnorm(be, &na, &err), 0);
        int64_t gs = group ? group : D;
        for (int64_t t = 0; t < L; t++)
            for (int64_t g0 = 0; g0 < D; g0 += gs) {
                double ss = 0;
                for (int64_t d = g0; d < g0 + gs; d++)
                    ss += (double)r0[t * D + d] * r0[t * D + d];
                double sc = 1.0 / sqrt(ss / (double)gs + 1e-5);
                for (int64_t d = g0; d < g0 + gs; d++) {
                    double want = r0[t * D + d] * sc * w[d];
                    assert_true(fabs(out[t * D + d] - want) <= 1e-6 * fmax(1.0, fabs(want)));
                }
            }
        free(r), free(w), free(out), free(r0);
    }
    float r[12] = {0}, w[12] = {0}, o[12];
    sl_norm_args bad = {.L = 1, .D = 12, .residual = r, .w = w, .eps = 1e-5f, .out = o, .group = 5};
    assert_int_equal(be->add_rmsnorm(be, &bad, &err), -1);
    assert_non_null(strstr(err.msg, "group 5 does not divide the row width 12"));

    float *x = rand_vec(3 * 10, 3.0f), *z = rand_vec(3 * 12, 8.0f), *y = calloc(3 * 9, sizeof(float));
    sl_mul_silu_args ma = {.L = 3, .D = 7, .x = x, .ldx = 10, .z = z, .ldz = 12, .out = y, .ldout = 9};
    assert_int_equal(be->mul_silu(be, &ma, &err), 0);
    for (int t = 0; t < 3; t++)
        for (int d = 0; d < 9; d++) {
            double zv = z[t * 12 + d], want = d < 7 ? x[t * 10 + d] * zv / (1 + exp(-zv)) : 0.0;
            assert_true(fabs(y[t * 9 + d] - want) <= 1e-6 * fmax(1.0, fabs(want)));
        }
    free(x), free(z), free(y);
    sl_backend_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssd_vs_recurrence),     cmocka_unit_test(test_ssd_dt_limit),
        cmocka_unit_test(test_ssd_threads),           cmocka_unit_test(test_ssd_bad_shape),
        cmocka_unit_test(test_grouped_norm_and_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
