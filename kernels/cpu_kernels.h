/* The CPU backend's Mamba operators (kernels/cpu_ssm.c, kernels/cpu_norm.c, kernels/cpu_ssd.c),
 * with the signatures of the sl_backend table in kernels/kernels.h. */
#ifndef SLUICE_KERNELS_CPU_KERNELS_H
#define SLUICE_KERNELS_CPU_KERNELS_H

#include "kernels/kernels.h"

int sl_cpu_conv1d_silu(sl_backend *b, const sl_conv_args *a, sl_err *err);
int sl_cpu_selective_scan(sl_backend *b, const sl_scan_args *a, sl_err *err);
int sl_cpu_add_rmsnorm(sl_backend *b, const sl_norm_args *a, sl_err *err);
int sl_cpu_logsoftmax_gather(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err);
/* kernels/cpu_ssd.c: Mamba-2 */
int sl_cpu_ssd_chunked(sl_backend *b, const sl_ssd_args *a, sl_err *err);
int sl_cpu_mul_silu(sl_backend *b, const sl_mul_silu_args *a, sl_err *err);

/* Hot loops are compiled for several x86-64 levels and picked at load time
 * (GCC function multi-versioning), so a portable binary still uses AVX-512
 * or AVX2+FMA where the machine has them. Other compilers get one version. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) &&               \
    defined(SL_CPU_MAX_V3)
/* `make CPU_MAX=v3` (kernels/module.mk): no AVX-512 version */
#define SL_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define SL_CPU_CLONE_TOP 3
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define SL_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define SL_CPU_CLONE_TOP 4
#else
#define SL_CPU_CLONE_TOP 0
#define SL_CPU_CLONES
#endif

#endif
