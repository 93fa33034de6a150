/* JSON parser (DOM, arena-allocated) and writer helpers. See json.h. */
#include "base/json.h"

#include "base/dtoa.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- arena ---------------------------------------------------------- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

struct sl_json_doc {
    arena_block *blocks;
    sl_json *root;
};

/* Blocks of 64 KiB, each one twice the last up to 4 MiB; those of 2 MiB and
 * more on whole 2 MiB pages the kernel may back with huge pages. Loading a
 * Llama-3-style tokenizer.json (100k tokens, 100k merges) then takes a third
 * of the page faults (6.8k against 19.8k) and 0.18 s of CPU where it took
 * 0.20 (means of 10 alternations; RSS 2 MB more). */
static void *arena_alloc(sl_json_doc *d, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    arena_block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = b ? (b->cap < ((size_t)4 << 20) ? 2 * b->cap : b->cap) : 65536;
        if (cap < n)
            cap = n;
        arena_block *nb;
        if (cap >= ((size_t)2 << 20)) {
            size_t bytes = (sizeof *nb + cap + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
            nb = aligned_alloc((size_t)2 << 20, bytes);
            if (!nb)
                nb = sl_xmalloc(bytes);
            (void)madvise(nb, bytes, MADV_HUGEPAGE);
            cap = bytes - sizeof *nb;
        } else {
            nb = sl_xmalloc(sizeof *nb + cap);
        }
        nb->cap = cap;
        nb->used = 0;
        nb->next = b;
        d->blocks = nb;
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* ---- parser --------------------------------------------------------- */

typedef struct parser {
    const char *s;
    size_t n, i;
    sl_json_doc *doc;
    sl_json_opts *opts;
    sl_err *err;
    sl_buf tmp;
    int depth;
} parser;

static int perr(parser *p, const char *what)
{
    return sl_err_set(p->err, SL_E_FORMAT, NULL, "offset %zu: %s", p->i, what);
}

static void skip_ws(parser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->i++;
        else
            break;
    }
}

static sl_json *node(parser *p, sl_json_type t)
{
    sl_json *v = arena_alloc(p->doc, sizeof *v);
    memset(v, 0, sizeof *v);
    v->type = t;
    v->offset = p->i;
    return v;
}

#if defined(__SSE2__)
/* Bit i set where byte i of x ends a run of a string's plain bytes ('"',
 * '\\', below 0x20). */
static inline unsigned string_end16(__m128i x)
{
    const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), c = _mm_set1_epi8(0x1F);
    __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, b)), _mm_cmpeq_epi8(_mm_min_epu8(x, c), x));
    return (unsigned)_mm_movemask_epi8(stop);
}
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The bytes of x (little-endian) that end a run of a string's plain bytes
 * ('"', '\\', below 0x20) have their top bit set in the result; bytes
 * after the first such byte may be set too (a borrow), the first is exact. */
static inline uint64_t string_end8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & tops;
}
#endif

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The four hex digits at s[*i]: 0 with *i past them, else the error code
 * with *i where the error is. */
static int str_hex4(const char *s, size_t n, size_t *i, unsigned *out)
{
    if (n - *i < 4)
        return SL_JSTR_U_TRUNC;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(s[*i + k]);
        if (h < 0)
            return SL_JSTR_U_HEX;
        v = v << 4 | (unsigned)h;
    }
    *i += 4;
    *out = v;
    return 0;
}

#if defined(__SSE2__)
/* The four hex digits at s[0..4) as a number, or -1. */
static inline long hex4_at(const char *s)
{
    int a = hexval(s[0]), b = hexval(s[1]), c = hexval(s[2]), d = hexval(s[3]);
    return (a | b | c | d) < 0 ? -1 : (long)a << 12 | b << 8 | c << 4 | d;
}

/* What the one-character escapes (a backslash and the index) stand for; 0
 * for every other character. */
static const char unescape[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b', ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t'};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define JSON_BLOCK64 1
/* 64 bytes of a string's text at s (all readable) into dst (64 writable),
 * where the CPU has AVX-512 VBMI2: only the plain case, a block with no
 * closing quote, no control byte, no two backslashes side by side and every
 * escape one of the one-character ones (\n \t \r \b \f \" \\ \/): the
 * escaped characters replaced by table lookup, the backslashes dropped by a
 * compress. A backslash in the last byte is left for the next block.
 * Returns the bytes read (63 or 64), *w those written and *high the top
 * bits seen; 0 for any other block (the 16-byte way takes it). Newlines
 * written as \n, one every 40 bytes of a typical corpus, each cost the
 * 16-byte way a turn of its loop. */
