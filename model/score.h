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

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

/* One document to score: the caller sets id, tokens and n (and logp), the
 * call fills nll and n_pred. */
typedef struct sl_score_item {
    const char *id; /* for messages */
    const uint32_t *tokens;
    int64_t n;
    /* results */
    double nll;     /* sum of -log p over the n - 1 predictions, nats */
    int64_t n_pred; /* n - 1 (0 for empty or one-token documents) */
    float *logp;    /* if non-NULL: receives n - 1 log-probabilities */
} sl_score_item;

/* Scores the n_items documents items[] with run r (sl_model_run_new), packed
 * into chunks of the run's size: each document's nll equals scoring it
 * alone in one pass. reset_every: 0 = full context; W > 0 = the state is
 * also reset every W tokens inside a document. Returns 0, or -1 with err set
 * (a token not below the model's vocabulary, naming the document id and
 * position; a backend failure). */
int sl_score_batch(sl_model_run *r, sl_score_item *items, size_t n_items, int64_t reset_every, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
