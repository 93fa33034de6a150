/* The chunked SSD kernel of Mamba-2 (device code only). Included by ssd.cu,
 * which launches it, and by the host simulator test
 * (tests/cuda/test_cuda_sim.cc), which runs this same source on the CPU, one
 * fiber per GPU thread. The decomposition is described in layout.h; the
 * host emulation sl_ssd_emu (kernels/scan_emu.c) replays it. */
#ifndef SLUICE_KERNELS_CUDA_SSD_KERNEL_CUH
#define SLUICE_KERNELS_CUDA_SSD_KERNEL_CUH

#include "kernels/cuda/layout.h"

namespace sl_cuda_k
{

struct ssd_params {
    int64_t L;
    int H, P, G, N;
    const float *x;
    int64_t ldx;
    const float *dt;
    int64_t lddt;
    const float *dt_bias, *A, *Dskip;
    float dt_min, dt_max;
    const float *B, *C;
    int64_t ldbc;
    const float *z;
    int64_t ldz;
    float *state;
    const uint8_t *reset;
    float *y;
    int64_t ldy;
};

__global__ void __launch_bounds__(SL_SSD_THREADS) ssd_kernel(ssd_params p)
{
    constexpr int Q = SL_SSD_Q, PT = SL_SSD_PT, T = SL_SSD_THREADS, MN = SL_SSD_MAX_N, R = MN / 4;
    __shared__ float Bs[Q][MN], Cs[Q][MN], W[Q][Q], xs[Q][PT];
    __shared__ float dl[Q], cum[Q], carry[Q], wS[Q];
    __shared__ int first[Q];
    __shared__ float decay;
    const int tiles = (p.P + PT - 1) / PT;
    const int h = (int)blockIdx.x / tiles, tile = (int)blockIdx.x % tiles, g = h / (p.H / p.G);
    const int tid = threadIdx.x, pl = tid >> 2, nq = tid & 3, N = p.N;
    const int ch = tile * PT + pl; /* channel of the head */
    const bool pv = ch < p.P;
    const float A = p.A[h];
    float S[R];
#pragma unroll
    for (int j = 0; j < R; j++) {
        int n = nq + 4 * j;
        S[j] = pv && n < N ? p.state[((int64_t)h * p.P + ch) * N + n] : 0.0f;
    }
    for (int64_t c0 = 0; c0 < p.L; c0 += Q) {
        const int q = p.L - c0 < Q ? (int)(p.L - c0) : Q;
        for (int i = tid; i < Q * N; i += T) {
            int t = i / N, n = i % N;
            const int64_t row = (c0 + t) * p.ldbc + (int64_t)g * N + n;
            Bs[t][n] = t < q ? p.B[row] : 0.0f;
            Cs[t][n] = t < q ? p.C[row] : 0.0f;
        }
        for (int i = tid; i < Q * PT; i += T) {
            int t = i / PT, j = i % PT, c = tile * PT + j;
            xs[t][j] = t < q && c < p.P ? p.x[(c0 + t) * p.ldx + (int64_t)h * p.P + c] : 0.0f;
        }
        if (tid == 0) {
            float run = 0.0f;
            int f = 0, clean = 1; /* first contributing token; no reset so far */
            for (int t = 0; t < Q; t++) {
                float d = t < q ? sl_ssd_delta(p.dt[(c0 + t) * p.lddt + h], p.dt_bias[h], p.dt_min, p.dt_max) : 0.0f;
                if (t < q && p.reset && p.reset[c0 + t]) {
                    f = t;
                    clean = 0;
                }
                run += d * A;
                dl[t] = d;
                cum[t] = run;
                first[t] = f;
                carry[t] = clean ? expf(run) : 0.0f;
            }
            decay = carry[q - 1];
            for (int s = 0; s < Q; s++)
                wS[s] = s >= first[q - 1] && s < q ? expf(cum[q - 1] - cum[s]) * dl[s] : 0.0f;
        }
        __syncthreads();
        for (int i = tid; i < Q * Q; i += T) {
            int t = i / Q, s = i % Q;
            float w = 0.0f;
            if (t < q && s <= t && s >= first[t]) {
                float cb = 0.0f;
                for (int n = 0; n < N; n++)
                    cb += Cs[t][n] * Bs[s][n];
                w = cb * expf(cum[t] - cum[s]) * dl[s];
            }
            W[t][s] = w;
        }
        __syncthreads();
        for (int t = 0; t < Q; t++) {
            float part = 0.0f;
#pragma unroll
            for (int j = 0; j < R; j++) {
                int n = nq + 4 * j;
                if (n < N)
                    part += Cs[t][n] * S[j];
            }
            part += __shfl_xor_sync(0xffffffffu, part, 1);
            part += __shfl_xor_sync(0xffffffffu, part, 2);
            if (nq == (t & 3) && t < q && pv) {
                float acc = 0.0f;
                for (int s = 0; s < Q; s++)
                    acc += W[t][s] * xs[s][pl];
                const int64_t col = (int64_t)h * p.P + ch;
                float z = p.z ? p.z[(c0 + t) * p.ldz + col] : 0.0f;
                p.y[(c0 + t) * p.ldy + col] = sl_scan_output(acc + carry[t] * part, p.Dskip[h], xs[t][pl], z, p.z != 0);
            }
        }
#pragma unroll
        for (int j = 0; j < R; j++) {
            int n = nq + 4 * j;
            float acc = 0.0f;
            if (n < N)
                for (int s = 0; s < Q; s++)
                    acc += (wS[s] * xs[s][pl]) * Bs[s][n];
            S[j] = decay * S[j] + acc;
        }
        __syncthreads(); /* the next chunk overwrites the shared arrays */
    }
#pragma unroll
    for (int j = 0; j < R; j++) {
        int n = nq + 4 * j;
        if (pv && n < N)
            p.state[((int64_t)h * p.P + ch) * N + n] = S[j];
    }
}

} // namespace sl_cuda_k

#endif
