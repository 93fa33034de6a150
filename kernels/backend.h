/* Compute backends as a library user sees them: open one by name, hand it
 * to a model (model/mamba.h), close it after the model is freed. The
 * operator table behind the handle (kernels/kernels.h) is internal: it
 * changes with the kernels and is not installed. */
#ifndef SLUICE_KERNELS_BACKEND_H
#define SLUICE_KERNELS_BACKEND_H

#include "stream/err.h"

typedef struct sl_backend sl_backend;

/* Opens a backend by name: "cpu", "cuda", "cuda:N" (device N) or "auto"
 * (cuda when a device is found, else cpu). threads applies to the CPU
 * backend (0 = all cores). Errors name the reason, e.g. "cuda: sluice was
 * built without CUDA" or "cuda: no CUDA device found (cudaGetDeviceCount:
 * ...)". */
sl_backend *sl_backend_open(const char *name, int threads, sl_err *err);
void sl_backend_close(sl_backend *b);

/* Number of usable CUDA devices (0 when none or not built with CUDA). */
int sl_cuda_device_count(void);

#endif
