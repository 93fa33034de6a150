/* `sluice tokenize audio` as a library call: audio files (or the audio files
 * below directories, in natural order) to a token stream of quantized clips.
 *
 * Each input is decoded (audio/decode.h), cut into clips (audio/clips.h) and
 * quantized (audio/quantize.h); one document per clip, id '<file>@<first
 * sample>', metadata {file, offset, samples, sample_rate[, split]}. Files
 * are decoded in parallel in batches (stream/batch.h) and written in input
 * order, so the output does not depend on the thread count. */
#ifndef SLUICE_AUDIO_TOKENIZE_H
#define SLUICE_AUDIO_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "stream/io.h"
#include "stream/parts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_audio_tok_opts {
    int quant;                /* SL_AQ_* (default mulaw-s4) */
    int bits;                 /* bits per code (default 8) */
    int rate;                 /* output sample rate (default 16000) */
    int quality;              /* libsoxr recipe (default SOXR_HQ) */
    size_t clip_len, overlap; /* clip windows in samples (0: one clip per file) */
    int drop_last;            /* drop each file's short final clip */
    size_t pad_to;            /* pad every clip to this many tokens (0 = none) */
    int64_t pad_id;           /* padding token; -1 = sl_aq_zero(bits) */
    /* file splits: weights (split = 1) by index in natural order or by hash
     * (split_by_hash, seed), or by lists (valid_list, test_list: one path tail
     * per line); part >= 0 keeps one SL_AUDIO_SPLIT_* only */
    int split, split_by_hash;
    double w[3];
    uint64_t seed;
    const char *valid_list, *test_list;
    int part;
    int skip_bad; /* undecodable files: warn and go on (default: error) */
    /* scale.n > 0: only the files of part scale.r of scale.n (whole files by
     * size, stream/partition.h; splits are still drawn over all inputs) */
    sl_part scale;
    int threads;  /* 0 = omp_get_max_threads() */
    int progress; /* -1 auto (a terminal), 0 off, 1 on */
    /* warnings ("skipping FILE: why"); NULL = none */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
} sl_audio_tok_opts;

void sl_audio_tok_opts_default(sl_audio_tok_opts *o);
/* Checks the options: 0, or -1 naming the field ("overlap must be smaller
 * than clip_len"). */
int sl_audio_tok_check(const sl_audio_tok_opts *o, sl_err *err);

/* The input files: each argument as given ("-" = stdin), a directory
 * replaced by the audio files below it (by extension, natural order); no
 * argument = stdin. Free with sl_audio_paths_free. */
int sl_audio_list_inputs(const char *const *args, size_t n, char ***paths, size_t *np, sl_err *err);
void sl_audio_paths_free(char **paths, size_t n);

/* Tokenizes paths[0..n) into out (written and finished, not committed: the
 * caller commits or aborts out). */
int sl_audio_tokenize_run(const sl_audio_tok_opts *o, char *const *paths, size_t n, sl_output *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
