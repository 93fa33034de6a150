/* Per-element math of the Mamba-1 block, shared by the CPU and CUDA
 * backends so both compute the same thing (compiled as plain C here and as
 * __host__ __device__ functions under nvcc).
 *
 * Sources (see ../shared/reference/mamba-eval-filtering.md):
 *   softplus as in PyTorch F.softplus (threshold 20: x > 20 returns x);
 *   discretization of the selective scan: dA = exp(delta * A), dBu = delta * B * u;
 *   the recurrence h_t = dA_t * h_{t-1} + dBu_t is an associative scan with
 *   combine (a0,b0) o (a1,b1) = (a1*a0, a1*b0 + b1) (first element applied first). */
#ifndef SLUICE_KERNELS_SSM_MATH_H
#define SLUICE_KERNELS_SSM_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define SL_HD __host__ __device__ __forceinline__
#else
#define SL_HD static inline
#endif

#define SL_LOG2E 1.4426950408889634f

SL_HD float sl_softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

SL_HD float sl_silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* exp(delta * A) computed as exp2(delta * (A * log2 e)); a_log2e = A * log2(e). */
SL_HD float sl_discretize_a(float delta, float a_log2e)
{
    return exp2f(delta * a_log2e);
}

typedef struct sl_scan_pair {
    float a; /* multiplier */
    float b; /* addend */
} sl_scan_pair;

/* (a0,b0) o (a1,b1): apply element 0, then element 1. */
SL_HD sl_scan_pair sl_scan_combine(sl_scan_pair p0, sl_scan_pair p1)
{
    sl_scan_pair r;
    r.a = p1.a * p0.a;
    r.b = p1.a * p0.b + p1.b;
    return r;
}

/* RMSNorm scale for a row with sum of squares `ss` over n elements. */
SL_HD float sl_rms_scale(float ss, int n, float eps)
{
    return 1.0f / sqrtf(ss / (float)n + eps);
}

#endif
