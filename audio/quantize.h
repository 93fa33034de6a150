/* Audio sample quantizers: float samples <-> integer codes.
 *
 * Four schemes, named as on the command line (docs/audio.md explains each):
 *   mulaw-s4  SaShiMi (state-spaces/s4 src/dataloaders/audio.py mu_law_encode):
 *             the clip is min-max scaled to [-1, 1] (with the reference's 1e-6
 *             in the denominator), companded with mu = 2^bits - 1, then
 *             quantized as floor(v * (2^bits - 0.01) + 0.005), v = (e + 1) / 2.
 *             Decoding is the reference's mu_law_decode (k / 2^(bits-1) - 1,
 *             then expanded); it does not undo the min-max scaling.
 *   mulaw     WaveNet / torchaudio mu_law_encoding on the raw amplitude
 *             (|x| clipped to 1): floor((f(x) + 1) / 2 * mu + 0.5).
 *   linear    SaShiMi linear_encode: min-max scale to [0, 1], same quantize().
 *   g711      ITU-T G.711 mu-law bytes (Sun g711.c linear2ulaw on the int16
 *             sample); 8 bits only; codes are not amplitude-ordered.
 * The s4 schemes depend on the whole clip (min and max), so they encode a
 * clip at once. Arithmetic is in double, as the reference vectors were made. */
#ifndef SLUICE_AUDIO_QUANTIZE_H
#define SLUICE_AUDIO_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SL_AQ_MULAW_S4 = 0,
    SL_AQ_MULAW = 1,
    SL_AQ_LINEAR = 2,
    SL_AQ_G711 = 3,
} sl_aq_kind;

#define SL_AQ_MIN_BITS 2
#define SL_AQ_MAX_BITS 16

/* NULL-terminated names in sl_aq_kind order (for option parsing). */
extern const char *const sl_aq_names[];
/* -1 when unknown. */
int sl_aq_parse(const char *name);
const char *sl_aq_name(int kind);
/* 0 when `bits` is valid for the quantizer (g711: 8 only; others 2..16). */
int sl_aq_bits_ok(int kind, int bits);

/* Encodes x[0..n) (one clip) into codes[0..n), each < 2^bits. */
void sl_aq_encode(int kind, int bits, const float *x, size_t n, uint32_t *codes);
/* Decodes codes (each must be < 2^bits) to samples in about [-1, 1]. */
void sl_aq_decode(int kind, int bits, const uint32_t *codes, size_t n, float *x);

/* SaShiMi's start token / padding value q_zero = 2^(bits-1). */
uint32_t sl_aq_zero(int bits);

/* The G.711 codec on int16 samples (exposed for tests). */
uint8_t sl_g711_encode(int16_t pcm);
int16_t sl_g711_decode(uint8_t code);
/* float -> int16 as the g711 quantizer sees it: round(x * 32768), clamped. */
int16_t sl_aq_to_int16(float x);

#ifdef __cplusplus
}
#endif

#endif
