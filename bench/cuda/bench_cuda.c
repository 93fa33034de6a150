/* bench-cuda: the CUDA backend against the device's own ceilings and, side
 * by side on the same input, against the CPU backend.
 *
 *   1. ceilings measured in this run: device-to-device copy bandwidth
 *      (cudaMemcpy, bytes read + written), and
 *      the GEMM rate of the backend's linear() (cuBLAS) for fp32, TF32 and
 *      BF16 at 4096^3;
 *   2. the fused selective scan at mamba-130m's layer shape (d_inner 1536,
 *      d_state 16, 2048 tokens): tokens/s, achieved bandwidth (bytes it must
 *      move) and FLOP/s, as fractions of the ceilings; CPU backend alongside;
 *   3. the whole model at mamba-130m's shape (24 layers, d_model 768, vocab
 *      50280, random weights written by the benchmark, f32 and bf16) scoring
 *      2048-token documents packed 16 per call: tokens/s and GFLOP/s
 *      against the GEMM ceiling; the CPU backend on a few documents, ratio.
 *
 *   4. the whole model at mamba-1.4b's shape (48 layers, d_model 2048, bf16
 *      weights): GPU only (the CPU would take an hour).
 *
 * usage: bench_cuda [--no-1.4b] [--help]
 * SLUICE_BENCH_SMALL=1 shrinks every shape (a smoke run);
 * SLUICE_BENCH_DUT=cpu benchmarks the CPU backend in place of CUDA (to check
 * this program on a machine without a GPU; the device figures are then
 * meaningless). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/score.h"
#include "tests/cuda/random_model.h"

static int small;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const sl_err *err)
{
    fprintf(stderr, "bench-cuda: %s: %s\n", what, err->msg);
    exit(1);
}

static void *dev_alloc(sl_backend *b, size_t bytes, const void *host)
{
    sl_err err = {{0}};
    void *p = b->alloc(b, bytes, &err);
    if (!p)
        die("alloc", &err);
    if (host ? b->upload(b, p, host, bytes, &err) : b->memset0(b, p, bytes, &err))
        die("upload", &err);
    return p;
}

static void sync_or_die(sl_backend *b)
{
    sl_err err = {{0}};
    if (b->sync(b, &err) != 0)
        die("sync", &err);
}

static float *rnd_host(size_t n, float lo, float hi)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = lo + (hi - lo) * rm_uniform();
    return p;
}

/* --- 1. ceilings ------------------------------------------------------ */

/* Device copy bandwidth: bytes read + written per second by cudaMemcpy
 * device-to-device of a large buffer (memcpy for the CPU smoke run). */
static double measure_copy_bw(sl_backend *b)
{
    size_t bytes = small ? (64u << 20) : (1024u << 20);
    void *src = dev_alloc(b, bytes, NULL), *dst = dev_alloc(b, bytes, NULL);
    int cuda = !strcmp(b->name, "cuda"), reps = small ? 3 : 20;
    sync_or_die(b);
    double t0 = 0;
    for (int i = -1; i < reps; i++) { /* i = -1: warm-up */
        if (i == 0) {
            if (cuda)
                cudaDeviceSynchronize();
            t0 = now();
        }
        if (cuda) {
            cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
            if (e != cudaSuccess)
                fprintf(stderr, "bench-cuda: cudaMemcpy: %s\n", cudaGetErrorString(e)), exit(1);
        } else {
            memcpy(dst, src, bytes);
        }
    }
    if (cuda)
        cudaDeviceSynchronize();
    double dt = now() - t0;
    b->free(b, src), b->free(b, dst);
    return 2.0 * (double)bytes * reps / dt;
}

/* GFLOP/s of y[M][N] = x[M][K] W[N][K]^T through the backend's linear(). */
static double measure_gemm(sl_backend *b, int64_t M, int64_t N, int64_t K, sl_dtype wt, int tf32)
{
    sl_err err = {{0}};
    rm_rng = 1;
    float *hw = rnd_host((size_t)(N * K), -0.01f, 0.01f), *hx = rnd_host((size_t)(M * K), -1, 1);
    sl_weight w;
    if (b->weight_create(b, &w, hw, N, K, wt, &err) != 0)
        die("weight_create", &err);
    float *x = dev_alloc(b, (size_t)(M * K) * 4, hx), *y = dev_alloc(b, (size_t)(M * N) * 4, NULL);
    sl_cuda_set_tf32(b, tf32);
    sl_linear_args a = {.L = M, .x = x, .ldx = K, .w = &w, .y = y, .ldy = N};
    if (b->linear(b, &a, &err) != 0)
        die("linear", &err); /* warm-up: cuBLAS heuristics, clocks */
    sync_or_die(b);
    int reps = small ? 2 : 20;
    double t0 = now();
    for (int i = 0; i < reps; i++)
        if (b->linear(b, &a, &err) != 0)
            die("linear", &err);
    sync_or_die(b);
    double dt = now() - t0;
    sl_cuda_set_tf32(b, 1);
    b->free(b, x), b->free(b, y);
    b->weight_free(b, &w);
    free(hw), free(hx);
    return 2.0 * M * N * K * reps / dt / 1e9;
}

