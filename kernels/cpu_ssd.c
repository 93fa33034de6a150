/* CPU kernels of the Mamba-2 mixer: the SSD layer in its chunked form
 * (semantics in kernels/kernels.h; the algorithm is mamba_ssm's
 * ssd_minimal_discrete, Dao & Gu 2024, section 6) and the gated MLP's
 * x * silu(z).
 *
 * The tokens of a call are cut into chunks of Q tokens; a document start
 * (reset) always begins a new chunk, so no chunk spans two documents. For a
 * chunk of q tokens, head h of group g, with a_t = delta_t A[h] and
 * cs_t = a_0 + ... + a_t (cumulative within the chunk):
 *   1. CB = C_g B_g^T                                    [q][q], per group
 *   2. M[t][s] = CB[t][s] exp(cs_t - cs_s) delta_s, s <= t (0 above)
 *   3. y_h = M x_h                                       the intra-chunk part
 *   4. y_h += diag(exp(cs)) C_g S_h^T                    the carried state's part
 *   5. S_h = exp(cs_q-1) S_h + x_h^T diag(exp(cs_q-1 - cs) delta) B_g
 *   6. y_h = (y_h + D[h] x_h) silu(z_h)
 * Steps 1, 3, 4 and 5 are sgemm calls (OpenBLAS, one thread); the chunks of a
 * head run in order (the short scan across chunks is step 5 itself), heads in
 * parallel. Every exponent is <= 0 (A < 0, delta >= 0), so nothing overflows.
 *
 * Thread-count independence: the chunk grid depends on L, the resets and Q
 * only; each CB is one sgemm call and each head one thread's sequential
 * work, so every value is computed the same way whatever -@ says. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas.h"
#include "kernels/cpu_kernels.h"
#include "kernels/cpu_math.h"

/* Tokens per chunk unless the caller says otherwise: the intra-chunk
 * products cost 2 Q P flops per token and head against 4 N P for the state
 * products, so Q well below N keeps the quadratic part small while the
 * sgemm calls stay large enough to run near full speed. */
#define SSD_Q 64

typedef struct ssd_chunk {
    int64_t t0;
    int q, fresh; /* fresh: the state is zero before t0 (a reset at t0) */
} ssd_chunk;

/* The work of one head: its chunks in order. w: scratch of
 * Q*Q + 2*Q*N + 2*Q floats. */
SL_CPU_CLONES
static void ssd_head(const sl_ssd_args *a, int h, const ssd_chunk *ch, int64_t nc, const float *CB, int Q, float *w)
{
    const int P = a->P, N = a->N, g = h / (a->H / a->G);
    float *M = w, *Cs = M + (size_t)Q * Q, *Bs = Cs + (size_t)Q * N, *cs = Bs + (size_t)Q * N, *dl = cs + Q;
    float *S = a->state + (size_t)h * P * N;
    const float A = a->A[h], bias = a->dt_bias[h], Dh = a->Dskip[h];
    for (int64_t c = 0; c < nc; c++) {
        const int64_t t0 = ch[c].t0;
        const int q = ch[c].q;
        if (ch[c].fresh)
            memset(S, 0, sizeof(float) * (size_t)P * N);
        float cum = 0.0f;
        for (int t = 0; t < q; t++) {
            float d = sl_cpu_softplus(a->dt[(t0 + t) * a->lddt + h] + bias);
            d = d < a->dt_min ? a->dt_min : d;
            d = d > a->dt_max ? a->dt_max : d;
            dl[t] = d;
            cum += d * A;
            cs[t] = cum;
        }
        const float *cb = CB + ((size_t)g * nc + (size_t)c) * Q * Q;
        for (int t = 0; t < q; t++) {
            float *m = M + (size_t)t * Q;
            const float ct = cs[t];
#pragma omp simd
            for (int s = 0; s <= t; s++)
                m[s] = cb[(size_t)t * Q + s] * sl_cpu_exp(ct - cs[s]) * dl[s];
            for (int s = t + 1; s < q; s++)
                m[s] = 0.0f;
        }
        const float *x = a->x + t0 * a->ldx + (size_t)h * P;
        const float *Bg = a->B + t0 * a->ldbc + (size_t)g * N, *Cg = a->C + t0 * a->ldbc + (size_t)g * N;
        float *y = a->y + t0 * a->ldy + (size_t)h * P;
        sl_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, q, P, q, 1.0f, M, Q, x, (int)a->ldx, 0.0f, y,
                      (int)a->ldy);
        const float last = cs[q - 1];
        if (!ch[c].fresh) { /* S may be non-zero */
            for (int t = 0; t < q; t++) {
                const float e = sl_cpu_exp(cs[t]);
#pragma omp simd
                for (int n = 0; n < N; n++)
                    Cs[(size_t)t * N + n] = e * Cg[t * a->ldbc + n];
            }
            sl_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, q, P, N, 1.0f, Cs, N, S, N, 1.0f, y, (int)a->ldy);
        }
        for (int s = 0; s < q; s++) {
            const float e = sl_cpu_exp(last - cs[s]) * dl[s];
#pragma omp simd
            for (int n = 0; n < N; n++)
                Bs[(size_t)s * N + n] = e * Bg[s * a->ldbc + n];
        }
        sl_blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, P, N, q, 1.0f, x, (int)a->ldx, Bs, N,
                      ch[c].fresh ? 0.0f : sl_cpu_exp(last), S, N);
        for (int t = 0; t < q; t++) {
            float *yt = y + t * a->ldy;
            const float *xt = x + t * a->ldx;
            if (a->z) {
                const float *zt = a->z + (t0 + t) * a->ldz + (size_t)h * P;
#pragma omp simd
                for (int p = 0; p < P; p++)
                    yt[p] = (yt[p] + Dh * xt[p]) * sl_cpu_silu(zt[p]);
            } else {
#pragma omp simd
                for (int p = 0; p < P; p++)
                    yt[p] += Dh * xt[p];
            }
        }
    }
}

