/* config.json of a Mamba-1 checkpoint, in either schema:
 *  - Hugging Face MambaConfig: hidden_size, num_hidden_layers, state_size,
 *    conv_kernel, expand, intermediate_size, time_step_rank ("auto" or int),
 *    layer_norm_epsilon, use_bias, use_conv_bias, vocab_size;
 *  - mamba_ssm MambaConfig: d_model, n_layer, vocab_size,
 *    pad_vocab_size_multiple, rms_norm, ssm_cfg {d_state, d_conv, expand,
 *    dt_rank, bias, conv_bias, layer}, norm_epsilon, tie_embeddings.
 * The -hf configs carry both; where both name a value they must agree.
 * Hugging Face FalconMambaConfig (model_type "falcon_mamba") is the first
 * schema plus mixer_rms_eps (default 1e-6). */
#include <math.h>
#include <string.h>

#include "model/mamba.h"
#include "model/model_impl.h"
#include "base/json.h"

/* Reads an integer from the first key present; 1 found, 0 absent, -1 error. */
static int get_int2(const sl_json *o1, const char *k1, const sl_json *o2, const char *k2, int64_t *out,
                    const char *name, sl_err *err)
{
    int found = 0;
    int64_t v1 = 0;
    const sl_json *a = o1 && k1 ? sl_json_get(o1, k1) : NULL;
    const sl_json *b = o2 && k2 ? sl_json_get(o2, k2) : NULL;
    if (a && a->type != SL_JSON_NULL) {
        if (!sl_json_is_int(a, &v1))
            return sl_errf(err, "%s:%zu: \"%s\" is not an integer", name, a->offset, k1);
        *out = v1;
        found = 1;
    }
    if (b && b->type != SL_JSON_NULL) {
        int64_t v2;
        if (!sl_json_is_int(b, &v2))
            return sl_errf(err, "%s:%zu: \"%s\" is not an integer", name, b->offset, k2);
        if (found && v2 != v1)
            return sl_errf(err, "%s:%zu: \"%s\" = %lld disagrees with \"%s\" = %lld", name, b->offset, k2,
                           (long long)v2, k1, (long long)v1);
        *out = v2;
        found = 1;
    }
    return found;
}

int sl_model_cfg_bool(const sl_json *o, const char *k, int *out, const char *name, sl_err *err)
{
    const sl_json *v = o ? sl_json_get(o, k) : NULL;
    if (!v || v->type == SL_JSON_NULL)
        return 0;
    if (v->type != SL_JSON_TRUE && v->type != SL_JSON_FALSE)
        return sl_errf(err, "%s:%zu: \"%s\" is not true/false", name, v->offset, k);
    *out = v->type == SL_JSON_TRUE;
    return 1;
}

int sl_mamba_config_parse(const char *text, size_t len, const char *name, sl_mamba_config *c, sl_err *err)
{
    memset(c, 0, sizeof *c);
    sl_err jerr;
    /* Python's json writes Infinity/NaN (e.g. "time_step_limit": [0.0, Infinity]) */
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_REPLACE, .nonfinite = 1};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &jerr);
    if (!doc)
        return sl_errf(err, "%s: %s", name, jerr.msg);
    int rc = -1;
    const sl_json *r = sl_json_root(doc);
    if (r->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s:0: not a JSON object", name);
        goto out;
    }
    const sl_json *ssm = sl_json_get(r, "ssm_cfg");
    if (ssm && ssm->type != SL_JSON_OBJECT && ssm->type != SL_JSON_NULL) {
        sl_errf(err, "%s:%zu: \"ssm_cfg\" is not an object", name, ssm->offset);
        goto out;
    }
    if (ssm && ssm->type == SL_JSON_NULL)
        ssm = NULL;
    const char *layer = ssm ? sl_json_get_str(ssm, "layer") : NULL;
    if (layer && strcmp(layer, "Mamba1")) {
        sl_errf(err, "%s: ssm_cfg.layer is \"%s\": only Mamba-1 models are supported", name, layer);
        goto out;
    }
    const char *mt = sl_json_get_str(r, "model_type");
    c->falcon = mt && !strcmp(mt, "falcon_mamba");
    if (mt && strcmp(mt, "mamba") && !c->falcon) {
        sl_errf(err,
                "%s: model_type is \"%s\": only Mamba-1 (\"mamba\"), Falcon-Mamba (\"falcon_mamba\") and Mamba-2 "
                "(\"mamba2\") models are supported",
                name, mt);
        goto out;
    }
    int k;
#define REQ(k1, k2, field, what)                                                                                       \
    if ((k = get_int2(r, k1, r, k2, &c->field, name, err)) < 0)                                                        \
        goto out;                                                                                                      \
    if (!k) {                                                                                                          \
        sl_errf(err, "%s: missing \"%s\" (%s)", name, k1, what);                                                       \
        goto out;                                                                                                      \
    }
    REQ("hidden_size", "d_model", d_model, "model width");
    REQ("num_hidden_layers", "n_layer", n_layer, "number of layers");
    REQ("vocab_size", NULL, vocab_size, "vocabulary size");
