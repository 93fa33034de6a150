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

#include "kernels/cuda/conv_kernel.cuh"

using namespace sl_cuda_k;

int sl_cuda_conv1d_silu(sl_backend *b, const sl_conv_args *a, sl_err *err)
{
    if (a->K < 1 || a->K > kMaxK)
        return sl_errf(err, "cuda: conv1d: kernel width %d outside 1..%d", a->K, kMaxK);
    if (a->L <= 0 || a->D <= 0)
        return 0;
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    conv_params p = {a->L, a->D, a->K, a->x, a->ldx, a->w, a->bias, a->state, a->reset, a->out, a->ldout};
    conv_out_kernel<<<sl_cuda_blocks(a->L * a->D, 256), 256, 0, c->stream>>>(p);
    if (sl_cuda_check_launch(err, "conv1d") != 0)
        return -1;
    if (a->K > 1) {
        conv_state_kernel<<<sl_cuda_blocks(a->D, 128), 128, 0, c->stream>>>(p);
        if (sl_cuda_check_launch(err, "conv1d state") != 0)
            return -1;
    }
    return 0;
}
