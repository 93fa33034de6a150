/* Helpers shared by the hand-written pre-tokenizer scanners (pretok.c,
 * pretok_o200k.c). Internal.
 *
 * The scanners' fast paths handle pieces made of ASCII bytes: a 256-entry
 * table gives each byte's flags (the ASCII classes, which every scanner's
 * class table agrees on: [a-z] lower-case letters, [A-Z] upper-case
 * letters, [0-9] numbers, \t-\r and ' ' whitespace, the rest other; bytes
 * >= 0x80 only PF_X), and the end of a run of one class is found 16 bytes
 * at a time with SSE2 (x86-64's baseline, so no runtime check) or a byte
 * loop elsewhere. A piece that reaches a byte >= 0x80 is left to the
 * general scanner, which decodes UTF-8 and looks the class up. */
#ifndef SLUICE_TOKENIZE_PRETOK_SCAN_H
#define SLUICE_TOKENIZE_PRETOK_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/utf8.h"

enum {
    PF_LO = 1,    /* a-z */
    PF_UP = 2,    /* A-Z */
    PF_DIG = 4,   /* 0-9 */
    PF_SP = 8,    /* \t-\r and ' ' */
    PF_OTH = 16,  /* any other ASCII byte */
    PF_CRLF = 32, /* \r, \n (also PF_SP) */
    PF_APOS = 64, /* ' (also PF_OTH) */
    PF_X = 128,   /* >= 0x80 */
    PF_L = PF_LO | PF_UP,
};

#define PF_(c)                                                                                                         \
    ((c) >= 0x80                                  ? PF_X                                                               \
     : (c) >= 'a' && (c) <= 'z'                   ? PF_LO                                                              \
     : (c) >= 'A' && (c) <= 'Z'                   ? PF_UP                                                              \
     : (c) >= '0' && (c) <= '9'                   ? PF_DIG                                                             \
     : (c) == '\r' || (c) == '\n'                 ? PF_SP | PF_CRLF                                                    \
     : ((c) >= '\t' && (c) <= '\r') || (c) == ' ' ? PF_SP                                                              \
     : (c) == '\''                                ? PF_OTH | PF_APOS                                                   \
                                                  : PF_OTH)
#define PF4_(c) PF_(c), PF_((c) + 1), PF_((c) + 2), PF_((c) + 3)
#define PF16_(c) PF4_(c), PF4_((c) + 4), PF4_((c) + 8), PF4_((c) + 12)
#define PF64_(c) PF16_(c), PF16_((c) + 16), PF16_((c) + 32), PF16_((c) + 48)
static const uint8_t sl_pf[256] = {PF64_(0), PF64_(64), PF64_(128), PF64_(192)};
#undef PF_
#undef PF4_
#undef PF16_
#undef PF64_

#if defined(__SSE2__)
/* 0xFF in each byte of c whose flags meet k (a set of PF_LO, PF_UP,
 * PF_DIG, PF_SP, PF_OTH), else 0. */
static inline __attribute__((always_inline)) __m128i pf_in(__m128i c, unsigned k)
{
    const __m128i lo = _mm_cmpgt_epi8(_mm_set1_epi8(-102), _mm_add_epi8(c, _mm_set1_epi8(0x1F)));
    const __m128i up = _mm_cmpgt_epi8(_mm_set1_epi8(-102), _mm_add_epi8(c, _mm_set1_epi8(0x3F)));
    const __m128i dig = _mm_cmpgt_epi8(_mm_set1_epi8(-118), _mm_add_epi8(c, _mm_set1_epi8(0x50)));
    const __m128i sp = _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8(' ')),
                                    _mm_cmpgt_epi8(_mm_set1_epi8(-123), _mm_add_epi8(c, _mm_set1_epi8(0x77))));
    __m128i r = _mm_setzero_si128();
    if (k & PF_LO)
        r = _mm_or_si128(r, lo);
    if (k & PF_UP)
        r = _mm_or_si128(r, up);
    if (k & PF_DIG)
        r = _mm_or_si128(r, dig);
    if (k & PF_SP)
        r = _mm_or_si128(r, sp);
    if (k & PF_OTH) { /* ASCII and none of the others */
        __m128i any = _mm_or_si128(_mm_or_si128(lo, up), _mm_or_si128(dig, sp));
        r = _mm_or_si128(r, _mm_andnot_si128(any, _mm_cmpgt_epi8(c, _mm_set1_epi8(-1))));
    }
    return r;
}
#endif

