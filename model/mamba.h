/* Mamba-1 language model (and Falcon-Mamba, Mamba-1 with weightless
 * RMSNorms on dt, B and C): loading its weights and the forward pass.
 *
 * A model directory holds config.json and a checkpoint read through
 * model/tensors.h (model.safetensors, or sharded
 * model-0000x-of-0000y.safetensors files listed in
 * model.safetensors.index.json). Both tensor naming schemes (Hugging Face
 * MambaForCausalLM `backbone.embeddings.weight`, original mamba_ssm
 * `backbone.embedding.weight`) and both config schemas (hidden_size/
 * num_hidden_layers/state_size/... or d_model/n_layer/ssm_cfg/...) are read.
 * Weights may be F32, F16 or BF16; everything is computed in fp32.
 *
 * The forward pass runs only through the sl_backend operator table
 * (kernels/kernels.h), so the CPU and CUDA backends share this code. */
#ifndef SLUICE_MODEL_MAMBA_H
#define SLUICE_MODEL_MAMBA_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "model/model.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_mamba_config {
    int64_t d_model, n_layer;
    int64_t vocab_size;   /* as in config.json */
    int64_t pad_multiple; /* pad_vocab_size_multiple (default 8) */
    int64_t vocab;        /* rows of the embedding: vocab_size, padded */
    int64_t d_state, d_conv, d_inner, dt_rank;
    double eps;
    int use_bias; /* in_proj/out_proj biases (false in released models) */
    int conv_bias;
    int tie_embeddings; /* informational; lm_head.weight is used when present */
    int64_t eos;        /* eos_token_id, -1 when absent (informational) */
    /* Falcon-Mamba (model_type "falcon_mamba"): the mixer's dt, B and C are
     * RMS-normalized without weights (eps mixer_rms_eps) after x_proj */
    int falcon;
    double mixer_rms_eps;
} sl_mamba_config;

/* Parses config.json text (either schema). `name` is used in messages. */
int sl_mamba_config_parse(const char *text, size_t len, const char *name, sl_mamba_config *c, sl_err *err);

typedef struct sl_mamba sl_mamba;

/* Loads and validates a model directory onto the backend. (sl_model_load
 * loads it behind the architecture-neutral model/model.h.) */
sl_mamba *sl_mamba_load(const char *dir, sl_backend *be, sl_err *err);
/* The Mamba-1 model behind m, or NULL when m is another architecture. */
const sl_mamba *sl_mamba_of(const sl_model *m);
void sl_mamba_free(sl_mamba *m);
const sl_mamba_config *sl_mamba_cfg(const sl_mamba *m);
sl_backend *sl_mamba_backend(const sl_mamba *m);
/* Parameter count (embedding included; a tied lm_head counted once). */
int64_t sl_mamba_params(const sl_mamba *m);
/* Forward FLOPs per token: 2 x matmul weights (lm_head included) + conv + scan. */
double sl_mamba_flops_per_token(const sl_mamba *m);

/* A run: the recurrent state of one token stream plus the workspace for
 * chunks of up to `chunk` tokens. The state carries from one call to the
 * next, so a long sequence fed in pieces gives the same result as one pass. */
typedef struct sl_mamba_run sl_mamba_run;
sl_mamba_run *sl_mamba_run_new(sl_mamba *m, int64_t chunk, sl_err *err);
void sl_mamba_run_free(sl_mamba_run *r);
int64_t sl_mamba_run_chunk(const sl_mamba_run *r);
sl_mamba *sl_mamba_run_model(const sl_mamba_run *r);
/* Zeroes the conv and scan states of every layer. */
int sl_mamba_run_reset(sl_mamba_run *r, sl_err *err);
/* Runs n <= chunk tokens (host arrays). reset[t] != 0 (reset may be NULL)
 * zeroes the state before token t; targets[t] is the token whose
 * log-probability is wanted after token t (-1: none, logp[t] = 0). Token ids
 * and targets must be < the model vocab (checked). */
int sl_mamba_forward(sl_mamba_run *r, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n,
                     float *logp, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
