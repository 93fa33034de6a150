/* Every CUDA kernel against the CPU backend (tests/cuda/kernel_checks.h).
 * Needs a GPU: run by `make test-cuda`. SLUICE_CUDA_QUICK=1 uses small
 * shapes (the compute-sanitizer runs). */
#include "tests/cuda/kernel_checks.h"

int main(void)
{
    sl_err err = {{0}};
    sl_backend *cpu = sl_backend_cpu(0, &err);
    if (!cpu)
        return fprintf(stderr, "cpu backend: %s\n", err.msg), 1;
    sl_backend *gpu = sl_backend_cuda(0, &err);
    if (!gpu)
        return fprintf(stderr, "%s\n", err.msg), 1;
    int rc = run_kernel_checks(cpu, gpu, getenv("SLUICE_CUDA_QUICK") != NULL);
    sl_backend_close(gpu);
    sl_backend_close(cpu);
    return rc;
}
