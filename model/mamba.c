/* Mamba-1 checkpoint loading and forward pass (see mamba.h).
 *
 * The forward pass follows mamba_ssm's reference (MixerModel + Block +
 * Mamba.forward with selective_scan_ref): per layer
 *   residual += hidden; hidden = RMSNorm(residual)
 *   xz = in_proj(hidden); x, z = split(xz)
 *   x = silu(causal_conv1d(x))
 *   dt, B, C = split(x_proj(x)); dt = dt_proj.weight @ dt
 *   y = selective_scan(x, dt, A = -exp(A_log), B, C, D, z, delta_bias = dt_proj.bias, softplus)
 *   hidden = out_proj(y)
 * then residual += hidden, norm_f, lm_head (tied to the embedding when
 * lm_head.weight is absent) and log-softmax over all (padded) vocab rows,
 * as HF and mamba_ssm compute logits.
 *
 * Falcon-Mamba (transformers' FalconMambaMixer) differs in one place: dt, B
 * and C are each RMS-normalized without weights (eps mixer_rms_eps) right
 * after x_proj, dt before dt_proj. */
#include "model/mamba.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "model/model_impl.h"
#include "model/tensors.h"
#include "stream/io.h"

typedef struct layer {
    sl_weight in_proj, x_proj, dt_proj, out_proj;
    sl_weight xp_dt, xp_B, xp_C; /* Falcon-Mamba: x_proj's three row blocks (x_proj unused) */
    float *in_bias, *out_bias;   /* NULL unless use_bias */
    float *norm_w, *conv_w, *conv_b, *dt_bias, *A_log2e, *Dskip;
} layer;

struct sl_mamba {
    sl_mamba_config cfg;
    sl_backend *be;
    sl_weight emb, lm_head;
    int tied; /* lm_head is emb */
    float *norm_f;
    float *ones; /* Falcon-Mamba: [max(dt_rank, d_state)] weights of the weightless norms */
    layer *layers;
};

static int load_layer(sl_mamba *m, const sl_tensors *c, int i, sl_err *err)
{
    const sl_mamba_config *k = &m->cfg;
    layer *l = &m->layers[i];
    char name[256];
    const int64_t d = k->d_model, di = k->d_inner, n = k->d_state, r = k->dt_rank;
#define NM(s) (snprintf(name, sizeof name, "backbone.layers.%d.%s", i, s), name)
    int64_t s_d[1] = {d}, s_di[1] = {di}, s_2di[1] = {2 * di}, s_conv[3] = {di, 1, k->d_conv}, s_a[2] = {di, n};
    if (!(l->norm_w = sl_model_load_vec(m->be, c, NM("norm.weight"), 1, s_d, 0, 0, err)))
        return -1;
    if (sl_model_load_weight(m->be, c, NM("mixer.in_proj.weight"), 2 * di, d, &l->in_proj, err) < 0)
        return -1;
    if (k->use_bias && !(l->in_bias = sl_model_load_vec(m->be, c, NM("mixer.in_proj.bias"), 1, s_2di, 0, 0, err)))
        return -1;
    if (!(l->conv_w = sl_model_load_vec(m->be, c, NM("mixer.conv1d.weight"), 3, s_conv, 0, 0, err)))
        return -1;
    if (k->conv_bias) {
        if (!(l->conv_b = sl_model_load_vec(m->be, c, NM("mixer.conv1d.bias"), 1, s_di, 0, 0, err)))
            return -1;
    } else {
        if (!(l->conv_b = m->be->alloc(m->be, (size_t)di * sizeof(float), err)) ||
            m->be->memset0(m->be, l->conv_b, (size_t)di * sizeof(float), err) < 0)
            return -1;
    }
    if (k->falcon) { /* three products, so that dt, B and C each come out contiguous for their norm */
        int64_t s_x[2] = {r + 2 * n, di};
        sl_dtype dt = SL_DT_F32;
        float *h = sl_model_load_host(c, NM("mixer.x_proj.weight"), 2, s_x, 0, &dt, err);
        if (!h)
            return -1;
        int rc = m->be->weight_create(m->be, &l->xp_dt, h, r, di, dt, err);
        if (!rc)
            rc = m->be->weight_create(m->be, &l->xp_B, h + (size_t)(r * di), n, di, dt, err);
        if (!rc)
            rc = m->be->weight_create(m->be, &l->xp_C, h + (size_t)((r + n) * di), n, di, dt, err);
        free(h);
        if (rc < 0)
            return -1;
    } else if (sl_model_load_weight(m->be, c, NM("mixer.x_proj.weight"), r + 2 * n, di, &l->x_proj, err) < 0)
        return -1;
    if (sl_model_load_weight(m->be, c, NM("mixer.dt_proj.weight"), di, r, &l->dt_proj, err) < 0)
        return -1;
    if (!(l->dt_bias = sl_model_load_vec(m->be, c, NM("mixer.dt_proj.bias"), 1, s_di, 0, 0, err)))
        return -1;
    if (!(l->A_log2e = sl_model_load_vec(m->be, c, NM("mixer.A_log"), 2, s_a, 0, 1, err)))
        return -1;
    if (!(l->Dskip = sl_model_load_vec(m->be, c, NM("mixer.D"), 1, s_di, 0, 0, err)))
        return -1;
    if (sl_model_load_weight(m->be, c, NM("mixer.out_proj.weight"), d, di, &l->out_proj, err) < 0)
        return -1;
    if (k->use_bias && !(l->out_bias = sl_model_load_vec(m->be, c, NM("mixer.out_proj.bias"), 1, s_d, 0, 0, err)))
        return -1;
#undef NM
    return 0;
}