__attribute__((target("avx512bw,avx512vbmi,avx512vbmi2"))) static size_t block64(const char *s, char *dst, size_t *w,
                                                                                 unsigned *high)
{
    /* unescape[0..128) in two registers, indexed by the low 7 bits */
    const __m512i lut_lo = _mm512_loadu_si512((const void *)unescape),
                  lut_hi = _mm512_loadu_si512((const void *)(unescape + 64));
    __m512i x = _mm512_loadu_si512((const void *)s);
    uint64_t bs = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'));
    uint64_t q = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('"'));
    uint64_t ctl = _mm512_cmplt_epu8_mask(x, _mm512_set1_epi8(0x20));
    uint64_t top = _mm512_movepi8_mask(x), valid = ~(uint64_t)0;
    size_t len = 64;
    if (bs & bs << 1) /* two side by side (an escaped backslash), wherever they are */
        return 0;
    if (bs >> 63) { /* its escaped character is in the next block */
        len = 63;
        valid >>= 1;
        bs &= valid;
    }
    uint64_t esc = bs << 1; /* the escaped characters */
    __m512i v = _mm512_permutex2var_epi8(lut_lo, x, lut_hi);
    uint64_t simple = _mm512_test_epi8_mask(v, v) & ~top;
    if (((q & ~esc) | ctl) & valid || (esc & ~simple))
        return 0;
    __m512i y = _mm512_mask_blend_epi8(esc, x, v);
    _mm512_storeu_si512((void *)dst, _mm512_maskz_compress_epi8(~bs & valid, y));
    *w = len - (size_t)__builtin_popcountll(bs);
    *high |= (top & valid) != 0;
    return len;
}
#endif

/* The usual string in one loop: plain bytes 16 at a time, escapes decoded
 * in place without ending the run, and the UTF-8 of the whole decoding
 * checked once at the end when a byte had its top bit set (an escape
 * writes whole sequences, so the decoding is valid exactly when every run
 * of raw bytes is). Returns 0 (*pos, *changed set), or -1 with b as it was
 * for anything else (invalid UTF-8, a lone surrogate, a malformed string):
 * sl_json_str_decode then reads the string run by run. */
static int str_decode_fast(const char *s, size_t n, size_t *pos, sl_buf *b, int *changed)
{
    size_t i = *pos, len0 = b->len;
    unsigned high = 0;
    int chg = 0;
    char *dst = b->data + b->len, *lim = b->data + b->cap - 1;
#ifdef JSON_BLOCK64
    int wide = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") &&
               __builtin_cpu_supports("avx512vbmi2");
#endif
    for (;;) {
        if (lim - dst < 64) { /* 64 stored, or up to 15 and an escape's 4 */
            b->len = (size_t)(dst - b->data);
            sl_buf_reserve(b, 64 + (n - i < 4096 ? n - i : 4096));
            dst = b->data + b->len;
            lim = b->data + b->cap - 1;
        }
#ifdef JSON_BLOCK64
        if (wide && n - i >= 64) {
            size_t w, k = block64(s + i, dst, &w, &high);
            if (k) {
                chg |= w != k;
                i += k;
                dst += w;
                continue;
            }
        }
#endif
        if (n - i >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)dst, x);
            unsigned m = string_end16(x), t = (unsigned)_mm_movemask_epi8(x);
            if (!m) {
                high |= t;
                i += 16;
                dst += 16;
                continue;
            }
            unsigned k = (unsigned)__builtin_ctz(m);
            high |= t & ((1u << k) - 1);
            i += k;
            dst += k;
        } else {
            for (; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '"' || c == '\\' || c < 0x20)
                    break;
                high |= c & 0x80;
                *dst++ = (char)c;
            }
            if (i >= n)
                goto careful;
        }
        char c = s[i];
        if (c == '"') {
            i++;
            break;
        }
        if (c != '\\' || n - i < 2)
            goto careful;
        chg = 1;
        char e = unescape[(unsigned char)s[i + 1]];
        if (e) {
            *dst++ = e;
        } else if (s[i + 1] == 'u') {
            long cp = n - i >= 6 ? hex4_at(s + i + 2) : -1;
            if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                goto careful;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = n - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u' ? hex4_at(s + i + 8) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    goto careful;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            dst += sl_utf8_encode(dst, (uint32_t)cp);
            i += 4;
        } else {
            goto careful;
        }
        i += 2;
    }
    if (high && sl_utf8_check(b->data + len0, (size_t)(dst - b->data) - len0) != (size_t)(dst - b->data) - len0)
        goto careful;
    b->len = (size_t)(dst - b->data);
    b->data[b->len] = 0;
    *pos = i;
    if (changed)
        *changed = chg;
    return 0;
