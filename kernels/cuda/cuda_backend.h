/* What the CUDA backend offers beyond the sl_backend table (kernels.h).
 * Plain C; implemented in kernels/cuda/backend.cu, and by kernels/cuda_stub.c
 * (failing with a message) when sluice is built without CUDA. */
#ifndef SLUICE_KERNELS_CUDA_CUDA_BACKEND_H
#define SLUICE_KERNELS_CUDA_CUDA_BACKEND_H

#include <stddef.h>

#include "kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Projections with f32 weights use TF32 tensor cores by default (fp32
 * accumulation, 10-bit mantissa inputs, as PyTorch's allow_tf32). on=0
 * switches to full fp32 GEMMs, which the backend-comparison tests use to
 * hold fp32 tolerances. Returns the previous setting, -1 if b is not CUDA. */
int sl_cuda_set_tf32(sl_backend *b, int on);

/* Page-locked host memory for the model's input and output buffers.
 * Transfers between such memory and the device are asynchronous: upload()
 * and download() return at once, and the host buffer must not be read or
 * changed until the next sync() (or a download into pageable memory). With
 * pageable memory, upload() returns once the source may be reused and
 * download() waits for the data, as on the CPU backend. */
void *sl_cuda_host_alloc(sl_backend *b, size_t bytes, sl_err *err);
void sl_cuda_host_free(sl_backend *b, void *p);

/* One line describing the device: name, compute capability, memory. */
const char *sl_cuda_describe(sl_backend *b);

#ifdef __cplusplus
}
#endif
#endif
