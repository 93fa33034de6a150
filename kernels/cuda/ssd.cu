/* Mamba-2's SSD layer in its chunked form on the GPU (ssd_kernel.cuh; the
 * decomposition is described in layout.h and replayed on the CPU by
 * sl_ssd_emu in kernels/scan_emu.c), and the gated MLP's x * silu(z). */
#include "kernels/cuda/internal.cuh"

#include "kernels/cuda/ssd_kernel.cuh"

using namespace sl_cuda_k;

int sl_cuda_ssd_chunked(sl_backend *b, const sl_ssd_args *a, sl_err *err)
{
    if (a->N < 1 || a->N > SL_SSD_MAX_N)
        return sl_errf(err, "cuda: ssd: d_state %d outside 1..%d", a->N, SL_SSD_MAX_N);
    if (a->H < 1 || a->P < 1 || a->G < 1 || a->H % a->G != 0)
        return sl_errf(err, "cuda: ssd: %d heads of %d channels in %d groups", a->H, a->P, a->G);
    if (a->L <= 0)
        return 0;
    int64_t blocks = (int64_t)a->H * ((a->P + SL_SSD_PT - 1) / SL_SSD_PT);
    if (blocks > INT32_MAX)
        return sl_errf(err, "cuda: ssd: %lld blocks is too many", (long long)blocks);
    ssd_params p = {a->L,    a->H,       a->P,   a->G,     a->N,      a->x,      a->ldx, a->dt,
                    a->lddt, a->dt_bias, a->A,   a->Dskip, a->dt_min, a->dt_max, a->B,   a->C,
                    a->ldbc, a->z,       a->ldz, a->state, a->reset,  a->y,      a->ldy};
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    ssd_kernel<<<(unsigned)blocks, SL_SSD_THREADS, 0, c->stream>>>(p);
    return sl_cuda_check_launch(err, "ssd");
}

namespace
{

__global__ void mul_silu_kernel(int64_t L, int64_t D, const float *x, int64_t ldx, const float *z, int64_t ldz,
                                float *out, int64_t ldout)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= L * D)
        return;
    int64_t t = i / D, d = i % D;
    out[t * ldout + d] = x[t * ldx + d] * sl_silu(z[t * ldz + d]);
}

} // namespace

int sl_cuda_mul_silu(sl_backend *b, const sl_mul_silu_args *a, sl_err *err)
{
    if (a->L <= 0 || a->D <= 0)
        return 0;
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    mul_silu_kernel<<<sl_cuda_blocks(a->L * a->D, 256), 256, 0, c->stream>>>(a->L, a->D, a->x, a->ldx, a->z, a->ldz,
                                                                             a->out, a->ldout);
    return sl_cuda_check_launch(err, "mul_silu");
}
