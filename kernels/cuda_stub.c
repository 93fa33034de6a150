/* The CUDA backend entry points when sluice is built without CUDA. */
#ifndef SLUICE_CUDA
#include "kernels/kernels.h"

sl_backend *sl_backend_cuda(int device, sl_err *err)
{
    (void)device;
    sl_errf(err, "cuda: this sluice was built without CUDA (rebuild with 'make CUDA=1' where nvcc is installed)");
    return NULL;
}

int sl_cuda_device_count(void) { return 0; }
#endif
