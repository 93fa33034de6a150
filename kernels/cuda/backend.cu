/* The CUDA backend: device selection, memory, weights, cuBLAS projections,
 * and the sl_backend table (kernels/kernels.h) wired to the kernels in
 * scan.cu, conv.cu and rows.cu.
 *
 * Every op is queued on one stream in call order, so the model's sequence
 * of ops needs no extra synchronisation; the host waits only in sync(), in
 * download() into pageable memory, and in upload() until a pageable source
 * has been staged. Scratch memory comes from the stream-ordered allocator,
 * so allocating and freeing per call does not stall the queue.
 *
 * cuBLAS is loaded with dlopen when a CUDA backend is opened, not linked:
 * loading it costs ~0.3 s and ~200 MB per process, which every sluice run
 * (and every test) would pay even on machines without a GPU. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/gemm_plan.h"
#include "kernels/cuda/internal.cuh"

int sl_cuda_fail(sl_err *err, const char *what, cudaError_t e)
{
    return sl_errf(err, "cuda: %s: %s", what, cudaGetErrorString(e));
}

int sl_cuda_check_launch(sl_err *err, const char *what)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : sl_cuda_fail(err, what, e);
}

void *sl_cuda_scratch(sl_cuda_ctx *c, size_t bytes, sl_err *err)
{
    void *p = nullptr;
    cudaError_t e = c->pools ? cudaMallocAsync(&p, bytes ? bytes : 1, c->stream) : cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        sl_errf(err, "cuda: cannot allocate %zu bytes of device memory: %s", bytes, cudaGetErrorString(e));
        return nullptr;
    }
    return p;
}

void sl_cuda_scratch_free(sl_cuda_ctx *c, void *p)
{
    if (!p)
        return;
    if (c->pools)
        cudaFreeAsync(p, c->stream);
    else
        cudaFree(p);
}

namespace
{

/* --- cuBLAS, loaded on first use ----------------------------------------- */

#define SL_STR2(x) #x
#define SL_STR(x) SL_STR2(x)

struct blas_api {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetStream_v2) set_stream;
    /* the C API's cublasGemmEx (C++ also sees an overload for cudaDataType compute types) */
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                              const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                              cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    decltype(&cublasGetStatusString) status_string;
};
blas_api blas;
char blas_error[512];
pthread_once_t blas_once = PTHREAD_ONCE_INIT;

void blas_load(void)
{
    /* the soname of the cuBLAS this was compiled against, then any */
    const char *names[] = {"libcublas.so." SL_STR(CUBLAS_VER_MAJOR), "libcublas.so"};
    void *lib = nullptr;
    for (const char *n : names)
        if ((lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)) != nullptr)
            break;
    if (!lib) {
        snprintf(blas_error, sizeof blas_error, "cannot load cuBLAS (libcublas.so.%d): %s", CUBLAS_VER_MAJOR,
                 dlerror());
        return;
    }
    blas.create = (decltype(blas.create))dlsym(lib, "cublasCreate_v2");
    blas.destroy = (decltype(blas.destroy))dlsym(lib, "cublasDestroy_v2");
    blas.set_stream = (decltype(blas.set_stream))dlsym(lib, "cublasSetStream_v2");
    blas.gemm_ex = (decltype(blas.gemm_ex))dlsym(lib, "cublasGemmEx");
    blas.status_string = (decltype(blas.status_string))dlsym(lib, "cublasGetStatusString");
    if (!blas.create || !blas.destroy || !blas.set_stream || !blas.gemm_ex || !blas.status_string) {
        snprintf(blas_error, sizeof blas_error, "cuBLAS lacks cublasGemmEx or another function sluice needs");
        blas.create = nullptr;
    }
}

/* --- memory ----------------------------------------------------------- */

void *cu_alloc(sl_backend *b, size_t bytes, sl_err *err)
{
    return sl_cuda_scratch(sl_cuda_ctx_of(b), bytes, err);
}

void cu_free(sl_backend *b, void *p)
{
    sl_cuda_scratch_free(sl_cuda_ctx_of(b), p);
}

bool is_pinned(const void *p)
{
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError(); /* plain pageable memory on old drivers */
        return false;
    }
    return at.type == cudaMemoryTypeHost;
}

int cu_upload(sl_backend *b, void *dst, const void *src, size_t bytes, sl_err *err)
{
    if (!bytes)
        return 0;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, sl_cuda_ctx_of(b)->stream);
    return e == cudaSuccess ? 0 : sl_cuda_fail(err, "upload", e);
}

int cu_download(sl_backend *b, void *dst, const void *src, size_t bytes, sl_err *err)
{
    if (!bytes)
        return 0;
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess && !is_pinned(dst))
        e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? 0 : sl_cuda_fail(err, "download", e);
}

int cu_memset0(sl_backend *b, void *dst, size_t bytes, sl_err *err)
{
    if (!bytes)
        return 0;
    cudaError_t e = cudaMemsetAsync(dst, 0, bytes, sl_cuda_ctx_of(b)->stream);
    return e == cudaSuccess ? 0 : sl_cuda_fail(err, "memset", e);
}

