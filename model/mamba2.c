/* Mamba-2 (the SSD layer of Dao & Gu 2024) behind model/model.h.
 *
 * Config: transformers' Mamba2Config (model_type "mamba2": hidden_size,
 * num_hidden_layers, vocab_size, state_size, num_heads, head_dim, expand,
 * n_groups, conv_kernel, use_bias, use_conv_bias, layer_norm_epsilon,
 * time_step_limit, tie_word_embeddings) or mamba_ssm's MambaConfig with
 * ssm_cfg.layer "Mamba2" (d_model, n_layer, vocab_size,
 * pad_vocab_size_multiple, ssm_cfg {d_state, d_conv, expand, headdim,
 * ngroups, d_ssm, rmsnorm, norm_before_gate, D_has_hdim, bias, conv_bias},
 * d_intermediate, attn_layer_idx, norm_epsilon, tie_embeddings).
 *
 * Per layer, as mamba_ssm's Mamba2 module and Block: residual += hidden;
 * RMSNorm; in_proj -> [z | xBC | dt]; causal depthwise conv + SiLU on xBC ->
 * x, B, C (ngroups groups of d_state each); dt = softplus(dt + dt_bias) per
 * head, clamped to time_step_limit / dt_limit; per head scalar
 * A = -exp(A_log); h = exp(dt A) h + dt x B^T, y = h C + D x (every head of
 * a group sees the group's B and C); y = RMSNorm(y * silu(z)) * norm.weight
 * in groups of d_ssm / ngroups (norm_before_gate = False); out_proj. With
 * d_intermediate > 0 (mamba_ssm's GatedMLP, width rounded up to 128):
 * residual += hidden; RMSNorm (norm2); fc1 -> [y | gate]; fc2(y *
 * silu(gate)). Then norm_f, lm_head, log-softmax.
 *
 * The SSD runs as the backend's chunked operator (ssd_chunked: matrix
 * products inside chunks, the recurrence across them; CPU and CUDA). A
 * backend without it gets the selective scan of Mamba-1 with each head's dt and
 * A repeated over the head's channels (dt by a 0/1 expansion product,
 * exact): the same values token by token, for n_groups = 1 and no dt limits.
 * Not supported: attention layers, d_ssm < d_inner, rmsnorm off,
 * norm_before_gate, D_has_hdim; they are refused naming the field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_impl.h"
#include "stream/io.h"
#include "base/json.h"

typedef sl_mamba2_config m2cfg;

typedef struct m2layer {
    sl_weight in_proj, out_proj, fc1, fc2;
    float *in_bias, *out_bias;
    float *norm_w, *conv_w, *conv_b, *gnorm_w, *norm2_w;
    float *dt_bias, *A, *Dskip;         /* per head, for the SSD operator */
    float *dt_bias_ch, *A_log2e, *D_ch; /* per channel, for the selective-scan fallback */
} m2layer;

typedef struct m2model {
    m2cfg cfg;
    sl_backend *be;
    sl_weight emb, lm_head, dt_expand;
    int tied, ssd; /* ssd: the backend has the chunked SSD operator */
    float *norm_f;
    m2layer *layers;
} m2model;

typedef struct m2run {
    m2model *m;
    int64_t chunk;
    int32_t *ids, *targets;
    uint8_t *reset;
    float *hidden, *residual, *normed, *zxbcdt, *xbc, *dt, *y, *ynorm, *mlp, *logits, *logp;
    float *conv_state, *ssm_state;
} m2run;

/* --- config ---------------------------------------------------------------- */

/* An integer from the first present key (o2/k2 may be NULL); 1, 0 absent, -1 error. */
static int get_int(const sl_json *o1, const char *k1, const sl_json *o2, const char *k2, int64_t *out, const char *name,
                   sl_err *err)
{
    const sl_json *v[2] = {o1 && k1 ? sl_json_get(o1, k1) : NULL, o2 && k2 ? sl_json_get(o2, k2) : NULL};
    const char *k[2] = {k1, k2};
    for (int i = 0; i < 2; i++)
        if (v[i] && v[i]->type != SL_JSON_NULL) {
            if (!sl_json_is_int(v[i], out))
                return sl_errf(err, "%s:%zu: \"%s\" is not an integer", name, v[i]->offset, k[i]);
            return 1;
        }
    return 0;
}