careful:
    b->len = len0;
    return -1;
}
#endif

int sl_json_str_decode(const char *s, size_t n, size_t *pos, sl_buf *b, int mode, size_t *invalid, int *changed)
{
    sl_buf_reserve(b, 16);
    int careful = mode & SL_JSTR_CAREFUL;
    mode &= ~SL_JSTR_CAREFUL;
#if defined(__SSE2__)
    if (!careful && !str_decode_fast(s, n, pos, b, changed))
        return 0;
#else
    (void)careful;
#endif
    size_t i = *pos;
    int chg = 0;
    for (;;) {
        /* a run of plain bytes, stored at the end of b as it is scanned
         * (b->len moves past it once it is known to be valid UTF-8) */
        size_t start = i;
        char *dst = b->data + b->len;
        size_t room = b->cap - b->len - 1;
        unsigned high = 0; /* top bits of the run's bytes */
#if defined(__SSE2__)
        while (n - i >= 16) {
            if (i - start + 16 > room) {
                sl_buf_reserve(b, i - start + 16 + (n - i < 4096 ? n - i : 4096));
                dst = b->data + b->len;
                room = b->cap - b->len - 1;
            }
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)(dst + (i - start)), x);
            unsigned m = string_end16(x), t = (unsigned)_mm_movemask_epi8(x);
            if (m) {
                unsigned k = (unsigned)__builtin_ctz(m);
                high |= t & ((1u << k) - 1);
                i += k;
                goto run_end;
            }
            high |= t;
            i += 16;
        }
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (n - i >= 8) {
            if (i - start + 8 > room) {
                sl_buf_reserve(b, i - start + 8 + (n - i < 4096 ? n - i : 4096));
                dst = b->data + b->len;
                room = b->cap - b->len - 1;
            }
            uint64_t x, m;
            memcpy(&x, s + i, 8);
            memcpy(dst + (i - start), &x, 8);
            if ((m = string_end8(x))) {
                unsigned k = (unsigned)__builtin_ctzll(m) >> 3;
                high |= k && (x & (~(uint64_t)0 >> (64 - 8 * k)) & 0x8080808080808080u);
                i += k;
                goto run_end;
            }
            high |= !!(x & 0x8080808080808080u);
            i += 8;
        }
#endif
        while (i < n) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c < 0x20)
                break;
            if (i - start + 1 > room) {
                sl_buf_reserve(b, i - start + 1 + (n - i < 4096 ? n - i : 4096));
                dst = b->data + b->len;
                room = b->cap - b->len - 1;
            }
            dst[i - start] = (char)c;
            high |= c & 0x80;
            i++;
        }
        goto run_end; /* (the label is also reached from the vector loops) */
    run_end:
        if (i > start) {
            const char *run = s + start;
            size_t rn = i - start;
            size_t bad = !high ? rn : sl_utf8_check(run, rn);
            if (bad == rn) {
                b->len += rn;
            } else {
                if (mode == SL_UTF8_ERROR) {
                    *pos = start + bad;
                    return SL_JSTR_UTF8;
                }
                *invalid += sl_utf8_repair(b, run, rn, mode);
                chg = 1;
            }
        }
        if (i >= n) {
            *pos = i;
            return SL_JSTR_UNTERMINATED;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            i++;
            break;
        }
        if (c < 0x20) {
            *pos = i;
            return SL_JSTR_CONTROL;
        }
        /* escape */
        i++;
        if (i >= n) {
            *pos = i;
            return SL_JSTR_UNTERMINATED;
        }
        chg = 1;
        char e = s[i++], out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u': {
            unsigned cp;
            int rc = str_hex4(s, n, &i, &cp);
            if (rc) {
                *pos = i;
                return rc;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* high surrogate: needs a following \uDC00-DFFF */
                if (n - i >= 6 && s[i] == '\\' && s[i + 1] == 'u') {
                    size_t save = i;
                    i += 2;
                    unsigned lo;
                    if ((rc = str_hex4(s, n, &i, &lo))) {
                        *pos = i;
                        return rc;
                    }
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else {
                        i = save;
                        cp = 0xFFFD;
                    }
                } else {
                    cp = 0xFFFD;
                }
                if (cp == 0xFFFD)
                    (*invalid)++;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
                (*invalid)++;
            }
            sl_utf8_put(b, cp);
            continue;
        }
        default: *pos = i - 1; return SL_JSTR_ESCAPE;
        }
        sl_buf_putc(b, out);
    }
    b->data[b->len] = 0;
    *pos = i;
    if (changed)
        *changed = chg;
    return 0;
}

