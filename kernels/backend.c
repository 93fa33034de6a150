/* Backend selection by name: "cpu", "cuda", "cuda:N", "auto". */
#include <stdlib.h>
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
    if (!strncmp(name, "cuda:", 5) && name[5] >= '0' && name[5] <= '9') {
        char *end;
        long dev = strtol(name + 5, &end, 10);
        if (!*end && dev < 1024)
            return sl_backend_cuda((int)dev, err);
    }
    sl_err_set(err, SL_E_OPTION, "device", "unknown device '%s' (expected cpu, cuda, cuda:N or auto)", name);
    return NULL;
}

void sl_backend_close(sl_backend *b)
{
    if (b && b->destroy)
        b->destroy(b);
}
