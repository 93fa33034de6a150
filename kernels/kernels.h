/* The compute-kernel interface: one operator table, implemented by the CPU
 * backend (kernels/cpu_*.c: OpenMP, SIMD, OpenBLAS) and the CUDA backend
 * (kernels/cuda/, CUDA sources: fused kernels, cuBLAS). model/ runs the Mamba forward
 * pass only through this table, so both backends share one model code path.
 *
 * Memory: pointers passed to ops are backend memory (host memory for the CPU
 * backend, device memory for CUDA), obtained from alloc() and filled with
 * upload(). All activations are fp32, row-major, token-major: a [L][D]
 * matrix has L rows (tokens) of D values with a row stride `ld` (elements).
 *
 * Packed batches: the L tokens of one call may hold several documents; the
 * optional `reset` array (L bytes, backend memory) marks tokens that start a
 * new document: before processing such a token the conv and scan states are
 * zeroed (mamba_ssm's seq_idx semantics). Carried state makes a long
 * document processed in several calls equal one pass.
 *
 * This header is internal (not installed): library users open and close
 * backends through kernels/backend.h. */
#ifndef SLUICE_KERNELS_KERNELS_H
#define SLUICE_KERNELS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "base/err.h"

typedef enum { SL_DT_F32 = 0, SL_DT_F16 = 1, SL_DT_BF16 = 2 } sl_dtype;

/* A weight matrix [rows][cols] in backend memory. The CPU backend stores
 * f32; the CUDA backend may keep bf16/f16 for tensor-core GEMMs. */
typedef struct sl_weight {
    sl_dtype dtype;
    int64_t rows, cols;
    void *data;
} sl_weight;

/* y[L][N] = x[L][K] · W[N][K]^T (+ bias[N] when non-NULL): PyTorch Linear. */
typedef struct sl_linear_args {
    int64_t L;
    const float *x;
    int64_t ldx;
    const sl_weight *w;
    const float *bias; /* f32 [N] or NULL */
    float *y;
    int64_t ldy;
} sl_linear_args;

/* Causal depthwise conv1d over time with kernel K, bias, then SiLU:
 *   out[t][d] = silu(bias[d] + sum_k w[d][k] * x[t-(K-1)+k][d])
 * x values before the first token come from state[d][0..K-2] (oldest
 * first); on return state holds the last K-1 inputs. reset[t] zeroes the
 * history before token t. */
typedef struct sl_conv_args {
    int64_t L, D;
    int K;
    const float *x;
    int64_t ldx;
    const float *w;       /* [D][K] */
    const float *bias;    /* [D] */
    float *state;         /* [D][K-1], in/out */
    const uint8_t *reset; /* [L] or NULL */
    float *out;
    int64_t ldout;
} sl_conv_args;

/* Selective scan (Mamba-1), per channel d and state n:
 *   delta = softplus(dt[t][d] + dt_bias[d])
 *   h[d][n] = exp(delta*A[d][n]) * h[d][n] + delta * B[t][n] * u[t][d]
 *   y[t][d] = (sum_n C[t][n] * h[d][n] + Dskip[d] * u[t][d]) * silu(z[t][d])
 * A is given as A_log2e[d][n] = -exp(A_log[d][n]) * log2(e) (precomputed at
 * load). state [D][N] in/out; reset zeroes h before token t. */
typedef struct sl_scan_args {
    int64_t L, D;
    int N;
    const float *u;
    int64_t ldu;
    const float *dt;
    int64_t lddt;         /* dt_proj output without bias */
    const float *dt_bias; /* [D] */
    const float *A_log2e; /* [D][N] */
    const float *B;
    const float *C;
    int64_t ldbc;       /* [L][N] each, row stride ldbc */
    const float *Dskip; /* [D] */
    const float *z;
    int64_t ldz;          /* gate, or NULL for no gating */
    float *state;         /* [D][N] */
    const uint8_t *reset; /* [L] or NULL */
    float *y;
    int64_t ldy;
} sl_scan_args;

/* Fused residual add + RMSNorm over rows of width D:
 *   if x: residual[t] += x[t]  (when residual_init, residual[t] = x[t] instead)
 *   out[t] = residual[t] * w / sqrt(mean(residual[t]^2) + eps)
 * group > 0 (dividing D): each run of `group` columns of a row is normalized
 * on its own (mamba_ssm's RMSNormGated with group_size; Mamba-2 with
 * ngroups > 1). 0 or D: the whole row. */
typedef struct sl_norm_args {
    int64_t L, D;
    const float *x;  /* may be NULL: normalize residual as is */
    float *residual; /* [L][D], in/out */
    int residual_init;
    const float *w; /* [D] */
    float eps;
    float *out;    /* [L][D] */
    int64_t group; /* 0: the whole row */
} sl_norm_args;

