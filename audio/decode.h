/* Audio decoding: any file libsndfile reads (WAV PCM 8/16/24/32, float,
 * WAVE_FORMAT_EXTENSIBLE, G.711, FLAC, Ogg Vorbis, ...) to mono float
 * samples at a chosen rate.
 *
 * Samples are normalized as torchaudio.load returns them (int16 / 32768,
 * int24 / 2^23, u8 (v - 128) / 128; float data as stored), channels are
 * averaged (torch's seq.mean(dim=0)), and the result is resampled with
 * libsoxr when the file's rate differs from the target. WAV files are first
 * checked by the chunk walker (wavscan.h). Every failure is one message
 * naming the file: unreadable or unknown format, chunk past the end, no
 * samples, 0 channels, an absurd sample rate, non-finite float samples. */
#ifndef SLUICE_AUDIO_DECODE_H
#define SLUICE_AUDIO_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_AUDIO_MIN_RATE 1000
#define SL_AUDIO_MAX_RATE 768000

typedef struct sl_audio_opts {
    int rate;    /* target sample rate; 0 keeps the file's rate */
    int quality; /* libsoxr quality recipe (SOXR_QQ..SOXR_VHQ); 0 = SOXR_HQ */
} sl_audio_opts;

typedef struct sl_audio {
    float *x; /* mono samples at `rate` */
    size_t n;
    int rate;
    int src_rate; /* as stored in the file */
    int src_channels;
    uint64_t src_frames;
    int src_format;     /* libsndfile SF_FORMAT_* value */
    uint64_t src_bytes; /* size of the encoded input */
} sl_audio;

/* Decodes a whole file held in memory. `name` is used in messages. */
int sl_audio_decode_mem(const void *data, size_t len, const char *name, const sl_audio_opts *o, sl_audio *a,
                        sl_err *err);
/* Decodes a file ("-" = standard input). */
int sl_audio_decode_file(const char *path, const sl_audio_opts *o, sl_audio *a, sl_err *err);
void sl_audio_free(sl_audio *a);

#ifdef __cplusplus
}
#endif

#endif
