/* Language models as the scorer sees them, whatever the architecture.
 *
 * sl_model_load reads a model directory's config.json, picks the
 * architecture by its "model_type" (a config without one is a mamba_ssm
 * config: Mamba-1) and loads the weights from the directory's checkpoint
 * (model/tensors.h) onto a backend. Architectures today: "mamba" (Mamba-1)
 * and "falcon_mamba" (Falcon-Mamba), both in model/mamba.h, and "mamba2"
 * (Mamba-2, model/mamba2.c; a mamba_ssm config is Mamba-2 when its
 * ssm_cfg.layer says so).
 *
 * A run holds the recurrent state of one token stream plus the workspace
 * for chunks of up to `chunk` tokens; sl_model_forward runs one packed
 * chunk, resetting the state where asked (document starts), and gives the
 * log-probability of each target token. The state carries from one call to
 * the next, so a long sequence fed in pieces gives the same result as one
 * pass. model/score.h builds document scoring on these calls. */
#ifndef SLUICE_MODEL_MODEL_H
#define SLUICE_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

/* The configuration facts a caller needs without knowing the architecture. */
typedef struct sl_model_info {
    const char *arch;     /* "mamba", "falcon_mamba", "mamba2" */
    int64_t vocab_size;   /* config.json's vocab_size */
    int64_t pad_multiple; /* the vocabulary is padded to a multiple of this */
    int64_t vocab;        /* rows of the embedding and the logits: vocab_size padded (or as stored) */
    int64_t eos;          /* config.json's eos_token_id, -1 when it has none */
} sl_model_info;

typedef struct sl_model sl_model;

/* Loads the model directory dir (config.json and model.safetensors, or the
 * shards of model.safetensors.index.json) onto the backend be (sl_backend_open), which must
 * outlive the model. Returns NULL with err naming the file and what is wrong
 * (an unknown model_type, a missing or misshapen tensor). Free it with
 * sl_model_free. */
sl_model *sl_model_load(const char *dir, sl_backend *be, sl_err *err);
/* Frees the model (after every run made from it). NULL is a no-op. */
void sl_model_free(sl_model *m);
/* The architecture and vocabulary; valid until sl_model_free. */
const sl_model_info *sl_model_get_info(const sl_model *m);

typedef struct sl_model_run sl_model_run;
/* A run of model m: the recurrent state of one token sequence and the
 * workspace for up to chunk tokens per sl_model_forward (chunk < 1 is taken
 * as 1). Returns NULL with err set when the backend cannot allocate it. One
 * thread uses a run at a time; free it with sl_model_run_free. */
sl_model_run *sl_model_run_new(sl_model *m, int64_t chunk, sl_err *err);
/* Frees the run. NULL is a no-op. */
void sl_model_run_free(sl_model_run *r);
/* Zeroes the recurrent state (a new sequence starts). */
int sl_model_run_reset(sl_model_run *r, sl_err *err);
/* Runs n <= chunk tokens (host arrays). reset[t] != 0 (reset may be NULL)
 * zeroes the state before token t; targets[t] is the token whose
 * log-probability is wanted after token t (-1: none, logp[t] = 0); logp
 * receives n values. Token ids and targets must be < the model vocab
 * (checked: -1 with err naming the position). */
int sl_model_forward(sl_model_run *r, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n,
                     float *logp, sl_err *err);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

sl_backend *sl_model_backend(const sl_model *m);
/* Parameter count (embedding included; a tied lm_head counted once). */
int64_t sl_model_params(const sl_model *m);
/* Forward FLOPs per token. */
double sl_model_flops_per_token(const sl_model *m);
int64_t sl_model_run_chunk(const sl_model_run *r);
sl_model *sl_model_run_model(const sl_model_run *r);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