#undef REQ
#define OPT(k1, k2, field, def)                                                                                        \
    if ((k = get_int2(r, k1, ssm, k2, &c->field, name, err)) < 0)                                                      \
        goto out;                                                                                                      \
    if (!k)                                                                                                            \
        c->field = (def);
    OPT("pad_vocab_size_multiple", NULL, pad_multiple, 8);
    OPT("state_size", "d_state", d_state, 16);
    OPT("conv_kernel", "d_conv", d_conv, 4);
    int64_t expand;
    if ((k = get_int2(r, "expand", ssm, "expand", &expand, name, err)) < 0)
        goto out;
    if (!k)
        expand = 2;
    OPT("intermediate_size", NULL, d_inner, expand * c->d_model);
#undef OPT
    /* dt_rank: integer or "auto" = ceil(d_model / 16) */
    c->dt_rank = (c->d_model + 15) / 16;
    const sl_json *dr[2] = {sl_json_get(r, "time_step_rank"), ssm ? sl_json_get(ssm, "dt_rank") : NULL};
    int64_t seen = -1;
    for (int i = 0; i < 2; i++) {
        int64_t v;
        if (!dr[i] || dr[i]->type == SL_JSON_NULL ||
            (dr[i]->type == SL_JSON_STRING && dr[i]->str_len == 4 && !memcmp(dr[i]->str, "auto", 4)))
            continue;
        if (!sl_json_is_int(dr[i], &v)) {
            sl_errf(err, "%s:%zu: time step rank is neither an integer nor \"auto\"", name, dr[i]->offset);
            goto out;
        }
        if (seen >= 0 && v != seen) {
            sl_errf(err, "%s:%zu: time_step_rank %lld disagrees with ssm_cfg.dt_rank %lld", name, dr[i]->offset,
                    (long long)v, (long long)seen);
            goto out;
        }
        c->dt_rank = seen = v;
    }
    c->eps = 1e-5;
    c->mixer_rms_eps = 1e-6;
    const char *eps_keys[3] = {"layer_norm_epsilon", "norm_epsilon", "mixer_rms_eps"};
    for (int i = 0; i < (c->falcon ? 3 : 2); i++) {
        const sl_json *e = sl_json_get(r, eps_keys[i]);
        if (e && e->type != SL_JSON_NULL) {
            if (e->type != SL_JSON_NUMBER || !(e->num > 0) || e->num > 1) {
                sl_errf(err, "%s:%zu: \"%s\" is not a number in (0, 1]", name, e->offset, eps_keys[i]);
                goto out;
            }
            *(i < 2 ? &c->eps : &c->mixer_rms_eps) = e->num;
        }
    }
    int rms = 1;
    if (sl_model_cfg_bool(r, "rms_norm", &rms, name, err) < 0)
        goto out;
    if (!rms) {
        sl_errf(err, "%s: rms_norm is false: LayerNorm Mamba models are not supported", name);
        goto out;
    }
    int64_t dint = 0;
    if (get_int2(r, "d_intermediate", NULL, NULL, &dint, name, err) < 0)
        goto out;
    if (dint) {
        sl_errf(err, "%s: d_intermediate = %lld: Mamba models with MLP blocks are not supported", name,
                (long long)dint);
        goto out;
    }
    c->use_bias = 0;
    c->conv_bias = 1;
    c->tie_embeddings = 1;
    if (sl_model_cfg_bool(r, "use_bias", &c->use_bias, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "bias", &c->use_bias, name, err) < 0 ||
        sl_model_cfg_bool(r, "use_conv_bias", &c->conv_bias, name, err) < 0 ||
        sl_model_cfg_bool(ssm, "conv_bias", &c->conv_bias, name, err) < 0 ||
        sl_model_cfg_bool(r, "tie_embeddings", &c->tie_embeddings, name, err) < 0 ||
        sl_model_cfg_bool(r, "tie_word_embeddings", &c->tie_embeddings, name, err) < 0)
        goto out;
    /* sanity: bounded sizes so a hostile config cannot ask for absurd memory */
    struct {
        const char *what;
        int64_t v, lo, hi;
    } lim[] = {
        {"d_model", c->d_model, 1, 1 << 16},       {"n_layer", c->n_layer, 1, 1024},
        {"vocab_size", c->vocab_size, 1, 1 << 24}, {"pad_vocab_size_multiple", c->pad_multiple, 1, 1 << 16},
        {"d_state", c->d_state, 1, 256},           {"d_conv", c->d_conv, 1, 64},
        {"d_inner", c->d_inner, 1, 1 << 18},       {"dt_rank", c->dt_rank, 1, 1 << 16},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].v < lim[i].lo || lim[i].v > lim[i].hi) {
            sl_errf(err, "%s: %s = %lld is outside [%lld, %lld]", name, lim[i].what, (long long)lim[i].v,
                    (long long)lim[i].lo, (long long)lim[i].hi);
            goto out;
        }
    c->vocab = (c->vocab_size + c->pad_multiple - 1) / c->pad_multiple * c->pad_multiple;
    /* eos_token_id: informational, so anything but a non-negative integer is "none" */
    const sl_json *eos = sl_json_get(r, "eos_token_id");
    int64_t ev;
    c->eos = eos && sl_json_is_int(eos, &ev) && ev >= 0 ? ev : -1;
    rc = 0;
out:
    sl_json_free(doc);
    return rc;
}