/* Parses a string at p->i (which is at '"'). */
static sl_json *parse_string(parser *p)
{
    static const char *const what[] = {
        [SL_JSTR_UNTERMINATED] = "unterminated string", [SL_JSTR_CONTROL] = "control character in string",
        [SL_JSTR_ESCAPE] = "bad escape in string",      [SL_JSTR_UTF8] = "invalid UTF-8 in string",
        [SL_JSTR_U_TRUNC] = "truncated \\u escape",     [SL_JSTR_U_HEX] = "bad hex digit in \\u escape",
    };
    sl_json *v = node(p, SL_JSON_STRING);
    sl_buf *b = &p->tmp;
    sl_buf_clear(b);
    size_t i = p->i + 1, count = 0;
    int rc = sl_json_str_decode(p->s, p->n, &i, b, p->opts ? p->opts->invalid_utf8 : SL_UTF8_REPLACE, &count, NULL);
    if (p->opts)
        p->opts->invalid_count += count;
    p->i = i;
    if (rc) {
        perr(p, what[rc]);
        return NULL;
    }
    char *s = arena_alloc(p->doc, b->len + 1);
    memcpy(s, b->data, b->len + 1);
    v->str = s;
    v->str_len = b->len;
    return v;
}

static sl_json *parse_number(parser *p)
{
    sl_json *v = node(p, SL_JSON_NUMBER);
    size_t st = p->i;
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i >= p->n) {
        perr(p, "bad number");
        return NULL;
    }
    size_t d0 = p->i;
    uint64_t acc = 0; /* the integer part's value while it has at most 15 digits */
    if (p->s[p->i] == '0') {
        p->i++;
    } else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            acc = acc * 10 + (uint64_t)(p->s[p->i++] - '0');
    } else {
        perr(p, "bad number");
        return NULL;
    }
    int plain = p->i - d0 <= 15; /* an integer below 2^53: exact in a double without strtod */
    if (p->i < p->n && p->s[p->i] == '.') {
        plain = 0;
        p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d) {
            perr(p, "bad number: digit expected after '.'");
            return NULL;
        }
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        plain = 0;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d) {
            perr(p, "bad number: digit expected in exponent");
            return NULL;
        }
    }
    size_t len = p->i - st;
    char *s = arena_alloc(p->doc, len + 1);
    memcpy(s, p->s + st, len);
    s[len] = 0;
    v->str = s;
    v->str_len = len;
    v->num = !plain ? strtod(s, NULL) : s[0] == '-' ? -(double)acc : (double)acc;
    return v;
}

static sl_json *parse_value(parser *p);
static void tagged_float(sl_json *v);

/* Children are collected on a temporary growable array, then copied into
 * the arena (arrays of pointers). */
typedef struct kidvec {
    sl_json **v;
    size_t n, cap;
} kidvec;

static void kid_push(kidvec *k, sl_json *j)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 8;
        k->v = sl_xrealloc(k->v, k->cap * sizeof *k->v);
    }
    k->v[k->n++] = j;
}

static sl_json **kid_commit(parser *p, kidvec *k)
{
    sl_json **a = arena_alloc(p->doc, (k->n ? k->n : 1) * sizeof *a);
    if (k->n)
        memcpy(a, k->v, k->n * sizeof *a);
    free(k->v);
    return a;
}

