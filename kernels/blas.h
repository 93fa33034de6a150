/* OpenBLAS, loaded with dlopen when the CPU backend is first opened.
 *
 * Why not link it: the pthread build of OpenBLAS (Debian's default) starts
 * its worker threads from a library constructor, and they spin in
 * sched_yield for about 0.1 s of CPU in every process that links it — every
 * `sluice` run, though only the model stage multiplies matrices. Loading it
 * on demand keeps that cost where the work is. */
#ifndef SLUICE_KERNELS_BLAS_H
#define SLUICE_KERNELS_BLAS_H

#include <cblas.h>

#include "base/err.h"

typedef __typeof__(cblas_sgemm) sl_sgemm_fn;

/* Loads the library once (thread-safe) and sets it to one thread: the
 * CPU backend parallelizes over output tiles with OpenMP itself. */
int sl_blas_load(sl_err *err);
/* Valid after a successful sl_blas_load. */
extern sl_sgemm_fn *sl_blas_sgemm;

/* "OpenBLAS <config>, core <name>" (openblas_get_config/_corename: the
 * kernels OpenBLAS picked for this CPU, which OPENBLAS_CORETYPE overrides),
 * or the reason the library could not be loaded. */
const char *sl_blas_describe(void);

#endif