int sl_mamba2_config_parse(const char *text, size_t len, const char *name, sl_mamba2_config *c, int *tie, sl_err *err)
{
    memset(c, 0, sizeof *c);
    sl_err jerr;
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_REPLACE, .nonfinite = 1};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &jerr);
    if (!doc)
        return sl_errf(err, "%s: %s", name, jerr.msg);
    int rc = -1, k;
    const sl_json *r = sl_json_root(doc), *ssm = NULL;
    if (r->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s:0: not a JSON object", name);
        goto out;
    }
    ssm = sl_json_get(r, "ssm_cfg");
    if (ssm && ssm->type != SL_JSON_OBJECT)
        ssm = NULL;
#define REQ(k1, k2, field)                                                                                             \
    if ((k = get_int(r, k1, r, k2, &c->field, name, err)) < 0)                                                         \
        goto out;                                                                                                      \
    if (!k) {                                                                                                          \
        sl_errf(err, "%s: missing \"%s\"", name, k1);                                                                  \
        goto out;                                                                                                      \
    }
#define OPT(o1, k1, o2, k2, field, def)                                                                                \
    if ((k = get_int(o1, k1, o2, k2, &c->field, name, err)) < 0)                                                       \
        goto out;                                                                                                      \
    if (!k)                                                                                                            \
        c->field = (def);
    REQ("hidden_size", "d_model", d_model);
    REQ("num_hidden_layers", "n_layer", n_layer);
    REQ("vocab_size", NULL, vocab_size);
    OPT(r, "pad_vocab_size_multiple", NULL, NULL, pad_multiple, ssm ? 8 : 1);
    OPT(r, "state_size", ssm, "d_state", d_state, 128);
    OPT(r, "conv_kernel", ssm, "d_conv", d_conv, 4);
    int64_t expand = 2, dint = 0;
    if (get_int(r, "expand", ssm, "expand", &expand, name, err) < 0 ||
        get_int(r, "d_intermediate", NULL, NULL, &dint, name, err) < 0)
        goto out;
    OPT(r, "n_groups", ssm, "ngroups", ngroups, 1);
    OPT(r, "head_dim", ssm, "headdim", headdim, 64);
    /* (sizes are range-checked below; the default must not overflow before that) */
    OPT(ssm, "d_ssm", NULL, NULL, d_ssm,
        expand >= 1 && expand <= 64 && c->d_model >= 1 && c->d_model <= 1 << 16 ? expand * c->d_model : 0);
    OPT(r, "num_heads", NULL, NULL, nheads, c->headdim > 0 ? c->d_ssm / c->headdim : 0);