/* Loads the weights of a parsed config from the directory's checkpoint. */
static sl_mamba *load_parsed(const char *dir, const sl_mamba_config *cfg, sl_backend *be, sl_err *err)
{
    sl_mamba *m = sl_xcalloc(1, sizeof *m);
    m->be = be;
    m->cfg = *cfg;
    sl_tensors *c = sl_tensors_open(dir, err);
    if (!c)
        goto fail;
    /* extra layers or Mamba-2 parameters are reported instead of ignored */
    static const char *const mamba2[] = {".mixer.dt_bias", ".mixer.norm.weight", NULL};
    if (sl_model_check_layers(c, m->cfg.n_layer, mamba2, "belongs to a Mamba-2 model; only Mamba-1 is supported", err) <
            0 ||
        sl_model_load_embedding(m->be, c, m->cfg.vocab_size, &m->cfg.vocab, m->cfg.d_model, &m->emb, err) < 0)
        goto fail;
    m->layers = sl_xcalloc((size_t)m->cfg.n_layer, sizeof *m->layers);
    for (int i = 0; i < m->cfg.n_layer; i++)
        if (load_layer(m, c, i, err) < 0)
            goto fail;
    int64_t s_d[1] = {m->cfg.d_model};
    if (!(m->norm_f = sl_model_load_vec(m->be, c, "backbone.norm_f.weight", 1, s_d, 0, 0, err)))
        goto fail;
    if (m->cfg.falcon) {
        size_t n1 = (size_t)(m->cfg.dt_rank > m->cfg.d_state ? m->cfg.dt_rank : m->cfg.d_state);
        float *h = sl_xmalloc(n1 * sizeof *h);
        for (size_t i = 0; i < n1; i++)
            h[i] = 1.0f;
        m->ones = m->be->alloc(m->be, n1 * sizeof(float), err);
        int rc = m->ones ? m->be->upload(m->be, m->ones, h, n1 * sizeof(float), err) : -1;
        free(h);
        if (rc < 0)
            goto fail;
    }
    if (sl_model_load_lm_head(m->be, c, m->cfg.vocab, m->cfg.d_model, &m->emb, &m->lm_head, &m->tied, err) < 0)
        goto fail;
    sl_tensors_close(c);
    return m;
fail:
    sl_tensors_close(c);
    sl_mamba_free(m);
    return NULL;
}

sl_mamba *sl_mamba_load(const char *dir, sl_backend *be, sl_err *err)
{
    char *cfgpath = sl_model_path(dir, "config.json");
    char *text = NULL;
    size_t len;
    sl_mamba_config cfg;
    sl_mamba *m = NULL;
    if (sl_read_file(cfgpath, &text, &len, err) == 0 && sl_mamba_config_parse(text, len, cfgpath, &cfg, err) == 0)
        m = load_parsed(dir, &cfg, be, err);
    free(text);
    free(cfgpath);
    return m;
}