int cu_sync(sl_backend *b, sl_err *err)
{
    cudaError_t e = cudaStreamSynchronize(sl_cuda_ctx_of(b)->stream);
    return e == cudaSuccess ? 0 : sl_cuda_fail(err, "sync", e);
}

/* --- weights and projections ----------------------------------------- */

/* bf16 from fp32 by round-to-nearest-even (exact when the value came from
 * bf16, as bf16 checkpoint weights do). NaN stays NaN. */
uint16_t bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* bf16 checkpoints stay bf16 on the device (tensor-core GEMMs, half the
 * memory); f32 and f16 ones are kept in f32 (TF32 or fp32 GEMMs): f16
 * activations could overflow, and bf16 would round f16's mantissa. */
int cu_weight_create(sl_backend *b, sl_weight *w, const float *host, int64_t rows, int64_t cols, sl_dtype src_dtype,
                     sl_err *err)
{
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    memset(w, 0, sizeof *w);
    w->rows = rows, w->cols = cols;
    w->dtype = src_dtype == SL_DT_BF16 ? SL_DT_BF16 : SL_DT_F32;
    size_t n = (size_t)rows * (size_t)cols, esz = w->dtype == SL_DT_BF16 ? 2 : 4;
    cudaError_t e = cudaMalloc(&w->data, n > 0 ? n * esz : 1);
    if (e != cudaSuccess) {
        w->data = nullptr;
        return sl_errf(err, "cuda: cannot allocate %zu bytes for a %lldx%lld weight: %s", n * esz, (long long)rows,
                       (long long)cols, cudaGetErrorString(e));
    }
    const void *src = host;
    uint16_t *tmp = nullptr;
    if (w->dtype == SL_DT_BF16) {
        tmp = (uint16_t *)sl_xmalloc(n * 2 + 1);
        for (size_t i = 0; i < n; i++)
            tmp[i] = bf16_bits(host[i]);
        src = tmp;
    }
    e = cudaMemcpyAsync(w->data, src, n * esz, cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    free(tmp);
    if (e != cudaSuccess) {
        cudaFree(w->data);
        w->data = nullptr;
        return sl_cuda_fail(err, "weight upload", e);
    }
    return 0;
}

void cu_weight_free(sl_backend *b, sl_weight *w)
{
    if (w->data) {
        cudaStreamSynchronize(sl_cuda_ctx_of(b)->stream); /* no queued op may still read it */
        cudaFree(w->data);
    }
    w->data = nullptr;
}

int blas_fail(sl_err *err, const char *what, cublasStatus_t s)
{
    return sl_errf(err, "cuda: %s: cuBLAS: %s", what, blas.status_string(s));
}

/* y[L][N] = x[L][K] W[N][K]^T (+ bias) as one cublasGemmEx call mapped by
 * gemm_plan.h (which the CPU tests check with OpenBLAS); fp32 accumulation. */
int cu_linear(sl_backend *b, const sl_linear_args *a, sl_err *err)
{
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    const sl_weight *w = a->w;
    const int64_t L = a->L, N = w->rows, K = w->cols;
    if (L <= 0 || N <= 0)
        return 0;
    if (L > INT_MAX || N > INT_MAX || K > INT_MAX || a->ldx > INT_MAX || a->ldy > INT_MAX)
        return sl_errf(err, "cuda: linear: %lldx%lld by %lld is too large for one GEMM", (long long)L, (long long)K,
                       (long long)N);
    float one = 1.0f, beta = 0.0f;
    if (a->bias) {
        if (sl_cuda_fill_bias(c, a->y, a->ldy, a->bias, L, N, err) != 0)
            return -1;
        beta = 1.0f;
    }
    const bool bf16 = w->dtype == SL_DT_BF16;
    const void *x = a->x;
    __nv_bfloat16 *xb = nullptr;
    if (bf16) { /* tensor cores need both inputs in bf16: round the activations (contiguous, ld K) */
        xb = (__nv_bfloat16 *)sl_cuda_scratch(c, (size_t)(L * K) * 2, err);
        if (!xb)
            return -1;
        if (sl_cuda_to_bf16(c, xb, a->x, a->ldx, L, K, err) != 0) {
            sl_cuda_scratch_free(c, xb);
            return -1;
        }
        x = xb;
    }
    const sl_gemm_plan p = sl_gemm_plan_linear(L, N, K, bf16 ? K : a->ldx, a->ldy);
    const cudaDataType in_type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = bf16 || !c->tf32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    cublasStatus_t s =
        blas.gemm_ex(c->blas, p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, (int)p.m,
                     (int)p.n, (int)p.k, &one, w->data, in_type, (int)p.lda, x, in_type, (int)p.ldb, &beta, a->y,
                     CUDA_R_32F, (int)p.ldc, compute, CUBLAS_GEMM_DEFAULT);
    sl_cuda_scratch_free(c, xb);
    return s == CUBLAS_STATUS_SUCCESS ? 0 : blas_fail(err, "linear", s);
}

void cu_destroy(sl_backend *b)
{
    if (!b)
        return;
    sl_cuda_ctx *c = (sl_cuda_ctx *)b->ctx;
    if (c) {
        cudaSetDevice(c->device);
        cudaStreamSynchronize(c->stream);
        if (c->blas)
            blas.destroy(c->blas);
        if (c->stream)
            cudaStreamDestroy(c->stream);
        free(c);
    }
    free(b);
}

} // namespace