static sl_json *parse_container(parser *p, int obj)
{
    if (++p->depth > SL_JSON_MAX_DEPTH) {
        perr(p, "nesting too deep");
        return NULL;
    }
    sl_json *v = node(p, obj ? SL_JSON_OBJECT : SL_JSON_ARRAY);
    p->i++;
    kidvec kids = {0}, keys = {0};
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
        p->i++;
        goto done;
    }
    for (;;) {
        skip_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') {
                perr(p, p->i >= p->n ? "unexpected end of input in object" : "object key (string) expected");
                goto fail;
            }
            sl_json *k = parse_string(p);
            if (!k)
                goto fail;
            kid_push(&keys, k);
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                perr(p, "':' expected after object key");
                goto fail;
            }
            p->i++;
        }
        sl_json *c = parse_value(p);
        if (!c)
            goto fail;
        kid_push(&kids, c);
        skip_ws(p);
        if (p->i >= p->n) {
            perr(p, obj ? "unexpected end of input in object" : "unexpected end of input in array");
            goto fail;
        }
        char ch = p->s[p->i];
        if (ch == ',') {
            p->i++;
            continue;
        }
        if (ch == (obj ? '}' : ']')) {
            p->i++;
            break;
        }
        perr(p, obj ? "',' or '}' expected in object" : "',' or ']' expected in array");
        goto fail;
    }
done:
    v->n = kids.n;
    v->kids = kid_commit(p, &kids);
    if (obj)
        v->keys = kid_commit(p, &keys);
    else
        free(keys.v);
    p->depth--;
    if (obj && p->opts && p->opts->nonfinite && p->opts->nonfinite != SL_JSON_NONFINITE_WORDS)
        tagged_float(v);
    return v;
fail:
    free(kids.v);
    free(keys.v);
    return NULL;
}

static int lit(parser *p, const char *w)
{
    size_t n = strlen(w);
    if (p->n - p->i >= n && !memcmp(p->s + p->i, w, n)) {
        p->i += n;
        return 1;
    }
    return 0;
}

/* The words of Python json's non-finite floats and their values. */
static const char *const nonfinite_words[] = {"Infinity", "-Infinity", "NaN"};

/* v becomes the NUMBER nonfinite_words[k]. */
static void set_nonfinite(sl_json *v, int k)
{
    v->type = SL_JSON_NUMBER;
    v->str = nonfinite_words[k];
    v->str_len = strlen(nonfinite_words[k]);
    v->num = k == 0 ? INFINITY : k == 1 ? -INFINITY : NAN;
}

/* Python json's Infinity, -Infinity and NaN (opts->nonfinite): a NUMBER with
 * that source text; NULL when none is here. */
static sl_json *parse_nonfinite(parser *p)
{
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(nonfinite_words[k]);
        if (p->n - p->i >= n && !memcmp(p->s + p->i, nonfinite_words[k], n)) {
            sl_json *v = node(p, SL_JSON_NUMBER);
            p->i += n;
            set_nonfinite(v, k);
            return v;
        }
    }
    return NULL;
}

/* transformers 5's spelling of a non-finite float (opts->nonfinite), as its
 * PreTrainedConfig._decode_special_floats reads it: an object whose only key
 * is "__float__" (given once or more: the last one counts, as in a Python
 * dict) with the string "Infinity", "-Infinity" or "NaN". Such an object
 * becomes that NUMBER, in place; any other object stays as it is. */
static void tagged_float(sl_json *v)
{
    if (v->n == 0)
        return;
    for (size_t i = 0; i < v->n; i++)
        if (v->keys[i]->str_len != 9 || memcmp(v->keys[i]->str, "__float__", 9))
            return;
    const sl_json *s = v->kids[v->n - 1];
    if (s->type != SL_JSON_STRING)
        return;
    for (int k = 0; k < 3; k++)
        if (s->str_len == strlen(nonfinite_words[k]) && !memcmp(s->str, nonfinite_words[k], s->str_len)) {
            set_nonfinite(v, k);
            v->n = 0;
            v->kids = v->keys = NULL;
            return;
        }
}

