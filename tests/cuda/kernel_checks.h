/* Checks of every CUDA-backend op against the CPU backend (the reference:
 * kernels/cpu_*.c, itself tested against PyTorch-generated fixtures) on
 * random inputs, with mamba_ssm's test tolerances: fp32 rtol 6e-4 / atol
 * 2e-3, bf16 (and TF32) rtol 3e-3 / atol 5e-3.
 *
 * Shared by tests/cuda/test_cuda_kernels.c (the CUDA backend, `make
 * test-cuda`, needs a GPU) and tests/unit/test_kernels_cuda_emu_backend.c (the host
 * emulation of the CUDA kernels, in `make test`), so the GPU test code runs
 * on every machine. Call run_kernel_checks(ref, dut, quick); quick uses
 * small shapes (compute-sanitizer runs, the CPU suite). */
#ifndef SLUICE_TESTS_CUDA_KERNEL_CHECKS_H
#define SLUICE_TESTS_CUDA_KERNEL_CHECKS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/kernels.h"
#include "tests/cuda/round_backend.h"

static sl_backend *ref, *dut;
static int quick;

/* --- random inputs ------------------------------------------------------- */
static uint64_t rng_state = 12345;
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
static float *rnd_vec(size_t n, float lo, float hi)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = rnd(lo, hi);
    return p;
}

/* bf16 round-to-nearest-even, kept in a float (exactly representable). */
static float bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

/* --- backend memory ------------------------------------------------------ */
static void *put(sl_backend *b, const void *host, size_t bytes)
{
    sl_err err = {{0}};
    void *p = b->alloc(b, bytes ? bytes : 1, &err);
    if (!p)
        fail_msg("%s alloc: %s", b->name, err.msg);
    if (host && bytes && b->upload(b, p, host, bytes, &err) != 0)
        fail_msg("%s upload: %s", b->name, err.msg);
    if (!host && bytes && b->memset0(b, p, bytes, &err) != 0)
        fail_msg("%s memset0: %s", b->name, err.msg);
    return p;
}
static void get(sl_backend *b, void *host, const void *dev, size_t bytes)
{
    sl_err err = {{0}};
    if (b->download(b, host, dev, bytes, &err) != 0 || b->sync(b, &err) != 0)
        fail_msg("%s download: %s", b->name, err.msg);
}
static void ok(sl_backend *b, int rc, const sl_err *err, const char *op)
{
    if (rc != 0)
        fail_msg("%s %s: %s", b->name, op, err->msg);
}

/* |got - want| <= atol + rtol*|want| everywhere (torch.allclose). */
static int allclose(const char *what, const float *got, const float *want, size_t n, double rtol, double atol)
{
    double worst = 0;
    size_t bad = n;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]), lim = atol + rtol * fabs(want[i]);
        if (!(d <= lim) && bad == n)
            bad = i;
        if (d / lim > worst || d != d)
            worst = d != d ? INFINITY : d / lim;
    }
    print_message("  %-28s n=%-9zu worst |diff|/tolerance %.2e\n", what, n, worst);
    if (bad < n)
        print_message("  %s[%zu]: got %.9g want %.9g\n", what, bad, got[bad], want[bad]);
    return bad == n;
}
#define F32_RTOL 6e-4
#define F32_ATOL 2e-3
#define BF16_RTOL 3e-3
#define BF16_ATOL 5e-3

/* --- linear ------------------------------------------------------------ */
/* Runs y = x W^T (+b) on backend b; returns host y [L][ldy]. */
static float *run_linear(sl_backend *b, const float *x, int64_t L, int64_t K, int64_t ldx, const float *w, int64_t N,
                         sl_dtype wt, const float *bias, int64_t ldy)
{
    sl_err err = {{0}};
    sl_weight W;
    ok(b, b->weight_create(b, &W, w, N, K, wt, &err), &err, "weight_create");
    float *dx = put(b, x, (size_t)(L * ldx) * 4), *dy = put(b, NULL, (size_t)(L * ldy) * 4);
    float *db = bias ? put(b, bias, (size_t)N * 4) : NULL;
    sl_linear_args a = {.L = L, .x = dx, .ldx = ldx, .w = &W, .bias = db, .y = dy, .ldy = ldy};
    ok(b, b->linear(b, &a, &err), &err, "linear");
    float *y = malloc((size_t)(L * ldy) * 4);
    get(b, y, dy, (size_t)(L * ldy) * 4);
    b->free(b, dx), b->free(b, dy), b->free(b, db);
    b->weight_free(b, &W);
    return y;
}

