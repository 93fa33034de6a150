/* Compute backends as a library user sees them: open one by name, hand it
 * to a model (model/mamba.h), close it after the model is freed. The
 * operator table behind the handle (kernels/kernels.h) is internal: it
 * changes with the kernels and is not installed. */
#ifndef SLUICE_KERNELS_BACKEND_H
#define SLUICE_KERNELS_BACKEND_H

#include <stddef.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

typedef struct sl_backend sl_backend;

/* Opens a backend by name: "cpu", "cuda", "cuda:N" (device N) or "auto"
 * (cuda when a device is found, else cpu). threads applies to the CPU
 * backend (0 = all cores). Returns NULL with err naming the reason, e.g.
 * "cuda: sluice was built without CUDA" or "cuda: no CUDA device found
 * (cudaGetDeviceCount: ...)". Close it with sl_backend_close after every
 * model loaded onto it is freed. */
sl_backend *sl_backend_open(const char *name, int threads, sl_err *err);
/* Frees the backend. NULL is a no-op. */
void sl_backend_close(sl_backend *b);

/* Number of usable CUDA devices (0 when none or not built with CUDA). */
int sl_cuda_device_count(void);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

/* The CPU backend's code paths on this machine, one line: the instruction
 * set its multi-versioned kernels run with ("x86-64-v4 (AVX-512)",
 * "x86-64-v3 (AVX2+FMA)", ...) and the BLAS library and kernel core. For
 * benchmarks and bug reports (`sluice --version -v`). */
void sl_backend_cpu_describe(char *buf, size_t n);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