/* The first k >= i (i <= n) whose byte's flags miss kset (a compile-time
 * set of PF_LO, PF_UP, PF_DIG, PF_SP, PF_OTH), or n. */
static inline __attribute__((always_inline)) size_t pf_run(const uint8_t *p, size_t n, size_t i, unsigned kset)
{
#if defined(__SSE2__)
    while (i + 16 <= n) {
        unsigned m = (unsigned)_mm_movemask_epi8(pf_in(_mm_loadu_si128((const __m128i *)(p + i)), kset));
        if (m != 0xFFFF)
            return i + (size_t)__builtin_ctz(~m);
        i += 16;
    }
#endif
    while (i < n && (sl_pf[p[i]] & kset))
        i++;
    return i;
}

/* --- whole windows at once ---------------------------------------------
 * The piece starts of ASCII text follow from the classes of each byte and
 * its neighbours, so they can be found 64 bytes at a time with bit
 * operations on class masks (bit i for byte wb + i) instead of piece by
 * piece, whose serial dependence (each piece starts where the last ended)
 * would keep the processor waiting. A window is classified with SSE2; its
 * first PT_CTX bytes are context for the rules (the previous piece's
 * bytes), its last PT_AHEAD bytes lookahead; the starts in between are
 * final. Bytes before `lo` (where a scan starts: the start of a piece, as
 * at the start of the text) and from n on are in no class and not valid. */
enum { PT_CTX = 4, PT_AHEAD = 2, PT_STEP = 64 - PT_CTX - PT_AHEAD };

typedef struct pt_win {
    uint64_t v;                    /* valid: lo <= wb + i < n */
    uint64_t up, lo, dig, sp, spc; /* A-Z, a-z, 0-9, \t-\r and ' ', ' ' */
    uint64_t crlf, apos, slash, x; /* \r \n, ', /, >= 0x80 */
} pt_win;

/* The window at wb: its valid bits in w->v and the address of its 64
 * bytes (p + wb, or tmp holding the valid ones, 0x80 elsewhere). */
static inline __attribute__((always_inline)) const uint8_t *pt_win_frame(pt_win *w, const uint8_t *p, size_t n,
                                                                         size_t lo, size_t wb, uint8_t tmp[64])
{
    const uint8_t *q;
    /* wb may be below lo (even "negative": wb + PT_CTX = lo); lo < n */
    ptrdiff_t d = (ptrdiff_t)(lo - wb);
    size_t first = d > 0 ? (size_t)d : 0;            /* bits below: not valid (< 64) */
    size_t last = n - wb < 64 ? n - wb : 64;         /* bits from here: past the end */
    if (last < 64 || (first && (ptrdiff_t)wb < 0)) { /* bytes outside p[0..n): a copy */
        memset(tmp, 0x80, 64);
        memcpy(tmp + first, p + (wb + first), last - first);
        q = tmp;
    } else {
        q = p + wb;
    }
    w->v = (last == 64 ? ~(uint64_t)0 : ((uint64_t)1 << last) - 1) & ~(((uint64_t)1 << first) - 1);
    return q;
}

/* The class masks, bytes before lo and past the end in none. */
static inline __attribute__((always_inline)) void pt_win_set(pt_win *w, uint64_t up, uint64_t lw, uint64_t dig,
                                                             uint64_t sp, uint64_t spc, uint64_t crlf, uint64_t apos,
                                                             uint64_t slash, uint64_t x)
{
    uint64_t v = w->v;
    w->up = up & v, w->lo = lw & v, w->dig = dig & v, w->sp = sp & v, w->spc = spc & v, w->crlf = crlf & v;
    w->apos = apos & v, w->slash = slash & v, w->x = x & v;
}

