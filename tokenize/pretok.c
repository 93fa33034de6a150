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

static void init_classes(void);

void sl_bpe_set_scanner(sl_bpe *b, int on) { b->scan = on && b->re; }

int sl_pretok_compile(sl_bpe *b, sl_err *err)
{
    init_classes();
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
    b->scan = 1;
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

/* --- the same split by hand ---------------------------------------------
 * The GPT-2 pattern is simple enough to scan without a regex engine:
 *   's|'t|'re|'ve|'m|'ll|'d        contractions (case-sensitive)
 *   ' '? L+ | ' '? N+ | ' '? O+    letters, numbers, other (not L/N/space)
 *   S+(?!\S) | S+                  whitespace; before a non-space character
 *                                  the last whitespace character is left to
 *                                  start the next piece
 * tried in that order at each position. Character classes come from ICU's
 * general categories, limited to Unicode 14.0 (what PCRE2 10.42 knows; HF
 * uses Oniguruma, likely 14.0 too, not verified): characters assigned later count as
 * unassigned, i.e. "other". test_bpe_pretok checks the scanner against the
 * PCRE2 pattern on every code point and on the test texts. */
#include <unicode/uchar.h>

enum { CL_L = 1, CL_N = 2, CL_S = 3, CL_O = 4 };

/* Classes of the Basic Multilingual Plane, filled once when a tokenizer is
 * loaded (65,536 ICU look-ups, a few milliseconds) so that scanning text
 * never calls ICU below U+10000. */
static uint8_t bmp_class[0x10000];

static int icu_class(uint32_t cp);

static void init_classes(void)
{
    if (bmp_class['a'])
        return;
    for (uint32_t c = 0x80; c < 0x10000; c++)
        bmp_class[c] = (uint8_t)icu_class(c);
    for (int c = 0; c < 128; c++)
        bmp_class[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ? CL_L
                         : c >= '0' && c <= '9'                          ? CL_N
                         : (c >= '\t' && c <= '\r') || c == ' '          ? CL_S
                                                                         : CL_O;
}

int sl_pretok_class(uint32_t cp)
{
    if (!bmp_class['a'])
        init_classes();
    return cp < 0x10000 ? bmp_class[cp] : icu_class(cp);
}

static int icu_class(uint32_t cp)
{
    if (cp == 0x85)
        return CL_S;
    UVersionInfo age;
    u_charAge((UChar32)cp, age);
    if (age[0] > 14)
        return CL_O;
    switch (u_charType((UChar32)cp)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER: return CL_L;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER: return CL_N;
    case U_SPACE_SEPARATOR:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR: return CL_S;
    default: return CL_O;
    }
}

/* Class of the character at p[i] (valid UTF-8) and its length. */
static int class_at(const uint8_t *p, size_t n, size_t i, size_t *len)
{
    if (p[i] < 0x80) {
        *len = 1;
        return bmp_class[p[i]];
    }
    uint32_t cp;
    *len = sl_utf8_seq(p + i, n - i, &cp);
    if (!*len) { /* not expected: callers pass valid UTF-8 */
        *len = 1;
        return CL_O;
    }
    return cp < 0x10000 ? bmp_class[cp] : icu_class(cp);
}

size_t sl_pretok_scan(const uint8_t *p, size_t n, size_t pos)
{
    if (p[pos] == '\'' && pos + 1 < n) {
        uint8_t c = p[pos + 1];
        if (c == 's' || c == 'd' || c == 'm' || c == 't')
            return pos + 2;
        if (pos + 2 < n && ((c == 'l' && p[pos + 2] == 'l') || (c == 'v' && p[pos + 2] == 'e') ||
                            (c == 'r' && p[pos + 2] == 'e')))
            return pos + 3;
    }
    size_t j = p[pos] == ' ' && pos + 1 < n ? pos + 1 : pos, len;
    int cl = class_at(p, n, j, &len);
    if (cl != CL_S) { /* a run of one class, after an optional space */
        size_t k = j + len;
        while (k < n && class_at(p, n, k, &len) == cl)
            k += len;
        return k;
    }
    /* whitespace from pos */
    size_t k = pos, last = pos;
    while (k < n && class_at(p, n, k, &len) == CL_S) {
        last = k;
        k += len;
    }
    if (k == n || last == pos)
        return k;
    return last;
}