/* TF32 on or off: the CUDA switch, or the host emulation's (round_backend.h) */
static void kc_set_tf32(sl_backend *b, int on)
{
    if (sl_cuda_set_tf32(b, on) < 0)
        rb_set_tf32(b, on);
}

static void linear_case(int64_t L, int64_t K, int64_t N, sl_dtype wt, int use_bias, int tf32)
{
    int64_t ldx = K + 5, ldy = N + 3;
    float *x = rnd_vec((size_t)(L * ldx), -1, 1), *w = rnd_vec((size_t)(N * K), -1, 1);
    float s = 1.0f / sqrtf((float)K);
    for (int64_t i = 0; i < N * K; i++)
        w[i] = wt == SL_DT_BF16 ? bf16_round(w[i] * s) : w[i] * s;
    float *bias = use_bias ? rnd_vec((size_t)N, -1, 1) : NULL;
    kc_set_tf32(dut, tf32);
    float *y0 = run_linear(ref, x, L, K, ldx, w, N, wt, bias, ldy);
    float *y1 = run_linear(dut, x, L, K, ldx, w, N, wt, bias, ldy);
    /* compare only the N columns of each row (the rest must stay untouched: 0) */
    char what[96];
    snprintf(what, sizeof what, "linear %lldx%lldx%lld %s%s", (long long)L, (long long)K, (long long)N,
             wt == SL_DT_BF16 ? "bf16"
             : tf32           ? "tf32"
                              : "f32",
             use_bias ? "+b" : "");
    int exact_fp32 = wt != SL_DT_BF16 && !tf32;
    assert_true(allclose(what, y1, y0, (size_t)(L * ldy), exact_fp32 ? F32_RTOL : BF16_RTOL,
                         exact_fp32 ? F32_ATOL : BF16_ATOL));
    for (int64_t t = 0; t < L; t++)
        for (int64_t c = N; c < ldy; c++)
            assert_true(y1[t * ldy + c] == 0.0f);
    kc_set_tf32(dut, 1);
    free(x), free(w), free(bias), free(y0), free(y1);
}

static void test_linear(void **st)
{
    (void)st;
    int64_t big = quick ? 64 : 512;
    for (int tf32 = 0; tf32 < 2; tf32++) {
        linear_case(1, 768, 1536, SL_DT_F32, 0, tf32);
        linear_case(37, 768, 1536, SL_DT_F32, 1, tf32);
        linear_case(big, 1536, 80, SL_DT_F32, 0, tf32);
        linear_case(big, 48, 1536, SL_DT_F32, 1, tf32);
    }
    linear_case(big, 768, quick ? 1000 : 50280, SL_DT_F32, 0, 0);
    linear_case(1, 768, 1536, SL_DT_BF16, 0, 1);
    linear_case(big, 768, 1536, SL_DT_BF16, 1, 1);
    linear_case(big, 1536, 80, SL_DT_BF16, 0, 1);
    linear_case(big, 768, quick ? 1000 : 50280, SL_DT_BF16, 0, 1);
}

/* --- embed --------------------------------------------------------------- */
static float *run_embed(sl_backend *b, const int32_t *ids, int64_t L, const float *emb, int64_t V, int64_t D,
                        sl_dtype wt)
{
    sl_err err = {{0}};
    sl_weight W;
    ok(b, b->weight_create(b, &W, emb, V, D, wt, &err), &err, "weight_create");
    int32_t *di = put(b, ids, (size_t)L * 4);
    float *dout = put(b, NULL, (size_t)(L * (D + 1)) * 4);
    sl_embed_args a = {.L = L, .ids = di, .emb = &W, .out = dout, .ldout = D + 1};
    ok(b, b->embed(b, &a, &err), &err, "embed");
    float *out = malloc((size_t)(L * (D + 1)) * 4);
    get(b, out, dout, (size_t)(L * (D + 1)) * 4);
    b->free(b, di), b->free(b, dout);
    b->weight_free(b, &W);
    return out;
}

