/* A backend that runs the CUDA kernels' decomposition on the CPU: the CPU
 * backend with its scan, Mamba-2 SSD, conv, norm and log-softmax replaced by the host
 * emulation in kernels/scan_emu.c (same chunking, warp scans and reduction
 * order as kernels/cuda/ .cu files). Plugged into the GPU comparison tests in place
 * of the CUDA backend, it lets the CPU suite run those very tests today.
 * Projections are the CPU's GEMM on inputs rounded as the GPU's are
 * (bf16 activations for bf16 weights, TF32 when on: round_backend.h).
 * Test support, header-only. */
#ifndef SLUICE_TESTS_CUDA_EMU_BACKEND_H
#define SLUICE_TESTS_CUDA_EMU_BACKEND_H

#include <stdlib.h>

#include "kernels/kernels.h"
#include "kernels/scan_emu.h"
#include "tests/cuda/round_backend.h"

static int emu_scan(sl_backend *b, const sl_scan_args *a, sl_err *err)
{
    (void)b;
    return sl_scan_emu(a, -1, err);
}
static int emu_conv(sl_backend *b, const sl_conv_args *a, sl_err *err)
{
    (void)b;
    return sl_conv_emu(a, err);
}
static int emu_norm(sl_backend *b, const sl_norm_args *a, sl_err *err)
{
    (void)b;
    return sl_norm_emu(a, err);
}
static int emu_lsm(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err)
{
    (void)b;
    return sl_logsoftmax_emu(a, err);
}

static int emu_ssd(sl_backend *b, const sl_ssd_args *a, sl_err *err)
{
    (void)b;
    return sl_ssd_emu(a, err);
}

static sl_backend *emu_backend_open(sl_err *err)
{
    sl_backend *b = sl_backend_cpu(1, err);
    if (!b)
        return NULL;
    b->name = "cuda-emu";
    b->selective_scan = emu_scan;
    b->conv1d_silu = emu_conv;
    b->add_rmsnorm = emu_norm;
    b->logsoftmax_gather = emu_lsm;
    b->ssd_chunked = emu_ssd;
    return rb_wrap(b, rb_mode_from_env());
}

#endif