/* Mamba-2's SSD layer (Dao & Gu 2024, "state space duality"): H heads of P
 * channels, G groups of N states; head h reads the B and C of group
 * g = h / (H/G). Per token t and head h:
 *   delta = clamp(softplus(dt[t][h] + dt_bias[h]), dt_min, dt_max)
 *   S[h] = exp(delta * A[h]) * S[h] + delta * x[t][h*P..h*P+P-1] (outer) B[t][g*N..g*N+N-1]
 *   y[t][h*P+p] = (sum_n C[t][g*N+n] S[h][p][n] + Dskip[h] * x[t][h*P+p]) * silu(z[t][h*P+p])
 * (no gate when z is NULL); A[h] = -exp(A_log[h]). S: state [H][P][N],
 * in/out; reset[t] zeroes S before token t, as in the selective scan.
 * Backends compute it in the chunked form (chunks of `chunk` tokens, 0: the
 * backend's choice): within a chunk, matrix products (C B^T masked by the
 * decays, times x; the chunk's contribution to S), across chunks the
 * recurrence on S. Any chunk length gives the same values up to rounding. */
typedef struct sl_ssd_args {
    int64_t L;
    int H, P, G, N, chunk;
    const float *x;
    int64_t ldx; /* [L][H*P] */
    const float *dt;
    int64_t lddt;                     /* [L][H], before dt_bias and softplus */
    const float *dt_bias, *A, *Dskip; /* [H] each */
    float dt_min, dt_max;             /* mamba_ssm's dt_limit: 0, INFINITY for none */
    const float *B, *C;
    int64_t ldbc; /* [L][G*N] each */
    const float *z;
    int64_t ldz; /* [L][H*P] or NULL */
    float *state;
    const uint8_t *reset; /* [L] or NULL */
    float *y;
    int64_t ldy;
} sl_ssd_args;

/* out[t][d] = x[t][d] * silu(z[t][d]) for d < D (the gated MLP's
 * y * act(gate); out may be x). */
typedef struct sl_mul_silu_args {
    int64_t L, D;
    const float *x;
    int64_t ldx;
    const float *z;
    int64_t ldz;
    float *out;
    int64_t ldout;
} sl_mul_silu_args;

/* logp[t] = logits[t][target[t]] - logsumexp(logits[t][0..V-1]) for the
 * first V columns (padded vocab columns beyond V are ignored). Targets < 0
 * give logp 0 (no prediction). */
typedef struct sl_logsoftmax_args {
    int64_t T, V;
    const float *logits;
    int64_t ld;
    const int32_t *target; /* [T] backend memory */
    float *logp;           /* [T] backend memory */
} sl_logsoftmax_args;

/* Gathers embedding rows: out[t] = emb[ids[t]] (emb is an sl_weight [V][D]). */
typedef struct sl_embed_args {
    int64_t L;
    const int32_t *ids;
    const sl_weight *emb;
    float *out;
    int64_t ldout;
} sl_embed_args;

struct sl_backend {
    const char *name; /* "cpu", "cuda" */
    void *ctx;
    void *(*alloc)(sl_backend *b, size_t bytes, sl_err *err);
    void (*free)(sl_backend *b, void *p);
    int (*upload)(sl_backend *b, void *dst, const void *src, size_t bytes, sl_err *err);
    int (*download)(sl_backend *b, void *dst, const void *src, size_t bytes, sl_err *err);
    int (*memset0)(sl_backend *b, void *dst, size_t bytes, sl_err *err);
    /* Creates a backend weight from host f32 data (the loader converts
     * f16/bf16 to f32 on the host; `src_dtype` tells the original type so
     * a backend may store it in that precision). */
    int (*weight_create)(sl_backend *b, sl_weight *w, const float *host, int64_t rows, int64_t cols, sl_dtype src_dtype,
                         sl_err *err);
    void (*weight_free)(sl_backend *b, sl_weight *w);
    int (*linear)(sl_backend *b, const sl_linear_args *a, sl_err *err);
    int (*embed)(sl_backend *b, const sl_embed_args *a, sl_err *err);
    int (*conv1d_silu)(sl_backend *b, const sl_conv_args *a, sl_err *err);
    int (*selective_scan)(sl_backend *b, const sl_scan_args *a, sl_err *err);
    int (*add_rmsnorm)(sl_backend *b, const sl_norm_args *a, sl_err *err);
    /* Mamba-2. Optional: NULL where a backend has no implementation yet
     * (CUDA today); the model then runs the SSD as a selective scan, and
     * refuses the gated-MLP blocks. */
    int (*ssd_chunked)(sl_backend *b, const sl_ssd_args *a, sl_err *err);
    int (*mul_silu)(sl_backend *b, const sl_mul_silu_args *a, sl_err *err);
    int (*logsoftmax_gather)(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err);
    int (*sync)(sl_backend *b, sl_err *err);
    void (*destroy)(sl_backend *b);
};

/* Implemented by kernels/cpu_*.c. */
sl_backend *sl_backend_cpu(int threads, sl_err *err);
/* Implemented by kernels/cuda/ when built with CUDA=1 (kernels/cuda_stub.c
 * otherwise): returns NULL with a message when unavailable. */
sl_backend *sl_backend_cuda(int device, sl_err *err);

#endif
