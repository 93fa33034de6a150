/* The CPU backend: host memory, fp32 weights, matrix products through
 * OpenBLAS, and the operator table (the Mamba kernels live in cpu_ssm.c and
 * cpu_norm.c).
 *
 * Threading: one mechanism, OpenMP. OpenBLAS is set to one thread and each
 * OpenMP thread multiplies its own tile of the output. This avoids two
 * thread pools competing for the same cores (OpenBLAS' pthreads spinning
 * against OpenMP's), and makes every output element's summation order
 * independent of the thread count, so results do not change with -@. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas.h"
#include "kernels/cpu_kernels.h"

static void *cpu_alloc(sl_backend *b, size_t bytes, sl_err *err)
{
    (void)b;
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (!p)
        sl_errf(err, "cpu: out of memory allocating %zu bytes", bytes);
    return p;
}

static void cpu_free(sl_backend *b, void *p)
{
    (void)b;
    free(p);
}

static int cpu_copy(sl_backend *b, void *dst, const void *src, size_t bytes, sl_err *err)
{
    (void)b;
    (void)err;
    if (bytes)
        memmove(dst, src, bytes);
    return 0;
}

static int cpu_memset0(sl_backend *b, void *dst, size_t bytes, sl_err *err)
{
    (void)b;
    (void)err;
    if (bytes)
        memset(dst, 0, bytes);
    return 0;
}

static int cpu_weight_create(sl_backend *b, sl_weight *w, const float *host, int64_t rows, int64_t cols,
                             sl_dtype src_dtype, sl_err *err)
{
    (void)src_dtype; /* the CPU backend computes and stores fp32 */
    memset(w, 0, sizeof *w);
    if (rows < 0 || cols < 0)
        return sl_errf(err, "cpu: bad weight shape [%lld][%lld]", (long long)rows, (long long)cols);
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *p = cpu_alloc(b, bytes, err);
    if (!p)
        return -1;
    if (bytes)
        memcpy(p, host, bytes);
    w->dtype = SL_DT_F32;
    w->rows = rows;
    w->cols = cols;
    w->data = p;
    return 0;
}

static void cpu_weight_free(sl_backend *b, sl_weight *w)
{
    if (!w)
        return;
    cpu_free(b, w->data);
    w->data = NULL;
}

/* y[L][N] = x[L][K] W[N][K]^T (+ bias). The output is cut into a fixed grid
 * of tiles, TILE_M rows by TILE_N columns, one sgemm call per tile, spread
 * over the threads. The grid does not depend on the thread count, and
 * OpenBLAS picks its kernel (and so its summation order) by matrix shape,
 * so every element is computed the same way whatever -@ says. */
#define TILE_M 256
#define TILE_N 256
static int cpu_linear(sl_backend *b, const sl_linear_args *a, sl_err *err)
{
    (void)b;
    const sl_weight *w = a->w;
    if (w->dtype != SL_DT_F32)
        return sl_errf(err, "cpu: linear: weight is not fp32");
    const int64_t L = a->L, N = w->rows, K = w->cols;
    if (L <= 0 || N <= 0)
        return 0;
    const float *W = w->data;
    const int64_t tm = (L + TILE_M - 1) / TILE_M, tn = (N + TILE_N - 1) / TILE_N;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < tm * tn; i++) {
        int64_t r0 = (i % tm) * TILE_M, c0 = (i / tm) * TILE_N;
        int64_t rn = L - r0 < TILE_M ? L - r0 : TILE_M, cn = N - c0 < TILE_N ? N - c0 : TILE_N;
        float *y = a->y + r0 * a->ldy + c0;
        if (K > 0) {
            sl_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rn, (int)cn, (int)K, 1.0f, a->x + r0 * a->ldx,
                          (int)a->ldx, W + c0 * K, (int)K, 0.0f, y, (int)a->ldy);
        } else {
            for (int64_t r = 0; r < rn; r++)
                memset(y + r * a->ldy, 0, (size_t)cn * sizeof(float));
        }
        if (a->bias)
            for (int64_t r = 0; r < rn; r++)
                for (int64_t c = 0; c < cn; c++)
                    y[r * a->ldy + c] += a->bias[c0 + c];
    }
    return 0;
}

static int cpu_embed(sl_backend *b, const sl_embed_args *a, sl_err *err)
{
    (void)b;
    const sl_weight *e = a->emb;
    const float *E = e->data;
    for (int64_t t = 0; t < a->L; t++)
        if (a->ids[t] < 0 || a->ids[t] >= e->rows)
            return sl_errf(err, "cpu: embed: token id %d at position %lld is outside the vocabulary [0, %lld)",
                           (int)a->ids[t], (long long)t, (long long)e->rows);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < a->L; t++)
        memcpy(a->out + t * a->ldout, E + (int64_t)a->ids[t] * e->cols, (size_t)e->cols * sizeof(float));
    return 0;
}

static int cpu_sync(sl_backend *b, sl_err *err)
{
    (void)b;
    (void)err;
    return 0;
}

static void cpu_destroy(sl_backend *b)
{
    free(b);
}

sl_backend *sl_backend_cpu(int threads, sl_err *err)
{
    /* See the comment at the top: OpenMP tiles, single-threaded sgemm
     * (sl_blas_load sets OpenBLAS to one thread). */
    if (sl_blas_load(err))
        return NULL;
    if (threads > 0)
        omp_set_num_threads(threads);
    sl_backend *b = sl_xcalloc(1, sizeof *b);
    b->name = "cpu";
    b->alloc = cpu_alloc;
    b->free = cpu_free;
    b->upload = cpu_copy;
    b->download = cpu_copy;
    b->memset0 = cpu_memset0;
    b->weight_create = cpu_weight_create;
    b->weight_free = cpu_weight_free;
    b->linear = cpu_linear;
    b->embed = cpu_embed;
    b->conv1d_silu = sl_cpu_conv1d_silu;
    b->selective_scan = sl_cpu_selective_scan;
    b->add_rmsnorm = sl_cpu_add_rmsnorm;
    b->ssd_chunked = sl_cpu_ssd_chunked;
    b->mul_silu = sl_cpu_mul_silu;
    b->logsoftmax_gather = sl_cpu_logsoftmax_gather;
    b->sync = cpu_sync;
    b->destroy = cpu_destroy;
    return b;
}

void sl_backend_cpu_describe(char *buf, size_t n)
{
    const char *isa = "one version, as the build's compiler flags say (no multi-versioning in this build)";
#if SL_CPU_CLONE_TOP > 0
    /* the order in which GCC's resolver picks among the clones */
    __builtin_cpu_init();
    if (SL_CPU_CLONE_TOP >= 4 && __builtin_cpu_supports("x86-64-v4"))
        isa = "x86-64-v4 (AVX-512)";
    else if (__builtin_cpu_supports("x86-64-v3"))
        isa = SL_CPU_CLONE_TOP >= 4 ? "x86-64-v3 (AVX2+FMA)" : "x86-64-v3 (AVX2+FMA; built with CPU_MAX=v3)";
    else
        isa = "x86-64 baseline (SSE2)";
#endif
    snprintf(buf, n, "cpu kernels: %s; %d threads; BLAS: %s", isa, omp_get_max_threads(), sl_blas_describe());
}
