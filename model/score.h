/* Scoring documents with a language model (model/model.h): per-document negative
 * log-likelihood of each token given the ones before it.
 *
 * A batch of documents is run as one packed token stream cut into chunks of
 * the run's size: the recurrent state is reset at each document start (and,
 * for the long-context score, every `reset_every` tokens inside a document)
 * and carried across chunk boundaries otherwise. So short documents share
 * chunks (big matrix products) and long ones span chunks in bounded memory,
 * and either way each document's result equals scoring it alone in one pass.
 *
 * The first token of a document has no prediction: a document of n tokens
 * contributes n - 1 log-probabilities. */
#ifndef SLUICE_MODEL_SCORE_H
#define SLUICE_MODEL_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct sl_score_item {
    const char *id; /* for messages */
    const uint32_t *tokens;
    int64_t n;
    /* results */
    double nll;     /* sum of -log p over the n - 1 predictions, nats */
    int64_t n_pred; /* n - 1 (0 for empty or one-token documents) */
    float *logp;    /* if non-NULL: receives n - 1 log-probabilities */
} sl_score_item;

/* reset_every: 0 = full context; W > 0 = state reset every W tokens. */
int sl_score_batch(sl_model_run *r, sl_score_item *items, size_t n_items, int64_t reset_every, sl_err *err);

#endif
