/* Internal: what an architecture implements behind model/model.h, and
 * helpers the model files share. Not installed. */
#ifndef SLUICE_MODEL_MODEL_IMPL_H
#define SLUICE_MODEL_MODEL_IMPL_H

#include "kernels/kernels.h"
#include "model/model.h"
#include "model/tensors.h"
#include "base/json.h"

typedef struct sl_model_ops {
    void (*free)(void *model);
    int64_t (*params)(const void *model);
    double (*flops_per_token)(const void *model);
    void *(*run_new)(void *model, int64_t chunk, sl_err *err);
    void (*run_free)(void *run);
    int64_t (*run_chunk)(const void *run);
    int (*run_reset)(void *run, sl_err *err);
    int (*forward)(void *run, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n, float *logp,
                   sl_err *err);
} sl_model_ops;

/* Wraps an architecture's loaded model (owned: ops->free frees it). */
sl_model *sl_model_wrap(const sl_model_ops *ops, void *model, const sl_model_info *info, sl_backend *be);
/* The architecture's own object, when m is of that architecture (NULL otherwise). */
void *sl_model_impl(const sl_model *m, const sl_model_ops *ops);

/* An architecture: "model_type" value and its loader (config.json already
 * read: text/len, named cfgpath in messages). */
typedef struct sl_model_arch {
    const char *model_type;
    sl_model *(*load)(const char *dir, const char *cfgpath, const char *text, size_t len, sl_backend *be, sl_err *err);
    /* Parses and checks config.json text only (no weights): 0, or -1 with
     * the message load would give. */
    int (*check_config)(const char *text, size_t len, const char *name, sl_err *err);
} sl_model_arch;

/* The config.json check of the architecture that model_type (or mamba_ssm's
 * ssm_cfg.layer) names, as sl_model_load picks it (for the fuzz target). */
int sl_model_config_check(const char *text, size_t len, const char *name, sl_err *err);

/* mamba.c: Mamba-1 and Falcon-Mamba */
extern const sl_model_arch sl_model_arch_mamba;
extern const sl_model_arch sl_model_arch_falcon_mamba;
/* mamba2.c */
extern const sl_model_arch sl_model_arch_mamba2;
/* A Mamba-2 config.json, either schema (see mamba2.c), with what follows
 * from it; *tie: the config asks for a tied head. 0, or -1 with a message. */
typedef struct sl_mamba2_config {
    int64_t d_model, n_layer, vocab_size, pad_multiple, vocab;
    int64_t d_state, d_conv, d_ssm, headdim, nheads, ngroups;
    int64_t d_in_proj, conv_dim, eos;
    int64_t d_mlp; /* gated-MLP hidden width (d_intermediate rounded up to 128), 0: none */
    double eps, norm_eps, dt_min, dt_max;
    int use_bias, conv_bias;
} sl_mamba2_config;
int sl_mamba2_config_parse(const char *text, size_t len, const char *name, sl_mamba2_config *c, int *tie, sl_err *err);

/* weights.c: a named tensor checked against the shape the config implies
 * (messages: missing tensor, shape, dtype; optional: NULL without a message
 * when absent) as host fp32 (caller frees; *src_dtype: its stored type);
 * as a backend weight matrix; as a backend vector (neg_exp_log2e: stored
 * as -exp(x)·log2(e), the scan's A); a host array uploaded. */
float *sl_model_load_host(const sl_tensors *c, const char *name, int ndim, const int64_t *shape, int optional,
                          sl_dtype *src_dtype, sl_err *err);
int sl_model_load_weight(sl_backend *be, const sl_tensors *c, const char *name, int64_t rows, int64_t cols,
                         sl_weight *w, sl_err *err);
float *sl_model_load_vec(sl_backend *be, const sl_tensors *c, const char *name, int ndim, const int64_t *shape,
                         int optional, int neg_exp_log2e, sl_err *err);
float *sl_model_upload(sl_backend *be, const float *h, size_t n, sl_err *err);

/* weights.c, shared by the architectures. Checks the tensors named
 * backbone.layers.N.*: N < n_layer, and no name containing one of
 * `foreign` (NULL-terminated; another architecture's parameters: "FILE:
 * tensor 'NAME' foreign_msg"). */
int sl_model_check_layers(const sl_tensors *c, int64_t n_layer, const char *const *foreign, const char *foreign_msg,
                          sl_err *err);
/* The embedding under either name (backbone.embeddings.weight as
 * transformers, backbone.embedding.weight as mamba_ssm), [*vocab][d_model];
 * stored unpadded ([vocab_size] rows): *vocab = vocab_size. */
int sl_model_load_embedding(sl_backend *be, const sl_tensors *c, int64_t vocab_size, int64_t *vocab, int64_t d_model,
                            sl_weight *emb, sl_err *err);
/* lm_head.weight, or the embedding itself when absent (*tied = 1). */
int sl_model_load_lm_head(sl_backend *be, const sl_tensors *c, int64_t vocab, int64_t d_model, const sl_weight *emb,
                          sl_weight *lm_head, int *tied, sl_err *err);

/* lm_head rows per call: bounds the logits buffer to SL_MODEL_LM_TILE x vocab. */
#define SL_MODEL_LM_TILE 256

/* head.c: the end of a forward pass, the same for every architecture: the
 * final RMSNorm (hidden added to the residual), then lm_head in row tiles,
 * each reduced at once to the target's log-probability (tiles without a
 * target give 0), and the n log-probabilities downloaded to logp.
 * Backend memory: hidden, residual, normed, logits (tile x vocab), targets
 * (the targets uploaded), logp (n). targets (host) says which tiles to skip. */
typedef struct sl_model_head {
    const float *norm_f;
    double eps;
    const sl_weight *lm_head;
    int64_t d, vocab;
    float *hidden, *residual, *normed, *logits, *logp;
    const int32_t *targets;
} sl_model_head;
int sl_model_head_logp(sl_backend *be, const sl_model_head *h, const int32_t *targets, int64_t n, float *logp,
                       sl_err *err);

/* head.c: the start of a forward pass, the same for every architecture:
 * checks n against the run's chunk and the ids and targets against the
 * vocabulary, uploads ids, targets and reset (backend buffers below; *rs:
 * the uploaded reset or NULL) and gathers the embeddings into hidden [n][d]. */
typedef struct sl_model_input {
    int64_t chunk, vocab, d;
    const sl_weight *emb;
    int32_t *ids, *targets;
    uint8_t *reset;
    float *hidden;
} sl_model_input;
int sl_model_input_embed(sl_backend *be, const sl_model_input *in, const int32_t *ids, const uint8_t *reset,
                         const int32_t *targets, int64_t n, const uint8_t **rs, sl_err *err);

/* mamba_config.c: a config.json boolean: 1 and *out when present, 0 when
 * absent or null, -1 with "NAME:OFFSET: ..." when not true/false. */
int sl_model_cfg_bool(const sl_json *o, const char *k, int *out, const char *name, sl_err *err);

/* "DIR/NAME", allocated. */
char *sl_model_path(const char *dir, const char *name);

/* Maps a regular file read-only: 0 with *map (NULL for an empty file) and
 * *len, or -1 with "PATH: why". munmap(*map, *len) when *map. */
int sl_model_map_file(const char *path, void **map, size_t *len, sl_err *err);

#endif