#undef REQ
#undef OPT
    const sl_json *e = sl_json_get(r, "eos_token_id");
    int64_t ev;
    c->eos = e && sl_json_is_int(e, &ev) && ev >= 0 ? ev : -1;
    c->eps = 1e-5;
    const char *eps_keys[2] = {"layer_norm_epsilon", "norm_epsilon"};
    for (int i = 0; i < 2; i++) {
        const sl_json *v = sl_json_get(r, eps_keys[i]);
        if (v && v->type != SL_JSON_NULL) {
            if (v->type != SL_JSON_NUMBER || !(v->num > 0) || v->num > 1) {
                sl_errf(err, "%s:%zu: \"%s\" is not a number in (0, 1]", name, v->offset, eps_keys[i]);
                goto out;
            }
            c->eps = v->num;
        }
    }
    /* the gated norm: transformers uses layer_norm_epsilon, mamba_ssm 1e-5 */
    c->norm_eps = ssm ? 1e-5 : c->eps;
    c->conv_bias = 1;
    *tie = ssm ? 1 : 0;
    int rmsnorm = 1, before_gate = 0, d_hdim = 0, rms = 1;
    if (sl_model_cfg_bool(r, "use_bias", &c->use_bias, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "bias", &c->use_bias, name, err) < 0 ||
        sl_model_cfg_bool(r, "use_conv_bias", &c->conv_bias, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "conv_bias", &c->conv_bias, name, err) < 0 ||
        sl_model_cfg_bool(r, "tie_embeddings", tie, name, err) < 0 ||
        sl_model_cfg_bool(r, "tie_word_embeddings", tie, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "rmsnorm", &rmsnorm, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "norm_before_gate", &before_gate, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "D_has_hdim", &d_hdim, name, err) < 0 ||
        sl_model_cfg_bool(r, "rms_norm", &rms, name, err) < 0)
        goto out;
    const sl_json *attn = sl_json_get(r, "attn_layer_idx");
    /* dt limits: transformers' time_step_limit, mamba_ssm's ssm_cfg.dt_limit */
    const sl_json *lim = sl_json_get(r, "time_step_limit");
    if ((!lim || lim->type == SL_JSON_NULL) && ssm)
        lim = sl_json_get(ssm, "dt_limit");
    c->dt_min = 0.0, c->dt_max = INFINITY;
    const char *why = NULL;
    if (lim && lim->type != SL_JSON_NULL) {
        if (lim->type != SL_JSON_ARRAY || lim->n != 2 || lim->kids[0]->type != SL_JSON_NUMBER ||
            lim->kids[1]->type != SL_JSON_NUMBER || !(lim->kids[0]->num >= 0) ||
            !(lim->kids[1]->num >= lim->kids[0]->num)) {
            sl_errf(err, "%s:%zu: time_step_limit/dt_limit is not [min, max] with 0 <= min <= max", name, lim->offset);
            goto out;
        }
        c->dt_min = lim->kids[0]->num, c->dt_max = lim->kids[1]->num;
    }
    struct {
        const char *what;
        int64_t v, lo, hi;
    } lims[] = {
        {"d_model", c->d_model, 1, 1 << 16},
        {"n_layer", c->n_layer, 1, 1024},
        {"vocab_size", c->vocab_size, 1, 1 << 24},
        {"pad_vocab_size_multiple", c->pad_multiple, 1, 1 << 16},
        {"d_state", c->d_state, 1, 512},
        {"d_conv", c->d_conv, 1, 64},
        {"expand", expand, 1, 64},
        {"d_ssm", c->d_ssm, 1, 1 << 18},
        {"headdim", c->headdim, 1, 4096},
        {"num_heads", c->nheads, 1, 1 << 18},
        {"n_groups/ngroups", c->ngroups, 1, 1 << 16},
        {"d_intermediate", dint, 0, 1 << 20},
    };
    for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++)
        if (lims[i].v < lims[i].lo || lims[i].v > lims[i].hi) {
            sl_errf(err, "%s: %s = %lld is outside [%lld, %lld]", name, lims[i].what, (long long)lims[i].v,
                    (long long)lims[i].lo, (long long)lims[i].hi);
            goto out;
        }
    if (attn && attn->type == SL_JSON_ARRAY && attn->n)
        why = "attn_layer_idx: models with attention layers are not supported yet";
    else if (!rmsnorm || before_gate || !rms)
        why = "rmsnorm off, norm_before_gate or rms_norm off is not supported";
    else if (d_hdim)
        why = "D_has_hdim is not supported yet";
    else if (c->d_ssm != expand * c->d_model)
        why = "d_ssm smaller than d_inner (MLP inside in_proj) is not supported yet";
    else if (c->nheads * c->headdim != c->d_ssm)
        why = "num_heads x head_dim does not equal expand x hidden_size";
    else if (c->nheads % c->ngroups)
        why = "n_groups/ngroups does not divide the number of heads";
    /* mamba_ssm's GatedMLP rounds its width up to a multiple of 128 */
    c->d_mlp = dint > 0 ? (dint + 127) / 128 * 128 : 0;
    if (why) {
        sl_errf(err, "%s: Mamba-2: %s", name, why);
        goto out;
    }
    c->vocab = (c->vocab_size + c->pad_multiple - 1) / c->pad_multiple * c->pad_multiple;
    c->conv_dim = c->d_ssm + 2 * c->ngroups * c->d_state;
    c->d_in_proj = c->d_ssm + c->conv_dim + c->nheads;
    rc = 0;
out:
    sl_json_free(doc);
    return rc;
}

/* --- weights --------------------------------------------------------------- */