int sl_cpu_ssd_chunked(sl_backend *b, const sl_ssd_args *a, sl_err *err)
{
    (void)b;
    if (a->H < 1 || a->P < 1 || a->G < 1 || a->N < 1 || a->H % a->G)
        return sl_errf(err, "cpu: ssd: %d heads of %d channels in %d groups of %d states", a->H, a->P, a->G, a->N);
    if (a->chunk < 0 || a->chunk > 4096)
        return sl_errf(err, "cpu: ssd: chunk length %d is outside [0, 4096]", a->chunk);
    if (a->L <= 0)
        return 0;
    const int Q = a->chunk ? a->chunk : SSD_Q;
    /* the chunk grid: every Q tokens and at every reset */
    int64_t cap = a->L / Q + 2, nc = 0;
    ssd_chunk *ch = sl_xmalloc((size_t)cap * sizeof *ch);
    for (int64_t t = 0; t < a->L; t++) {
        int start = a->reset && a->reset[t];
        if (t == 0 || start || t - ch[nc - 1].t0 == Q) {
            if (nc == cap)
                ch = sl_xrealloc(ch, (size_t)(cap *= 2) * sizeof *ch);
            ch[nc++] = (ssd_chunk){.t0 = t, .q = 0, .fresh = start};
        }
        ch[nc - 1].q++;
    }
    /* 1: C B^T of every (group, chunk), shared by the group's heads */
    float *CB = sl_xmalloc((size_t)a->G * (size_t)nc * Q * Q * sizeof(float));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < a->G * nc; i++) {
        const int64_t g = i / nc, c = i % nc;
        const float *Cg = a->C + ch[c].t0 * a->ldbc + g * a->N, *Bg = a->B + ch[c].t0 * a->ldbc + g * a->N;
        sl_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, ch[c].q, ch[c].q, a->N, 1.0f, Cg, (int)a->ldbc, Bg,
                      (int)a->ldbc, 0.0f, CB + (size_t)i * Q * Q, Q);
    }
    const size_t wlen = (size_t)Q * Q + 2 * (size_t)Q * a->N + 2 * (size_t)Q;
#pragma omp parallel
    {
        float *w = sl_xmalloc(wlen * sizeof(float));
#pragma omp for schedule(static)
        for (int h = 0; h < a->H; h++)
            ssd_head(a, h, ch, nc, CB, Q, w);
        free(w);
    }
    free(CB);
    free(ch);
    return 0;
}

SL_CPU_CLONES
static void mul_silu_row(const sl_mul_silu_args *a, int64_t t)
{
    const float *x = a->x + t * a->ldx, *z = a->z + t * a->ldz;
    float *o = a->out + t * a->ldout;
#pragma omp simd
    for (int64_t d = 0; d < a->D; d++)
        o[d] = x[d] * sl_cpu_silu(z[d]);
}

int sl_cpu_mul_silu(sl_backend *b, const sl_mul_silu_args *a, sl_err *err)
{
    (void)b;
    (void)err;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < a->L; t++)
        mul_silu_row(a, t);
    return 0;
}
