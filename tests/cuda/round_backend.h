/* What the GPU's projections round, done on the CPU: a wrapper over a
 * backend's weights and linear() that rounds the GEMM inputs as
 * kernels/cuda/backend.cu's cublasGemmEx call sees them, then multiplies in
 * fp32 as before:
 *   - bf16 checkpoint weights stay bf16 on the GPU, and the activations are
 *     rounded to bf16 (round to nearest even, rows_kernel.cuh) so that both
 *     GEMM inputs are bf16;
 *   - with TF32 on (the CUDA backend's default for f32 and f16 weights),
 *     the tensor cores see both inputs with 10 mantissa bits.
 * The first GPU run (docs/cuda.md, "First run on hardware") showed that the
 * whole-model tests had never seen this: the host emulation kept every
 * projection in fp32, so it passed tolerances that the GPU exceeded 1.04x
 * (TF32) to 6.7x (bf16). The emulated backend (emu_backend.h) now rounds,
 * so `make test` sees the same deviation, and tests/cuda/model_checks.h
 * bounds the GPU by what this rounding alone costs on the CPU.
 * Test support, header-only. */
#ifndef SLUICE_TESTS_CUDA_ROUND_BACKEND_H
#define SLUICE_TESTS_CUDA_ROUND_BACKEND_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* How TF32 inputs are rounded: to nearest with ties away from zero (PTX
 * cvt.rna.tf32.f32, CUTLASS's default), or by dropping the 13 low mantissa
 * bits (what a tensor core does with an f32 register it is handed as is).
 * cuBLAS does not document which its FAST_TF32 kernels do;
 * scripts/device-check measures it on the GPU (tf32_probe). */
enum { RB_TF32_NEAREST = 0, RB_TF32_TRUNCATE = 1 };

typedef struct rb_state {
    sl_backend *b;
    int (*inner_create)(sl_backend *, sl_weight *, const float *, int64_t, int64_t, sl_dtype, sl_err *);
    int (*inner_linear)(sl_backend *, const sl_linear_args *, sl_err *);
    int tf32, tf32_mode;
} rb_state;

static rb_state rb_states[4];

static rb_state *rb_of(sl_backend *b)
{
    for (size_t i = 0; i < sizeof rb_states / sizeof *rb_states; i++)
        if (rb_states[i].b == b)
            return &rb_states[i];
    return NULL;
}

static float rb_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return f; /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float rb_tf32(float f, int mode)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return f; /* Inf, NaN */
    if (mode == RB_TF32_NEAREST)
        u += 0x1000u; /* half of the 13 dropped bits: ties away from zero */
    u &= 0xffffe000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A bf16 checkpoint's weight keeps its values (exact in bf16) in fp32 and
 * is marked SL_DT_BF16, so linear() knows to round the activations. */
static int rb_weight_create(sl_backend *b, sl_weight *w, const float *host, int64_t rows, int64_t cols, sl_dtype src,
                            sl_err *err)
{
    rb_state *s = rb_of(b);
    if (s->inner_create(b, w, host, rows, cols, src, err) != 0)
        return -1;
    if (src == SL_DT_BF16)
        w->dtype = SL_DT_BF16;
    return 0;
}

static int rb_linear(sl_backend *b, const sl_linear_args *a, sl_err *err)
{
    rb_state *s = rb_of(b);
    const sl_weight *w = a->w;
    const int bf16 = w->dtype == SL_DT_BF16, tf32 = !bf16 && s->tf32;
    if (!bf16 && !tf32)
        return s->inner_linear(b, a, err);
    const int64_t L = a->L, N = w->rows, K = w->cols;
    float *x = malloc((size_t)(L * K + 1) * sizeof *x), *wr = NULL;
    for (int64_t t = 0; t < L; t++)
        for (int64_t k = 0; k < K; k++) {
            float v = a->x[t * a->ldx + k];
            x[t * K + k] = bf16 ? rb_bf16(v) : rb_tf32(v, s->tf32_mode);
        }
    sl_weight w2 = *w;
    w2.dtype = SL_DT_F32;
    if (tf32) {
        const float *src = w->data;
        wr = malloc((size_t)(N * K + 1) * sizeof *wr);
        for (int64_t i = 0; i < N * K; i++)
            wr[i] = rb_tf32(src[i], s->tf32_mode);
        w2.data = wr;
    }
    sl_linear_args a2 = *a;
    a2.x = x, a2.ldx = K, a2.w = &w2;
    int rc = s->inner_linear(b, &a2, err);
    free(x), free(wr);
    return rc;
}

/* The TF32 rounding to emulate: SLUICE_TF32_ROUNDING=truncate or nearest
 * (the default; scripts/device-check measures which the GPU does). */
static inline int rb_mode_from_env(void)
{
    const char *m = getenv("SLUICE_TF32_ROUNDING");
    return m && !strcmp(m, "truncate") ? RB_TF32_TRUNCATE : RB_TF32_NEAREST;
}

/* Wraps b (a CPU-memory backend) in place; TF32 starts on, as on the GPU. */
static inline sl_backend *rb_wrap(sl_backend *b, int tf32_mode)
{
    if (!b)
        return NULL;
    for (size_t i = 0; i < sizeof rb_states / sizeof *rb_states; i++)
        if (!rb_states[i].b) {
            rb_states[i] = (rb_state){
                .b = b, .inner_create = b->weight_create, .inner_linear = b->linear, .tf32 = 1, .tf32_mode = tf32_mode};
            b->weight_create = rb_weight_create;
            b->linear = rb_linear;
            return b;
        }
    abort(); /* more wrapped backends than rb_states holds */
}

/* As sl_cuda_set_tf32: returns the previous setting, or -1 when b is not a
 * wrapped backend. */
static inline int rb_set_tf32(sl_backend *b, int on)
{
    rb_state *s = rb_of(b);
    if (!s)
        return -1;
    int old = s->tf32;
    s->tf32 = on != 0;
    return old;
}

static inline void rb_forget(sl_backend *b)
{
    rb_state *s = rb_of(b);
    if (s)
        memset(s, 0, sizeof *s);
}

#endif
