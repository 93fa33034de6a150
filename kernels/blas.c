/* See blas.h: OpenBLAS through dlopen. */
#include "kernels/blas.h"

#include <dlfcn.h>
#include <pthread.h>

sl_sgemm_fn *sl_blas_sgemm;
static char describe[256];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[256];

static void load(void)
{
    /* the runtime names Debian's libopenblas0-{pthread,openmp} and the generic BLAS provide */
    static const char *const names[] = {"libopenblas.so.0", "libopenblas.so", "libblas.so.3", NULL};
    void *h = NULL;
    for (int i = 0; names[i] && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "cannot load OpenBLAS (libopenblas.so.0): %s; run scripts/install-deps",
                 dlerror());
        return;
    }
    void (*set_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    if (set_threads)
        set_threads(1);
    char *(*config)(void) = (char *(*)(void))dlsym(h, "openblas_get_config");
    char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
    if (config && corename)
        snprintf(describe, sizeof describe, "%s, core %s", config(), corename());
    else
        snprintf(describe, sizeof describe, "a BLAS that is not OpenBLAS (no openblas_get_corename)");
    sl_blas_sgemm = (sl_sgemm_fn *)dlsym(h, "cblas_sgemm");
    if (!sl_blas_sgemm)
        snprintf(failure, sizeof failure, "the BLAS library has no cblas_sgemm");
}

int sl_blas_load(sl_err *err)
{
    pthread_once(&once, load);
    if (!sl_blas_sgemm)
        return sl_errf(err, "%s", failure);
    return 0;
}

const char *sl_blas_describe(void)
{
    pthread_once(&once, load);
    return sl_blas_sgemm ? describe : failure;
}