/* --- 2. selective scan -------------------------------------------------- */

static double bench_scan(sl_backend *b, int64_t L, int64_t D, int N, int reps, double *gbps, double *gflops)
{
    rm_rng = 2;
    int64_t ldbc = 48 + 2 * N; /* as x_proj's output: dt_rank 48, then B, C */
    float *hu = rnd_host((size_t)(L * 2 * D), -2, 2), *hdt = rnd_host((size_t)(L * D), -3, 3);
    float *hbc = rnd_host((size_t)(L * ldbc), -2, 2), *hb = rnd_host((size_t)D, -6, -2);
    float *hA = rnd_host((size_t)(D * N), -20, -1), *hD = rnd_host((size_t)D, 0.5f, 1.5f);
    float *xz = dev_alloc(b, (size_t)(L * 2 * D) * 4, hu), *dt = dev_alloc(b, (size_t)(L * D) * 4, hdt);
    float *bc = dev_alloc(b, (size_t)(L * ldbc) * 4, hbc), *bias = dev_alloc(b, (size_t)D * 4, hb);
    float *A = dev_alloc(b, (size_t)(D * N) * 4, hA), *Dk = dev_alloc(b, (size_t)D * 4, hD);
    float *st = dev_alloc(b, (size_t)(D * N) * 4, NULL), *y = dev_alloc(b, (size_t)(L * D) * 4, NULL);
    sl_scan_args a = {.L = L,
                      .D = D,
                      .N = N,
                      .u = xz,
                      .ldu = 2 * D,
                      .dt = dt,
                      .lddt = D,
                      .dt_bias = bias,
                      .A_log2e = A,
                      .B = bc + 48,
                      .C = bc + 48 + N,
                      .ldbc = ldbc,
                      .Dskip = Dk,
                      .z = xz + D,
                      .ldz = 2 * D,
                      .state = st,
                      .y = y,
                      .ldy = D};
    sl_err err = {{0}};
    if (b->selective_scan(b, &a, &err) != 0)
        die("selective_scan", &err);
    sync_or_die(b);
    double t0 = now();
    for (int i = 0; i < reps; i++)
        if (b->selective_scan(b, &a, &err) != 0)
            die("selective_scan", &err);
    sync_or_die(b);
    double dt_s = (now() - t0) / reps;
    /* must move: u, dt, z, y (4 floats per token-channel) + B, C per token */
    *gbps = (double)L * (4.0 * D + 2.0 * N) * 4 / dt_s / 1e9;
    /* per (token, channel, state): mul for delta*A, exp2, 2 mul (delta*B*u),
     * fma (a*h+b), fma (C*h) ~ 7 flops (exp counted as one) */
    *gflops = (double)L * D * N * 7 / dt_s / 1e9;
    b->free(b, xz), b->free(b, dt), b->free(b, bc), b->free(b, bias), b->free(b, A), b->free(b, Dk);
    b->free(b, st), b->free(b, y);
    free(hu), free(hdt), free(hbc), free(hb), free(hA), free(hD);
    return (double)L / dt_s;
}

/* --- 3. whole model ------------------------------------------------------ */

static double bench_model(sl_backend *b, const char *dir, int ndocs, int64_t doclen, int64_t chunk, double *gflops)
{
    sl_err err = {{0}};
    sl_model *m = sl_model_load(dir, b, &err);
    if (!m)
        die("model load", &err);
    sl_model_run *r = sl_model_run_new(m, chunk, &err);
    if (!r)
        die("run", &err);
    const sl_model_info *c = sl_model_get_info(m);
    rm_rng = 3;
    uint32_t *tok = malloc((size_t)(ndocs * doclen) * sizeof *tok);
    for (int64_t i = 0; i < ndocs * doclen; i++)
        tok[i] = (uint32_t)(rm_uniform() * (float)c->vocab_size);
    sl_score_item *it = calloc((size_t)ndocs, sizeof *it);
    for (int i = 0; i < ndocs; i++)
        it[i] = (sl_score_item){.id = "bench", .tokens = tok + i * doclen, .n = doclen};
    /* warm-up on the first document */
    if (sl_score_batch(r, it, 1, 0, &err) < 0)
        die("score", &err);
    double t0 = now();
    if (sl_score_batch(r, it, (size_t)ndocs, 0, &err) < 0)
        die("score", &err);
    double dt = now() - t0, toks = (double)ndocs * doclen;
    *gflops = toks * sl_model_flops_per_token(m) / dt / 1e9;
    free(it), free(tok);
    sl_model_run_free(r);
    sl_model_free(m);
    return toks / dt;
}

