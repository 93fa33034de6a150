/* How the CUDA kernels split their work, and the per-thread pieces of that
 * work, in one header compiled both by nvcc (the kernels/cuda .cu files) and by the C
 * compiler (kernels/scan_emu.c). The host emulation replays exactly these
 * decompositions on the CPU, so the CPU test suite checks the order of
 * operations the GPU performs, on a machine without a GPU.
 *
 * Selective scan (kernels/cuda/scan.cu), after mamba_ssm's forward kernel:
 *   - one thread block per channel d; the L tokens of a call are cut into
 *     chunks of threads*items tokens, processed one after the other;
 *   - thread i of a block owns `items` consecutive tokens of the chunk
 *     (blocked arrangement: tokens i*items .. i*items+items-1);
 *   - for every state index n: each thread folds its items into one pair
 *     with sl_scan_combine, warps scan those pairs (Kogge-Stone with
 *     shuffles at offsets 1,2,4,8,16), the warp totals are folded in warp
 *     order onto the prefix carried from the previous chunk, and each thread
 *     then replays the recurrence over its items from its incoming state;
 *   - items past the end of the call are the identity pair (1,0), so the
 *     carried state is right for ragged tails;
 *   - a reset token gets a = 0, which zeroes the history before it inside
 *     the same associative scan (no special case).
 *
 * Mamba-2 SSD, chunked (kernels/cuda/ssd.cu):
 *   - one block of SL_SSD_THREADS threads per (head h, tile of SL_SSD_PT
 *     channels of the head): block index = h * tiles + tile; thread i owns
 *     channel i / 4 of the tile and the states n = i % 4, i % 4 + 4, ... of
 *     it, in registers; the block walks the call's tokens in chunks of
 *     SL_SSD_Q, one after the other;
 *   - per chunk: B, C (the head's group) and x are staged in shared memory;
 *     thread 0 computes, in token order, delta, the running sum cum[t] of
 *     delta*A over the chunk, the first token that reaches t (after the last
 *     reset at or before t), carry[t] = exp(cum[t]) (0 after a reset) and the
 *     weights of the tokens in the chunk's state update;
 *   - W[t][s] = (C[t].B[s], n in order) * exp(cum[t] - cum[s]) * delta[s] for
 *     first[t] <= s <= t, else 0 (thread i computes pairs i, i+T, ...);
 *   - y[t][p] = sum_s W[t][s] x[s][p] (s in order) + carry[t] * C[t].S[p],
 *     the second dot as four partial sums (one per thread of the channel)
 *     added by xor-shuffles at offsets 1 then 2; then (y + D x) * silu(z);
 *   - S[p][n] = decay * S[p][n] + sum_s (wS[s] x[s][p]) B[s][n] (s in
 *     order), decay = exp(cum[q-1]) (0 when the chunk has a reset).
 *
 * Row reductions (RMSNorm, log-softmax): one block of SL_ROW_THREADS
 * threads per row; thread i takes columns i, i+T, i+2T, ...; warps reduce
 * with xor-shuffles at offsets 16,8,4,2,1; warp results are folded in warp
 * order. */
#ifndef SLUICE_KERNELS_CUDA_LAYOUT_H
#define SLUICE_KERNELS_CUDA_LAYOUT_H

#include <math.h>
#include <stdint.h>

#include "kernels/ssm_math.h"

#define SL_WARP 32
/* Largest d_state the scan kernel accepts (carried prefix in shared memory). */
#define SL_SCAN_MAX_N 64
#define SL_ROW_THREADS 256

/* Mamba-2 SSD: tokens per chunk, head channels per block, threads per block
 * (4 per channel) and the largest d_state (registers per thread: N / 4). */
#define SL_SSD_Q 32
#define SL_SSD_PT 32
#define SL_SSD_THREADS (4 * SL_SSD_PT)
#define SL_SSD_MAX_N 128

/* delta = softplus(dt + dt_bias) clamped to [lo, hi] (mamba_ssm's dt_limit). */
SL_HD float sl_ssd_delta(float dt, float bias, float lo, float hi)
{
    float d = sl_softplus(dt + bias);
    d = d < lo ? lo : d;
    return d > hi ? hi : d;
}

typedef struct sl_scan_layout {
    int threads; /* per block, a multiple of SL_WARP */
    int items;   /* consecutive tokens per thread */
} sl_scan_layout;

/* The layouts the kernel is instantiated with (short calls use narrower
 * blocks so fewer threads idle on identity items). */
#define SL_SCAN_NLAYOUTS 3
SL_HD sl_scan_layout sl_scan_layout_get(int i)
{
    sl_scan_layout l;
    l.threads = i == 0 ? 32 : 128;
    l.items = i == 2 ? 8 : 4;
    return l;
}

/* Which layout a call of L tokens uses: 32x4 (128 tokens) up to L=128,
 * 128x4 (512) up to L=512, 128x8 (1024-token chunks) beyond. */
SL_HD int sl_scan_layout_pick(int64_t L)
{
    return L <= 128 ? 0 : L <= 512 ? 1 : 2;
}

SL_HD sl_scan_pair sl_scan_identity(void)
{
    sl_scan_pair p;
    p.a = 1.0f;
    p.b = 0.0f;
    return p;
}

/* The pair of one (token, channel, state) element: a = exp(delta*A) (0 at a
 * reset), b = delta*B*u. */
SL_HD sl_scan_pair sl_scan_element(float delta, float a_log2e, float Bn, float u, int reset)
{
    sl_scan_pair p;
    p.a = reset ? 0.0f : sl_discretize_a(delta, a_log2e);
    p.b = delta * Bn * u;
    return p;
}

/* Output of one token: y = (C.h + D*u) * silu(z) (no gate when !has_z). */
SL_HD float sl_scan_output(float ch, float dskip, float u, float z, int has_z)
{
    float y = ch + dskip * u;
    return has_z ? y * sl_silu(z) : y;
}

/* Online log-sum-exp state of a set of values: max m and sum s of exp(v-m).
 * Empty set: m = -inf, s = 0. */
typedef struct sl_lse {
    float m, s;
} sl_lse;

SL_HD sl_lse sl_lse_empty(void)
{
    sl_lse r;
    r.m = -INFINITY;
    r.s = 0.0f;
    return r;
}

SL_HD sl_lse sl_lse_add(sl_lse x, float v)
{
    if (v == -INFINITY)
        return x; /* exp(-inf) adds nothing */
    if (v <= x.m) {
        x.s += expf(v - x.m);
    } else {
        x.s = x.s * expf(x.m - v) + 1.0f; /* exp(-inf) = 0 for the empty set */
        x.m = v;
    }
    return x;
}

SL_HD sl_lse sl_lse_merge(sl_lse x, sl_lse y)
{
    if (y.s == 0.0f)
        return x;
    if (x.s == 0.0f)
        return y;
    sl_lse r;
    if (x.m >= y.m) {
        r.m = x.m;
        r.s = x.s + y.s * expf(y.m - x.m);
    } else {
        r.m = y.m;
        r.s = y.s + x.s * expf(x.m - y.m);
    }
    return r;
}

/* Causal depthwise conv of one (token, channel): taps[k] is the input at
 * time t-(K-1)+k, already zero where it lies before a reset or before the
 * start of the history. */
SL_HD float sl_conv_output(const float *taps, const float *w, float bias, int K)
{
    float acc = bias;
    for (int k = 0; k < K; k++)
        acc += w[k] * taps[k];
    return sl_silu(acc);
}

#endif
