/* The whole model on the CUDA backend against the CPU backend
 * (tests/cuda/model_checks.h). Needs a GPU: run by `make test-cuda`. */
#include "tests/cuda/model_checks.h"

int main(void)
{
    sl_err err = {{0}};
    sl_backend *cpu = sl_backend_cpu(0, &err);
    if (!cpu)
        return fprintf(stderr, "cpu backend: %s\n", err.msg), 1;
    sl_backend *gpu = sl_backend_cuda(0, &err);
    if (!gpu)
        return fprintf(stderr, "%s\n", err.msg), 1;
    int rc = run_model_checks(cpu, gpu, getenv("SLUICE_CUDA_QUICK") != NULL);
    sl_backend_close(gpu);
    sl_backend_close(cpu);
    return rc;
}