static void m2_free(void *p)
{
    m2model *m = p;
    if (!m)
        return;
    sl_backend *be = m->be;
    if (m->layers)
        for (int64_t i = 0; i < m->cfg.n_layer; i++) {
            m2layer *l = &m->layers[i];
            sl_weight *ws[] = {&l->in_proj, &l->out_proj, &l->fc1, &l->fc2};
            for (size_t j = 0; j < sizeof ws / sizeof *ws; j++)
                if (ws[j]->data)
                    be->weight_free(be, ws[j]);
            float *vs[] = {l->in_bias, l->out_bias, l->norm_w, l->conv_w,     l->conv_b,  l->gnorm_w, l->norm2_w,
                           l->dt_bias, l->A,        l->Dskip,  l->dt_bias_ch, l->A_log2e, l->D_ch};
            for (size_t j = 0; j < sizeof vs / sizeof *vs; j++)
                if (vs[j])
                    be->free(be, vs[j]);
        }
    free(m->layers);
    if (m->emb.data)
        be->weight_free(be, &m->emb);
    if (!m->tied && m->lm_head.data)
        be->weight_free(be, &m->lm_head);
    if (m->dt_expand.data)
        be->weight_free(be, &m->dt_expand);
    if (m->norm_f)
        be->free(be, m->norm_f);
    free(m);
}

/* A per-head vector [nheads]: as stored (kind 0), as A = -exp(A_log) (1),
 * or, for the selective-scan fallback, repeated over each head's channels
 * [d_ssm] (2; times d_state and stored as -exp(A_log) log2 e for A: 3). */
static float *per_head(m2model *m, const sl_tensors *c, const char *name, int kind, sl_err *err)
{
    const m2cfg *k = &m->cfg;
    int64_t shape[1] = {k->nheads};
    float *h = sl_model_load_host(c, name, 1, shape, 0, NULL, err);
    if (!h)
        return NULL;
    size_t per = kind == 3 ? (size_t)k->d_state : 1, n = kind >= 2 ? (size_t)k->d_ssm * per : (size_t)k->nheads;
    float *x = sl_xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        float v = kind >= 2 ? h[i / per / (size_t)k->headdim] : h[i];
        x[i] = kind == 1 ? -expf(v) : kind == 3 ? -expf(v) * 1.4426950408889634f : v;
    }
    free(h);
    float *d = sl_model_upload(m->be, x, n, err);
    free(x);
    return d;
}

static int load_layer(m2model *m, const sl_tensors *c, int i, sl_err *err)
{
    const m2cfg *k = &m->cfg;
    sl_backend *be = m->be;
    m2layer *l = &m->layers[i];
    char name[256];
#define NM(s) (snprintf(name, sizeof name, "backbone.layers.%d.%s", i, s), name)
    int64_t s_d[1] = {k->d_model}, s_in[1] = {k->d_in_proj}, s_cd[1] = {k->conv_dim},
            s_conv[3] = {k->conv_dim, 1, k->d_conv}, s_ssm[1] = {k->d_ssm};
    if (!(l->norm_w = sl_model_load_vec(be, c, NM("norm.weight"), 1, s_d, 0, 0, err)) ||
        sl_model_load_weight(be, c, NM("mixer.in_proj.weight"), k->d_in_proj, k->d_model, &l->in_proj, err) < 0 ||
        (k->use_bias && !(l->in_bias = sl_model_load_vec(be, c, NM("mixer.in_proj.bias"), 1, s_in, 0, 0, err))) ||
        !(l->conv_w = sl_model_load_vec(be, c, NM("mixer.conv1d.weight"), 3, s_conv, 0, 0, err)))
        return -1;
    if (k->conv_bias) {
        if (!(l->conv_b = sl_model_load_vec(be, c, NM("mixer.conv1d.bias"), 1, s_cd, 0, 0, err)))
            return -1;
    } else if (!(l->conv_b = be->alloc(be, (size_t)k->conv_dim * sizeof(float), err)) ||
               be->memset0(be, l->conv_b, (size_t)k->conv_dim * sizeof(float), err) < 0)
        return -1;
    if (m->ssd) {
        if (!(l->dt_bias = per_head(m, c, NM("mixer.dt_bias"), 0, err)) ||
            !(l->A = per_head(m, c, NM("mixer.A_log"), 1, err)) || !(l->Dskip = per_head(m, c, NM("mixer.D"), 0, err)))
            return -1;
    } else if (!(l->dt_bias_ch = per_head(m, c, NM("mixer.dt_bias"), 2, err)) ||
               !(l->A_log2e = per_head(m, c, NM("mixer.A_log"), 3, err)) ||
               !(l->D_ch = per_head(m, c, NM("mixer.D"), 2, err)))
        return -1;
    if (!(l->gnorm_w = sl_model_load_vec(be, c, NM("mixer.norm.weight"), 1, s_ssm, 0, 0, err)) ||
        sl_model_load_weight(be, c, NM("mixer.out_proj.weight"), k->d_model, k->d_ssm, &l->out_proj, err) < 0 ||
        (k->use_bias && !(l->out_bias = sl_model_load_vec(be, c, NM("mixer.out_proj.bias"), 1, s_d, 0, 0, err))))
        return -1;
    if (k->d_mlp && (!(l->norm2_w = sl_model_load_vec(be, c, NM("norm2.weight"), 1, s_d, 0, 0, err)) ||
                     sl_model_load_weight(be, c, NM("mlp.fc1.weight"), 2 * k->d_mlp, k->d_model, &l->fc1, err) < 0 ||
                     sl_model_load_weight(be, c, NM("mlp.fc2.weight"), k->d_model, k->d_mlp, &l->fc2, err) < 0))
        return -1;
#undef NM
    return 0;
}