static inline __attribute__((always_inline)) void pt_win_load(pt_win *w, const uint8_t *p, size_t n, size_t lo,
                                                              size_t wb)
{
    uint8_t tmp[64];
    const uint8_t *q = pt_win_frame(w, p, n, lo, wb, tmp);
#if defined(__SSE2__)
    uint64_t up = 0, lw = 0, dig = 0, sp = 0, spc = 0, crlf = 0, apos = 0, slash = 0, x = 0;
    for (int i = 0; i < 4; i++) {
        __m128i c = _mm_loadu_si128((const __m128i *)(q + 16 * i));
        int sh = 16 * i;
        __m128i is_spc = _mm_cmpeq_epi8(c, _mm_set1_epi8(' '));
        lw |= (uint64_t)(unsigned)_mm_movemask_epi8(
                  _mm_cmpgt_epi8(_mm_set1_epi8(-102), _mm_add_epi8(c, _mm_set1_epi8(0x1F))))
              << sh;
        up |= (uint64_t)(unsigned)_mm_movemask_epi8(
                  _mm_cmpgt_epi8(_mm_set1_epi8(-102), _mm_add_epi8(c, _mm_set1_epi8(0x3F))))
              << sh;
        dig |= (uint64_t)(unsigned)_mm_movemask_epi8(
                   _mm_cmpgt_epi8(_mm_set1_epi8(-118), _mm_add_epi8(c, _mm_set1_epi8(0x50))))
               << sh;
        sp |= (uint64_t)(unsigned)_mm_movemask_epi8(
                  _mm_or_si128(is_spc, _mm_cmpgt_epi8(_mm_set1_epi8(-123), _mm_add_epi8(c, _mm_set1_epi8(0x77)))))
              << sh;
        spc |= (uint64_t)(unsigned)_mm_movemask_epi8(is_spc) << sh;
        crlf |= (uint64_t)(unsigned)_mm_movemask_epi8(
                    _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(c, _mm_set1_epi8('\n'))))
                << sh;
        apos |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_set1_epi8('\''))) << sh;
        slash |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_set1_epi8('/'))) << sh;
        x |= (uint64_t)(unsigned)_mm_movemask_epi8(c) << sh;
    }
    pt_win_set(w, up, lw, dig, sp, spc, crlf, apos, slash, x);
