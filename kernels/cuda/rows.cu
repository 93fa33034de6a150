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

#include "kernels/cuda/rows_kernel.cuh"

using namespace sl_cuda_k;

int sl_cuda_add_rmsnorm(sl_backend *b, const sl_norm_args *a, sl_err *err)
{
    if (a->L <= 0 || a->D <= 0)
        return 0;
    if (a->D > INT32_MAX)
        return sl_errf(err, "cuda: add_rmsnorm: row width %lld is too large", (long long)a->D);
    if (a->group < 0 || (a->group && a->D % a->group))
        return sl_errf(err, "cuda: add_rmsnorm: groups of %lld columns do not divide rows of %lld", (long long)a->group,
                       (long long)a->D);
    int64_t blocks = a->L * (a->group ? a->D / a->group : 1);
    if (blocks > INT32_MAX)
        return sl_errf(err, "cuda: add_rmsnorm: %lld row groups is too many", (long long)blocks);
    norm_kernel<<<(unsigned)blocks, kRowT, 0, sl_cuda_ctx_of(b)->stream>>>(*a);
    return sl_cuda_check_launch(err, "add_rmsnorm");
}

int sl_cuda_logsoftmax_gather(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err)
{
    if (a->T <= 0)
        return 0;
    logsoftmax_kernel<<<(unsigned)a->T, kRowT, 0, sl_cuda_ctx_of(b)->stream>>>(*a);
    return sl_cuda_check_launch(err, "logsoftmax_gather");
}

int sl_cuda_embed(sl_backend *b, const sl_embed_args *a, sl_err *err)
{
    if (a->L <= 0)
        return 0;
    const sl_weight *w = a->emb;
    embed_kernel<<<(unsigned)a->L, kRowT, 0, sl_cuda_ctx_of(b)->stream>>>(a->ids, w->data, w->dtype == SL_DT_BF16,
                                                                          w->rows, w->cols, a->out, a->ldout);
    return sl_cuda_check_launch(err, "embed");
}

int sl_cuda_fill_bias(sl_cuda_ctx *c, float *y, int64_t ldy, const float *bias, int64_t L, int64_t N, sl_err *err)
{
    bias_kernel<<<sl_cuda_blocks(L * N, 256), 256, 0, c->stream>>>(y, ldy, bias, L, N);
    return sl_cuda_check_launch(err, "linear bias");
}

int sl_cuda_to_bf16(sl_cuda_ctx *c, __nv_bfloat16 *dst, const float *src, int64_t lds, int64_t L, int64_t K,
                    sl_err *err)
{
    bf16_kernel<<<sl_cuda_blocks(L * K, 256), 256, 0, c->stream>>>(dst, src, lds, L, K);
    return sl_cuda_check_launch(err, "linear bf16 input");
}
