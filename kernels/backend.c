/* Backend selection by name: "cpu", "cuda", "auto". */
#include <string.h>

#include "kernels/kernels.h"

sl_backend *sl_backend_open(const char *name, int threads, sl_err *err)
{
    if (!name || !strcmp(name, "auto"))
        return sl_cuda_device_count() > 0 ? sl_backend_cuda(0, err) : sl_backend_cpu(threads, err);
    if (!strcmp(name, "cpu"))
        return sl_backend_cpu(threads, err);
    if (!strcmp(name, "cuda"))
        return sl_backend_cuda(0, err);
    sl_errf(err, "unknown device '%s' (expected cpu, cuda or auto)", name);
    return NULL;
}

void sl_backend_close(sl_backend *b)
{
    if (b && b->destroy)
        b->destroy(b);
}