void sl_mamba_free(sl_mamba *m)
{
    if (!m)
        return;
    sl_backend *be = m->be;
    if (m->layers)
        for (int i = 0; i < m->cfg.n_layer; i++) {
            layer *l = &m->layers[i];
            sl_weight *ws[] = {&l->in_proj, &l->x_proj, &l->dt_proj, &l->out_proj, &l->xp_dt, &l->xp_B, &l->xp_C};
            for (int j = 0; j < 7; j++)
                if (ws[j]->data)
                    be->weight_free(be, ws[j]);
            float *vs[] = {l->in_bias, l->out_bias, l->norm_w, l->conv_w, l->conv_b, l->dt_bias, l->A_log2e, l->Dskip};
            for (int j = 0; j < 8; j++)
                if (vs[j])
                    be->free(be, vs[j]);
        }
    free(m->layers);
    if (m->emb.data)
        be->weight_free(be, &m->emb);
    if (!m->tied && m->lm_head.data)
        be->weight_free(be, &m->lm_head);
    if (m->norm_f)
        be->free(be, m->norm_f);
    if (m->ones)
        be->free(be, m->ones);
    free(m);
}

const sl_mamba_config *sl_mamba_cfg(const sl_mamba *m)
{
    return &m->cfg;
}
sl_backend *sl_mamba_backend(const sl_mamba *m)
{
    return m->be;
}

int64_t sl_mamba_params(const sl_mamba *m)
{
    const sl_mamba_config *k = &m->cfg;
    int64_t d = k->d_model, di = k->d_inner, n = k->d_state, r = k->dt_rank;
    int64_t per = d + 2 * di * d + di * k->d_conv + di + (r + 2 * n) * di + di * r + di + di * n + di + d * di;
    if (k->use_bias)
        per += 2 * di + d;
    return k->vocab * d * (m->tied ? 1 : 2) + k->n_layer * per + d;
}

double sl_mamba_flops_per_token(const sl_mamba *m)
{
    const sl_mamba_config *k = &m->cfg;
    double d = (double)k->d_model, di = (double)k->d_inner, n = (double)k->d_state, r = (double)k->dt_rank;
    double mm = 2.0 * (2 * di * d + (r + 2 * n) * di + di * r + d * di);
    double conv = 2.0 * (double)k->d_conv * di;
    double scan = 6.0 * di * n + 4.0 * di;
    return (double)k->n_layer * (mm + conv + scan) + 2.0 * d * (double)k->vocab;
}

/* --- runs -------------------------------------------------------------- */

struct sl_mamba_run {
    sl_mamba *m;
    int64_t chunk;
    /* backend buffers */
    int32_t *ids, *targets;
    uint8_t *reset;
    float *hidden, *residual, *normed, *xz, *xc, *xdbl, *dt, *y, *logits, *logp;
    float *xnorm;                  /* Falcon-Mamba: normalized dt [chunk][dt_rank], B and C [chunk][d_state] */
    float *conv_state, *ssm_state; /* [n_layer][d_inner][d_conv-1], [n_layer][d_inner][d_state] */
};

void sl_mamba_run_free(sl_mamba_run *r)
{
    if (!r)
        return;
    sl_backend *be = r->m->be;
    void *bufs[] = {r->ids,  r->targets, r->reset, r->hidden, r->residual, r->normed,     r->xz,        r->xc,
                    r->xdbl, r->dt,      r->y,     r->logits, r->logp,     r->conv_state, r->ssm_state, r->xnorm};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            be->free(be, bufs[i]);
    free(r);
}

static size_t conv_state_len(const sl_mamba_config *k)
{
    return (size_t)k->n_layer * (size_t)k->d_inner * (size_t)(k->d_conv - 1);
}
static size_t ssm_state_len(const sl_mamba_config *k)
{
    return (size_t)k->n_layer * (size_t)k->d_inner * (size_t)k->d_state;
}

