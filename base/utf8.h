/* UTF-8: the one decoder, validator, repairer and encoder (the JSON parser,
 * the document readers, the tokenizers and the FASTA header check all use
 * these).
 *
 * Well-formed means Unicode's Table 3-7 (section 3.9): no overlong forms, no
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF. */
#ifndef SLUICE_BASE_UTF8_H
#define SLUICE_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to do with ill-formed input (sl_json_opts, sl_docreader_opts; stable
 * API): replace each maximal ill-formed subpart by U+FFFD, drop it, or fail. */
enum { SL_UTF8_REPLACE = 0, SL_UTF8_SKIP = 1, SL_UTF8_ERROR = 2 };

#ifdef SLUICE_UNSTABLE_API

/* Decodes the sequence at s[0..n), n >= 1. Returns its length (1..4) and the
 * code point in *cp, or 0 when the bytes at s do not start a well-formed
 * sequence; then, when bad is not NULL, *bad is the length of the maximal
 * subpart to replace by one U+FFFD (Unicode section 3.9 "U+FFFD
 * substitution of maximal subparts", which is what Python's
 * bytes.decode(errors="replace") and the WHATWG decoder do). */
static inline size_t sl_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp, size_t *bad)
{
    uint32_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t need;
    uint32_t v, lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1, v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2, v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0; /* not overlong */
        else if (c == 0xED)
            hi = 0x9F; /* not a surrogate */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3, v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90; /* not overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* not above U+10FFFF */
    } else {
        if (bad)
            *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) {
            if (bad)
                *bad = i;
            return 0;
        }
        v = v << 6 | (s[i] & 0x3F);
        lo = 0x80, hi = 0xBF;
    }
    *cp = v;
    return need + 1;
}

/* Length of the well-formed sequence at s[0..n) (n >= 1) with its code
 * point in *cp, or 0. */
static inline size_t sl_utf8_seq(const uint8_t *s, size_t n, uint32_t *cp)
{
    return sl_utf8_decode(s, n, cp, NULL);
}

/* Byte offset of the first ill-formed sequence in s[0..n), or n. */
size_t sl_utf8_check(const char *s, size_t n);

/* Appends s[0..n) to out with each maximal ill-formed subpart replaced by
 * U+FFFD (mode SL_UTF8_REPLACE) or dropped (SL_UTF8_SKIP). Returns the
 * number of ill-formed subparts. */
size_t sl_utf8_repair(sl_buf *out, const char *s, size_t n, int mode);

/* Writes the UTF-8 form of cp (<= U+10FFFF, not a surrogate) to u; returns
 * its length (1..4). */
static inline size_t sl_utf8_encode(char u[4], uint32_t cp)
{
    if (cp < 0x80) {
        u[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (char)(0xF0 | cp >> 18);
    u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Appends the UTF-8 form of cp to b. */
static inline void sl_utf8_put(sl_buf *b, uint32_t cp)
{
    char u[4];
    sl_buf_append(b, u, sl_utf8_encode(u, cp));
}

/* Whether code point c lies in one of r[0..n), sorted disjoint ranges
 * {first, last} (the generated Unicode tables of text/). */
static inline int sl_cp_in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (c > r[m][1])
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && c >= r[lo][0];
}

#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