static void bench_shape(sl_backend *gpu, sl_backend *cpu, const char *dir, const char *label, const rm_shape *s,
                        double ceil_tf32, double ceil_bf16, int with_cpu)
{
    if (rm_write(dir, s) != 0)
        exit(1);
    int64_t doclen = small ? 256 : 2048;
    double mg, cmg = 0, cmt = 0;
    double t0 = now();
    double mt = bench_model(gpu, dir, small ? 4 : 16, doclen, small ? 1024 : 16 * 2048, &mg);
    if (with_cpu)
        cmt = bench_model(cpu, dir, small ? 1 : 2, doclen, doclen, &cmg);
    double ceil = s->bf16 ? ceil_bf16 : ceil_tf32;
    printf("model %s shape, %s weights, %lld-token docs: %s %.3g tok/s, %.0f GFLOP/s = %.1f%% of the %s GEMM rate",
           label, s->bf16 ? "bf16" : "f32", (long long)doclen, gpu->name, mt, mg, 100 * mg / ceil,
           s->bf16 ? "bf16" : "tf32");
    if (with_cpu)
        printf("; cpu %.3g tok/s (%.0f GFLOP/s); ratio %.1fx", cmt, cmg, mt / cmt);
    else
        printf("; cpu not run at this size");
    printf(" (%.0f s)\n", now() - t0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int big = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: bench_cuda [--no-1.4b]\n"
                   "The CUDA backend against the GPU's own ceilings (copy bandwidth, cuBLAS GEMM rates\n"
                   "measured in this run) and the CPU backend: the selective scan at mamba-130m's layer\n"
                   "shape, and the whole model at mamba-130m's shape (f32, bf16) and mamba-1.4b's (bf16,\n"
                   "GPU only; --no-1.4b skips it). Random weights, written to a temporary folder.\n"
                   "SLUICE_BENCH_SMALL=1: tiny shapes (a smoke run); SLUICE_BENCH_DUT=cpu: the CPU backend\n"
                   "in place of CUDA (checks this program without a GPU).\n");
            return 0;
        } else if (!strcmp(argv[i], "--no-1.4b")) {
            big = 0;
        } else {
            fprintf(stderr, "bench-cuda: unknown argument '%s' (--help lists the options)\n", argv[i]);
            return 2;
        }
    }
    small = getenv("SLUICE_BENCH_SMALL") != NULL;
    const char *d = getenv("SLUICE_BENCH_DUT");
    sl_err err = {{0}};
    sl_backend *cpu = sl_backend_cpu(0, &err);
    if (!cpu)
        die("cpu backend", &err);
    sl_backend *gpu = d && !strcmp(d, "cpu") ? sl_backend_cpu(0, &err) : sl_backend_cuda(0, &err);
    if (!gpu)
        die("cuda backend", &err);
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    printf("bench-cuda %s: %s; CPU backend on %ld cores%s\n", date, sl_cuda_describe(gpu),
           sysconf(_SC_NPROCESSORS_ONLN), small ? " (SMALL shapes: smoke run, figures meaningless)" : "");

    /* 1 */
    double bw = measure_copy_bw(gpu) / 1e9;
    int64_t g = small ? 256 : 4096;
    double f32 = measure_gemm(gpu, g, g, g, SL_DT_F32, 0), tf32 = measure_gemm(gpu, g, g, g, SL_DT_F32, 1);
    double bf16 = measure_gemm(gpu, g, g, g, SL_DT_BF16, 1);
    printf(
        "ceilings: device copy bandwidth %.0f GB/s (read+write); GEMM %lld^3 fp32 %.0f, tf32 %.0f, bf16 %.0f GFLOP/s\n",
        bw, (long long)g, f32, tf32, bf16);

    /* 2 */
    int64_t L = small ? 256 : 2048, D = small ? 128 : 1536;
    double gb, gf, cgb, cgf;
    double tps = bench_scan(gpu, L, D, 16, small ? 2 : 50, &gb, &gf);
    double ctps = bench_scan(cpu, L, D, 16, small ? 1 : 3, &cgb, &cgf);
    printf("selective scan L=%lld d_inner=%lld N=16: %s %.3g tok/s (%.0f GB/s = %.0f%% of copy bw, %.0f GFLOP/s); "
           "cpu %.3g tok/s; ratio %.1fx\n",
           (long long)L, (long long)D, gpu->name, tps, gb, 100 * gb / bw, gf, ctps, tps / ctps);

    /* 3 */
    char dir[] = "/tmp/sluice-bench-cuda-XXXXXX";
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    for (int bf = 0; bf < 2; bf++) {
        rm_shape s = {.d_model = small ? 128 : 768,
                      .n_layer = small ? 2 : 24,
                      .vocab = small ? 1000 : 50280,
                      .d_state = 16,
                      .d_conv = 4,
                      .expand = 2,
                      .dt_rank = small ? 8 : 48,
                      .bf16 = bf,
                      .seed = 11};
        bench_shape(gpu, cpu, dir, "mamba-130m", &s, tf32, bf16, 1);
    }
    if (big) {
        rm_shape s = {.d_model = small ? 256 : 2048,
                      .n_layer = small ? 4 : 48,
                      .vocab = small ? 1000 : 50280,
                      .d_state = 16,
                      .d_conv = 4,
                      .expand = 2,
                      .dt_rank = small ? 16 : 128,
                      .bf16 = 1,
                      .seed = 12};
        bench_shape(gpu, cpu, dir, "mamba-1.4b", &s, tf32, bf16, 0);
    }
    rm_remove(dir);
    sl_backend_close(gpu);
    sl_backend_close(cpu);
    return 0;
}
