/* Host emulation of the CUDA kernels' decomposition (the kernels/cuda .cu files).
 * Every loop below stands for GPU threads, and the values are combined in
 * the order the GPU combines them; see kernels/cuda/layout.h for the
 * layout and kernels/scan_emu.h for the purpose. Per-element math comes from
 * the same header the kernels use. */
#include "kernels/scan_emu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/layout.h"

/* --- selective scan -------------------------------------------------- */

/* One warp's inclusive Kogge-Stone scan with __shfl_up_sync: at offset o,
 * lane l >= o combines the value lane l-o held before this step. */
static void warp_scan(sl_scan_pair *x)
{
    sl_scan_pair old[SL_WARP];
    for (int off = 1; off < SL_WARP; off <<= 1) {
        memcpy(old, x, sizeof old);
        for (int lane = off; lane < SL_WARP; lane++)
            x[lane] = sl_scan_combine(old[lane - off], old[lane]);
    }
}

int sl_scan_emu_shape(const sl_scan_args *a, int T, int I, sl_err *err)
{
    if (T < SL_WARP || T > 1024 || T % SL_WARP != 0 || I < 1 || I > 64)
        return sl_errf(err, "scan_emu: bad block shape %d threads x %d items", T, I);
    if (a->N < 1 || a->N > SL_SCAN_MAX_N)
        return sl_errf(err, "scan_emu: d_state %d outside 1..%d", a->N, SL_SCAN_MAX_N);
    const int W = T / SL_WARP, N = a->N;
    const int64_t chunk = (int64_t)T * I;
    size_t nel = (size_t)chunk;
    float *u = malloc(nel * sizeof *u), *delta = malloc(nel * sizeof *delta), *acc = malloc(nel * sizeof *acc);
    int *rs = malloc(nel * sizeof *rs);
    sl_scan_pair *e = malloc(nel * sizeof *e), *incl = malloc((size_t)T * sizeof *incl);
    sl_scan_pair *wagg = malloc((size_t)W * sizeof *wagg), carry[SL_SCAN_MAX_N], carry_out[SL_SCAN_MAX_N];
    if (!u || !delta || !acc || !rs || !e || !incl || !wagg) {
        free(u), free(delta), free(acc), free(rs), free(e), free(incl), free(wagg);
        return sl_errf(err, "scan_emu: out of memory");
    }
    for (int64_t d = 0; d < a->D; d++) { /* one block per channel */
        for (int n = 0; n < N; n++)
            carry[n] = (sl_scan_pair){1.0f, a->state[d * N + n]};
        for (int64_t c0 = 0; c0 < a->L; c0 += chunk) {
            /* Load: item k = tid*I + i is token c0 + k. */
            for (int64_t k = 0; k < chunk; k++) {
                int64_t t = c0 + k;
                acc[k] = 0.0f;
                if (t < a->L) {
                    u[k] = a->u[t * a->ldu + d];
                    delta[k] = sl_softplus(a->dt[t * a->lddt + d] + (a->dt_bias ? a->dt_bias[d] : 0.0f));
                    rs[k] = a->reset ? a->reset[t] != 0 : 0;
                }
            }
            for (int n = 0; n < N; n++) {
                const float a2 = a->A_log2e[d * N + n];
                for (int tid = 0; tid < T; tid++) { /* per-thread fold of its items */
                    for (int i = 0; i < I; i++) {
                        int64_t k = (int64_t)tid * I + i, t = c0 + k;
                        e[k] = t < a->L ? sl_scan_element(delta[k], a2, a->B[t * a->ldbc + n], u[k], rs[k])
                                        : sl_scan_identity();
                    }
                    sl_scan_pair f = e[(int64_t)tid * I];
                    for (int i = 1; i < I; i++)
                        f = sl_scan_combine(f, e[(int64_t)tid * I + i]);
                    incl[tid] = f;
                }
                for (int w = 0; w < W; w++) {
                    warp_scan(incl + w * SL_WARP);
                    wagg[w] = incl[w * SL_WARP + SL_WARP - 1];
                }
                /* __syncthreads(); every thread folds the warp totals before
                 * its own warp onto the carried prefix, then its lane prefix. */
                for (int tid = 0; tid < T; tid++) {
                    int w = tid / SL_WARP, lane = tid % SL_WARP;
                    sl_scan_pair pre = carry[n];
                    for (int j = 0; j < w; j++)
                        pre = sl_scan_combine(pre, wagg[j]);
                    sl_scan_pair run = lane == 0 ? pre : sl_scan_combine(pre, incl[tid - 1]);
                    for (int i = 0; i < I; i++) {
                        int64_t k = (int64_t)tid * I + i, t = c0 + k;
                        run = sl_scan_combine(run, e[k]);
                        if (t < a->L)
                            acc[k] += a->C[t * a->ldbc + n] * run.b;
                    }
                }
                sl_scan_pair tot = carry[n]; /* thread 0: the new carry */
                for (int j = 0; j < W; j++)
                    tot = sl_scan_combine(tot, wagg[j]);
                carry_out[n] = (sl_scan_pair){1.0f, tot.b};
            }
            memcpy(carry, carry_out, (size_t)N * sizeof *carry);
            for (int64_t k = 0; k < chunk && c0 + k < a->L; k++) {
                int64_t t = c0 + k;
                float z = a->z ? a->z[t * a->ldz + d] : 0.0f;
                a->y[t * a->ldy + d] = sl_scan_output(acc[k], a->Dskip ? a->Dskip[d] : 0.0f, u[k], z, a->z != NULL);
            }
        }
        for (int n = 0; n < N; n++)
            a->state[d * N + n] = carry[n].b;
    }
    free(u), free(delta), free(acc), free(rs), free(e), free(incl), free(wagg);
    return 0;
}

