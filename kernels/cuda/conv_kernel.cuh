/* The causal conv1d kernels (device code only). Included by conv.cu, which
 * launches them, and by the host simulator test (tests/cuda/test_cuda_sim.cc),
 * which runs this same source on the CPU. */
#ifndef SLUICE_KERNELS_CUDA_CONV_KERNEL_CUH
#define SLUICE_KERNELS_CUDA_CONV_KERNEL_CUH

#include "kernels/cuda/layout.h"

namespace sl_cuda_k
{

constexpr int kMaxK = 8;

struct conv_params {
    int64_t L, D;
    int K;
    const float *x;
    int64_t ldx;
    const float *w, *bias;
    float *state;
    const uint8_t *reset;
    float *out;
    int64_t ldout;
};

/* Input at time src (may be negative: history), or 0 before last_reset. */
__device__ __forceinline__ float tap(const conv_params &p, int64_t src, int64_t last_reset, int64_t d)
{
    if (src < last_reset)
        return 0.0f;
    return src >= 0 ? p.x[src * p.ldx + d] : p.state[d * (p.K - 1) + (p.K - 1) + src];
}

/* Latest reset r with r <= t and r > t-(K-1), or INT64_MIN. */
__device__ __forceinline__ int64_t last_reset_before(const conv_params &p, int64_t t)
{
    if (!p.reset)
        return INT64_MIN;
    for (int64_t r = t; r >= 0 && r > t - (p.K - 1); r--)
        if (p.reset[r])
            return r;
    return INT64_MIN;
}

__global__ void conv_out_kernel(conv_params p)
{
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.L * p.D)
        return;
    int64_t t = idx / p.D, d = idx % p.D, lr = last_reset_before(p, t);
    float taps[kMaxK];
    for (int k = 0; k < p.K; k++)
        taps[k] = tap(p, t - (p.K - 1) + k, lr, d);
    p.out[t * p.ldout + d] = sl_conv_output(taps, p.w + d * p.K, p.bias ? p.bias[d] : 0.0f, p.K);
}

__global__ void conv_state_kernel(conv_params p)
{
    int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= p.D)
        return;
    int64_t lr = last_reset_before(p, p.L - 1);
    float hist[kMaxK];
    for (int j = 0; j < p.K - 1; j++)
        hist[j] = tap(p, p.L - (p.K - 1) + j, lr, d);
    for (int j = 0; j < p.K - 1; j++)
        p.state[d * (p.K - 1) + j] = hist[j];
}

} // namespace sl_cuda_k

#endif
