/* Audio quantizers; see quantize.h for the definitions and their sources. */
#include "audio/quantize.h"

#include <math.h>
#include <string.h>

const char *const sl_aq_names[] = {"mulaw-s4", "mulaw", "linear", "g711", NULL};

int sl_aq_parse(const char *name)
{
    for (int i = 0; sl_aq_names[i]; i++)
        if (name && !strcmp(name, sl_aq_names[i]))
            return i;
    return -1;
}

const char *sl_aq_name(int kind)
{
    return kind >= 0 && kind <= SL_AQ_G711 ? sl_aq_names[kind] : "unknown";
}

int sl_aq_bits_ok(int kind, int bits)
{
    if (kind == SL_AQ_G711)
        return bits == 8 ? 0 : -1;
    return bits >= SL_AQ_MIN_BITS && bits <= SL_AQ_MAX_BITS ? 0 : -1;
}

uint32_t sl_aq_zero(int bits)
{
    return 1u << (bits - 1);
}

/* s4 quantize(): floor(v * (2^bits - eps) + eps / 2) with eps = 0.01. The
 * clamp only matters for inputs outside [0, 1] (none from the s4 schemes) and
 * for NaN, which the decoder never lets through. */
static uint32_t s4_quantize(double v, double q)
{
    double r = floor(v * (q - 0.01) + 0.01 / 2);
    if (!(r >= 0))
        return 0;
    if (r > q - 1)
        return (uint32_t)(q - 1);
    return (uint32_t)r;
}

static void minmax(const float *x, size_t n, double *lo, double *hi)
{
    float a = n ? x[0] : 0, b = a;
    for (size_t i = 1; i < n; i++) {
        a = x[i] < a ? x[i] : a;
        b = x[i] > b ? x[i] : b;
    }
    *lo = a;
    *hi = b;
}

static void encode_mulaw_s4(int bits, const float *x, size_t n, uint32_t *codes)
{
    double q = (double)(1u << bits), mu = q - 1, lmu = log1p(mu), lo, hi;
    minmax(x, n, &lo, &hi);
    double den = hi - lo + 1e-6; /* the reference's epsilon: a flat clip maps to -1 */
    for (size_t i = 0; i < n; i++) {
        /* Same operation order as torch/numpy: min + (max - min) * (x - lo) / den. */
        double a = -1.0 + 2.0 * ((double)x[i] - lo) / den;
        /* torch.sign(0) = 0; the 1e-8 is inside the abs as in the reference. */
        double e = a == 0 ? 0.0 : copysign(1.0, a) * log1p(mu * fabs(a + 1e-8)) / lmu;
        codes[i] = s4_quantize((e + 1) / 2, q);
    }
}

static void encode_linear(int bits, const float *x, size_t n, uint32_t *codes)
{
    double q = (double)(1u << bits), lo, hi;
    minmax(x, n, &lo, &hi);
    double den = hi - lo + 1e-6;
    for (size_t i = 0; i < n; i++)
        codes[i] = s4_quantize(((double)x[i] - lo) / den, q);
}

static void encode_mulaw(int bits, const float *x, size_t n, uint32_t *codes)
{
    double mu = (double)((1u << bits) - 1), lmu = log1p(mu);
    for (size_t i = 0; i < n; i++) {
        double v = x[i], a = fabs(v);
        double m = log1p(mu * (a < 1 ? a : 1)) / lmu;
        double s = v < 0 ? -m : m;
        double r = floor((s + 1) / 2 * mu + 0.5);
        codes[i] = !(r >= 0) ? 0 : r > mu ? (uint32_t)mu : (uint32_t)r;
    }
}

/* G.711 mu-law after the Sun Microsystems reference routine (16-bit input):
 * add the bias 0x84, find the segment (position of the leading one), keep
 * 4 mantissa bits, invert every bit. */
uint8_t sl_g711_encode(int16_t pcm16)
{
    int pcm = pcm16, mask;
    if (pcm < 0) {
        pcm = 0x84 - pcm;
        mask = 0x7F;
    } else {
        pcm += 0x84;
        mask = 0xFF;
    }
    int seg = 0;
    while (seg < 8 && pcm > (0x100 << seg) - 1) /* segment ends 0xFF, 0x1FF, ..., 0x7FFF */
        seg++;
    if (seg >= 8)
        return (uint8_t)(0x7F ^ mask);
    return (uint8_t)(((seg << 4) | ((pcm >> (seg + 3)) & 0xF)) ^ mask);
}

int16_t sl_g711_decode(uint8_t code)
{
    int u = ~code & 0xFF;
    int t = (((u & 0x0F) << 3) + 0x84) << ((u & 0x70) >> 4);
    return (int16_t)((u & 0x80) ? 0x84 - t : t - 0x84);
}

int16_t sl_aq_to_int16(float x)
{
    double v = nearbyint((double)x * 32768.0);
    if (!(v >= -32768))
        return v != v ? 0 : -32768;
    return v > 32767 ? 32767 : (int16_t)v;
}

void sl_aq_encode(int kind, int bits, const float *x, size_t n, uint32_t *codes)
{
    switch (kind) {
    case SL_AQ_MULAW_S4: encode_mulaw_s4(bits, x, n, codes); break;
    case SL_AQ_LINEAR: encode_linear(bits, x, n, codes); break;
    case SL_AQ_MULAW: encode_mulaw(bits, x, n, codes); break;
    default:
        for (size_t i = 0; i < n; i++)
            codes[i] = sl_g711_encode(sl_aq_to_int16(x[i]));
        break;
    }
}

static double mulaw_expand(double y, double mu)
{
    double m = (pow(1 + mu, fabs(y)) - 1) / mu;
    return y < 0 ? -m : m;
}

void sl_aq_decode(int kind, int bits, const uint32_t *codes, size_t n, float *x)
{
    double half = (double)(1u << (bits - 1)), mu = (double)((1u << bits) - 1);
    for (size_t i = 0; i < n; i++) {
        double k = codes[i];
        switch (kind) {
        case SL_AQ_MULAW_S4: /* s4 mu_law_decode: dequantize, then expand */
            x[i] = (float)mulaw_expand(k / half - 1, mu);
            break;
        case SL_AQ_LINEAR: /* s4 linear_decode = dequantize */ x[i] = (float)(k / half - 1); break;
        case SL_AQ_MULAW: /* torchaudio mu_law_decoding */ x[i] = (float)mulaw_expand(2 * k / mu - 1, mu); break;
        default: x[i] = (float)(sl_g711_decode((uint8_t)codes[i]) / 32768.0); break;
        }
    }
}
