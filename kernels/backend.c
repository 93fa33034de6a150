/* Backend selection by name: "cpu", "cuda", "cuda:N", "auto". */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_kernels.h"

/* The CPU backend with its Mamba-2 operators (kernels/cpu_ssd.c). They
 * belong in sl_backend_cpu's table (kernels/cpu_backend.c); until that file
 * sets them, they are filled in here (a no-op once it does). */
static sl_backend *cpu_open(int threads, sl_err *err)
{
    sl_backend *b = sl_backend_cpu(threads, err);
    if (b && !b->ssd_chunked)
        b->ssd_chunked = sl_cpu_ssd_chunked;
    if (b && !b->mul_silu)
        b->mul_silu = sl_cpu_mul_silu;
    return b;
}

sl_backend *sl_backend_open(const char *name, int threads, sl_err *err)
{
    if (!name || !strcmp(name, "auto"))
        return sl_cuda_device_count() > 0 ? sl_backend_cuda(0, err) : cpu_open(threads, err);
    if (!strcmp(name, "cpu"))
        return cpu_open(threads, err);
    if (!strcmp(name, "cuda"))
        return sl_backend_cuda(0, err);
    if (!strncmp(name, "cuda:", 5) && name[5] >= '0' && name[5] <= '9') {
        char *end;
        long dev = strtol(name + 5, &end, 10);
        if (!*end && dev < 1024)
            return sl_backend_cuda((int)dev, err);
    }
    sl_errf(err, "unknown device '%s' (expected cpu, cuda, cuda:N or auto)", name);
    return NULL;
}

void sl_backend_close(sl_backend *b)
{
    if (b && b->destroy)
        b->destroy(b);
}
