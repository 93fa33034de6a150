/* Row-wise kernels: embedding gather, fused residual-add + RMSNorm, fused
 * log-softmax + target gather, and two GEMM helpers (bias fill, bf16 copy).
 *
 * The two reductions use one block of SL_ROW_THREADS per row: thread i takes
 * columns i, i+T, ...; warps reduce with xor-shuffles; warp results are
 * folded in warp order (layout.h; replayed by kernels/scan_emu.c). The
 * log-softmax keeps an online (max, sum) per thread, so each logit is read
 * once and nothing but the per-token log-probability is written: the model
 * can compute logits a tile of tokens at a time and never hold more. */
#include "kernels/cuda/internal.cuh"

namespace {

constexpr int T = SL_ROW_THREADS, W = SL_ROW_THREADS / SL_WARP;

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = SL_WARP / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
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

__global__ void __launch_bounds__(T) norm_kernel(sl_norm_args a)
{
    __shared__ float part[W];
    const int64_t t = blockIdx.x;
    const int tid = threadIdx.x;
    float *res = a.residual + t * a.D;
    const float *x = a.x ? a.x + t * a.D : nullptr;
    float ss = 0.0f;
    for (int64_t c = tid; c < a.D; c += T) {
        float r = x ? (a.residual_init ? x[c] : res[c] + x[c]) : res[c];
        res[c] = r;
        ss += r * r;
    }
    ss = warp_sum(ss);
    if (tid % SL_WARP == 0) part[tid / SL_WARP] = ss;
    __syncthreads();
    float tot = 0.0f;
    for (int w = 0; w < W; w++) tot += part[w];
    const float scale = sl_rms_scale(tot, (int)a.D, a.eps);
    for (int64_t c = tid; c < a.D; c += T) a.out[t * a.D + c] = res[c] * scale * a.w[c];
}

__global__ void __launch_bounds__(T) logsoftmax_kernel(sl_logsoftmax_args a)
{
    __shared__ sl_lse part[W];
    const int64_t t = blockIdx.x;
    const int tid = threadIdx.x;
    const float *row = a.logits + t * a.ld;
    sl_lse x = sl_lse_empty();
    for (int64_t c = tid; c < a.V; c += T) x = sl_lse_add(x, row[c]);
    x = warp_lse(x);
    if (tid % SL_WARP == 0) part[tid / SL_WARP] = x;
    __syncthreads();
    if (tid == 0) {
        sl_lse tot = sl_lse_empty();
        for (int w = 0; w < W; w++) tot = sl_lse_merge(tot, part[w]);
        int32_t tg = a.target[t];
        /* Ids are validated on the host; an id past the vocab shows as NaN. */
        a.logp[t] = tg < 0 ? 0.0f : tg >= a.V ? __int_as_float(0x7fc00000) : row[tg] - (tot.m + logf(tot.s));
    }
}

/* The weight descriptor is host memory: its fields come as arguments. */
__global__ void __launch_bounds__(T) embed_kernel(const int32_t *ids, const void *emb, int bf16, int64_t V, int64_t D,
                                                  float *out, int64_t ldout)
{
    const int64_t t = blockIdx.x;
    const int32_t id = ids[t];
    for (int64_t c = threadIdx.x; c < D; c += T) {
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
    if (i < L * N) y[(i / N) * ldy + i % N] = bias[i % N];
}

__global__ void bf16_kernel(__nv_bfloat16 *dst, const float *src, int64_t lds, int64_t L, int64_t K)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < L * K) dst[i] = __float2bfloat16_rn(src[(i / K) * lds + i % K]);
}

} // namespace

int sl_cuda_add_rmsnorm(sl_backend *b, const sl_norm_args *a, sl_err *err)
{
    if (a->L <= 0 || a->D <= 0) return 0;
    if (a->D > INT32_MAX) return sl_errf(err, "cuda: add_rmsnorm: row width %lld is too large", (long long)a->D);
    norm_kernel<<<(unsigned)a->L, T, 0, sl_cuda_ctx_of(b)->stream>>>(*a);
    return sl_cuda_check_launch(err, "add_rmsnorm");
}

int sl_cuda_logsoftmax_gather(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err)
{
    if (a->T <= 0) return 0;
    logsoftmax_kernel<<<(unsigned)a->T, T, 0, sl_cuda_ctx_of(b)->stream>>>(*a);
    return sl_cuda_check_launch(err, "logsoftmax_gather");
}

int sl_cuda_embed(sl_backend *b, const sl_embed_args *a, sl_err *err)
{
    if (a->L <= 0) return 0;
    const sl_weight *w = a->emb;
    embed_kernel<<<(unsigned)a->L, T, 0, sl_cuda_ctx_of(b)->stream>>>(a->ids, w->data, w->dtype == SL_DT_BF16, w->rows,
                                                                       w->cols, a->out, a->ldout);
    return sl_cuda_check_launch(err, "embed");
}

int sl_cuda_fill_bias(sl_cuda_ctx *c, float *y, int64_t ldy, const float *bias, int64_t L, int64_t N, sl_err *err)
{
    bias_kernel<<<sl_cuda_blocks(L * N, 256), 256, 0, c->stream>>>(y, ldy, bias, L, N);
    return sl_cuda_check_launch(err, "linear bias");
}

int sl_cuda_to_bf16(sl_cuda_ctx *c, __nv_bfloat16 *dst, const float *src, int64_t lds, int64_t L, int64_t K, sl_err *err)
{
    bf16_kernel<<<sl_cuda_blocks(L * K, 256), 256, 0, c->stream>>>(dst, src, lds, L, K);
    return sl_cuda_check_launch(err, "linear bf16 input");
}
