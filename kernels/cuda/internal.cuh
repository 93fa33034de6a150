/* Shared by the CUDA backend's translation units: the backend context,
 * error helpers and the kernel launchers each .cu file provides. */
#ifndef SLUICE_KERNELS_CUDA_INTERNAL_CUH
#define SLUICE_KERNELS_CUDA_INTERNAL_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "kernels/kernels.h"
}
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/layout.h"

struct sl_cuda_ctx {
    int device;
    cudaStream_t stream; /* every op is queued here, in call order */
    cublasHandle_t blas;
    int tf32;  /* TF32 tensor cores for f32-weight GEMMs */
    int pools; /* stream-ordered allocator available */
    char desc[512];
};

/* The context of a CUDA backend. Also makes its device current for the
 * calling host thread: the model may call ops from any thread, and streams
 * and memory belong to one device. */
static inline sl_cuda_ctx *sl_cuda_ctx_of(sl_backend *b)
{
    sl_cuda_ctx *c = (sl_cuda_ctx *)b->ctx;
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != c->device)
        cudaSetDevice(c->device);
    return c;
}

/* "cuda: <what>: <CUDA's message>"; returns -1. */
int sl_cuda_fail(sl_err *err, const char *what, cudaError_t e);
/* Reports a failed kernel launch (bad configuration, missing SASS/PTX for
 * this device) right away; errors during execution surface at sync(). */
int sl_cuda_check_launch(sl_err *err, const char *what);
/* Stream-ordered scratch memory (freed after the work queued so far). */
void *sl_cuda_scratch(sl_cuda_ctx *c, size_t bytes, sl_err *err);
void sl_cuda_scratch_free(sl_cuda_ctx *c, void *p);

/* Grid size for n independent elements with `threads` per block. */
static inline unsigned sl_cuda_blocks(int64_t n, int threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

/* Launchers, one per op (scan.cu, conv.cu, rows.cu, ssd.cu). */
int sl_cuda_selective_scan(sl_backend *b, const sl_scan_args *a, sl_err *err);
int sl_cuda_conv1d_silu(sl_backend *b, const sl_conv_args *a, sl_err *err);
int sl_cuda_add_rmsnorm(sl_backend *b, const sl_norm_args *a, sl_err *err);
int sl_cuda_logsoftmax_gather(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err);
int sl_cuda_embed(sl_backend *b, const sl_embed_args *a, sl_err *err);
int sl_cuda_ssd_chunked(sl_backend *b, const sl_ssd_args *a, sl_err *err);
int sl_cuda_mul_silu(sl_backend *b, const sl_mul_silu_args *a, sl_err *err);
/* y[t][n] = bias[n] for the GEMM to accumulate onto (linear with bias). */
int sl_cuda_fill_bias(sl_cuda_ctx *c, float *y, int64_t ldy, const float *bias, int64_t L, int64_t N, sl_err *err);
/* dst[t][k] = bf16(src[t*lds + k]) for t < L, k < K (GEMM input for bf16 weights). */
int sl_cuda_to_bf16(sl_cuda_ctx *c, __nv_bfloat16 *dst, const float *src, int64_t lds, int64_t L, int64_t K,
                    sl_err *err);

#endif