static void test_embed(void **st)
{
    (void)st;
    int64_t V = 1000, D = 768, L = 300;
    float *emb = rnd_vec((size_t)(V * D), -1, 1);
    for (int64_t i = 0; i < V * D; i++)
        emb[i] = bf16_round(emb[i]);
    int32_t *ids = malloc((size_t)L * 4);
    for (int64_t t = 0; t < L; t++)
        ids[t] = (int32_t)(rng_next() % (uint64_t)V);
    for (int bf = 0; bf < 2; bf++) {
        float *a = run_embed(ref, ids, L, emb, V, D, bf ? SL_DT_BF16 : SL_DT_F32);
        float *b = run_embed(dut, ids, L, emb, V, D, bf ? SL_DT_BF16 : SL_DT_F32);
        assert_true(allclose(bf ? "embed bf16" : "embed f32", b, a, (size_t)(L * (D + 1)), 0, 0));
        free(a), free(b);
    }
    free(emb), free(ids);
}

/* --- conv1d -------------------------------------------------------------- */
typedef struct conv_io {
    int64_t L, D;
    int K;
    float *x, *w, *bias, *state;
    uint8_t *reset;
} conv_io;

/* Runs the conv over [t0, t0+n) pieces given by cuts (carrying state). */
static float *run_conv(sl_backend *b, const conv_io *c, const int64_t *cuts, int ncuts, float *state_out)
{
    sl_err err = {{0}};
    int64_t ld = 2 * c->D; /* as the model: x is the first half of xz */
    float *dx = put(b, c->x, (size_t)(c->L * ld) * 4), *dw = put(b, c->w, (size_t)(c->D * c->K) * 4);
    float *dbias = put(b, c->bias, (size_t)c->D * 4), *dst = put(b, c->state, (size_t)(c->D * (c->K - 1)) * 4);
    uint8_t *dr = c->reset ? put(b, c->reset, (size_t)c->L) : NULL;
    float *dout = put(b, NULL, (size_t)(c->L * c->D) * 4);
    for (int i = 0; i < ncuts; i++) {
        int64_t t0 = i ? cuts[i - 1] : 0, n = cuts[i] - t0;
        sl_conv_args a = {.L = n,
                          .D = c->D,
                          .K = c->K,
                          .x = dx + t0 * ld,
                          .ldx = ld,
                          .w = dw,
                          .bias = dbias,
                          .state = dst,
                          .reset = dr ? dr + t0 : NULL,
                          .out = dout + t0 * c->D,
                          .ldout = c->D};
        ok(b, b->conv1d_silu(b, &a, &err), &err, "conv1d_silu");
    }
    float *out = malloc((size_t)(c->L * c->D) * 4 + 4);
    get(b, out, dout, (size_t)(c->L * c->D) * 4);
    get(b, state_out, dst, (size_t)(c->D * (c->K - 1)) * 4);
    b->free(b, dx), b->free(b, dw), b->free(b, dbias), b->free(b, dst), b->free(b, dr), b->free(b, dout);
    return out;
}

static void conv_case(int64_t L, int64_t D, int K, int resets, int pieces)
{
    conv_io c = {.L = L, .D = D, .K = K};
    c.x = rnd_vec((size_t)(L * 2 * D), -2, 2);
    c.w = rnd_vec((size_t)(D * K), -1, 1);
    c.bias = rnd_vec((size_t)D, -0.5f, 0.5f);
    c.state = rnd_vec((size_t)(D * (K - 1)), -2, 2);
    if (resets) {
        c.reset = calloc((size_t)L, 1);
        for (int64_t t = 0; t < L; t++)
            c.reset[t] = rng_next() % 97 == 0 || (t == 0 && resets > 1);
    }
    int64_t whole = L, cuts[16];
    int nc = 0;
    for (int i = 1; i < pieces; i++)
        cuts[nc++] = L * i / pieces;
    cuts[nc++] = L;
    float *s0 = malloc((size_t)(D * K) * 4), *s1 = malloc((size_t)(D * K) * 4);
    float *a = run_conv(ref, &c, &whole, 1, s0), *b = run_conv(dut, &c, cuts, nc, s1);
    char what[96];
    snprintf(what, sizeof what, "conv L=%lld D=%lld K=%d x%d", (long long)L, (long long)D, K, pieces);
    assert_true(allclose(what, b, a, (size_t)(L * D), F32_RTOL, F32_ATOL));
    assert_true(allclose("conv state", s1, s0, (size_t)(D * (K - 1)), 0, 0));
    free(c.x), free(c.w), free(c.bias), free(c.state), free(c.reset), free(s0), free(s1), free(a), free(b);
}