static sl_json *parse_value(parser *p)
{
    skip_ws(p);
    if (p->i >= p->n) {
        perr(p, "unexpected end of input, value expected");
        return NULL;
    }
    char c = p->s[p->i];
    if ((c == '{' || c == '[') && p->opts)
        for (size_t k = 0; k < p->opts->n_skip; k++)
            if (p->opts->skip[k].at == p->i) {
                sl_json *v = node(p, c == '{' ? SL_JSON_OBJECT : SL_JSON_ARRAY);
                p->i += p->opts->skip[k].len;
                return v;
            }
    switch (c) {
    case '{': return parse_container(p, 1);
    case '[': return parse_container(p, 0);
    case '"': return parse_string(p);
    case 't': {
        sl_json *v = node(p, SL_JSON_TRUE);
        if (lit(p, "true"))
            return v;
        break;
    }
    case 'f': {
        sl_json *v = node(p, SL_JSON_FALSE);
        if (lit(p, "false"))
            return v;
        break;
    }
    case 'n': {
        sl_json *v = node(p, SL_JSON_NULL);
        if (lit(p, "null"))
            return v;
        break;
    }
    default: {
        sl_json *v = p->opts && p->opts->nonfinite ? parse_nonfinite(p) : NULL;
        if (v)
            return v;
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(p);
    }
    }
    perr(p, "invalid JSON value");
    return NULL;
}

/* The value at the start of text: with end, *end is set just past it and
 * anything may follow; without, only whitespace may (sl_json_parse). */
static sl_json_doc *parse_doc(const char *text, size_t len, size_t *end, sl_json_opts *opts, sl_err *err)
{
    sl_json_doc *d = sl_xcalloc(1, sizeof *d);
    parser p = {.s = text, .n = len, .doc = d, .opts = opts, .err = err};
    sl_json *v = parse_value(&p);
    if (v && end) {
        *end = p.i;
    } else if (v) {
        skip_ws(&p);
        if (p.i != p.n) {
            perr(&p, "unexpected data after JSON value");
            v = NULL;
        }
    }
    sl_buf_free(&p.tmp);
    if (!v) {
        sl_json_free(d);
        return NULL;
    }
    d->root = v;
    return d;
}

sl_json_doc *sl_json_parse(const char *text, size_t len, sl_json_opts *opts, sl_err *err)
{
    return parse_doc(text, len, NULL, opts, err);
}

sl_json_doc *sl_json_parse_prefix(const char *text, size_t len, size_t *end, sl_json_opts *opts, sl_err *err)
{
    return parse_doc(text, len, end, opts, err);
}

sl_json *sl_json_root(sl_json_doc *doc)
{
    return doc ? doc->root : NULL;
}

void sl_json_free(sl_json_doc *doc)
{
    if (!doc)
        return;
    arena_block *b = doc->blocks;
    while (b) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(doc);
}

/* ---- compact copy of a value without a tree -------------------------- */

/* The end of the number at s[i] as parse_number reads it, or 0. */
static size_t number_end(const char *s, size_t n, size_t i)
{
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return 0;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return 0;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return 0;
    }
    return i;
}

