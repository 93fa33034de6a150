/* Vectorizable fp32 transcendental functions for the CPU kernels.
 *
 * libm's expf/log1pf are scalar calls: a loop that calls them cannot be
 * vectorized (glibc's vector variants need -ffast-math). The selective scan
 * evaluates d_inner x d_state exponentials per token and layer, so these
 * branch-free polynomial versions, which the compiler vectorizes inside
 * `#pragma omp simd` loops, are what makes the scan cheap. Accuracy is a few
 * ulp over the ranges the Mamba block produces (checked in
 * tests/unit/test_kernels_cpu.c against libm).
 *
 * Methods: exp2 = 2^round(x) * p(x - round(x)) with the degree-6 minimax
 * polynomial of Cephes' exp2f on [-0.5, 0.5]; exp = exp2 after a Cody-Waite
 * reduction by ln 2 (so large arguments keep full precision); log1p(e) for
 * e in [0, 1] = 2 atanh(e / (2 + e)) by its odd series (|s| <= 1/3). */
#ifndef SLUICE_KERNELS_CPU_MATH_H
#define SLUICE_KERNELS_CPU_MATH_H

#include <stdint.h>
#include <string.h>

static inline float sl_cpu_bits_to_float(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* 2^n for integer-valued n in [-126, 127]. */
static inline float sl_cpu_pow2i(float n)
{
    return sl_cpu_bits_to_float(((int32_t)n + 127) << 23);
}

/* Round to nearest for |x| < 2^22 without a libm call (vectorizes). */
static inline float sl_cpu_round(float x)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23 */
    return (x + magic) - magic;
}

/* 2^x for x in [-126, 126] (clamped outside: underflows to 2^-126, not 0). */
static inline float sl_cpu_exp2(float x)
{
    x = x < -126.0f ? -126.0f : x;
    x = x > 126.0f ? 126.0f : x;
    float n = sl_cpu_round(x);
    float f = x - n; /* [-0.5, 0.5] */
    float p = 1.535336188319500e-4f;
    p = p * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    return p * sl_cpu_pow2i(n);
}

/* e^x, clamped to the normal float range. */
static inline float sl_cpu_exp(float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 87.0f ? 87.0f : x;
    float n = sl_cpu_round(x * 1.44269504088896341f);
    /* r = x - n ln2, with ln2 split so n*ln2_hi is exact */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f; /* Cephes expf polynomial on [-ln2/2, ln2/2] */
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * sl_cpu_pow2i(n);
}

/* log(1 + e) for e in [0, 1]. */
static inline float sl_cpu_log1p01(float e)
{
    float s = e / (2.0f + e);
    float s2 = s * s;
    float p = 1.0f / 17.0f;
    p = p * s2 + 1.0f / 15.0f;
    p = p * s2 + 1.0f / 13.0f;
    p = p * s2 + 1.0f / 11.0f;
    p = p * s2 + 1.0f / 9.0f;
    p = p * s2 + 1.0f / 7.0f;
    p = p * s2 + 1.0f / 5.0f;
    p = p * s2 + 1.0f / 3.0f;
    p = p * s2 + 1.0f;
    return 2.0f * s * p;
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): the same function
 * as PyTorch's F.softplus (whose x > 20 shortcut differs by < 1 ulp). */
static inline float sl_cpu_softplus(float x)
{
    float ax = x < 0.0f ? -x : x;
    float m = x > 0.0f ? x : 0.0f;
    return m + sl_cpu_log1p01(sl_cpu_exp(-ax));
}

static inline float sl_cpu_silu(float x)
{
    return x / (1.0f + sl_cpu_exp(-x));
}

#endif