#else
    uint64_t m[10] = {0};
    for (int i = 0; i < 64; i++) {
        unsigned t = sl_pf[q[i]];
        uint64_t b = (uint64_t)1 << i;
        m[0] |= t & PF_UP ? b : 0;
        m[1] |= t & PF_LO ? b : 0;
        m[2] |= t & PF_DIG ? b : 0;
        m[3] |= t & PF_SP ? b : 0;
        m[4] |= q[i] == ' ' ? b : 0;
        m[5] |= t & PF_CRLF ? b : 0;
        m[6] |= t & PF_APOS ? b : 0;
        m[7] |= q[i] == '/' ? b : 0;
        m[8] |= t & PF_X ? b : 0;
    }
    pt_win_set(w, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]);
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same classes 64 bytes at a time with AVX-512BW (unsigned range
 * compares straight into masks); the scan_many forms built with it
 * (PT_V4) are chosen at load where the CPU has it. An AVX2 form (32
 * bytes a step, SSE2's compares) was 7-9 % slower than SSE2's on the bench
 * corpus, this one 24 % faster for GPT-2's pattern and 0-4 % for the
 * others (their rules, not the classes, are most of their time). */
#define PT_SET1(c) _mm512_set1_epi8((char)(c))
#define PT_IN(c, from, count) _mm512_cmplt_epu8_mask(_mm512_sub_epi8(c, PT_SET1(from)), PT_SET1(count))
__attribute__((target("avx512bw"))) static inline void pt_win_load_v4(pt_win *w, const uint8_t *p, size_t n, size_t lo,
                                                                      size_t wb)
{
    uint8_t tmp[64];
    const uint8_t *q = pt_win_frame(w, p, n, lo, wb, tmp);
    __m512i c = _mm512_loadu_si512((const void *)q);
    uint64_t spc = _mm512_cmpeq_epi8_mask(c, PT_SET1(' '));
    pt_win_set(w, PT_IN(c, 'A', 26), PT_IN(c, 'a', 26), PT_IN(c, '0', 10), spc | PT_IN(c, '\t', 5), spc,
               _mm512_cmpeq_epi8_mask(c, PT_SET1('\r')) | _mm512_cmpeq_epi8_mask(c, PT_SET1('\n')),
               _mm512_cmpeq_epi8_mask(c, PT_SET1('\'')), _mm512_cmpeq_epi8_mask(c, PT_SET1('/')),
               _mm512_movepi8_mask(c));
}
#undef PT_IN
#undef PT_SET1
#define PT_HAVE_ISA 1
#endif

/* The window driver: the ends of up to cap pieces from pos (a piece start)
 * into ends, their count returned. STARTS(w, p, n, wb, st, hd) sets the
 * piece starts of window w (at wb, none of its valid bytes >= 0x80) in
 * uint64_t st, exact in bits PT_CTX .. 63 - PT_AHEAD (up to 63 when the
 * window reaches the end of the text) except at and up to two bytes after
 * the "hard" bits it sets in uint64_t hd. PIECE(p, n, pos) is the one-piece
 * scanner: it takes the pieces from the last start before a byte that is
 * not exact until the next start after all of them, the rest of a window
 * whose last bytes are hard (the next starts anew), and windows with bytes
 * >= 0x80. A function's whole body, followed by ';'. PT_MANY_L takes the
 * window load too (pt_win_load, or pt_win_load_v4 in a PT_V4 function). */
#define PT_MANY(STARTS, PIECE) PT_MANY_L(pt_win_load, STARTS, PIECE)
#define PT_MANY_L(LOAD, STARTS, PIECE)                                                                                 \
    size_t m = 0, lo = pos, wb = pos - PT_CTX;                                                                         \
    while (m < cap && pos < n) {                                                                                       \
        pt_win w;                                                                                                      \
        LOAD(&w, p, n, lo, wb);                                                                                        \
        if (w.x) { /* piece by piece past the last byte >= 0x80, then a new start */                                   \
            size_t last = wb + 63 - (size_t)__builtin_clzll(w.x);                                                      \
            while (m < cap && pos <= last)                                                                             \
                ends[m++] = pos = PIECE(p, n, pos);                                                                    \
            lo = pos, wb = pos - PT_CTX;                                                                               \
            continue;                                                                                                  \
        }                                                                                                              \
        uint64_t st, hd;                                                                                               \
        STARTS(w, p, n, wb, st, hd);                                                                                   \
        int end = n - wb <= 64 - PT_AHEAD; /* the window holds the rest of the text */                                 \
        uint64_t fin = (end ? ~(uint64_t)0 : ~(uint64_t)0 >> PT_AHEAD) & ~(uint64_t)0 << PT_CTX & w.v;                 \
        if ((ptrdiff_t)(pos - wb) >= 0) /* only after pos (pos - wb < 63) */                                           \
            fin &= ~(((uint64_t)2 << (pos - wb)) - 1);                                                                 \
        st &= fin;                                                                                                     \
        uint64_t inexact = (hd | hd << 1 | hd << 2) & fin;                                                             \
        int fresh = !end && hd >> (61 - PT_AHEAD) != 0;                                                                \
        if (!inexact) /* the common case: every start exact */                                                         \
            while (st && m < cap) {                                                                                    \
                ends[m++] = pos = wb + (size_t)__builtin_ctzll(st);                                                    \
                st &= st - 1;                                                                                          \
            }                                                                                                          \
        while (st | inexact) {                                                                                         \
            if (m == cap)                                                                                              \
                return m;                                                                                              \
            if (inexact && (!st || (inexact & -inexact) <= (st & -st))) {                                              \
                ends[m++] = pos = PIECE(p, n, pos);                                                                    \
                if (pos >= n)                                                                                          \
                    return m;                                                                                          \
                if ((ptrdiff_t)(pos - wb) >= 64 - PT_AHEAD) {                                                          \
                    fresh = 1;                                                                                         \
                    break;                                                                                             \
                }                                                                                                      \
                if ((ptrdiff_t)(pos - wb) >= 0) {                                                                      \
                    uint64_t after = ~(((uint64_t)2 << (pos - wb)) - 1);                                               \
                    st &= after;                                                                                       \
                    inexact &= after;                                                                                  \
                }                                                                                                      \
                continue;                                                                                              \
            }                                                                                                          \
            ends[m++] = pos = wb + (size_t)__builtin_ctzll(st);                                                        \
            st &= st - 1;                                                                                              \
        }                                                                                                              \
        if (end && !fresh) {                                                                                           \
            if (m < cap)                                                                                               \
                ends[m++] = pos = n;                                                                                   \
            return m;                                                                                                  \
        }                                                                                                              \
        if (fresh) { /* hard bytes at the end: to past this window piece by piece, then a new start */                 \
            while (m < cap && pos < n && (ptrdiff_t)(pos - wb) < 64 - PT_AHEAD)                                        \
                ends[m++] = pos = PIECE(p, n, pos);                                                                    \
            lo = pos, wb = pos - PT_CTX;                                                                               \
            continue;                                                                                                  \
        }                                                                                                              \
        wb += PT_STEP;                                                                                                 \
    }                                                                                                                  \
    return m;

#ifdef PT_HAVE_ISA
/* The attribute of a scan_many form on the AVX-512BW window load, whose
 * body is PT_MANY_L(pt_win_load_v4, STARTS, PIECE); (the rest of the scan
 * is the same code) */
#define PT_V4 __attribute__((target("avx512bw")))
#endif

/* The run of ones in x that holds bit 0, and the one that holds bit 63. */
static inline uint64_t pt_low_run(uint64_t x)
{
    return x & 1 ? (x ^ (x + 1)) & x : 0;
}
static inline uint64_t pt_top_run(uint64_t x)
{
    uint64_t z = ~x;
    return !(x >> 63) ? 0 : z ? ~(uint64_t)0 << (64 - __builtin_clzll(z)) : ~(uint64_t)0;
}

/* The piece starts in whitespace of the Llama-3 / o200k patterns, given
 * the window's whitespace W and other characters O (and CR/LF in w): in a
 * whitespace run [a, r) a start at a, unless CR/LF that the O+[\r\n]* before
 * takes (then after them); after the last CR/LF of the run (\s*[\r\n]+);
 * at r - 1 when r < n and that is not CR/LF (\s+(?!\S) leaves it). */
static inline __attribute__((always_inline)) uint64_t pt_ws_starts(const pt_win *w, uint64_t W, uint64_t O,
                                                                   uint64_t *hd, const uint8_t *p, size_t n, size_t wb)
{
    uint64_t C = w->crlf, Cy = C;
    /* the runs the window does not see whole: one from before it is exact
     * unless it starts with CR/LF there (O+ may take them); in one that goes
     * on after it with CR/LF, the last CR/LF is after the window */
    uint64_t top = pt_top_run(W);
    if (top & C) {
        size_t k = wb + 64;
        while (k < n && (sl_pf[p[k]] & (PF_SP | PF_CRLF)) == PF_SP)
            k++;
        if (k < n && p[k] >= 0x80)
            *hd |= top; /* Unicode whitespace may go on */
        else if (k < n && (sl_pf[p[k]] & PF_CRLF))
            Cy |= (uint64_t)1 << 63;
    }
    if (C & 1)
        *hd |= pt_low_run(W);
    uint64_t absorbed = ((C + (C & (O << 1))) ^ C) & C; /* CR/LF runs right after O */
    /* y: whitespace with a CR/LF at or after it in its run */
    /* after the last CR/LF of a run: right after CR/LF, where the
     * whitespace that follows is not followed by more CR/LF (the common
     * case: then every such place); else smear down, per run, whether a
     * CR/LF comes: y */
    uint64_t S = W & ~C, after = S & (C << 1), last;
    if (Cy == C && !((S + after) & ~S & C)) {
        last = after;
    } else {
        uint64_t y = Cy, g = W & (W >> 1);
        for (int k = 1; g; k <<= 1) { /* g: whitespace with k more after it */
            y |= (y >> k) & g;
            g &= g >> k;
        }
        last = W & ~y & (y << 1);
    }
    return (W & ~(W << 1) & ~absorbed) | (W & ~C & (absorbed << 1)) | last | (W & ~C & ~((W | ~w->v) >> 1));
}

/* Digit starts with runs cut every max_digits (1 or 3) digits. */
static inline __attribute__((always_inline)) uint64_t pt_digit_starts(uint64_t N, int max_digits, uint64_t *hd)
{
    if (max_digits == 1)
        return N;
    uint64_t x = N & ~(N << 1), st = x, n3 = N & (N << 1) & (N << 2);
    while ((x = (x << 3) & n3))
        st |= x;
    *hd |= N & 1 ? (N ^ (N + 1)) & N : 0; /* a run from before the window: where its threes fall is unknown */
    return st;
}

/* Length of the contraction 's 't 're 've 'm 'll 'd at the apostrophe
 * p[i] (any case when fold), or 0. */
static inline unsigned pt_contraction_len(const uint8_t *p, size_t n, size_t i, int fold)
{
    if (i + 1 >= n)
        return 0;
    uint8_t c = p[i + 1] | (fold ? 0x20 : 0);
    if (c == 's' || c == 'd' || c == 'm' || c == 't')
        return 2;
    if (i + 2 >= n)
        return 0;
    uint8_t c2 = p[i + 2] | (fold ? 0x20 : 0);
    return (c == 'l' && c2 == 'l') || (c == 'v' && c2 == 'e') || (c == 'r' && c2 == 'e') ? 3 : 0;
}

/* st with the bits from s + from to s + len - 1 cleared and s + len set
 * (those below 64): a piece [s, s + len), or the end of one at s + len. */
static inline uint64_t pt_piece_bits(uint64_t st, unsigned s, unsigned len, unsigned from)
{
    for (unsigned k = from; k < len && s + k < 64; k++)
        st &= ~((uint64_t)1 << (s + k));
    if (len && s + len < 64)
        st |= (uint64_t)1 << (s + len);
    return st;
}

/* The class of the character at p[i] (valid UTF-8) in a scanner's table
 * (bmp for the Basic Multilingual Plane, astral above it) and its length;
 * a byte that starts no valid sequence (not expected) is `other`. */
static inline __attribute__((always_inline)) int pt_class_at(const uint8_t *bmp, int (*astral)(uint32_t), int other,
                                                             const uint8_t *p, size_t n, size_t i, size_t *len)
{
    if (p[i] < 0x80) {
        *len = 1;
        return bmp[p[i]];
    }
    uint32_t cp;
    *len = sl_utf8_seq(p + i, n - i, &cp);
    if (!*len) {
        *len = 1;
        return other;
    }
    return cp < 0x10000 ? bmp[cp] : astral(cp);
}

/* End of a whitespace piece of the Llama-3 / o200k patterns from pos, when
 * p[pos..k) is ASCII whitespace and k == n or p[k] is ASCII and not
 * whitespace: S*[\r\n]+ up to the last CR/LF, else S+(?!\S) | S+. */
static inline __attribute__((always_inline)) size_t pt_ws_end(const uint8_t *p, size_t n, size_t pos, size_t k)
{
    for (size_t i = k; i > pos; i--)
        if (sl_pf[p[i - 1]] & PF_CRLF)
            return i;
    return k == n || k - pos == 1 ? k : k - 1;
}

/* The fast path of the Llama-3 / Qwen2 (letters = 0) and o200k / tekken
 * (letters = 1: [A-Z]*[a-z]* words, then the contraction when
 * contractions, and '/' after other characters) scanners at pos: the end of
 * the piece, or 0 when it needs the general scanner (a byte >= 0x80 or an
 * apostrophe where it matters, or the last byte of the text). */
static inline __attribute__((always_inline)) size_t pt_fast_cl100k(const uint8_t *p, size_t n, size_t pos,
                                                                   int max_digits, int o200k, int contractions)
{
    if (pos + 1 >= n)
        return 0;
    unsigned t0 = sl_pf[p[pos]], t1 = sl_pf[p[pos + 1]];
    if (t0 & (PF_X | PF_APOS))
        return 0;
    size_t k;
    if ((t0 | t1) & PF_L && !(t0 & (PF_DIG | PF_CRLF))) { /* [^\r\nLN]?L+ */
        size_t s = pos + !(t0 & PF_L);
        if (o200k) { /* U*L+ | U+L* */
            k = pf_run(p, n, s, PF_UP);
            k = pf_run(p, n, k, PF_LO);
        } else {
            k = pf_run(p, n, s + 1, PF_L);
        }
        if (k < n && (p[k] >= 0x80 || (contractions && p[k] == '\'')))
            return 0;
        return k;
    }
    if (t0 & PF_DIG) { /* N{1,max_digits} */
        k = pos + 1;
        while (k < n && k - pos < (size_t)max_digits && (sl_pf[p[k]] & PF_DIG))
            k++;
        if (k < n && k - pos < (size_t)max_digits && p[k] >= 0x80)
            return 0;
        return k;
    }
    if (t1 & PF_X)
        return 0;
    if ((t0 & PF_OTH) || (p[pos] == ' ' && (t1 & PF_OTH))) { /*  ?O+[\r\n]* (o200k: [\r\n/]*) */
        k = pf_run(p, n, pos + 1, PF_OTH);
        if (k < n && p[k] >= 0x80)
            return 0;
        while (k < n && ((sl_pf[p[k]] & PF_CRLF) || (o200k && p[k] == '/')))
            k++;
        return k;
    }
    /* whitespace */
    k = pf_run(p, n, pos + 1, PF_SP);
    if (k < n && p[k] >= 0x80)
        return 0;
    return pt_ws_end(p, n, pos, k);
}

#endif
