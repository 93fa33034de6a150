/* Fused selective scan forward (Mamba-1) on the GPU.
 *
 * One thread block per channel d; the block walks the call's tokens in
 * chunks of T*I, thread i owning I consecutive tokens. Per state index n,
 * each thread builds the pairs (exp(delta*A), delta*B*u) of its tokens,
 * folds them, the block scans the folded pairs (warp shuffles, then warp
 * totals in order onto the prefix carried from the previous chunk) and each
 * thread replays the recurrence over its tokens from its incoming state,
 * adding C[t][n]*h to its outputs. The state lives in registers and a few
 * shared-memory pairs; only y is written. The decomposition is described in
 * layout.h and replayed on the CPU by kernels/scan_emu.c, which the unit
 * tests compare to the sequential recurrence. */
#include "kernels/cuda/internal.cuh"

#include "kernels/cuda/scan_kernel.cuh"

namespace
{

using namespace sl_cuda_k;

template <int T, int I> int launch(sl_cuda_ctx *c, int layout, int64_t D, const scan_params &p, sl_err *err)
{
    sl_scan_layout l = sl_scan_layout_get(layout);
    if (l.threads != T || l.items != I)
        return sl_errf(err, "cuda: selective_scan: layout %d is %dx%d in layout.h but %dx%d here", layout, l.threads,
                       l.items, T, I);
    scan_kernel<T, I><<<(unsigned)D, T, 0, c->stream>>>(p);
    return sl_cuda_check_launch(err, "selective_scan");
}

} // namespace

int sl_cuda_selective_scan(sl_backend *b, const sl_scan_args *a, sl_err *err)
{
    if (a->N < 1 || a->N > SL_SCAN_MAX_N)
        return sl_errf(err, "cuda: selective_scan: d_state %d outside 1..%d", a->N, SL_SCAN_MAX_N);
    if (a->L <= 0 || a->D <= 0)
        return 0;
    if (a->D > INT32_MAX)
        return sl_errf(err, "cuda: selective_scan: %lld channels is too many", (long long)a->D);
    scan_params p = {a->L, a->N,    a->u,     a->ldu, a->dt,  a->lddt,  a->dt_bias, a->A_log2e, a->B,
                     a->C, a->ldbc, a->Dskip, a->z,   a->ldz, a->state, a->reset,   a->y,       a->ldy};
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    int layout = sl_scan_layout_pick(a->L);
    switch (layout) {
    case 0: return launch<32, 4>(c, 0, a->D, p, err);
    case 1: return launch<128, 4>(c, 1, a->D, p, err);
    default: return launch<128, 8>(c, 2, a->D, p, err);
    }
}
