/* UTF-8 validation and repair; see utf8.h. */
#include "base/utf8.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

size_t sl_utf8_check(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 32 bytes at a time, then 8 */
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