/* --- entry points -------------------------------------------------------- */

extern "C" int sl_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* no driver or no device: not an error here */
        return 0;
    }
    return n;
}

extern "C" sl_backend *sl_backend_cuda(int device, sl_err *err)
{
    int n = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        cudaRuntimeGetVersion(&rt);
        if (e == cudaErrorInsufficientDriver)
            sl_errf(err,
                    "cuda: no CUDA device found (cudaGetDeviceCount: %s: no NVIDIA driver is loaded, or it is "
                    "older than this CUDA %d.%d runtime needs)",
                    cudaGetErrorString(e), rt / 1000, rt % 1000 / 10);
        else
            sl_errf(err, "cuda: no CUDA device found (cudaGetDeviceCount: %s)",
                    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return nullptr;
    }
    if (device < 0 || device >= n) {
        sl_errf(err, "cuda: device %d does not exist (%d device%s found)", device, n, n == 1 ? "" : "s");
        return nullptr;
    }
    cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        sl_cuda_fail(err, "cudaGetDeviceProperties", e);
        return nullptr;
    }
    if (prop.major < 8) {
        sl_errf(err,
                "cuda: device %d (%s) has compute capability %d.%d; sluice's CUDA kernels need 8.0 or newer "
                "(use --device cpu)",
                device, prop.name, prop.major, prop.minor);
        return nullptr;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        sl_cuda_fail(err, "cudaSetDevice", e);
        return nullptr;
    }
    sl_cuda_ctx *c = (sl_cuda_ctx *)sl_xcalloc(1, sizeof *c);
    sl_backend *b = (sl_backend *)sl_xcalloc(1, sizeof *b);
    b->name = "cuda";
    b->ctx = c;
    c->device = device;
    c->tf32 = 1;
    int pools = 0;
    cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device);
    c->pools = pools;
    if (pools) { /* keep freed scratch in the pool across syncs instead of returning it to the OS */
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();
    }
    snprintf(c->desc, sizeof c->desc, "%.200s (compute capability %d.%d, %.1f GiB, %d SMs)", prop.name, prop.major,
             prop.minor, prop.totalGlobalMem / 1073741824.0, prop.multiProcessorCount);
    if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        sl_cuda_fail(err, "cudaStreamCreate", e);
        cu_destroy(b);
        return nullptr;
    }
    pthread_once(&blas_once, blas_load);
    if (!blas.create) {
        sl_errf(err, "cuda: %s", blas_error);
        cu_destroy(b);
        return nullptr;
    }
    cublasStatus_t s = blas.create(&c->blas);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = blas.set_stream(c->blas, c->stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        blas_fail(err, "cublasCreate", s);
        c->blas = nullptr;
        cu_destroy(b);
        return nullptr;
    }
    b->alloc = cu_alloc;
    b->free = cu_free;
    b->upload = cu_upload;
    b->download = cu_download;
    b->memset0 = cu_memset0;
    b->weight_create = cu_weight_create;
    b->weight_free = cu_weight_free;
    b->linear = cu_linear;
    b->embed = sl_cuda_embed;
    b->conv1d_silu = sl_cuda_conv1d_silu;
    b->selective_scan = sl_cuda_selective_scan;
    b->add_rmsnorm = sl_cuda_add_rmsnorm;
    b->ssd_chunked = sl_cuda_ssd_chunked;
    b->mul_silu = sl_cuda_mul_silu;
    b->logsoftmax_gather = sl_cuda_logsoftmax_gather;
    b->sync = cu_sync;
    b->destroy = cu_destroy;
    return b;
}

extern "C" int sl_cuda_set_tf32(sl_backend *b, int on)
{
    if (!b || !b->name || strcmp(b->name, "cuda") != 0)
        return -1;
    sl_cuda_ctx *c = sl_cuda_ctx_of(b);
    int old = c->tf32;
    c->tf32 = on != 0;
    return old;
}

extern "C" void *sl_cuda_host_alloc(sl_backend *b, size_t bytes, sl_err *err)
{
    (void)b;
    void *p = nullptr;
    cudaError_t e = cudaMallocHost(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        sl_errf(err, "cuda: cannot allocate %zu bytes of page-locked host memory: %s", bytes, cudaGetErrorString(e));
        return nullptr;
    }
    return p;
}

extern "C" void sl_cuda_host_free(sl_backend *b, void *p)
{
    if (!p)
        return;
    if (b && b->ctx)
        cudaStreamSynchronize(sl_cuda_ctx_of(b)->stream); /* no queued copy may still use it */
    cudaFreeHost(p);
}

extern "C" const char *sl_cuda_describe(sl_backend *b)
{
    if (!b || !b->name || strcmp(b->name, "cuda") != 0)
        return "not a CUDA backend";
    return sl_cuda_ctx_of(b)->desc;
}
