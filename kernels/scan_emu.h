/* Host emulation of the CUDA kernels' work decomposition (see
 * kernels/cuda/layout.h). These functions run on the CPU in the order the
 * GPU kernels combine values — per-thread item folds, warp shuffle scans and
 * reductions, warp order, chunk carries — so that the CPU test suite can show
 * that this decomposition computes the sequential recurrence and the exact
 * reductions within fp32 rounding, on a machine that has no GPU.
 *
 * They are test support, not a fast path: arguments are host memory. */
#ifndef SLUICE_KERNELS_SCAN_EMU_H
#define SLUICE_KERNELS_SCAN_EMU_H

#include "kernels/kernels.h"

/* The selective scan as kernels/cuda/scan.cu computes it, with layout index
 * `layout` (0..SL_SCAN_NLAYOUTS-1; -1 = the one the kernel picks for a->L).
 * Returns -1 with a message for arguments the kernel rejects (N >
 * SL_SCAN_MAX_N, bad layout). */
int sl_scan_emu(const sl_scan_args *a, int layout, sl_err *err);

/* Same, with an arbitrary block shape (threads a multiple of 32, 32..1024;
 * items >= 1), to stress many chunks on short inputs. */
int sl_scan_emu_shape(const sl_scan_args *a, int threads, int items, sl_err *err);

/* The causal conv1d + SiLU as kernels/cuda/conv.cu computes it (one thread
 * per output, then one per channel for the carried state). */
int sl_conv_emu(const sl_conv_args *a, sl_err *err);

/* Fused residual add + RMSNorm as kernels/cuda/rows.cu reduces a row. */
int sl_norm_emu(const sl_norm_args *a, sl_err *err);

/* Log-softmax + gather as kernels/cuda/rows.cu reduces a row (online
 * log-sum-exp per thread over a strided set of columns, then a tree). */
int sl_logsoftmax_emu(const sl_logsoftmax_args *a, sl_err *err);

/* Mamba-2's SSD as kernels/cuda/ssd.cu computes it: chunks of SL_SSD_Q
 * tokens, blocks of SL_SSD_PT channels of a head, the state in the
 * registers of four threads per channel (layout.h). Returns -1 with a
 * message for arguments the kernel rejects (N > SL_SSD_MAX_N, groups that
 * do not divide the heads). Not thread-safe (the block's shared memory is
 * static, as in the simulator). */
int sl_ssd_emu(const sl_ssd_args *a, sl_err *err);

#endif