static void test_conv(void **st)
{
    (void)st;
    int64_t D = quick ? 64 : 1536;
    const int64_t Ls[] = {1, 2, 3, 200, 2049};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++) {
        conv_case(Ls[i], D, 4, 0, 1);
        conv_case(Ls[i], D, 4, 2, 1);
        if (Ls[i] >= 3)
            conv_case(Ls[i], D, 4, 1, 3);
    }
    conv_case(100, 48, 2, 1, 1);
}

/* --- selective scan ------------------------------------------------------ */
typedef struct scan_io {
    int64_t L, D;
    int N, gate;
    float *xz, *dt, *dtb, *A2, *bc, *Dk, *state;
    uint8_t *reset;
} scan_io;

static float *run_scan(sl_backend *b, const scan_io *s, const int64_t *cuts, int ncuts, float *state_out)
{
    sl_err err = {{0}};
    int64_t D = s->D, N = s->N, ldbc = 2 * N + 3;
    float *dxz = put(b, s->xz, (size_t)(s->L * 2 * D) * 4), *ddt = put(b, s->dt, (size_t)(s->L * D) * 4);
    float *ddtb = put(b, s->dtb, (size_t)D * 4), *dA = put(b, s->A2, (size_t)(D * N) * 4);
    float *dbc = put(b, s->bc, (size_t)(s->L * ldbc) * 4), *dD = put(b, s->Dk, (size_t)D * 4);
    float *dst = put(b, s->state, (size_t)(D * N) * 4), *dy = put(b, NULL, (size_t)(s->L * D) * 4);
    uint8_t *dr = s->reset ? put(b, s->reset, (size_t)s->L) : NULL;
    for (int i = 0; i < ncuts; i++) {
        int64_t t0 = i ? cuts[i - 1] : 0, n = cuts[i] - t0;
        sl_scan_args a = {.L = n,
                          .D = D,
                          .N = (int)N,
                          .u = dxz + t0 * 2 * D,
                          .ldu = 2 * D,
                          .dt = ddt + t0 * D,
                          .lddt = D,
                          .dt_bias = ddtb,
                          .A_log2e = dA,
                          .B = dbc + t0 * ldbc + 3,
                          .C = dbc + t0 * ldbc + 3 + N,
                          .ldbc = ldbc,
                          .Dskip = dD,
                          .z = s->gate ? dxz + t0 * 2 * D + D : NULL,
                          .ldz = 2 * D,
                          .state = dst,
                          .reset = dr ? dr + t0 : NULL,
                          .y = dy + t0 * D,
                          .ldy = D};
        ok(b, b->selective_scan(b, &a, &err), &err, "selective_scan");
    }
    float *y = malloc((size_t)(s->L * D) * 4 + 4);
    get(b, y, dy, (size_t)(s->L * D) * 4);
    get(b, state_out, dst, (size_t)(D * N) * 4);
    b->free(b, dxz), b->free(b, ddt), b->free(b, ddtb), b->free(b, dA), b->free(b, dbc), b->free(b, dD);
    b->free(b, dst), b->free(b, dy), b->free(b, dr);
    return y;
}

