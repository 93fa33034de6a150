/* CPU row kernels: fused residual add + RMSNorm, and the log-softmax of the
 * target token. Rows are independent, so they run in parallel; the row sums
 * are accumulated in double so the result does not depend on vector width. */
#include <math.h>

#include "kernels/cpu_kernels.h"
#include "kernels/cpu_math.h"

SL_CPU_CLONES
static void norm_row(const sl_norm_args *a, int64_t t)
{
    const int64_t D = a->D;
    float *r = a->residual + t * D;
    float *o = a->out + t * D;
    if (a->x) {
        const float *x = a->x + t * D;
        if (a->residual_init) {
#pragma omp simd
            for (int64_t d = 0; d < D; d++)
                r[d] = x[d];
        } else {
#pragma omp simd
            for (int64_t d = 0; d < D; d++)
                r[d] += x[d];
        }
    }
    const int64_t G = a->group > 0 ? a->group : D;
    for (int64_t g0 = 0; g0 < D; g0 += G) {
        double ss = 0.0;
#pragma omp simd reduction(+ : ss)
        for (int64_t d = g0; d < g0 + G; d++)
            ss += (double)r[d] * (double)r[d];
        float scale = (float)(1.0 / sqrt(ss / (double)G + (double)a->eps));
#pragma omp simd
        for (int64_t d = g0; d < g0 + G; d++)
            o[d] = a->w[d] * (r[d] * scale);
    }
}

int sl_cpu_add_rmsnorm(sl_backend *b, const sl_norm_args *a, sl_err *err)
{
    (void)b;
    if (a->group < 0 || (a->group > 0 && a->D % a->group))
        return sl_errf(err, "cpu: add_rmsnorm: group %lld does not divide the row width %lld", (long long)a->group,
                       (long long)a->D);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < a->L; t++)
        norm_row(a, t);
    return 0;
}

SL_CPU_CLONES
static float logsoftmax_row(const float *x, int64_t V, int32_t target)
{
    /* max in 16 lanes (a plain select per lane, which every compiler vectorizes) */
    float lane[16];
    for (int l = 0; l < 16; l++)
        lane[l] = -INFINITY;
    int64_t v0 = 0;
    for (; v0 + 16 <= V; v0 += 16) {
#pragma omp simd
        for (int l = 0; l < 16; l++)
            lane[l] = x[v0 + l] > lane[l] ? x[v0 + l] : lane[l];
    }
    float m = -INFINITY;
    for (int l = 0; l < 16; l++)
        m = lane[l] > m ? lane[l] : m;
    for (; v0 < V; v0++)
        m = x[v0] > m ? x[v0] : m;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t v = 0; v < V; v++)
        s += (double)sl_cpu_exp(x[v] - m);
    return (float)((double)x[target] - (double)m - log(s));
}

int sl_cpu_logsoftmax_gather(sl_backend *b, const sl_logsoftmax_args *a, sl_err *err)
{
    (void)b;
    for (int64_t t = 0; t < a->T; t++)
        if (a->target[t] >= a->V)
            return sl_errf(err, "cpu: log-softmax: target %d at row %lld is outside the vocabulary [0, %lld)",
                           (int)a->target[t], (long long)t, (long long)a->V);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < a->T; t++)
        a->logp[t] = a->target[t] < 0 ? 0.0f : logsoftmax_row(a->logits + t * a->ld, a->V, a->target[t]);
    return 0;
}
