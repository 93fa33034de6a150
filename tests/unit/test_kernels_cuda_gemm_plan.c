/* The CUDA backend's GEMM mapping (kernels/cuda/gemm_plan.h: row-major
 * PyTorch Linear -> one column-major cublasGemmEx call), evaluated with the
 * same arguments by OpenBLAS's column-major cblas_sgemm — the two follow the
 * reference BLAS conventions — against y = x W^T computed directly in
 * double. Covers padded row strides for x and y, a single row, and the
 * contiguous ld = K copy the bf16 path feeds the GEMM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/cuda/gemm_plan.h"

static uint64_t rng = 9;
static float rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) / 16777216.0) * 2.0f - 1.0f;
}

static void gemm_case(int64_t L, int64_t N, int64_t K, int64_t ldx, int64_t ldy)
{
    float *x = malloc((size_t)(L * ldx) * sizeof *x), *w = malloc((size_t)(N * K) * sizeof *w);
    float *y = malloc((size_t)(L * ldy) * sizeof *y);
    for (int64_t i = 0; i < L * ldx; i++)
        x[i] = rnd();
    for (int64_t i = 0; i < N * K; i++)
        w[i] = rnd();
    for (int64_t i = 0; i < L * ldy; i++)
        y[i] = 12345.0f; /* columns past N must stay */
    sl_gemm_plan p = sl_gemm_plan_linear(L, N, K, ldx, ldy);
    cblas_sgemm(CblasColMajor, p.trans_a ? CblasTrans : CblasNoTrans, p.trans_b ? CblasTrans : CblasNoTrans, (int)p.m,
                (int)p.n, (int)p.k, 1.0f, w, (int)p.lda, x, (int)p.ldb, 0.0f, y, (int)p.ldc);
    for (int64_t t = 0; t < L; t++) {
        for (int64_t n = 0; n < N; n++) {
            double want = 0;
            for (int64_t k = 0; k < K; k++)
                want += (double)x[t * ldx + k] * w[n * K + k];
            if (fabs(y[t * ldy + n] - want) > 1e-4 * (1 + fabs(want)))
                fail_msg("L=%lld N=%lld K=%lld: y[%lld][%lld] = %g, want %g", (long long)L, (long long)N, (long long)K,
                         (long long)t, (long long)n, y[t * ldy + n], want);
        }
        for (int64_t n = N; n < ldy; n++)
            assert_true(y[t * ldy + n] == 12345.0f);
    }
    free(x), free(w), free(y);
}

static void test_linear_mapping(void **state)
{
    (void)state;
    gemm_case(1, 1, 1, 1, 1);
    gemm_case(1, 17, 5, 5, 17);
    gemm_case(7, 3, 9, 9, 3);
    gemm_case(37, 64, 32, 40, 70);   /* padded x and y rows */
    gemm_case(50, 80, 96, 200, 80);  /* x_proj-like: x is a slice of a wider row */
    gemm_case(33, 96, 6, 134, 101);  /* dt_proj-like: K = dt_rank, ldx = dt_rank + 2N */
    gemm_case(20, 130, 48, 48, 130); /* the bf16 path: contiguous copy, ld = K */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_linear_mapping)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