static void scan_case(int64_t L, int64_t D, int N, int gate, int resets, int pieces)
{
    scan_io s = {.L = L, .D = D, .N = N, .gate = gate};
    int64_t ldbc = 2 * N + 3;
    s.xz = rnd_vec((size_t)(L * 2 * D), -2, 2);
    s.dt = rnd_vec((size_t)(L * D), -3, 3);
    s.dtb = rnd_vec((size_t)D, -6, -2);
    s.bc = rnd_vec((size_t)(L * ldbc), -2, 2);
    s.Dk = rnd_vec((size_t)D, 0.5f, 1.5f);
    s.state = rnd_vec((size_t)(D * N), -1, 1);
    s.A2 = malloc((size_t)(D * N) * 4);
    for (int64_t d = 0; d < D; d++)
        for (int n = 0; n < N; n++)
            s.A2[d * N + n] = -(float)(n + 1) * expf(rnd(-0.5f, 0.5f)) * 1.4426950408889634f;
    if (resets) {
        s.reset = calloc((size_t)L, 1);
        for (int64_t t = 0; t < L; t++)
            s.reset[t] = rng_next() % 211 == 0 || (t == 0 && resets > 1);
    }
    int64_t whole = L, cuts[16];
    int nc = 0;
    for (int i = 1; i < pieces; i++)
        cuts[nc++] = L * i / pieces + (int64_t)(rng_next() % 7);
    cuts[nc++] = L;
    float *s0 = malloc((size_t)(D * N) * 4), *s1 = malloc((size_t)(D * N) * 4);
    float *a = run_scan(ref, &s, &whole, 1, s0), *b = run_scan(dut, &s, cuts, nc, s1);
    char what[96];
    snprintf(what, sizeof what, "scan L=%lld D=%lld N=%d%s%s x%d", (long long)L, (long long)D, N, gate ? " z" : "",
             resets ? " reset" : "", pieces);
    assert_true(allclose(what, b, a, (size_t)(L * D), F32_RTOL, F32_ATOL));
    assert_true(allclose("scan state", s1, s0, (size_t)(D * N), F32_RTOL, F32_ATOL));
    free(s.xz), free(s.dt), free(s.dtb), free(s.bc), free(s.Dk), free(s.state), free(s.A2), free(s.reset);
    free(s0), free(s1), free(a), free(b);
}

static void test_scan(void **st)
{
    (void)st;
    int64_t D = quick ? 40 : 1536;
    /* around each layout's chunk: 128, 512, 1024 tokens */
    const int64_t Ls[] = {1, 100, 128, 129, 512, 513, 1024, 1025, 2100};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++) {
        if (quick && Ls[i] > 600)
            continue;
        scan_case(Ls[i], D, 16, 1, 0, 1);
        scan_case(Ls[i], D, 16, 1, 2, 1);
    }
    scan_case(quick ? 300 : 3000, D, 16, 1, 1, 5); /* carried across calls */
    scan_case(333, 64, 16, 0, 1, 1);
    scan_case(333, 64, 64, 1, 1, 2);
    scan_case(77, 64, 1, 1, 0, 1);
}

static void test_scan_rejects_large_state(void **st)
{
    (void)st;
    sl_err err = {{0}};
    sl_scan_args a = {.L = 1, .D = 1, .N = 65};
    assert_int_equal(dut->selective_scan(dut, &a, &err), -1);
    assert_non_null(strstr(err.msg, "d_state"));
}

/* --- row reductions ------------------------------------------------------ */
static void norm_case(int64_t L, int64_t D, int mode, int64_t group)
{
    float *x = rnd_vec((size_t)(L * D), -3, 3), *res = rnd_vec((size_t)(L * D), -10, 10);
    float *w = rnd_vec((size_t)D, 0.5f, 1.5f), *out[2], *resout[2];
    sl_backend *bs[2] = {ref, dut};
    for (int k = 0; k < 2; k++) {
        sl_backend *b = bs[k];
        sl_err err = {{0}};
        float *dx = put(b, x, (size_t)(L * D) * 4), *dres = put(b, res, (size_t)(L * D) * 4);
        float *dw = put(b, w, (size_t)D * 4), *dout = put(b, NULL, (size_t)(L * D) * 4);
        sl_norm_args a = {.L = L,
                          .D = D,
                          .x = mode == 2 ? NULL : dx,
                          .residual = dres,
                          .residual_init = mode == 1,
                          .w = dw,
                          .eps = 1e-5f,
                          .out = dout,
                          .group = group};
        ok(b, b->add_rmsnorm(b, &a, &err), &err, "add_rmsnorm");
        out[k] = malloc((size_t)(L * D) * 4), resout[k] = malloc((size_t)(L * D) * 4);
        get(b, out[k], dout, (size_t)(L * D) * 4);
        get(b, resout[k], dres, (size_t)(L * D) * 4);
        b->free(b, dx), b->free(b, dres), b->free(b, dw), b->free(b, dout);
    }
    char what[64];
    snprintf(what, sizeof what, "rmsnorm D=%lld mode %d group %lld", (long long)D, mode, (long long)group);
    assert_true(allclose(what, out[1], out[0], (size_t)(L * D), F32_RTOL, F32_ATOL));
    assert_true(allclose("residual", resout[1], resout[0], (size_t)(L * D), 1e-6, 0));
    free(x), free(res), free(w);
    for (int k = 0; k < 2; k++)
        free(out[k]), free(resout[k]);
}

