/* Audio token stream -> WAV files: the stage behind `sluice detokenize
 * audio`, for listening. One file per document, "<index>-<id>.wav" (the id's
 * audio extension dropped, characters outside [A-Za-z0-9._@-] as '_'), each
 * written atomically; codes decoded as the quantizer's reference decoder
 * does (quantize.h). Quantizer, bits and sample rate come from the stream
 * header (the extra object `sluice tokenize audio` writes) unless the
 * options give them. */
#ifndef SLUICE_AUDIO_DETOKENIZE_H
#define SLUICE_AUDIO_DETOKENIZE_H

#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_audio_detok_opts {
    int quantizer; /* SL_AQ_*; -1: from the header */
    int bits;      /* bits per code; -1: from the header */
    int rate;      /* sample rate written into the files; -1: from the header */
    int float32;   /* 32-bit float WAV (default 16-bit PCM) */
    int keep_pad;  /* keep padding (default: cut each document to its metadata's "samples") */
    /* a progress line (stream/progress.h) named `progress` in mode
     * progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
} sl_audio_detok_opts;
#define SL_AUDIO_DETOK_OPTS_INIT                                                                                       \
    {                                                                                                                  \
        -1, -1, -1, 0, 0, NULL, 0                                                                                      \
    }

/* Writes the documents of the token stream at input (NULL or "-": standard
 * input) as WAV files into dir: a new directory is written as a whole (a
 * temporary renamed at the end); into an existing one each file is atomic.
 * Returns 0, or -1 with err set (a missing quantizer, bits or rate names the
 * field: `quantizer`, `bits`, `rate`); on failure no file of this run is
 * left. files (may be NULL) receives the number of files written. */
int sl_audio_detok_run(const sl_audio_detok_opts *o, const char *input, const char *dir, uint64_t *files, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
