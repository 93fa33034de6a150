/* A RIFF/WAVE chunk walker that checks the chunk layout before libsndfile
 * decodes the file.
 *
 * libsndfile accepts a WAV whose chunk sizes run past the end of the file
 * (it reads what is there and says nothing), so a truncated download would
 * pass silently. This walker reports it, with the offset, and accepts what
 * real writers produce: chunks in any order, odd sizes with or without the
 * pad byte at the very end, trailing chunks after `data`, and the streamed
 * form whose RIFF and data sizes are 0xFFFFFFFF (the data then runs to the end
 * of the file). Files that are not RIFF/WAVE (FLAC, Ogg, RF64, ...) are left
 * to libsndfile. */
#ifndef SLUICE_AUDIO_WAVSCAN_H
#define SLUICE_AUDIO_WAVSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct sl_wavscan {
    int is_wav;        /* 1 when the bytes are RIFF/WAVE */
    int streamed;      /* data size was 0xFFFFFFFF */
    uint64_t data_off; /* offset of the data payload */
    uint64_t data_len; /* payload bytes (to the end of file when streamed) */
    uint16_t format_tag, channels, bits;
    uint32_t sample_rate;
} sl_wavinfo;

/* Scans p[0..n). Returns 0 (also for non-WAV input, with is_wav = 0) or -1
 * with err = "<name>:<offset>: what is wrong". */
int sl_wavscan(const uint8_t *p, size_t n, const char *name, sl_wavinfo *out, sl_err *err);

#endif