static void test_norm(void **st)
{
    (void)st;
    const int64_t Ds[] = {33, 768, 2560};
    for (size_t i = 0; i < 3; i++)
        for (int mode = 0; mode < 3; mode++)
            norm_case(quick ? 4 : 64, Ds[i], mode, 0);
    for (int mode = 0; mode < 3; mode++) /* Mamba-2's gated norm in ngroups = 4 groups */
        norm_case(quick ? 4 : 64, 3072, mode, 768);
}

/* --- Mamba-2 SSD and the gated MLP's x * silu(z) ------------------------- */
static void ssd_case(int64_t L, int H, int P, int G, int N, int gate, int resets, int pieces)
{
    const int64_t D = (int64_t)H * P, ldbc = 2 * (int64_t)G * N;
    float *x = rnd_vec((size_t)(L * D), -2, 2), *z = rnd_vec((size_t)(L * D), -2, 2);
    float *dt = rnd_vec((size_t)(L * H), -3, 3), *bc = rnd_vec((size_t)(L * ldbc), -1, 1);
    float *bias = rnd_vec((size_t)H, -4, -1), *A = rnd_vec((size_t)H, -1, 2), *Dk = rnd_vec((size_t)H, 0.5f, 1.5f);
    float *st0 = rnd_vec((size_t)(D * N), -1, 1), *y[2], *st[2];
    uint8_t *rs = calloc((size_t)L + 1, 1);
    for (int h = 0; h < H; h++)
        A[h] = -expf(A[h]);
    for (int64_t t = 0; t < L; t++)
        rs[t] = resets && rng_next() % 37 == 0;
    sl_backend *bs[2] = {ref, dut};
    for (int k = 0; k < 2; k++) {
        sl_backend *b = bs[k];
        sl_err err = {{0}};
        float *dx = put(b, x, (size_t)(L * D) * 4), *dz = put(b, z, (size_t)(L * D) * 4);
        float *ddt = put(b, dt, (size_t)(L * H) * 4), *dbc = put(b, bc, (size_t)(L * ldbc) * 4);
        float *dbias = put(b, bias, (size_t)H * 4), *dA = put(b, A, (size_t)H * 4), *dD = put(b, Dk, (size_t)H * 4);
        float *dst = put(b, st0, (size_t)(D * N) * 4), *dy = put(b, NULL, (size_t)(L * D) * 4);
        uint8_t *drs = put(b, rs, (size_t)L + 1);
        int np = k == 0 ? 1 : pieces; /* the reference in one call, the tested backend in pieces */
        for (int i = 0; i < np; i++) {
            int64_t t0 = L * i / np, t1 = L * (i + 1) / np;
            sl_ssd_args a = {.L = t1 - t0,
                             .H = H,
                             .P = P,
                             .G = G,
                             .N = N,
                             .x = dx + t0 * D,
                             .ldx = D,
                             .dt = ddt + t0 * H,
                             .lddt = H,
                             .dt_bias = dbias,
                             .A = dA,
                             .Dskip = dD,
                             .dt_min = 0.0f,
                             .dt_max = INFINITY,
                             .B = dbc + t0 * ldbc,
                             .C = dbc + t0 * ldbc + (int64_t)G * N,
                             .ldbc = ldbc,
                             .z = gate ? dz + t0 * D : NULL,
                             .ldz = D,
                             .state = dst,
                             .reset = resets ? drs + t0 : NULL,
                             .y = dy + t0 * D,
                             .ldy = D};
            ok(b, b->ssd_chunked(b, &a, &err), &err, "ssd_chunked");
        }
        y[k] = malloc((size_t)(L * D) * 4), st[k] = malloc((size_t)(D * N) * 4);
        get(b, y[k], dy, (size_t)(L * D) * 4);
        get(b, st[k], dst, (size_t)(D * N) * 4);
        b->free(b, dx), b->free(b, dz), b->free(b, ddt), b->free(b, dbc), b->free(b, dbias), b->free(b, dA);
        b->free(b, dD), b->free(b, dst), b->free(b, dy), b->free(b, drs);
    }
    char what[96];
    snprintf(what, sizeof what, "ssd L=%lld H=%d P=%d G=%d N=%d%s%s x%d", (long long)L, H, P, G, N, gate ? " z" : "",
             resets ? " reset" : "", pieces);
    assert_true(allclose(what, y[1], y[0], (size_t)(L * D), F32_RTOL, F32_ATOL));
    assert_true(allclose("ssd state", st[1], st[0], (size_t)(D * N), F32_RTOL, F32_ATOL));
    free(x), free(z), free(dt), free(bc), free(bias), free(A), free(Dk), free(st0), free(rs);
    for (int k = 0; k < 2; k++)
        free(y[k]), free(st[k]);
}

