/* CPU kernels of the Mamba-1 mixer: causal depthwise conv1d + SiLU and the
 * selective scan (semantics in kernels/kernels.h, math in kernels/ssm_math.h).
 *
 * Both are vectorized across channels d, which are contiguous in the
 * token-major activations: the conv is not recurrent in its outputs, so it
 * runs rows (tokens) in parallel; the scan is recurrent over time, so it runs
 * blocks of SCAN_LANES channels in parallel, each block keeping its
 * [d_state][lanes] hidden state in registers/L1 while it walks the tokens
 * (the layout of llama.cpp's Mamba-1 CUDA kernel: one lane per channel). */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_kernels.h"
#include "kernels/cpu_math.h"

#define SCAN_LANES 16
#define SCAN_MAX_N 256

/* seg[t] = the last reset position <= t, or -1 - (K) (i.e. "none": history
 * comes from the carried state) when there is none. */
static int64_t *reset_segments(const uint8_t *reset, int64_t L, int64_t none)
{
    int64_t *seg = sl_xmalloc((size_t)(L ? L : 1) * sizeof *seg);
    int64_t s = none;
    for (int64_t t = 0; t < L; t++) {
        if (reset && reset[t])
            s = t;
        seg[t] = s;
    }
    return seg;
}

SL_CPU_CLONES
static void conv_row(const sl_conv_args *a, int64_t t, int64_t seg)
{
    const int K = a->K;
    const int64_t D = a->D;
    float *out = a->out + t * a->ldout;
#pragma omp simd
    for (int64_t d = 0; d < D; d++)
        out[d] = a->bias ? a->bias[d] : 0.0f;
    for (int k = 0; k < K; k++) {
        int64_t pos = t - (K - 1) + k;
        if (pos < seg)
            continue; /* before a document start: zero */
        if (pos >= 0) {
            const float *x = a->x + pos * a->ldx;
#pragma omp simd
            for (int64_t d = 0; d < D; d++)
                out[d] += a->w[d * K + k] * x[d];
        } else {
            const float *st = a->state + (K - 1) + pos; /* state[d][K-1+pos] */
#pragma omp simd
            for (int64_t d = 0; d < D; d++)
                out[d] += a->w[d * K + k] * st[d * (K - 1)];
        }
    }
#pragma omp simd
    for (int64_t d = 0; d < D; d++)
        out[d] = sl_cpu_silu(out[d]);
}

int sl_cpu_conv1d_silu(sl_backend *b, const sl_conv_args *a, sl_err *err)
{
    (void)b;
    const int K = a->K;
    const int64_t L = a->L, D = a->D;
    if (K < 1)
        return sl_errf(err, "cpu: conv1d: kernel width %d", K);
    if (L <= 0)
        return 0;
    int64_t none = -(int64_t)K - 1;
    int64_t *seg = reset_segments(a->reset, L, none);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < L; t++)
        conv_row(a, t, seg[t]);
    /* New state: the last K-1 inputs as the next call sees them. */
    if (K > 1) {
        int64_t s = seg[L - 1];
        float *old = sl_xmalloc((size_t)D * (size_t)(K - 1) * sizeof(float));
        memcpy(old, a->state, (size_t)D * (size_t)(K - 1) * sizeof(float));
        for (int i = 0; i < K - 1; i++) {
            int64_t pos = L - (K - 1) + i;
            for (int64_t d = 0; d < D; d++) {
                float v = pos < s ? 0.0f : pos < 0 ? old[d * (K - 1) + (K - 1) + pos] : a->x[pos * a->ldx + d];
                a->state[d * (K - 1) + i] = v;
            }
        }
        free(old);
    }
    free(seg);
    return 0;
}

SL_CPU_CLONES
static void scan_block(const sl_scan_args *a, int64_t d0, int w)
{
    const int N = a->N;
    float h[SCAN_MAX_N][SCAN_LANES], At[SCAN_MAX_N][SCAN_LANES];
    float delta[SCAN_LANES], du[SCAN_LANES], uu[SCAN_LANES], yy[SCAN_LANES], bias[SCAN_LANES], dsk[SCAN_LANES];
    memset(h, 0, sizeof(float) * (size_t)N * SCAN_LANES);
    memset(At, 0, sizeof(float) * (size_t)N * SCAN_LANES);
    for (int n = 0; n < N; n++)
        for (int l = 0; l < w; l++) {
            h[n][l] = a->state[(d0 + l) * N + n];
            At[n][l] = a->A_log2e[(d0 + l) * N + n];
        }
    for (int l = 0; l < SCAN_LANES; l++) {
        bias[l] = l < w ? a->dt_bias[d0 + l] : 0.0f;
        dsk[l] = l < w ? a->Dskip[d0 + l] : 0.0f;
    }
    for (int64_t t = 0; t < a->L; t++) {
        if (a->reset && a->reset[t])
            memset(h, 0, sizeof(float) * (size_t)N * SCAN_LANES);
        const float *dt = a->dt + t * a->lddt + d0;
        const float *u = a->u + t * a->ldu + d0;
        const float *Bt = a->B + t * a->ldbc;
        const float *Ct = a->C + t * a->ldbc;
        for (int l = 0; l < SCAN_LANES; l++) {
            uu[l] = l < w ? u[l] : 0.0f;
            delta[l] = l < w ? dt[l] : 0.0f;
        }
#pragma omp simd
        for (int l = 0; l < SCAN_LANES; l++) {
            delta[l] = sl_cpu_softplus(delta[l] + bias[l]);
            du[l] = delta[l] * uu[l];
            yy[l] = 0.0f;
        }
        for (int n = 0; n < N; n++) {
            const float bn = Bt[n], cn = Ct[n];
#pragma omp simd
            for (int l = 0; l < SCAN_LANES; l++) {
                float s = sl_cpu_exp2(delta[l] * At[n][l]) * h[n][l] + du[l] * bn;
                h[n][l] = s;
                yy[l] += s * cn;
            }
        }
#pragma omp simd
        for (int l = 0; l < SCAN_LANES; l++)
            yy[l] += dsk[l] * uu[l];
        float *y = a->y + t * a->ldy + d0;
        if (a->z) {
            const float *z = a->z + t * a->ldz + d0;
            float zz[SCAN_LANES];
            for (int l = 0; l < SCAN_LANES; l++)
                zz[l] = l < w ? z[l] : 0.0f;
#pragma omp simd
            for (int l = 0; l < SCAN_LANES; l++)
                yy[l] *= sl_cpu_silu(zz[l]);
        }
        for (int l = 0; l < w; l++)
            y[l] = yy[l];
    }
    for (int n = 0; n < N; n++)
        for (int l = 0; l < w; l++)
            a->state[(d0 + l) * N + n] = h[n][l];
}

int sl_cpu_selective_scan(sl_backend *b, const sl_scan_args *a, sl_err *err)
{
    (void)b;
    if (a->N < 1 || a->N > SCAN_MAX_N)
        return sl_errf(err, "cpu: selective scan: d_state %d is outside [1, %d]", a->N, SCAN_MAX_N);
    if (a->L <= 0)
        return 0;
    int64_t nblocks = (a->D + SCAN_LANES - 1) / SCAN_LANES;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nblocks; i++) {
        int64_t d0 = i * SCAN_LANES;
        int w = (int)(a->D - d0 < SCAN_LANES ? a->D - d0 : SCAN_LANES);
        scan_block(a, d0, w);
    }
    return 0;
}
