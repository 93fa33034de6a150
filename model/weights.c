/* Loading weights from a tensor source onto a backend (model_impl.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_impl.h"

float *sl_model_upload(sl_backend *be, const float *h, size_t n, sl_err *err)
{
    float *d = be->alloc(be, n * sizeof(float), err);
    if (d && be->upload(be, d, h, n * sizeof(float), err) < 0) {
        be->free(be, d);
        d = NULL;
    }
    return d;
}

/* Looks a tensor up, checks dtype and shape, converts to host fp32 (caller frees). */
float *sl_model_load_host(const sl_tensors *c, const char *name, int ndim, const int64_t *shape, int optional,
                          sl_dtype *src_dtype, sl_err *err)
{
    sl_tensor_info t;
    if (!sl_tensors_find(c, name, &t)) {
        if (!optional)
            sl_errf(err, "%s: missing tensor '%s'", sl_tensors_name(c), name);
        return NULL;
    }
    int same = t.ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = t.shape[i] == shape[i];
    if (!same) {
        char got[256] = "", want[256] = "";
        for (int i = 0; i < t.ndim; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "", (long long)t.shape[i]);
        for (int i = 0; i < ndim; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "", (long long)shape[i]);
        sl_errf(err, "%s: tensor '%s' has shape [%s] but config.json implies [%s]", t.file, name, got, want);
        return NULL;
    }
    if (t.dtype == SL_TENSOR_OTHER) {
        sl_errf(err, "%s: tensor '%s' has dtype %s; F32, F16 or BF16 expected", t.file, name, t.dtype_name);
        return NULL;
    }
    if (src_dtype)
        *src_dtype = t.dtype == SL_TENSOR_F16 ? SL_DT_F16 : t.dtype == SL_TENSOR_BF16 ? SL_DT_BF16 : SL_DT_F32;
    float *h = sl_xmalloc((size_t)(t.numel ? t.numel : 1) * sizeof(float));
    if (sl_tensors_read_f32(c, name, h, err) < 0) {
        free(h);
        return NULL;
    }
    return h;
}

int sl_model_load_weight(sl_backend *be, const sl_tensors *c, const char *name, int64_t rows, int64_t cols,
                         sl_weight *w, sl_err *err)
{
    int64_t shape[2] = {rows, cols};
    sl_dtype dt = SL_DT_F32;
    float *h = sl_model_load_host(c, name, 2, shape, 0, &dt, err);
    if (!h)
        return -1;
    int rc = be->weight_create(be, w, h, rows, cols, dt, err);
    free(h);
    return rc;
}

/* A small fp32 tensor to backend memory, optionally transformed on the host. */
float *sl_model_load_vec(sl_backend *be, const sl_tensors *c, const char *name, int ndim, const int64_t *shape,
                         int optional, int neg_exp_log2e, sl_err *err)
{
    float *h = sl_model_load_host(c, name, ndim, shape, optional, NULL, err);
    if (!h)
        return NULL;
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    if (neg_exp_log2e) /* A = -exp(A_log), pre-scaled by log2(e) for exp2 in the scan */
        for (size_t i = 0; i < n; i++)
            h[i] = -expf(h[i]) * 1.4426950408889634f;
    float *d = be->alloc(be, n * sizeof(float), err);
    if (d && be->upload(be, d, h, n * sizeof(float), err) < 0) {
        be->free(be, d);
        d = NULL;
    }
    free(h);
    return d;
}

int sl_model_check_layers(const sl_tensors *c, int64_t n_layer, const char *const *foreign, const char *foreign_msg,
                          sl_err *err)
{
    for (size_t i = 0; i < sl_tensors_count(c); i++) {
        sl_tensor_info t;
        sl_tensors_at(c, i, &t);
        const char *p = "backbone.layers.";
        if (strncmp(t.name, p, strlen(p)))
            continue;
        char *end;
        long li = strtol(t.name + strlen(p), &end, 10);
        if (end == t.name + strlen(p) || *end != '.')
            continue;
        if (li < 0 || li >= n_layer)
            return sl_errf(err, "%s: tensor '%s' is for layer %ld but config.json has n_layer = %lld", t.file, t.name,
                           li, (long long)n_layer);
        for (int j = 0; foreign[j]; j++)
            if (strstr(end, foreign[j]))
                return sl_errf(err, "%s: tensor '%s' %s", t.file, t.name, foreign_msg);
    }
    return 0;
}

int sl_model_load_embedding(sl_backend *be, const sl_tensors *c, int64_t vocab_size, int64_t *vocab, int64_t d_model,
                            sl_weight *emb, sl_err *err)
{
    const char *ename = "backbone.embeddings.weight";
    sl_tensor_info et;
    int found = sl_tensors_find(c, ename, &et);
    if (!found) {
        ename = "backbone.embedding.weight";
        found = sl_tensors_find(c, ename, &et);
    }
    if (!found)
        return sl_errf(err, "%s: missing tensor 'backbone.embeddings.weight' (or 'backbone.embedding.weight')",
                       sl_tensors_name(c));
    if (et.ndim == 2 && et.shape[0] == vocab_size)
        *vocab = vocab_size; /* stored unpadded: keep as is */
    return sl_model_load_weight(be, c, ename, *vocab, d_model, emb, err);
}

int sl_model_load_lm_head(sl_backend *be, const sl_tensors *c, int64_t vocab, int64_t d_model, const sl_weight *emb,
                          sl_weight *lm_head, int *tied, sl_err *err)
{
    sl_tensor_info ht;
    if (sl_tensors_find(c, "lm_head.weight", &ht))
        return sl_model_load_weight(be, c, "lm_head.weight", vocab, d_model, lm_head, err);
    *lm_head = *emb;
    *tied = 1;
    return 0;
}