static void test_ssd(void **st)
{
    (void)st;
    if (!ref->ssd_chunked || !dut->ssd_chunked) {
        fail_msg("a backend has no ssd_chunked");
        return;
    }
    /* mamba2-130m's shape (24 heads of 64, d_state 128) and chunk edges (32 tokens) */
    const int64_t Ls[] = {1, 2, 31, 33, 300, 2048};
    for (size_t i = 0; i < sizeof Ls / sizeof *Ls; i++) {
        if (quick && Ls[i] > 300)
            continue;
        ssd_case(Ls[i], quick ? 4 : 24, 64, 1, quick ? 32 : 128, 1, 1, 1);
    }
    ssd_case(quick ? 200 : 1500, 8, 40, 4, 64, 0, 1, 3); /* groups, a ragged channel tile, carried */
}

static void test_mul_silu(void **st)
{
    (void)st;
    int64_t L = quick ? 5 : 300, D = 1000, ld = D + 7;
    float *x = rnd_vec((size_t)(L * ld), -8, 8), *z = rnd_vec((size_t)(L * ld), -8, 8), *out[2];
    sl_backend *bs[2] = {ref, dut};
    for (int k = 0; k < 2; k++) {
        sl_backend *b = bs[k];
        sl_err err = {{0}};
        float *dx = put(b, x, (size_t)(L * ld) * 4), *dz = put(b, z, (size_t)(L * ld) * 4);
        float *dout = put(b, NULL, (size_t)(L * D) * 4);
        sl_mul_silu_args a = {.L = L, .D = D, .x = dx, .ldx = ld, .z = dz, .ldz = ld, .out = dout, .ldout = D};
        ok(b, b->mul_silu(b, &a, &err), &err, "mul_silu");
        out[k] = malloc((size_t)(L * D) * 4);
        get(b, out[k], dout, (size_t)(L * D) * 4);
        b->free(b, dx), b->free(b, dz), b->free(b, dout);
    }
    assert_true(allclose("mul_silu", out[1], out[0], (size_t)(L * D), F32_RTOL, F32_ATOL));
    free(x), free(z), free(out[0]), free(out[1]);
}

static void test_logsoftmax(void **st)
{
    (void)st;
    int64_t T = quick ? 4 : 64, V = quick ? 5000 : 50277, ld = quick ? 5000 : 50280;
    float *lg = rnd_vec((size_t)(T * ld), -20, 20), lp[2][64];
    for (int64_t t = 0; t < T; t++)
        lg[t * ld + 1] += t % 3 == 0 ? 60.0f : 0.0f; /* one dominant logit */
    int32_t tg[64];
    for (int64_t t = 0; t < T; t++)
        tg[t] = t % 5 == 4 ? -1 : (int32_t)(rng_next() % (uint64_t)V);
    tg[0] = 1, tg[3] = (int32_t)V - 1;
    sl_backend *bs[2] = {ref, dut};
    for (int k = 0; k < 2; k++) {
        sl_backend *b = bs[k];
        sl_err err = {{0}};
        float *dl = put(b, lg, (size_t)(T * ld) * 4), *dp = put(b, NULL, (size_t)T * 4);
        int32_t *dt = put(b, tg, (size_t)T * 4);
        sl_logsoftmax_args a = {.T = T, .V = V, .logits = dl, .ld = ld, .target = dt, .logp = dp};
        ok(b, b->logsoftmax_gather(b, &a, &err), &err, "logsoftmax_gather");
        get(b, lp[k], dp, (size_t)T * 4);
        b->free(b, dl), b->free(b, dp), b->free(b, dt);
    }
    assert_true(allclose("logsoftmax_gather", lp[1], lp[0], (size_t)T, F32_RTOL, F32_ATOL));
    for (int64_t t = 0; t < T; t++)
        if (tg[t] < 0)
            assert_true(lp[1][t] == 0.0f);
    free(lg);
}

