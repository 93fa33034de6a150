/* UTF-8 validation and repair; see utf8.h. */
#include "base/utf8.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The scalar way from i, which must be at a character boundary: ASCII 32
 * and 8 bytes at a time, the rest sequence by sequence. */
static size_t check_scalar(const uint8_t *p, size_t n, size_t i)
{
    while (i < n) {
#ifdef __SSE2__
        while (i + 32 <= n) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16));
            if (_mm_movemask_epi8(_mm_or_si128(a, b)))
                break;
            i += 32;
        }
#endif
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = sl_utf8_seq(p + i, n - i, &cp);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
/* 16 bytes at a time by table lookups (the method of Keiser and Lemire,
 * "Validating UTF-8 in less than one instruction per byte", 2021): each
 * byte's error flags from the high and low nibbles of the byte before it
 * and its own high nibble, ANDed; a byte that must continue a 3- or 4-byte
 * sequence (two or three bytes after its lead) is told apart by the lead
 * itself. The flags: */
enum {
    TOO_SHORT = 1 << 0,      /* a lead, then no continuation */
    TOO_LONG = 1 << 1,       /* ASCII, then a continuation */
    OVERLONG_3 = 1 << 2,     /* E0, then 80..9F */
    TOO_LARGE = 1 << 3,      /* F4, then 90..BF; F5..FF, then 90..BF */
    SURROGATE = 1 << 4,      /* ED, then A0..BF */
    OVERLONG_2 = 1 << 5,     /* C0 or C1, then a continuation */
    TOO_LARGE_1000 = 1 << 6, /* F5..FF, then 80..8F */
    OVERLONG_4 = 1 << 6,     /* F0, then 80..8F */
    TWO_CONTS = 1 << 7,      /* a continuation, then another */
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS
};

__attribute__((target("ssse3"))) static inline __m128i block_errors(__m128i in, __m128i prev)
{
    const __m128i lo4 = _mm_set1_epi8(0x0F);
    const __m128i t1_high =
        _mm_setr_epi8(TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, (char)TWO_CONTS,
                      (char)TWO_CONTS, (char)TWO_CONTS, (char)TWO_CONTS, TOO_SHORT | OVERLONG_2, TOO_SHORT,
                      TOO_SHORT | OVERLONG_3 | SURROGATE, (char)(TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4));
    const __m128i t1_low = _mm_setr_epi8(
        (char)(CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4), (char)(CARRY | OVERLONG_2), (char)CARRY, (char)CARRY,
        (char)(CARRY | TOO_LARGE), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000), (char)(CARRY | TOO_LARGE | TOO_LARGE_1000));
    const __m128i t2_high = _mm_setr_epi8(
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE), TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT);
    __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
    __m128i sc = _mm_and_si128(_mm_and_si128(_mm_shuffle_epi8(t1_high, _mm_and_si128(_mm_srli_epi16(prev1, 4), lo4)),
                                             _mm_shuffle_epi8(t1_low, _mm_and_si128(prev1, lo4))),
                               _mm_shuffle_epi8(t2_high, _mm_and_si128(_mm_srli_epi16(in, 4), lo4)));
    __m128i prev2 = _mm_alignr_epi8(in, prev, 14), prev3 = _mm_alignr_epi8(in, prev, 13);
    __m128i third = _mm_subs_epu8(prev2, _mm_set1_epi8((char)(0xE0 - 0x80)));
    __m128i fourth = _mm_subs_epu8(prev3, _mm_set1_epi8((char)(0xF0 - 0x80)));
    __m128i must23 = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
    return _mm_xor_si128(must23, sc);
}

/* Where the scalar way must start to find the fault in the block at i: the
 * lead of a sequence that runs into the block (everything before it is
 * valid: the earlier blocks were), else i. */
static size_t restart_at(const uint8_t *p, size_t i)
{
    for (size_t k = 1; k <= 3 && k <= i; k++) {
        uint8_t c = p[i - k];
        if (c < 0x80)
            break;
        if (c >= 0xC0)
            return k < (size_t)(c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2) ? i - k : i;
    }
    return i;
}

__attribute__((target("ssse3"))) static size_t check_ssse3(const uint8_t *p, size_t n)
{
    /* a sequence left open at the end of a block: a lead in its last three
     * bytes that needs more than what follows it there */
    const __m128i open = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1),
                                       (char)(0xE0 - 1), (char)(0xC0 - 1));
    const __m128i zero = _mm_setzero_si128();
    __m128i prev = zero;
    size_t i = 0;
    for (;;) {
        int closed = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_subs_epu8(prev, open), zero)) == 0xFFFF;
        if (closed) { /* ASCII 32 bytes at a time; after it, zeros are as good a prev as those bytes */
            size_t i0 = i;
            while (i + 32 <= n &&
                   !_mm_movemask_epi8(_mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i)),
                                                   _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16)))))
                i += 32;
            if (i != i0)
                prev = zero;
        }
        if (i + 16 > n)
            break;
        __m128i in = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        if ((_mm_movemask_epi8(in) || !closed) &&
            _mm_movemask_epi8(_mm_cmpeq_epi8(block_errors(in, prev), zero)) != 0xFFFF)
            return check_scalar(p, n, restart_at(p, i));
        prev = in;
        i += 16;
    }
    /* the rest (less than a block), zero-padded: a sequence still open at
     * the end meets a zero there */
    uint8_t last[16] = {0};
    memcpy(last, p + i, n - i);
    __m128i in = _mm_loadu_si128((const __m128i *)(const void *)last);
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(block_errors(in, prev), zero)) != 0xFFFF)
        return check_scalar(p, n, restart_at(p, i));
    return n;
}
#endif

size_t sl_utf8_check(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 16 && __builtin_cpu_supports("ssse3"))
        return check_ssse3(p, n);
#endif
    return check_scalar(p, n, 0);
}

size_t sl_utf8_repair(sl_buf *out, const char *s, size_t n, int mode)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t count = 0, i = 0, run = 0;
    sl_buf_reserve(out, n);
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            run++;
            continue;
        }
        uint32_t cp;
        size_t bad = 0, k = sl_utf8_decode(p + i, n - i, &cp, &bad);
        if (k) {
            i += k;
            run += k;
            continue;
        }
        sl_buf_append(out, s + i - run, run);
        run = 0;
        if (mode == SL_UTF8_REPLACE)
            sl_buf_append(out, "\xEF\xBF\xBD", 3);
        count++;
        i += bad;
    }
    sl_buf_append(out, s + i - run, run);
    return count;
}
