/* The GPU comparison tests (tests/cuda/kernel_checks.h) run here on the
 * host emulation of the CUDA kernels' decomposition (tests/cuda/
 * emu_backend.h) against the CPU backend, with the GPU tests' tolerances and
 * small shapes: the decomposition the GPU uses agrees with the CPU reference
 * implementation, and the GPU test program itself is exercised. */
#include "tests/cuda/emu_backend.h"
#include "tests/cuda/kernel_checks.h"

int main(void)
{
    sl_err err = {{0}};
    /* one thread: no OpenMP spin-waiting on a shared machine */
    sl_backend *cpu = sl_backend_cpu(1, &err), *emu = emu_backend_open(&err);
    if (!cpu || !emu)
        return fprintf(stderr, "%s\n", err.msg), 1;
    int rc = run_kernel_checks(cpu, emu, 1);
    sl_backend_close(emu);
    sl_backend_close(cpu);
    return rc;
}
