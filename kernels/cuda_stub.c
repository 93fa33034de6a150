/* The CUDA backend's entry points when sluice is built without CUDA
 * (CUDA=0, or no nvcc): they report that, and count no devices. With CUDA
 * the real ones come from kernels/cuda/backend.cu. */
#ifndef SLUICE_CUDA
#include "kernels/cuda/cuda_backend.h"
#include "kernels/kernels.h"

sl_backend *sl_backend_cuda(int device, sl_err *err)
{
    (void)device;
    sl_err_set(err, SL_E_UNSUPPORTED, "device",
               "cuda: this sluice was built without CUDA (rebuild with 'make CUDA=1' where nvcc is installed)");
    return NULL;
}

int sl_cuda_device_count(void)
{
    return 0;
}

int sl_cuda_set_tf32(sl_backend *b, int on)
{
    (void)b, (void)on;
    return -1;
}

void *sl_cuda_host_alloc(sl_backend *b, size_t bytes, sl_err *err)
{
    (void)b, (void)bytes;
    sl_err_set(err, SL_E_UNSUPPORTED, NULL, "cuda: this sluice was built without CUDA");
    return NULL;
}

void sl_cuda_host_free(sl_backend *b, void *p)
{
    (void)b, (void)p;
}

const char *sl_cuda_describe(sl_backend *b)
{
    (void)b;
    return "not a CUDA backend";
}
#else
typedef int sl_cuda_stub_unused; /* keeps this translation unit non-empty */
#endif
