/* Minimal WAV writer; see wavwrite.h. */
#include "audio/wavwrite.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/byteorder.h"

static void put16(sl_buf *b, unsigned v)
{
    unsigned char p[2];
    sl_put_le16(p, (uint16_t)v);
    sl_buf_append(b, p, 2);
}

static void put32(sl_buf *b, uint32_t v)
{
    unsigned char p[4];
    sl_put_le32(p, v);
    sl_buf_append(b, p, 4);
}

int sl_wav_encode(sl_buf *out, const float *x, size_t n, int rate, int float32)
{
    unsigned bps = float32 ? 4 : 2;
    uint64_t data = (uint64_t)n * bps;
    uint32_t fmt_len = float32 ? 18 : 16, fact = float32 ? 12 : 0;
    uint64_t riff = 4 + 8 + fmt_len + fact + 8 + data;
    if (riff > 0xFFFFFFF0ull)
        return -1;
    sl_buf_reserve(out, (size_t)riff + 8);
    sl_buf_append(out, "RIFF", 4);
    put32(out, (uint32_t)riff);
    sl_buf_append(out, "WAVEfmt ", 8);
    put32(out, fmt_len);
    put16(out, float32 ? 3 : 1); /* WAVE_FORMAT_IEEE_FLOAT or PCM */
    put16(out, 1);               /* mono */
    put32(out, (uint32_t)rate);
    put32(out, (uint32_t)rate * bps);
    put16(out, bps);
    put16(out, bps * 8);
    if (float32) {
        put16(out, 0); /* cbSize */
        sl_buf_append(out, "fact", 4);
        put32(out, 4);
        put32(out, (uint32_t)n);
    }
    sl_buf_append(out, "data", 4);
    put32(out, (uint32_t)data);
    for (size_t i = 0; i < n; i++) {
        if (float32) {
            uint32_t u;
            memcpy(&u, &x[i], 4);
            put32(out, u);
        } else {
            double v = nearbyint((double)x[i] * 32768.0);
            v = v > 32767 ? 32767 : v < -32768 ? -32768 : v == v ? v : 0;
            put16(out, (unsigned)(uint16_t)(int16_t)v);
        }
    }
    return 0;
}
