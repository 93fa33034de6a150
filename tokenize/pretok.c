/* Pre-tokenization: the GPT-2 regex through PCRE2 (JIT, UTF mode).
 *
 * HF compiles the pattern with Oniguruma, whose \s is U+0009..U+000D,
 * U+0085 and the Z categories. PCRE2's \s differs (it also matches U+180E),
 * so the pattern spells the class out: [\t-\r\x{85}\p{Z}]. The contraction
 * alternatives are the shorter but equivalent form tiktoken uses. */
#include <string.h>

#include "tokenize/bpe_internal.h"

#define WS "\\t-\\r\\x{85}\\p{Z}"
static const char PATTERN[] = "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^" WS "\\p{L}\\p{N}]+|[" WS
                              "]+(?![^" WS "])|[" WS "]+";

int sl_pretok_compile(sl_bpe *b, sl_err *err)
{
    if (!b->use_regex)
        return 0;
    int ec;
    PCRE2_SIZE eo;
    b->re = pcre2_compile((PCRE2_SPTR)PATTERN, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!b->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sl_errf(err, "internal: pre-tokenizer regex at %zu: %s", (size_t)eo, (char *)msg);
    }
    b->jit = pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE) == 0;
    return 0;
}

size_t sl_utf8_seq(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

size_t sl_utf8_valid_prefix(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ULL)
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
