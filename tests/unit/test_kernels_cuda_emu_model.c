/* The whole-model GPU comparison (tests/cuda/model_checks.h) run here with
 * the host emulation of the CUDA kernels (tests/cuda/emu_backend.h) in
 * place of the GPU: the forward pass computed with the GPU's decomposition
 * of the scan, conv and reductions matches the CPU backend and the
 * committed PyTorch log-probabilities. */
#include "tests/cuda/emu_backend.h"
#include "tests/cuda/model_checks.h"

int main(void)
{
    sl_err err = {{0}};
    /* one thread: no OpenMP spin-waiting on a shared machine */
    sl_backend *cpu = sl_backend_cpu(1, &err), *emu = emu_backend_open(&err);
    if (!cpu || !emu)
        return fprintf(stderr, "%s\n", err.msg), 1;
    int rc = run_model_checks(cpu, emu, 1);
    sl_backend_close(emu);
    sl_backend_close(cpu);
    return rc;
}
