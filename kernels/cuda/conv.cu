/* Causal depthwise conv1d + SiLU with carried history, on the GPU.
 *
 * Kernel 1: one thread per (token, channel), channels fastest so a warp
 * reads consecutive addresses of a token row. The K taps of token t are the
 * inputs at t-K+1..t; those before the call come from the carried history,
 * those before the last reset in (t-K+1, t] are zero.
 * Kernel 2 (queued after kernel 1, so it never overwrites history that
 * kernel 1 still reads): one thread per channel stores the call's last K-1
 * inputs, by the same rules, as the history for the next call.
 * Replayed on the CPU by sl_conv_emu (kernels/scan_emu.c). */
#include "kernels/cuda/internal.cuh"

namespace {

constexpr int kMaxK = 8;

struct conv_params {
    int64_t L, D;
    int K;
    const float *x; int64_t ldx;
    const float *w, *bias;
    float *state;
    const uint8_t *reset;
    float *out; int64_t ldout;
};

/* Input at time src (may be negative: history), or 0 before last_reset. */
__device__ __forceinline__ float tap(const conv_params &p, int64_t src, int64_t last_reset, int64_t d)
{
    if (src < last_reset) return 0.0f;
    return src >= 0 ? p.x[src * p.ldx + d] : p.state[d * (p.K - 1) + (p.K - 1) + src];
}

/* Latest reset r with r <= t and r > t-(K-1), or INT64_MIN. */
__device__ __forceinline__ int64_t last_reset_before(const conv_params &p, int64_t t)
{
    if (!p.reset) return INT64_MIN;
    for (int64_t r = t; r >= 0 && r > t - (p.K - 1); r--)
        if (p.reset[r]) return r;
    return INT64_MIN;
}

__global__ void conv_out_kernel(conv_params p)
{
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.L * p.D) return;
    int64_t t = idx / p.D, d = idx % p.D, lr = last_reset_before(p, t);
    float taps[kMaxK];
    for (int k = 0; k < p.K; k++) taps[k] = tap(p, t - (p.K - 1) + k, lr, d);
    p.out[t * p.ldout + d] = sl_conv_output(taps, p.w + d * p.K, p.bias ? p.bias[d] : 0.0f, p.K);
}

__global__ void conv_state_kernel(conv_params p)
{
    int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= p.D) return;
    int64_t lr = last_reset_before(p, p.L - 1);
    float hist[kMaxK];
    for (int j = 0; j < p.K - 1; j++) hist[j] = tap(p, p.L - (p.K - 1) + j, lr, d);
    for (int j = 0; j < p.K - 1; j++) p.state[d * (p.K - 1) + j] = hist[j];
}

} // namespace

int sl_cuda_conv1d_silu(sl_backend *b, const sl_conv_args *a, sl_err *err)
{
    if (a->K < 1 || a->K > kMaxK) return sl_errf(err, "cuda: conv1d: kernel width %d outside 1..%d", a->K, kMaxK);
    if (a->L <= 0 || a->D <= 0) return 0;
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    conv_params p = {a->L, a->D, a->K, a->x, a->ldx, a->w, a->bias, a->state, a->reset, a->out, a->ldout};
    conv_out_kernel<<<sl_cuda_blocks(a->L * a->D, 256), 256, 0, c->stream>>>(p);
    if (sl_cuda_check_launch(err, "conv1d") != 0) return -1;
    if (a->K > 1) {
        conv_state_kernel<<<sl_cuda_blocks(a->D, 128), 128, 0, c->stream>>>(p);
        if (sl_cuda_check_launch(err, "conv1d state") != 0) return -1;
    }
    return 0;
}
