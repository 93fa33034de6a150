/* SHA-256 following FIPS 180-4 section 6.2. It hashes the tokenizer file
 * once per run (2.5 MB for GPT-NeoX, 19 MB for tekken): the portable
 * compression below runs at about 300 MB/s, so on x86-64 CPUs with the SHA
 * extensions (Intel since Ice Lake / Goldmont, AMD since Zen) the blocks go
 * through SHA256RNDS2/MSG1/MSG2 instead, several times faster. Both give the
 * same digest (test_tokenize_bpe_props compares them). */
#include "tokenize/sha256.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SL_SHA_X86 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void sl_sha256_init(sl_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->total = 0;
    s->used = 0;
}

#ifdef SL_SHA_X86
/* The blocks p[0 .. 64 n) with the SHA extensions. The state lives in two
 * registers as the instructions want it: ABEF (A in the highest lane) and
 * CDGH; SHA256RNDS2 does two rounds on them with W[t] + K[t] of two rounds
 * in the low lanes of its third operand, MSG1 and MSG2 the two halves of the
 * message schedule. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t n)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)h), 0xB1);       /* b a d c */
    __m128i u = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)(h + 4)), 0x1B); /* h g f e */
    __m128i abef = _mm_alignr_epi8(t, u, 8);                                                      /* f e b a */
    __m128i cdgh = _mm_blend_epi16(u, t, 0xF0);                                                   /* h g d c */
    for (; n; n--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, m[4];
        for (int g = 0; g < 16; g++) {
            __m128i *w = &m[g & 3];
            if (g < 4)
                *w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * g)), bswap);
            else /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time */
                *w = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(*w, m[(g + 1) & 3]),
                                                        _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4)),
                                          m[(g + 3) & 3]);
            __m128i wk = _mm_add_epi32(*w, _mm_loadu_si128((const __m128i *)(const void *)(K + 4 * g)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk); /* rounds 4g, 4g+1: the new ABEF */
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    t = _mm_shuffle_epi32(abef, 0x1B); /* a b e f */
    u = _mm_shuffle_epi32(cdgh, 0xB1); /* g h c d */
    _mm_storeu_si128((__m128i *)(void *)h, _mm_blend_epi16(t, u, 0xF0));
    _mm_storeu_si128((__m128i *)(void *)(h + 4), _mm_alignr_epi8(u, t, 8));
}

static int cpu_has_sha(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9))) /* SSE4.1, SSSE3 */
        return 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)); /* SHA */
}
#endif

/* -1: not yet known; 0: portable; 1: the SHA extensions */
static int use_hw = -1;

int sl_sha256_hw(void)
{
#ifdef SL_SHA_X86
    if (use_hw < 0)
        use_hw = cpu_has_sha();
    return use_hw;
#else
    return 0;
#endif
}

void sl_sha256_set_hw(int on)
{
    use_hw = on ? -1 : 0;
    if (on)
        (void)sl_sha256_hw();
}

static void blocks(uint32_t h[8], const uint8_t *p, size_t n)
{
#ifdef SL_SHA_X86
    if (sl_sha256_hw()) {
        blocks_shani(h, p, n);
        return;
    }
#endif
    for (; n; n--, p += 64)
        compress(h, p);
}

void sl_sha256_update(sl_sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->total += n;
    while (n) {
        if (s->used == 0 && n >= 64) {
            blocks(s->h, p, n / 64);
            p += n / 64 * 64, n %= 64;
            continue;
        }
        size_t k = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, k);
        s->used += k, p += k, n -= k;
        if (s->used == 64) {
            blocks(s->h, s->block, 1);
            s->used = 0;
        }
    }
}

void sl_sha256_final(sl_sha256 *s, uint8_t digest[32])
{
    uint64_t bits = s->total * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sl_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            digest[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void sl_sha256_hex(const uint8_t digest[32], char out[72])
{
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "sha256:", 7);
    for (int i = 0; i < 32; i++) {
        out[7 + 2 * i] = hex[digest[i] >> 4];
        out[8 + 2 * i] = hex[digest[i] & 15];
    }
    out[71] = 0;
}

void sl_sha256_fingerprint(const void *data, size_t n, char out[72])
{
    sl_sha256 s;
    uint8_t d[32];
    sl_sha256_init(&s);
    sl_sha256_update(&s, data, n);
    sl_sha256_final(&s, d);
    sl_sha256_hex(d, out);
}
