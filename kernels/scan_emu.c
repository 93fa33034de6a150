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
    if (a->group < 0 || (a->group && a->D % a->group))
        return sl_errf(err, "norm_emu: groups of %lld columns do not divide rows of %lld", (long long)a->group,
                       (long long)a->D);
    const int T = SL_ROW_THREADS, W = T / SL_WARP;
    const int64_t G = a->group > 0 ? a->group : a->D;
    float part[SL_ROW_THREADS];
    for (int64_t blk = 0; blk < a->L * (a->D / G); blk++) { /* one block per (row, group) */
        const int64_t t = blk / (a->D / G), c0 = blk % (a->D / G) * G;
        float *res = a->residual + t * a->D + c0;
        const float *x = a->x ? a->x + t * a->D + c0 : NULL;
        for (int tid = 0; tid < T; tid++) {
            float ss = 0.0f;
            for (int64_t c = tid; c < G; c += T) {
                float r = x ? (a->residual_init ? x[c] : res[c] + x[c]) : res[c];
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
        float scale = sl_rms_scale(tot, (int)G, a->eps);
        for (int64_t c = 0; c < G; c++)
            a->out[t * a->D + c0 + c] = res[c] * scale * a->w[c0 + c];
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

/* --- Mamba-2 SSD, chunked ------------------------------------------------ */

int sl_ssd_emu(const sl_ssd_args *a, sl_err *err)
{
    enum { Q = SL_SSD_Q, PT = SL_SSD_PT, T = SL_SSD_THREADS, MN = SL_SSD_MAX_N, R = MN / 4 };
    if (a->N < 1 || a->N > MN)
        return sl_errf(err, "ssd_emu: d_state %d outside 1..%d", a->N, MN);
    if (a->H < 1 || a->P < 1 || a->G < 1 || a->H % a->G != 0)
        return sl_errf(err, "ssd_emu: %d heads of %d channels in %d groups", a->H, a->P, a->G);
    const int N = a->N, tiles = (a->P + PT - 1) / PT;
    /* the block's shared memory and its threads' registers */
    static float Bs[Q][MN], Cs[Q][MN], W[Q][Q], xs[Q][PT], S[T][R];
    float dl[Q], cum[Q], carry[Q], wS[Q], part[4], v1[4];
    int first[Q];
    for (int blk = 0; blk < a->H * tiles; blk++) {
        const int h = blk / tiles, tile = blk % tiles, g = h / (a->H / a->G);
        const float A = a->A[h];
        for (int tid = 0; tid < T; tid++) {
            int ch = tile * PT + (tid >> 2);
            for (int j = 0; j < R; j++) {
                int n = (tid & 3) + 4 * j;
                S[tid][j] = ch < a->P && n < N ? a->state[((int64_t)h * a->P + ch) * N + n] : 0.0f;
            }
        }
        for (int64_t c0 = 0; c0 < a->L; c0 += Q) {
            const int q = a->L - c0 < Q ? (int)(a->L - c0) : Q;
            for (int t = 0; t < Q; t++) {
                for (int n = 0; n < N; n++) {
                    const int64_t row = (c0 + t) * a->ldbc + (int64_t)g * N + n;
                    Bs[t][n] = t < q ? a->B[row] : 0.0f;
                    Cs[t][n] = t < q ? a->C[row] : 0.0f;
                }
                for (int j = 0; j < PT; j++) {
                    int c = tile * PT + j;
                    xs[t][j] = t < q && c < a->P ? a->x[(c0 + t) * a->ldx + (int64_t)h * a->P + c] : 0.0f;
                }
            }
            /* thread 0 */
            float run = 0.0f;
            int f = 0, clean = 1;
            for (int t = 0; t < Q; t++) {
                float d =
                    t < q ? sl_ssd_delta(a->dt[(c0 + t) * a->lddt + h], a->dt_bias[h], a->dt_min, a->dt_max) : 0.0f;
                if (t < q && a->reset && a->reset[c0 + t]) {
                    f = t;
                    clean = 0;
                }
                run += d * A;
                dl[t] = d;
                cum[t] = run;
                first[t] = f;
                carry[t] = clean ? expf(run) : 0.0f;
            }
            const float decay = carry[q - 1];
            for (int s = 0; s < Q; s++)
                wS[s] = s >= first[q - 1] && s < q ? expf(cum[q - 1] - cum[s]) * dl[s] : 0.0f;
            /* W, one (t, s) pair per thread step */
            for (int t = 0; t < Q; t++)
                for (int s = 0; s < Q; s++) {
                    float w = 0.0f;
                    if (t < q && s <= t && s >= first[t]) {
                        float cb = 0.0f;
                        for (int n = 0; n < N; n++)
                            cb += Cs[t][n] * Bs[s][n];
                        w = cb * expf(cum[t] - cum[s]) * dl[s];
                    }
                    W[t][s] = w;
                }
            /* outputs: the four threads of a channel, their xor-shuffle sums */
            for (int t = 0; t < Q; t++)
                for (int pl = 0; pl < PT; pl++) {
                    for (int nq = 0; nq < 4; nq++) {
                        part[nq] = 0.0f;
                        for (int j = 0; j < R; j++) {
                            int n = nq + 4 * j;
                            if (n < N)
                                part[nq] += Cs[t][n] * S[pl * 4 + nq][j];
                        }
                    }
                    for (int nq = 0; nq < 4; nq++)
                        v1[nq] = part[nq] + part[nq ^ 1];
                    const int nq = t & 3, ch = tile * PT + pl;
                    const float sum = v1[nq] + v1[nq ^ 2];
                    if (t < q && ch < a->P) {
                        float acc = 0.0f;
                        for (int s = 0; s < Q; s++)
                            acc += W[t][s] * xs[s][pl];
                        const int64_t col = (int64_t)h * a->P + ch;
                        float z = a->z ? a->z[(c0 + t) * a->ldz + col] : 0.0f;
                        a->y[(c0 + t) * a->ldy + col] =
                            sl_scan_output(acc + carry[t] * sum, a->Dskip[h], xs[t][pl], z, a->z != NULL);
                    }
                }
            /* the state update, per thread */
            for (int tid = 0; tid < T; tid++)
                for (int j = 0; j < R; j++) {
                    int n = (tid & 3) + 4 * j;
                    float acc = 0.0f;
                    if (n < N)
                        for (int s = 0; s < Q; s++)
                            acc += (wS[s] * xs[s][tid >> 2]) * Bs[s][n];
                    S[tid][j] = decay * S[tid][j] + acc;
                }
        }
        for (int tid = 0; tid < T; tid++) {
            int ch = tile * PT + (tid >> 2);
            for (int j = 0; j < R; j++) {
                int n = (tid & 3) + 4 * j;
                if (ch < a->P && n < N)
                    a->state[((int64_t)h * a->P + ch) * N + n] = S[tid][j];
            }
        }
    }
    return 0;
}
