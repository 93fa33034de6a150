/* The selective-scan kernel (device code only). Included by scan.cu, which
 * launches it, and by the host simulator test (tests/cuda/test_cuda_sim.cc),
 * which runs this same source on the CPU, one fiber per GPU thread. The
 * decomposition is described in layout.h and at the top of scan.cu. */
#ifndef SLUICE_KERNELS_CUDA_SCAN_KERNEL_CUH
#define SLUICE_KERNELS_CUDA_SCAN_KERNEL_CUH

#include "kernels/cuda/layout.h"

namespace sl_cuda_k
{

struct scan_params {
    int64_t L;
    int N;
    const float *u;
    int64_t ldu;
    const float *dt;
    int64_t lddt;
    const float *dt_bias, *A_log2e, *B, *C;
    int64_t ldbc;
    const float *Dskip;
    const float *z;
    int64_t ldz;
    float *state;
    const uint8_t *reset;
    float *y;
    int64_t ldy;
};

__device__ __forceinline__ sl_scan_pair shfl_up_pair(sl_scan_pair p, int off)
{
    sl_scan_pair r;
    r.a = __shfl_up_sync(0xffffffffu, p.a, off);
    r.b = __shfl_up_sync(0xffffffffu, p.b, off);
    return r;
}

/* B and C are staged in shared memory kScanGroup state indices at a time:
 * read from global memory row by row (the B and C values of a token are
 * contiguous, so a warp reads 4 rows x 2 runs of 16 bytes instead of 32
 * scattered words), stored so that both the staging writes and the compute
 * reads are free of bank conflicts: value j (0..3 B, 4..7 C) of chunk row r
 * lives at j*S + r + r/32, with S = 4 (mod 32). */
constexpr int kScanGroup = 4;

/* At least 4 blocks per SM: caps registers at 128 (ptxas otherwise takes
 * 121-185 for the staged loop, halving occupancy of a latency-bound kernel). */
template <int T, int I> __global__ void __launch_bounds__(T, 4) scan_kernel(scan_params p)
{
    constexpr int W = T / SL_WARP, CH = T * I, G = kScanGroup;
    constexpr int S = (CH + CH / 32 - 4 + 31) / 32 * 32 + 4; /* >= CH + CH/32, = 4 (mod 32) */
    static_assert(S % 32 == 4 && S >= CH + CH / 32, "staging stride");
    __shared__ float bc[2 * G * S];
    __shared__ sl_scan_pair wagg[SL_SCAN_MAX_N][W];
    __shared__ sl_scan_pair carry[SL_SCAN_MAX_N], carry_out[SL_SCAN_MAX_N];
    const int64_t d = blockIdx.x;
    const int tid = threadIdx.x, lane = tid % SL_WARP, w = tid / SL_WARP, N = p.N;

    for (int n = tid; n < N; n += T) {
        carry[n].a = 1.0f;
        carry[n].b = p.state[d * N + n];
    }
    __syncthreads();
    for (int64_t c0 = 0; c0 < p.L; c0 += (int64_t)T * I) {
        float u[I], delta[I], acc[I];
        int rs[I];
#pragma unroll
        for (int i = 0; i < I; i++) {
            int64_t t = c0 + (int64_t)tid * I + i;
            acc[i] = 0.0f;
            u[i] = delta[i] = 0.0f;
            rs[i] = 0;
            if (t < p.L) {
                u[i] = p.u[t * p.ldu + d];
                delta[i] = sl_softplus(p.dt[t * p.lddt + d] + (p.dt_bias ? p.dt_bias[d] : 0.0f));
                rs[i] = p.reset ? p.reset[t] != 0 : 0;
            }
        }
        for (int n0 = 0; n0 < N; n0 += G) {
            __syncthreads(); /* the previous group's readers are done with bc */
            for (int idx = tid; idx < CH * 2 * G; idx += T) {
                const int r = idx / (2 * G), j = idx % (2 * G), n = n0 + j % G;
                const int64_t t = c0 + r;
                bc[j * S + r + r / 32] = t < p.L && n < N ? (j < G ? p.B : p.C)[t * p.ldbc + n] : 0.0f;
            }
            __syncthreads();
#pragma unroll 1 /* unrolling the group multiplies register use */
            for (int g = 0; g < G && n0 + g < N; g++) {
                const int n = n0 + g;
                const float a2 = p.A_log2e[d * N + n];
                sl_scan_pair e[I];
#pragma unroll
                for (int i = 0; i < I; i++) {
                    const int r = tid * I + i;
                    const int64_t t = c0 + r;
                    e[i] = t < p.L ? sl_scan_element(delta[i], a2, bc[g * S + r + r / 32], u[i], rs[i])
                                   : sl_scan_identity();
                }
                sl_scan_pair x = e[0];
#pragma unroll
                for (int i = 1; i < I; i++)
                    x = sl_scan_combine(x, e[i]);
#pragma unroll
                for (int off = 1; off < SL_WARP; off <<= 1) {
                    sl_scan_pair o = shfl_up_pair(x, off);
                    if (lane >= off)
                        x = sl_scan_combine(o, x);
                }
                sl_scan_pair excl = shfl_up_pair(x, 1);
                if (lane == SL_WARP - 1)
                    wagg[n][w] = x;
                __syncthreads();
                sl_scan_pair pre = carry[n];
                for (int j = 0; j < w; j++)
                    pre = sl_scan_combine(pre, wagg[n][j]);
                sl_scan_pair run = lane == 0 ? pre : sl_scan_combine(pre, excl);
#pragma unroll
                for (int i = 0; i < I; i++) {
                    const int r = tid * I + i;
                    run = sl_scan_combine(run, e[i]);
                    if (c0 + r < p.L)
                        acc[i] += bc[(G + g) * S + r + r / 32] * run.b;
                }
                if (tid == 0) {
                    sl_scan_pair tot = carry[n];
                    for (int j = 0; j < W; j++)
                        tot = sl_scan_combine(tot, wagg[n][j]);
                    carry_out[n].a = 1.0f;
                    carry_out[n].b = tot.b;
                }
            }
        }
        __syncthreads();
        for (int n = tid; n < N; n += T)
            carry[n] = carry_out[n];
#pragma unroll
        for (int i = 0; i < I; i++) {
            int64_t t = c0 + (int64_t)tid * I + i;
            if (t < p.L) {
                float z = p.z ? p.z[t * p.ldz + d] : 0.0f;
                p.y[t * p.ldy + d] = sl_scan_output(acc[i], p.Dskip ? p.Dskip[d] : 0.0f, u[i], z, p.z != nullptr);
            }
        }
        __syncthreads();
    }
    for (int n = tid; n < N; n += T)
        p.state[d * N + n] = carry[n].b;
}
} // namespace sl_cuda_k

#endif