sl_mamba_run *sl_mamba_run_new(sl_mamba *m, int64_t chunk, sl_err *err)
{
    if (chunk < 1)
        chunk = 1;
    const sl_mamba_config *k = &m->cfg;
    sl_backend *be = m->be;
    sl_mamba_run *r = sl_xcalloc(1, sizeof *r);
    r->m = m;
    r->chunk = chunk;
    size_t C = (size_t)chunk, f = sizeof(float);
    size_t tile = C < SL_MODEL_LM_TILE ? C : SL_MODEL_LM_TILE;
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
        {(void **)&r->xz, C * 2 * (size_t)k->d_inner * f},
        {(void **)&r->xc, C * (size_t)k->d_inner * f},
        {(void **)&r->xdbl, C * (size_t)(k->dt_rank + 2 * k->d_state) * f},
        {(void **)&r->dt, C * (size_t)k->d_inner * f},
        {(void **)&r->y, C * (size_t)k->d_inner * f},
        {(void **)&r->logits, tile * (size_t)k->vocab * f},
        {(void **)&r->logp, C * f},
        {(void **)&r->conv_state, conv_state_len(k) * f},
        {(void **)&r->ssm_state, ssm_state_len(k) * f},
        {(void **)&r->xnorm, k->falcon ? C * (size_t)(k->dt_rank + 2 * k->d_state) * f : 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (want[i].bytes && !(*want[i].p = be->alloc(be, want[i].bytes, err))) {
            sl_mamba_run_free(r);
            return NULL;
        }
    if (sl_mamba_run_reset(r, err) < 0) {
        sl_mamba_run_free(r);
        return NULL;
    }
    return r;
}

int64_t sl_mamba_run_chunk(const sl_mamba_run *r)
{
    return r->chunk;
}
sl_mamba *sl_mamba_run_model(const sl_mamba_run *r)
{
    return r->m;
}

int sl_mamba_run_reset(sl_mamba_run *r, sl_err *err)
{
    sl_backend *be = r->m->be;
    if (be->memset0(be, r->conv_state, conv_state_len(&r->m->cfg) * sizeof(float), err) < 0 ||
        be->memset0(be, r->ssm_state, ssm_state_len(&r->m->cfg) * sizeof(float), err) < 0)
        return -1;
    return 0;
}

/* Falcon-Mamba's x_proj: dt, B and C each computed into its own block of
 * xdbl and RMS-normalized without weights into the same block of xnorm. */
static int falcon_x_proj(sl_mamba_run *r, const layer *l, int64_t n, sl_err *err)
{
    sl_backend *be = r->m->be;
    const sl_mamba_config *k = &r->m->cfg;
    const int64_t di = k->d_inner, R = k->dt_rank, N = k->d_state;
    const size_t C = (size_t)r->chunk;
    const sl_weight *w[3] = {&l->xp_dt, &l->xp_B, &l->xp_C};
    const int64_t width[3] = {R, N, N};
    const size_t at[3] = {0, C * (size_t)R, C * (size_t)(R + N)};
    for (int j = 0; j < 3; j++) {
        sl_linear_args xp = {.L = n, .x = r->xc, .ldx = di, .w = w[j], .y = r->xdbl + at[j], .ldy = width[j]};
        sl_norm_args nm = {.L = n,
                           .D = width[j],
                           .x = NULL,
                           .residual = r->xdbl + at[j],
                           .w = r->m->ones,
                           .eps = (float)k->mixer_rms_eps,
                           .out = r->xnorm + at[j]};
        if (be->linear(be, &xp, err) < 0 || be->add_rmsnorm(be, &nm, err) < 0)
            return -1;
    }
    return 0;
}

int sl_mamba_forward(sl_mamba_run *r, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n,
                     float *logp, sl_err *err)
{
    sl_mamba *m = r->m;
    sl_backend *be = m->be;
    const sl_mamba_config *k = &m->cfg;
    if (n <= 0)
        return 0;
    const int64_t d = k->d_model, di = k->d_inner, N = k->d_state, R = k->dt_rank, K = k->d_conv;
    const int64_t ldx = R + 2 * N;
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
        layer *l = &m->layers[i];
        sl_norm_args na = {.L = n,
                           .D = d,
                           .x = r->hidden,
                           .residual = r->residual,
                           .residual_init = i == 0,
                           .w = l->norm_w,
                           .eps = (float)k->eps,
                           .out = r->normed};
        sl_linear_args in = {
            .L = n, .x = r->normed, .ldx = d, .w = &l->in_proj, .bias = l->in_bias, .y = r->xz, .ldy = 2 * di};
        sl_conv_args ca = {.L = n,
                           .D = di,
                           .K = (int)K,
                           .x = r->xz,
                           .ldx = 2 * di,
                           .w = l->conv_w,
                           .bias = l->conv_b,
                           .state = r->conv_state + (size_t)i * (size_t)di * (size_t)(K - 1),
                           .reset = rs,
                           .out = r->xc,
                           .ldout = di};
        sl_linear_args xp = {.L = n, .x = r->xc, .ldx = di, .w = &l->x_proj, .y = r->xdbl, .ldy = ldx};
        sl_linear_args dp = {.L = n, .x = r->xdbl, .ldx = ldx, .w = &l->dt_proj, .y = r->dt, .ldy = di};
        sl_scan_args sa = {.L = n,
                           .D = di,
                           .N = (int)N,
                           .u = r->xc,
                           .ldu = di,
                           .dt = r->dt,
                           .lddt = di,
                           .dt_bias = l->dt_bias,
                           .A_log2e = l->A_log2e,
                           .B = r->xdbl + R,
                           .C = r->xdbl + R + N,
                           .ldbc = ldx,
                           .Dskip = l->Dskip,
                           .z = r->xz + di,
                           .ldz = 2 * di,
                           .state = r->ssm_state + (size_t)i * (size_t)di * (size_t)N,
                           .reset = rs,
                           .y = r->y,
                           .ldy = di};
        sl_linear_args op = {
            .L = n, .x = r->y, .ldx = di, .w = &l->out_proj, .bias = l->out_bias, .y = r->hidden, .ldy = d};
        if (be->add_rmsnorm(be, &na, err) < 0 || be->linear(be, &in, err) < 0 || be->conv1d_silu(be, &ca, err) < 0)
            return -1;
        if (k->falcon) {
            if (falcon_x_proj(r, l, n, err) < 0)
                return -1;
            dp.x = r->xnorm;
            dp.ldx = R;
            sa.B = r->xnorm + (size_t)r->chunk * (size_t)R;
            sa.C = sa.B + (size_t)r->chunk * (size_t)N;
            sa.ldbc = N;
        } else if (be->linear(be, &xp, err) < 0)
            return -1;
        if (be->linear(be, &dp, err) < 0 || be->selective_scan(be, &sa, err) < 0 || be->linear(be, &op, err) < 0)
            return -1;
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

/* --- the model interface (model/model.h) -------------------------------- */

static void ops_free(void *m)
{
    sl_mamba_free(m);
}
static int64_t ops_params(const void *m)
{
    return sl_mamba_params(m);
}
static double ops_flops(const void *m)
{
    return sl_mamba_flops_per_token(m);
}
static void *ops_run_new(void *m, int64_t chunk, sl_err *err)
{
    return sl_mamba_run_new(m, chunk, err);
}
static void ops_run_free(void *r)
{
    sl_mamba_run_free(r);
}
static int64_t ops_run_chunk(const void *r)
{
    return sl_mamba_run_chunk(r);
}
static int ops_run_reset(void *r, sl_err *err)
{
    return sl_mamba_run_reset(r, err);
}
static int ops_forward(void *r, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n,
                       float *logp, sl_err *err)
{
    return sl_mamba_forward(r, ids, reset, targets, n, logp, err);
}

static const sl_model_ops mamba_ops = {
    .free = ops_free,
    .params = ops_params,
    .flops_per_token = ops_flops,
    .run_new = ops_run_new,
    .run_free = ops_run_free,
    .run_chunk = ops_run_chunk,
    .run_reset = ops_run_reset,
    .forward = ops_forward,
};

static sl_model *arch_load(const char *dir, const char *cfgpath, const char *text, size_t len, sl_backend *be,
                           sl_err *err)
{
    sl_mamba_config cfg;
    if (sl_mamba_config_parse(text, len, cfgpath, &cfg, err) < 0)
        return NULL;
    sl_mamba *m = load_parsed(dir, &cfg, be, err);
    if (!m)
        return NULL;
    sl_model_info info = {.arch = m->cfg.falcon ? "falcon_mamba" : "mamba",
                          .vocab_size = m->cfg.vocab_size,
                          .pad_multiple = m->cfg.pad_multiple,
                          .vocab = m->cfg.vocab,
                          .eos = m->cfg.eos};
    return sl_model_wrap(&mamba_ops, m, &info, be);
}

static int arch_check(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_mamba_config cfg;
    return sl_mamba_config_parse(text, len, name, &cfg, err);
}

const sl_model_arch sl_model_arch_mamba = {.model_type = "mamba", .load = arch_load, .check_config = arch_check};
/* the same loader: the config parser sees model_type and sets cfg.falcon */
const sl_model_arch sl_model_arch_falcon_mamba = {
    .model_type = "falcon_mamba", .load = arch_load, .check_config = arch_check};

const sl_mamba *sl_mamba_of(const sl_model *m)
{
    return sl_model_impl(m, &mamba_ops);
}