static m2model *load(const char *dir, const m2cfg *cfg, sl_backend *be, sl_err *err)
{
    m2model *m = sl_xcalloc(1, sizeof *m);
    m->be = be;
    m->cfg = *cfg;
    m->ssd = be->ssd_chunked != NULL;
    const m2cfg *k = &m->cfg;
    sl_tensors *c = NULL;
    /* without the SSD operator the model runs on the selective scan, which
     * has one B and C for all channels and no dt limits */
    const char *why = NULL;
    if (!m->ssd && k->ngroups != 1)
        why = "n_groups/ngroups > 1";
    else if (!m->ssd && (k->dt_min != 0.0 || !isinf(k->dt_max)))
        why = "a time_step_limit other than [0.0, Infinity]";
    else if (k->d_mlp && !be->mul_silu)
        why = "d_intermediate > 0 (gated-MLP blocks)";
    if (why) {
        sl_errf(err, "%s: Mamba-2 with %s is not implemented on the %s backend yet", dir, why, be->name);
        goto fail;
    }
    static const char *const mamba1[] = {".mixer.x_proj.", ".mixer.dt_proj.", NULL};
    c = sl_tensors_open(dir, err);
    if (!c ||
        sl_model_check_layers(c, k->n_layer, mamba1, "belongs to a Mamba-1 model, but config.json is Mamba-2", err) <
            0 ||
        sl_model_load_embedding(be, c, k->vocab_size, &m->cfg.vocab, k->d_model, &m->emb, err) < 0)
        goto fail;
    m->layers = sl_xcalloc((size_t)k->n_layer, sizeof *m->layers);
    for (int i = 0; i < k->n_layer; i++)
        if (load_layer(m, c, i, err) < 0)
            goto fail;
    int64_t s_d[1] = {k->d_model};
    if (!(m->norm_f = sl_model_load_vec(be, c, "backbone.norm_f.weight", 1, s_d, 0, 0, err)) ||
        sl_model_load_lm_head(be, c, k->vocab, k->d_model, &m->emb, &m->lm_head, &m->tied, err) < 0)
        goto fail;
    if (!m->ssd) { /* dt per head -> per channel: a 0/1 matrix [d_ssm][nheads] (exact) */
        float *e = sl_xcalloc((size_t)(k->d_ssm * k->nheads), sizeof *e);
        for (int64_t ch = 0; ch < k->d_ssm; ch++)
            e[ch * k->nheads + ch / k->headdim] = 1.0f;
        int rc = be->weight_create(be, &m->dt_expand, e, k->d_ssm, k->nheads, SL_DT_F32, err);
        free(e);
        if (rc < 0)
            goto fail;
    }
    sl_tensors_close(c);
    return m;
fail:
    sl_tensors_close(c);
    m2_free(m);
    return NULL;
}

/* --- runs ------------------------------------------------------------------ */

