/* The row kernels (device code only): RMSNorm, log-softmax + gather,
 * embedding, bias fill, bf16 conversion. Included by rows.cu, which launches
 * them, and by the host simulator test (tests/cuda/test_cuda_sim.cc), which
 * runs this same source on the CPU. */
#ifndef SLUICE_KERNELS_CUDA_ROWS_KERNEL_CUH
#define SLUICE_KERNELS_CUDA_ROWS_KERNEL_CUH

#include <cuda_bf16.h>

extern "C" {
#include "kernels/kernels.h"
}
#include "kernels/cuda/layout.h"

namespace sl_cuda_k
{

constexpr int kRowT = SL_ROW_THREADS, kRowW = SL_ROW_THREADS / SL_WARP;

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = SL_WARP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ sl_lse warp_lse(sl_lse v)
{
#pragma unroll
    for (int off = SL_WARP / 2; off > 0; off >>= 1) {
        sl_lse o;
        o.m = __shfl_xor_sync(0xffffffffu, v.m, off);
        o.s = __shfl_xor_sync(0xffffffffu, v.s, off);
        v = sl_lse_merge(v, o);
    }
    return v;
}

__global__ void __launch_bounds__(kRowT) norm_kernel(sl_norm_args a)
{
    __shared__ float part[kRowW];
    /* one block per (row, group of columns); no groups: one per row */
    const int64_t G = a.group > 0 ? a.group : a.D, ng = a.D / G;
    const int64_t t = blockIdx.x / ng, c0 = (blockIdx.x % ng) * G;
    const int tid = threadIdx.x;
    float *res = a.residual + t * a.D + c0;
    const float *x = a.x ? a.x + t * a.D + c0 : nullptr;
    const float *wt = a.w + c0;
    float *out = a.out + t * a.D + c0;
    float ss = 0.0f;
    for (int64_t c = tid; c < G; c += kRowT) {
        float r = x ? (a.residual_init ? x[c] : res[c] + x[c]) : res[c];
        res[c] = r;
        ss += r * r;
    }
    ss = warp_sum(ss);
    if (tid % SL_WARP == 0)
        part[tid / SL_WARP] = ss;
    __syncthreads();
    float tot = 0.0f;
    for (int w = 0; w < kRowW; w++)
        tot += part[w];
    const float scale = sl_rms_scale(tot, (int)G, a.eps);
    for (int64_t c = tid; c < G; c += kRowT)
        out[c] = res[c] * scale * wt[c];
}

__global__ void __launch_bounds__(kRowT) logsoftmax_kernel(sl_logsoftmax_args a)
{
    __shared__ sl_lse part[kRowW];
    const int64_t t = blockIdx.x;
    const int tid = threadIdx.x;
    const float *row = a.logits + t * a.ld;
    sl_lse x = sl_lse_empty();
    for (int64_t c = tid; c < a.V; c += kRowT)
        x = sl_lse_add(x, row[c]);
    x = warp_lse(x);
    if (tid % SL_WARP == 0)
        part[tid / SL_WARP] = x;
    __syncthreads();
    if (tid == 0) {
        sl_lse tot = sl_lse_empty();
        for (int w = 0; w < kRowW; w++)
            tot = sl_lse_merge(tot, part[w]);
        int32_t tg = a.target[t];
        /* Ids are validated on the host; an id past the vocab shows as NaN. */
        a.logp[t] = tg < 0 ? 0.0f : tg >= a.V ? __int_as_float(0x7fc00000) : row[tg] - (tot.m + logf(tot.s));
    }
}

/* The weight descriptor is host memory: its fields come as arguments. */
__global__ void __launch_bounds__(kRowT)
    embed_kernel(const int32_t *ids, const void *emb, int bf16, int64_t V, int64_t D, float *out, int64_t ldout)
{
    const int64_t t = blockIdx.x;
    const int32_t id = ids[t];
    for (int64_t c = threadIdx.x; c < D; c += kRowT) {
        float v = __int_as_float(0x7fc00000); /* NaN for an id outside the table */
        if (id >= 0 && id < V)
            v = bf16 ? __bfloat162float(((const __nv_bfloat16 *)emb)[(int64_t)id * D + c])
                     : ((const float *)emb)[(int64_t)id * D + c];
        out[t * ldout + c] = v;
    }
}

__global__ void bias_kernel(float *y, int64_t ldy, const float *bias, int64_t L, int64_t N)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < L * N)
        y[(i / N) * ldy + i % N] = bias[i % N];
}

__global__ void bf16_kernel(__nv_bfloat16 *dst, const float *src, int64_t lds, int64_t L, int64_t K)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < L * K)
        dst[i] = __float2bfloat16_rn(src[(i / K) * lds + i % K]);
}

} // namespace sl_cuda_k

#endif
