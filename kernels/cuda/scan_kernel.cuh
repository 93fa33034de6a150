/* The selective-scan kernel (device code only). Included by scan.cu, which
 * launches it, and by the host simulator test (tests/cuda/test_cuda_sim.cc),
 * which runs this same source on the CPU, one fiber per GPU thread. The
 * decomposition is described in layout.h and at the top of scan.cu. */
#ifndef SLUICE_KERNELS_CUDA_SCAN_KERNEL_CUH
#define SLUICE_KERNELS_CUDA_SCAN_KERNEL_CUH

#include "kernels/cuda/layout.h"

namespace sl_cuda_k {

struct scan_params {
    int64_t L;
    int N;
    const float *u; int64_t ldu;
    const float *dt; int64_t lddt;
    const float *dt_bias, *A_log2e, *B, *C;
    int64_t ldbc;
    const float *Dskip;
    const float *z; int64_t ldz;
    float *state;
    const uint8_t *reset;
    float *y; int64_t ldy;
};

__device__ __forceinline__ sl_scan_pair shfl_up_pair(sl_scan_pair p, int off)
{
    sl_scan_pair r;
    r.a = __shfl_up_sync(0xffffffffu, p.a, off);
    r.b = __shfl_up_sync(0xffffffffu, p.b, off);
    return r;
}

template <int T, int I>
__global__ void __launch_bounds__(T) scan_kernel(scan_params p)
{
    constexpr int W = T / SL_WARP;
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
        for (int n = 0; n < N; n++) {
            const float a2 = p.A_log2e[d * N + n];
            sl_scan_pair e[I];
#pragma unroll
            for (int i = 0; i < I; i++) {
                int64_t t = c0 + (int64_t)tid * I + i;
                e[i] = t < p.L ? sl_scan_element(delta[i], a2, p.B[t * p.ldbc + n], u[i], rs[i]) : sl_scan_identity();
            }
            sl_scan_pair x = e[0];
#pragma unroll
            for (int i = 1; i < I; i++) x = sl_scan_combine(x, e[i]);
#pragma unroll
            for (int off = 1; off < SL_WARP; off <<= 1) {
                sl_scan_pair o = shfl_up_pair(x, off);
                if (lane >= off) x = sl_scan_combine(o, x);
            }
            sl_scan_pair excl = shfl_up_pair(x, 1);
            if (lane == SL_WARP - 1) wagg[n][w] = x;
            __syncthreads();
            sl_scan_pair pre = carry[n];
            for (int j = 0; j < w; j++) pre = sl_scan_combine(pre, wagg[n][j]);
            sl_scan_pair run = lane == 0 ? pre : sl_scan_combine(pre, excl);
#pragma unroll
            for (int i = 0; i < I; i++) {
                int64_t t = c0 + (int64_t)tid * I + i;
                run = sl_scan_combine(run, e[i]);
                if (t < p.L) acc[i] += p.C[t * p.ldbc + n] * run.b;
            }
            if (tid == 0) {
                sl_scan_pair tot = carry[n];
                for (int j = 0; j < W; j++) tot = sl_scan_combine(tot, wagg[n][j]);
                carry_out[n].a = 1.0f;
                carry_out[n].b = tot.b;
            }
        }
        __syncthreads();
        for (int n = tid; n < N; n += T) carry[n] = carry_out[n];
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
    for (int n = tid; n < N; n += T) p.state[d * N + n] = carry[n].b;
}
} // namespace sl_cuda_k

#endif