static void m2_run_free(void *p)
{
    m2run *r = p;
    if (!r)
        return;
    sl_backend *be = r->m->be;
    void *bufs[] = {r->ids, r->targets, r->reset, r->hidden, r->residual,   r->normed,    r->zxbcdt, r->xbc,
                    r->dt,  r->y,       r->ynorm, r->mlp,    r->conv_state, r->ssm_state, r->logits, r->logp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            be->free(be, bufs[i]);
    free(r);
}

static size_t conv_len(const m2cfg *k)
{
    return (size_t)k->n_layer * (size_t)k->conv_dim * (size_t)(k->d_conv - 1);
}
static size_t ssm_len(const m2cfg *k)
{
    return (size_t)k->n_layer * (size_t)k->d_ssm * (size_t)k->d_state;
}

static int m2_run_reset(void *p, sl_err *err)
{
    m2run *r = p;
    sl_backend *be = r->m->be;
    if (be->memset0(be, r->conv_state, conv_len(&r->m->cfg) * sizeof(float), err) < 0 ||
        be->memset0(be, r->ssm_state, ssm_len(&r->m->cfg) * sizeof(float), err) < 0)
        return -1;
    return 0;
}

static void *m2_run_new(void *p, int64_t chunk, sl_err *err)
{
    m2model *m = p;
    if (chunk < 1)
        chunk = 1;
    const m2cfg *k = &m->cfg;
    sl_backend *be = m->be;
    m2run *r = sl_xcalloc(1, sizeof *r);
    r->m = m;
    r->chunk = chunk;
    size_t C = (size_t)chunk, f = sizeof(float), tile = C < SL_MODEL_LM_TILE ? C : SL_MODEL_LM_TILE;
    struct {
        void **p;
        size_t bytes;
    } want[] = {
        {(void **)&r->ids, C * sizeof(int32_t)},
        {(void **)&r->targets, C * sizeof(int32_t)},
        {(void **)&r->reset, C},
        {(void **)&r->hidden, C * (size_t)k->d_model * f},
        {(void **)&r->residual, C * (size_t)k->d_model * f},
        {(void **)&r->normed, C * (size_t)k->d_model * f},
        {(void **)&r->zxbcdt, C * (size_t)k->d_in_proj * f},
        {(void **)&r->xbc, C * (size_t)k->conv_dim * f},
        {(void **)&r->dt, m->ssd ? 0 : C * (size_t)k->d_ssm * f},
        {(void **)&r->y, C * (size_t)k->d_ssm * f},
        {(void **)&r->ynorm, C * (size_t)k->d_ssm * f},
        {(void **)&r->mlp, C * 2 * (size_t)k->d_mlp * f},
        {(void **)&r->logits, tile * (size_t)k->vocab * f},
        {(void **)&r->logp, C * f},
        {(void **)&r->conv_state, conv_len(k) * f},
        {(void **)&r->ssm_state, ssm_len(k) * f},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (want[i].bytes && !(*want[i].p = be->alloc(be, want[i].bytes, err))) {
            m2_run_free(r);
            return NULL;
        }
    if (m2_run_reset(r, err) < 0) {
        m2_run_free(r);
        return NULL;
    }
    return r;
}

static int64_t m2_run_chunk(const void *p)
{
    return ((const m2run *)p)->chunk;
}

/* The SSD of one layer: the chunked operator, or the selective scan with
 * each head's dt and A repeated over its channels (n_groups 1 only). */
static int ssd(m2run *r, const m2layer *l, int64_t i, int64_t n, const uint8_t *rs, sl_err *err)
{
    m2model *m = r->m;
    sl_backend *be = m->be;
    const m2cfg *k = &m->cfg;
    const int64_t ds = k->d_ssm, N = k->d_state, cd = k->conv_dim, dip = k->d_in_proj, GN = k->ngroups * N;
    float *state = r->ssm_state + (size_t)i * (size_t)ds * (size_t)N;
    if (m->ssd) {
        sl_ssd_args sa = {.L = n,
                          .H = (int)k->nheads,
                          .P = (int)k->headdim,
                          .G = (int)k->ngroups,
                          .N = (int)N,
                          .x = r->xbc,
                          .ldx = cd,
                          .dt = r->zxbcdt + ds + cd,
                          .lddt = dip,
                          .dt_bias = l->dt_bias,
                          .A = l->A,
                          .Dskip = l->Dskip,
                          .dt_min = (float)k->dt_min,
                          .dt_max = (float)k->dt_max,
                          .B = r->xbc + ds,
                          .C = r->xbc + ds + GN,
                          .ldbc = cd,
                          .z = r->zxbcdt,
                          .ldz = dip,
                          .state = state,
                          .reset = rs,
                          .y = r->y,
                          .ldy = ds};
        return be->ssd_chunked(be, &sa, err);
    }
    sl_linear_args dx = {.L = n, .x = r->zxbcdt + ds + cd, .ldx = dip, .w = &m->dt_expand, .y = r->dt, .ldy = ds};
    sl_scan_args sa = {.L = n,
                       .D = ds,
                       .N = (int)N,
                       .u = r->xbc,
                       .ldu = cd,
                       .dt = r->dt,
                       .lddt = ds,
                       .dt_bias = l->dt_bias_ch,
                       .A_log2e = l->A_log2e,
                       .B = r->xbc + ds,
                       .C = r->xbc + ds + N,
                       .ldbc = cd,
                       .Dskip = l->D_ch,
                       .z = r->zxbcdt,
                       .ldz = dip,
                       .state = state,
                       .reset = rs,
                       .y = r->y,
                       .ldy = ds};
    if (be->linear(be, &dx, err) < 0 || be->selective_scan(be, &sa, err) < 0)
        return -1;
    return 0;
}

static int m2_forward(void *p, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n, float *logp,
                      sl_err *err)
{
    m2run *r = p;
    m2model *m = r->m;
    sl_backend *be = m->be;
    const m2cfg *k = &m->cfg;
    if (n <= 0)
        return 0;
    const int64_t d = k->d_model, ds = k->d_ssm, K = k->d_conv, cd = k->conv_dim, dip = k->d_in_proj, dm = k->d_mlp;
    const uint8_t *rs;
    sl_model_input mi = {.chunk = r->chunk,
                         .vocab = k->vocab,
                         .d = d,
                         .emb = &m->emb,
                         .ids = r->ids,
                         .targets = r->targets,
                         .reset = r->reset,
                         .hidden = r->hidden};
    if (sl_model_input_embed(be, &mi, ids, reset, targets, n, &rs, err) < 0)
        return -1;
    for (int64_t i = 0; i < k->n_layer; i++) {
        m2layer *l = &m->layers[i];
        sl_norm_args na = {.L = n,
                           .D = d,
                           .x = r->hidden,
                           .residual = r->residual,
                           .residual_init = i == 0,
                           .w = l->norm_w,
                           .eps = (float)k->eps,
                           .out = r->normed};
        sl_linear_args in = {
            .L = n, .x = r->normed, .ldx = d, .w = &l->in_proj, .bias = l->in_bias, .y = r->zxbcdt, .ldy = dip};
        sl_conv_args ca = {.L = n,
                           .D = cd,
                           .K = (int)K,
                           .x = r->zxbcdt + ds,
                           .ldx = dip,
                           .w = l->conv_w,
                           .bias = l->conv_b,
                           .state = r->conv_state + (size_t)i * (size_t)cd * (size_t)(K - 1),
                           .reset = rs,
                           .out = r->xbc,
                           .ldout = cd};
        /* the gated RMSNorm, in groups of d_ssm / ngroups (mamba_ssm's RMSNormGated group_size) */
        sl_norm_args gn = {.L = n,
                           .D = ds,
                           .x = NULL,
                           .residual = r->y,
                           .w = l->gnorm_w,
                           .eps = (float)k->norm_eps,
                           .out = r->ynorm,
                           .group = k->ngroups > 1 ? ds / k->ngroups : 0};
        sl_linear_args op = {
            .L = n, .x = r->ynorm, .ldx = ds, .w = &l->out_proj, .bias = l->out_bias, .y = r->hidden, .ldy = d};
        if (be->add_rmsnorm(be, &na, err) < 0 || be->linear(be, &in, err) < 0 || be->conv1d_silu(be, &ca, err) < 0 ||
            ssd(r, l, i, n, rs, err) < 0 || be->add_rmsnorm(be, &gn, err) < 0 || be->linear(be, &op, err) < 0)
            return -1;
        if (dm) { /* mamba_ssm's Block with a GatedMLP: residual += hidden; fc2(y * silu(gate)) of fc1(norm2) */
            sl_norm_args n2 = {.L = n,
                               .D = d,
                               .x = r->hidden,
                               .residual = r->residual,
                               .w = l->norm2_w,
                               .eps = (float)k->eps,
                               .out = r->normed};
            sl_linear_args f1 = {.L = n, .x = r->normed, .ldx = d, .w = &l->fc1, .y = r->mlp, .ldy = 2 * dm};
            sl_mul_silu_args g = {.L = n,
                                  .D = dm,
                                  .x = r->mlp,
                                  .ldx = 2 * dm,
                                  .z = r->mlp + dm,
                                  .ldz = 2 * dm,
                                  .out = r->mlp,
                                  .ldout = 2 * dm};
            sl_linear_args f2 = {.L = n, .x = r->mlp, .ldx = 2 * dm, .w = &l->fc2, .y = r->hidden, .ldy = d};
            if (be->add_rmsnorm(be, &n2, err) < 0 || be->linear(be, &f1, err) < 0 || be->mul_silu(be, &g, err) < 0 ||
                be->linear(be, &f2, err) < 0)
                return -1;
        }
    }
    sl_model_head h = {.norm_f = m->norm_f,
                       .eps = k->eps,
                       .lm_head = &m->lm_head,
                       .d = d,
                       .vocab = k->vocab,
                       .hidden = r->hidden,
                       .residual = r->residual,
                       .normed = r->normed,
                       .logits = r->logits,
                       .logp = r->logp,
                       .targets = r->targets};
    return sl_model_head_logp(be, &h, targets, n, logp, err);
}

static int64_t m2_params(const void *p)
{
    const m2model *m = p;
    const m2cfg *k = &m->cfg;
    int64_t per = k->d_model + k->d_in_proj * k->d_model + k->conv_dim * k->d_conv + (k->conv_bias ? k->conv_dim : 0) +
                  3 * k->nheads + k->d_ssm + k->d_model * k->d_ssm;
    if (k->use_bias)
        per += k->d_in_proj + k->d_model;
    if (k->d_mlp)
        per += k->d_model + 3 * k->d_mlp * k->d_model;
    return k->vocab * k->d_model * (m->tied ? 1 : 2) + k->n_layer * per + k->d_model;
}

/* Per token: 2 x the weights multiplied (projections, MLP, lm_head), the
 * conv, and the SSD as its recurrence would do it (the chunked form's extra
 * intra-chunk products are not counted: the figure is the model's work,
 * not this implementation's). */
static double m2_flops(const void *p)
{
    const m2cfg *k = &((const m2model *)p)->cfg;
    double d = (double)k->d_model, ds = (double)k->d_ssm, N = (double)k->d_state;
    double mm = 2.0 * ((double)k->d_in_proj * d + d * ds + 3.0 * (double)k->d_mlp * d);
    double conv = 2.0 * (double)k->d_conv * (double)k->conv_dim;
    double scan = 6.0 * ds * N + 4.0 * ds;
    return (double)k->n_layer * (mm + conv + scan) + 2.0 * d * (double)k->vocab;
}

static const sl_model_ops m2_ops = {
    .free = m2_free,
    .params = m2_params,
    .flops_per_token = m2_flops,
    .run_new = m2_run_new,
    .run_free = m2_run_free,
    .run_chunk = m2_run_chunk,
    .run_reset = m2_run_reset,
    .forward = m2_forward,
};

static sl_model *arch_load(const char *dir, const char *cfgpath, const char *text, size_t len, sl_backend *be,
                           sl_err *err)
{
    m2cfg cfg;
    int tie = 0;
    if (sl_mamba2_config_parse(text, len, cfgpath, &cfg, &tie, err) < 0)
        return NULL;
    (void)tie; /* the head is tied exactly when lm_head.weight is absent */
    m2model *m = load(dir, &cfg, be, err);
    if (!m)
        return NULL;
    sl_model_info info = {.arch = "mamba2",
                          .vocab_size = m->cfg.vocab_size,
                          .pad_multiple = m->cfg.pad_multiple,
                          .vocab = m->cfg.vocab,
                          .eos = m->cfg.eos};
    return sl_model_wrap(&m2_ops, m, &info, be);
}

static int arch_check(const char *text, size_t len, const char *name, sl_err *err)
{
    m2cfg cfg;
    int tie = 0;
    return sl_mamba2_config_parse(text, len, name, &cfg, &tie, err);
}

const sl_model_arch sl_model_arch_mamba2 = {.model_type = "mamba2", .load = arch_load, .check_config = arch_check};