/* Transfers through page-locked memory (CUDA: asynchronous until sync()),
 * queued behind a kernel that reads the uploaded data: the round trip
 * upload -> norm -> download into pinned memory -> sync must give the same
 * numbers as the CPU backend. Backends other than CUDA use ordinary memory. */
static void test_pinned_transfers(void **st)
{
    (void)st;
    int cuda = !strcmp(dut->name, "cuda");
    int64_t L = 16, D = 1000;
    size_t bytes = (size_t)(L * D) * 4;
    sl_err err = {{0}};
    float *hx = cuda ? sl_cuda_host_alloc(dut, bytes, &err) : malloc(bytes);
    float *hout = cuda ? sl_cuda_host_alloc(dut, bytes, &err) : malloc(bytes);
    if (!hx || !hout)
        fail_msg("host_alloc: %s", err.msg);
    float *x = rnd_vec((size_t)(L * D), -3, 3), *w = rnd_vec((size_t)D, 0.5f, 1.5f), want[16 * 1000];
    memcpy(hx, x, bytes);
    float *dres = put(dut, NULL, bytes), *dout = put(dut, NULL, bytes), *dw = put(dut, w, (size_t)D * 4);
    ok(dut, dut->upload(dut, dres, hx, bytes, &err), &err, "upload");
    sl_norm_args a = {.L = L, .D = D, .x = NULL, .residual = dres, .w = dw, .eps = 1e-5f, .out = dout};
    ok(dut, dut->add_rmsnorm(dut, &a, &err), &err, "add_rmsnorm");
    ok(dut, dut->download(dut, hout, dout, bytes, &err), &err, "download");
    ok(dut, dut->sync(dut, &err), &err, "sync");
    float *rres = put(ref, x, bytes), *rout = put(ref, NULL, bytes), *rw = put(ref, w, (size_t)D * 4);
    sl_norm_args r = {.L = L, .D = D, .x = NULL, .residual = rres, .w = rw, .eps = 1e-5f, .out = rout};
    ok(ref, ref->add_rmsnorm(ref, &r, &err), &err, "add_rmsnorm");
    get(ref, want, rout, bytes);
    assert_true(allclose("pinned round trip", hout, want, (size_t)(L * D), F32_RTOL, F32_ATOL));
    dut->free(dut, dres), dut->free(dut, dout), dut->free(dut, dw);
    ref->free(ref, rres), ref->free(ref, rout), ref->free(ref, rw);
    if (cuda) {
        sl_cuda_host_free(dut, hx);
        sl_cuda_host_free(dut, hout);
    } else {
        free(hx), free(hout);
    }
    free(x), free(w);
}

static int run_kernel_checks(sl_backend *reference, sl_backend *tested, int quick_shapes)
{
    ref = reference, dut = tested, quick = quick_shapes;
    printf("comparing %s (%s) with the CPU backend%s\n", dut->name, sl_cuda_describe(dut),
           quick ? " (small shapes)" : "");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_embed),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_scan_rejects_large_state),
        cmocka_unit_test(test_norm),
        cmocka_unit_test(test_ssd),
        cmocka_unit_test(test_mul_silu),
        cmocka_unit_test(test_logsoftmax),
        cmocka_unit_test(test_pinned_transfers),
    };
    return cmocka_run_group_tests_name(dut->name, tests, NULL, NULL);
}

#endif