int sl_scan_emu(const sl_scan_args *a, int layout, sl_err *err)
{
    if (layout < 0)
        layout = sl_scan_layout_pick(a->L);
    if (layout >= SL_SCAN_NLAYOUTS)
        return sl_errf(err, "scan_emu: no layout %d", layout);
    sl_scan_layout l = sl_scan_layout_get(layout);
    return sl_scan_emu_shape(a, l.threads, l.items, err);
}

/* --- conv1d ---------------------------------------------------------- */

int sl_conv_emu(const sl_conv_args *a, sl_err *err)
{
    const int K = a->K;
    if (K < 1 || K > 8)
        return sl_errf(err, "conv_emu: kernel width %d outside 1..8", K);
    float taps[8], hist[8];
    /* Kernel 1: one thread per (t, d); the history still holds the old state. */
    for (int64_t t = 0; t < a->L; t++) {
        int64_t last_reset = INT64_MIN;
        for (int64_t r = t; r >= 0 && r > t - (K - 1); r--)
            if (a->reset && a->reset[r]) {
                last_reset = r;
                break;
            }
        for (int64_t d = 0; d < a->D; d++) {
            for (int k = 0; k < K; k++) {
                int64_t src = t - (K - 1) + k;
                taps[k] = src < last_reset ? 0.0f
                          : src >= 0       ? a->x[src * a->ldx + d]
                                           : a->state[d * (K - 1) + (K - 1) + src];
            }
            a->out[t * a->ldout + d] = sl_conv_output(taps, a->w + d * K, a->bias ? a->bias[d] : 0.0f, K);
        }
    }
    /* Kernel 2: one thread per channel rewrites its K-1 history values. */
    int64_t last_reset = INT64_MIN;
    for (int64_t r = a->L - 1; r >= 0 && r > a->L - K; r--)
        if (a->reset && a->reset[r]) {
            last_reset = r;
            break;
        }
    for (int64_t d = 0; d < a->D; d++) {
        for (int j = 0; j < K - 1; j++) {
            int64_t src = a->L - (K - 1) + j;
            hist[j] = src < last_reset ? 0.0f
                      : src >= 0       ? a->x[src * a->ldx + d]
                                       : a->state[d * (K - 1) + (K - 1) + src];
        }
        for (int j = 0; j < K - 1; j++)
            a->state[d * (K - 1) + j] = hist[j];
    }
    return 0;
}

/* --- row reductions -------------------------------------------------- */

/* Warp sum with __shfl_xor_sync at offsets 16..1: lane l adds lane l^o. */
static void warp_sum(float *v)
{
    float old[SL_WARP];
    for (int off = SL_WARP / 2; off > 0; off >>= 1) {
        memcpy(old, v, sizeof old);
        for (int lane = 0; lane < SL_WARP; lane++)
            v[lane] = old[lane] + old[lane ^ off];
    }
}

static void warp_lse(sl_lse *v)
{
    sl_lse old[SL_WARP];
    for (int off = SL_WARP / 2; off > 0; off >>= 1) {
        memcpy(old, v, sizeof old);
        for (int lane = 0; lane < SL_WARP; lane++)
            v[lane] = sl_lse_merge(old[lane], old[lane ^ off]);
    }
}

int sl_norm_emu(const sl_norm_args *a, sl_err *err)
{
    if (a->group && a->group != a->D)
        return sl_errf(err, "cuda: add_rmsnorm: normalizing in groups of %lld is not implemented", (long long)a->group);
    const int T = SL_ROW_THREADS, W = T / SL_WARP;
    float part[SL_ROW_THREADS];
    for (int64_t t = 0; t < a->L; t++) {
        float *res = a->residual + t * a->D;
        for (int tid = 0; tid < T; tid++) {
            float ss = 0.0f;
            for (int64_t c = tid; c < a->D; c += T) {
                float r = a->x ? (a->residual_init ? a->x[t * a->D + c] : res[c] + a->x[t * a->D + c]) : res[c];
                res[c] = r;
                ss += r * r;
            }
            part[tid] = ss;
        }
        float tot = 0.0f;
        for (int w = 0; w < W; w++) {
            warp_sum(part + w * SL_WARP);
            tot += part[w * SL_WARP];
        }
        float scale = sl_rms_scale(tot, (int)a->D, a->eps);
        for (int64_t c = 0; c < a->D; c++)
            a->out[t * a->D + c] = res[c] * scale * a->w[c];
    }
    return 0;
}

int sl_logsoftmax_emu(const sl_logsoftmax_args *a, sl_err *err)
{
    (void)err;
    const int T = SL_ROW_THREADS, W = T / SL_WARP;
    sl_lse part[SL_ROW_THREADS];
    for (int64_t t = 0; t < a->T; t++) {
        const float *row = a->logits + t * a->ld;
        for (int tid = 0; tid < T; tid++) {
            sl_lse x = sl_lse_empty();
            for (int64_t c = tid; c < a->V; c += T)
                x = sl_lse_add(x, row[c]);
            part[tid] = x;
        }
        sl_lse tot = sl_lse_empty();
        for (int w = 0; w < W; w++) {
            warp_lse(part + w * SL_WARP);
            tot = sl_lse_merge(tot, part[w * SL_WARP]);
        }
        int32_t tg = a->target[t];
        a->logp[t] = tg < 0 ? 0.0f : tg >= a->V ? NAN : row[tg] - (tot.m + logf(tot.s));
    }
    return 0;
}
