/* WAV file bytes for mono samples: 16-bit PCM (rounded, clipped) or 32-bit
 * float (WAVE_FORMAT_IEEE_FLOAT with a fact chunk). The whole file is built in
 * memory so it can go through sl_output (atomic write) in one piece. */
#ifndef SLUICE_AUDIO_WAVWRITE_H
#define SLUICE_AUDIO_WAVWRITE_H

#include <stddef.h>

#include "base/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends a complete WAV file to out. Fails (-1) only when the data would not
 * fit a RIFF size field (more than 4 GiB). */
int sl_wav_encode(sl_buf *out, const float *x, size_t n, int rate, int float32);

#ifdef __cplusplus
}
#endif

#endif
