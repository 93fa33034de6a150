/* `sluice score` as a library call: every document of token streams, or of
 * a shard directory, scored with a language model (model/model.h) and
 * written as JSON Lines or as the token stream itself with the scores in
 * each record's metadata.
 *
 * JSON Lines: one object per document, in input order:
 *   {"id":..., ["split":..., ]"tokens":N, "nll":X, "ppl":P[, "bpb":B]
 *    [, "long_context":L, "nll_reset":R][, "logprobs":[...]]}
 * tokens = predicted tokens (length - 1, or the length with a prepended
 * context token), nll = their summed negative log-likelihood in nats,
 * ppl = exp(nll / tokens), bpb = nll / ln 2 / source bytes (only when the
 * stream records them), long_context = (nll_reset - nll) / tokens where
 * nll_reset is the NLL with the state reset every long_context tokens;
 * NaN (no predictions) is written as null. With to_stream the same fields
 * (tokens named scored_tokens, no logprobs) replace any of that name in the
 * record's metadata; header, ids and tokens are unchanged.
 *
 * Several inputs are read as one stream (stream/tokstream.h). A shard
 * directory (sluice shard; unshuffled) is scored as the document sequences
 * reassembled from its rows, train split then val, each line with "split".
 *
 * With a curve, the per-position NLL sums of the same predictions are
 * collected beside the output (model/curve.h).
 *
 * Documents are batched (batch_tokens) and scored packed (model/score.h),
 * so results equal scoring each document alone in one pass. */
#ifndef SLUICE_MODEL_SCORE_STAGE_H
#define SLUICE_MODEL_SCORE_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "model/curve.h"
#include "model/model.h"
#include "model/summary.h"
#include "base/err.h"
#include "stream/io.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_score_opts {
    const char *model_dir; /* config.json + checkpoint (+ tokenizer.json: fingerprint check) */
    const char *device;    /* "auto" (default), "cpu", "cuda", "cuda:N" */
    int threads;           /* CPU backend threads (0 = all cores) */
    int64_t chunk;         /* tokens per forward pass (default 2048) */
    int64_t batch_tokens;  /* tokens read ahead and scored together (default 16384) */
    int64_t max_tokens;    /* score only the first max_tokens tokens of a document (0 = all) */
    int64_t long_context;  /* W > 0: also the NLL with the state reset every W tokens */
    int64_t prepend;       /* context token put before each document (-1 = none) */
    int prepend_eos;       /* prepend the input's eos id (instead of prepend) */
    int per_token;         /* JSON Lines: add "logprobs" */
    int to_stream;         /* write the token stream with the scores in its metadata */
    int force;             /* skip the tokenizer check (sl_score_check_tokenizer) */
    int progress;          /* -1 auto (a terminal), 0 off, 1 on */
    /* Position curve (model/curve.h): when not NULL, every scored document's
     * log-probabilities are added to it by position (and to its group when
     * curve->group_by is set); the caller creates, writes and frees it.
     * The stage records max_position in it. */
    sl_curve *curve;
    /* N > 0: score only positions < N (model/curve.h): the first N tokens of
     * the scored sequence (N - 1 of the document with a prepended token), for
     * the per-document scores as for the curve; with max_tokens the smaller
     * limit applies. Scoring far beyond a model's training length shows how
     * it extrapolates (docs/longctx.md section 3). */
    int64_t max_position;
    /* Score summary (model/summary.h): when not NULL, every scored document
     * is added to it with the values that `filter` reads for each field it
     * can select on: the scores as written (nll, ppl, bpb, long_context,
     * nll_reset, scored_tokens; a non-finite score is written null, so it
     * is unscored) and the record's own tokens and src_bytes (0 =
     * unscored). The caller creates, writes and frees it. */
    sl_score_summary *summary;
} sl_score_opts;

void sl_score_opts_default(sl_score_opts *o);
/* Checks the options: 0, or -1 naming the field ("per_token writes JSON
 * Lines; it cannot be combined with to_stream"). */
int sl_score_check(const sl_score_opts *o, sl_err *err);

/* Loads the model (device, threads, chunk) and scores the inputs into out:
 * token streams inputs[0..n) read as one (n = 0: stdin), or exactly one
 * shard directory. out is written (a stream finished), not committed: the
 * caller commits or aborts it. */
int sl_score_run(const sl_score_opts *o, const char *const *inputs, size_t n, sl_output *out, sl_err *err);
/* The same with a model already loaded: run sets the chunk size (o->model_dir
 * is still where tokenizer.json is looked for). */
int sl_score_inputs(sl_model_run *run, const sl_score_opts *o, const char *const *inputs, size_t n, sl_output *out,
                    sl_err *err);

/* 1 when path is a shard directory (it has a manifest.json). */
int sl_score_is_shard_dir(const char *path);

/* Checks a stream's tokenizer against the model: the stream's vocab size
 * must round up (to the model's pad multiple) to the model's vocabulary,
 * or equal it; and when the stream has a fingerprint and model_dir has a
 * tokenizer.json, their fingerprints must match. src names the stream in
 * messages. */
int sl_score_check_tokenizer(const sl_ts_header *h, const sl_model_info *mi, const char *model_dir, const char *src,
                             sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
