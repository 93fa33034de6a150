/* How the backend's linear() maps PyTorch's row-major Linear onto one
 * column-major BLAS GEMM (cublasGemmEx). Plain C, so the CPU test suite can
 * evaluate the very same call with OpenBLAS's column-major cblas_sgemm
 * (tests/unit/test_kernels_cuda_gemm_plan.c): both follow the reference BLAS
 * conventions, so a wrong transpose or leading dimension here shows there.
 *
 * y[L][N] (row stride ldy) = x[L][K] (row stride ldx) . W[N][K]^T
 * Read column-major, row-major y is y^T: an N x L matrix with leading
 * dimension ldy; W is a K x N column-major matrix (ld K) and x^T a K x L one
 * (ld ldx). So y^T = op_T(W) . x^T: C = op(A) op(B) with A = W transposed,
 * B = x as is, m = N, n = L, k = K. */
#ifndef SLUICE_KERNELS_CUDA_GEMM_PLAN_H
#define SLUICE_KERNELS_CUDA_GEMM_PLAN_H

#include <stdint.h>

typedef struct sl_gemm_plan {
    int trans_a, trans_b; /* 1: use the transpose */
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
} sl_gemm_plan;

static inline sl_gemm_plan sl_gemm_plan_linear(int64_t L, int64_t N, int64_t K, int64_t ldx, int64_t ldy)
{
    sl_gemm_plan p;
    p.trans_a = 1, p.trans_b = 0;
    p.m = N, p.n = L, p.k = K;
    p.lda = K, p.ldb = ldx, p.ldc = ldy;
    return p;
}

#endif