static size_t ws_end(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

typedef struct canon {
    const char *s;
    size_t n;
    sl_buf *out, *tmp;
    int mode;
    size_t *invalid;
} canon;

/* A string at c->s[*i] ('"') written as sl_json_put_str writes its decoding. */
static int canon_string(canon *c, size_t *i)
{
    size_t at = c->out->len, p = *i + 1;
    int changed;
    sl_buf_putc(c->out, '"');
    if (sl_json_str_decode(c->s, c->n, &p, c->out, c->mode, c->invalid, &changed))
        return -1;
    const char *d = c->out->data + at + 1;
    size_t dn = c->out->len - at - 1;
    if (changed) { /* escapes or repairs: written again, escaped as the writer escapes */
        sl_buf_clear(c->tmp);
        sl_buf_append(c->tmp, d, dn);
        c->out->len = at;
        sl_json_put_str(c->out, c->tmp->data, c->tmp->len);
    } else {
        sl_buf_putc(c->out, '"');
    }
    *i = p;
    return 0;
}

static int canon_value(canon *c, size_t *pi, int depth)
{
    const char *s = c->s;
    size_t n = c->n, i = ws_end(s, n, *pi);
    if (i >= n)
        return -1;
    switch (s[i]) {
    case '"':
        if (canon_string(c, &i))
            return -1;
        break;
    case '{':
    case '[': {
        int obj = s[i] == '{';
        if (depth >= 64)
            return -1; /* deep nesting: the tree's way (its depth limit and message) */
        sl_buf_putc(c->out, s[i]);
        i = ws_end(s, n, i + 1);
        if (i < n && s[i] == (obj ? '}' : ']')) {
            i++;
        } else {
            for (;;) {
                if (obj) {
                    i = ws_end(s, n, i);
                    if (i >= n || s[i] != '"' || canon_string(c, &i))
                        return -1;
                    i = ws_end(s, n, i);
                    if (i >= n || s[i] != ':')
                        return -1;
                    i++;
                    sl_buf_putc(c->out, ':');
                }
                if (canon_value(c, &i, depth + 1))
                    return -1;
                i = ws_end(s, n, i);
                if (i >= n)
                    return -1;
                if (s[i] == ',') {
                    sl_buf_putc(c->out, ',');
                    i++;
                    continue;
                }
                if (s[i] != (obj ? '}' : ']'))
                    return -1;
                i++;
                break;
            }
        }
        sl_buf_putc(c->out, obj ? '}' : ']');
        break;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *w = s[i] == 't' ? "true" : s[i] == 'f' ? "false" : "null";
        size_t wn = strlen(w);
        if (n - i < wn || memcmp(s + i, w, wn))
            return -1;
        sl_buf_append(c->out, w, wn);
        i += wn;
        break;
    }
    default: {
        size_t e = 0;
        for (int k = 0; k < 3 && !e; k++) {
            size_t wn = strlen(nonfinite_words[k]);
            if (n - i >= wn && !memcmp(s + i, nonfinite_words[k], wn))
                e = i + wn;
        }
        if (!e && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')))
            e = number_end(s, n, i);
        if (!e)
            return -1;
        sl_buf_append(c->out, s + i, e - i);
        i = e;
    }
    }
    *pi = i;
    return 0;
}

int sl_json_put_canon(sl_buf *out, const char *s, size_t n, size_t *pos, sl_buf *tmp, int invalid_utf8, size_t *invalid)
{
    canon c = {.s = s, .n = n, .out = out, .tmp = tmp, .mode = invalid_utf8, .invalid = invalid};
    return canon_value(&c, pos, 0);
}

/* ---- lookup --------------------------------------------------------- */

sl_json *sl_json_get(const sl_json *obj, const char *key)
{
    if (!obj || obj->type != SL_JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = obj->n; i-- > 0;) /* last duplicate wins */
        if (obj->keys[i]->str_len == kl && !memcmp(obj->keys[i]->str, key, kl))
            return obj->kids[i];
    return NULL;
}

const char *sl_json_get_str(const sl_json *obj, const char *key)
{
    sl_json *v = sl_json_get(obj, key);
    return v && v->type == SL_JSON_STRING ? v->str : NULL;
}

int sl_json_is_int(const sl_json *v, int64_t *out)
{
    if (!v || v->type != SL_JSON_NUMBER)
        return 0;
    /* an optional '-' and at most 18 digits: no overflow */
    size_t i = v->str_len && v->str[0] == '-', n = v->str_len - i;
    if (n && n <= 18) {
        int64_t x = 0;
        while (i < v->str_len && v->str[i] >= '0' && v->str[i] <= '9')
            x = x * 10 + (v->str[i++] - '0');
        if (i == v->str_len) {
            if (out)
                *out = v->str[0] == '-' ? -x : x;
            return 1;
        }
    }
    /* integers only: no fraction or exponent, within int64 */
    for (size_t i = 0; i < v->str_len; i++)
        if (v->str[i] == '.' || v->str[i] == 'e' || v->str[i] == 'E')
            return 0;
    char *end;

    long long x = strtoll(v->str, &end, 10);
    if (*end)
        return 0;
    if ((x == LLONG_MAX || x == LLONG_MIN) && v->str_len > 18) {
        /* possible overflow: compare text */
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", x);
        if (strcmp(buf, v->str))
            return 0;
    }
    if (out)
        *out = x;
    return 1;
}

int sl_json_get_int(const sl_json *obj, const char *key, int64_t *out)
{
    return sl_json_is_int(sl_json_get(obj, key), out) ? 0 : -1;
}

int sl_json_get_num(const sl_json *obj, const char *key, double *out)
{
    sl_json *v = sl_json_get(obj, key);
    if (!v || v->type != SL_JSON_NUMBER)
        return -1;
    *out = v->num;
    return 0;
}

int sl_json_get_bool(const sl_json *obj, const char *key, int *out)
{
    sl_json *v = sl_json_get(obj, key);
    if (!v || (v->type != SL_JSON_TRUE && v->type != SL_JSON_FALSE))
        return -1;
    *out = v->type == SL_JSON_TRUE;
    return 0;
}

/* ---- writer --------------------------------------------------------- */

/* How many bytes from s on a JSON string takes as they are: none of '"',
 * '\\' or a byte below 0x20 (16 or 8 at a time, then one by one). */
static inline size_t plain_len(const char *s, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        unsigned m = string_end16(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t e = string_end8(x);
        if (e)
            return i + (size_t)__builtin_ctzll(e) / 8;
    }
#endif
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            break;
    }
    return i;
}

void sl_json_put_str(sl_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sl_buf_reserve(b, n + 2);
    sl_buf_putc(b, '"');
    for (size_t i = 0;;) {
        size_t k = plain_len(s + i, n - i);
        sl_buf_append(b, s + i, k);
        i += k;
        if (i >= n)
            break;
        unsigned char c = (unsigned char)s[i++];
        switch (c) {
        case '"': sl_buf_append(b, "\\\"", 2); break;
        case '\\': sl_buf_append(b, "\\\\", 2); break;
        case '\n': sl_buf_append(b, "\\n", 2); break;
        case '\r': sl_buf_append(b, "\\r", 2); break;
        case '\t': sl_buf_append(b, "\\t", 2); break;
        case '\b': sl_buf_append(b, "\\b", 2); break;
        case '\f': sl_buf_append(b, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sl_buf_append(b, u, 6);
        }
        }
    }
    sl_buf_putc(b, '"');
}

void sl_json_put_cstr(sl_buf *b, const char *s)
{
    sl_json_put_str(b, s, strlen(s));
}

void sl_json_put_num(sl_buf *b, double v)
{
    if (!isfinite(v)) {
        sl_buf_puts(b, "null");
        return;
    }
    if (fabs(v) < 9.007199254740992e15 && v == (double)(int64_t)v) {
        sl_json_put_int(b, (int64_t)v);
        return;
    }
    /* shortest representation that round-trips: "%.*g" at the least
     * precision from 6 up that reads back. With the shortest digits D
     * (k of them) known, that is D in %g's form at precision max(k, 6):
     * fewer digits do not read back (D is the shortest), and v rounded to
     * max(k, 6) digits is D when k <= 15 (v is within half a unit in the
     * 16th digit of D) and when D is v rounded to nearest (16 or 17
     * digits: 17 always are, 16 not next to some powers of two); printf
     * decides the others, as before. */
    char d[24];
    int k, x, nearest;
    if (sl_shortest_digits(v, d, &k, &x, &nearest) && (k <= 15 || nearest)) {
        int prec = k > 6 ? k : 6;
        sl_dtoa_put(b, v < 0, d, k, x, prec, 0);
        return;
    }
    char tmp[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    sl_buf_puts(b, tmp);
}

void sl_json_put_int(sl_buf *b, int64_t v)
{
    char tmp[24], *q = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--q = '-';
    sl_buf_append(b, q, (size_t)(tmp + sizeof tmp - q));
}

void sl_json_put_value(sl_buf *b, const sl_json *v)
{
    switch (v->type) {
    case SL_JSON_NULL: sl_buf_puts(b, "null"); break;
    case SL_JSON_TRUE: sl_buf_puts(b, "true"); break;
    case SL_JSON_FALSE: sl_buf_puts(b, "false"); break;
    case SL_JSON_NUMBER: sl_buf_append(b, v->str, v->str_len); break;
    case SL_JSON_STRING: sl_json_put_str(b, v->str, v->str_len); break;
    case SL_JSON_ARRAY:
        sl_buf_putc(b, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_value(b, v->kids[i]);
        }
        sl_buf_putc(b, ']');
        break;
    case SL_JSON_OBJECT:
        sl_buf_putc(b, '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_str(b, v->keys[i]->str, v->keys[i]->str_len);
            sl_buf_putc(b, ':');
            sl_json_put_value(b, v->kids[i]);
        }
        sl_buf_putc(b, '}');
        break;
    }
}
