/* simplify_text (text/textnorm.h). The Unicode properties come as range
 * lists generated from Python (text/gen_textnorm_tables.py) and are spread
 * once into a flags array indexed by code point (1.1 MB). */
#include "text/textnorm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "text/textnorm_tables.h"

enum {
    F_DIGIT = 1,
    F_SPACE = 2,
    F_MN = 4,
    F_CI = 8,       /* case-ignorable (Final_Sigma) */
    F_CASED = 16,   /* cased and not case-ignorable */
    F_PUNCT = 32,   /* datatrove's PUNCTUATION: becomes a space */
    F_SPECIAL = 64, /* has a lowercase, a decomposition or a combining class: look it up */
    F_SEP = 128,    /* a decimal separator of NUMBERS_PATTERN */
};

#define NCP 0x110000
static uint8_t *flags;
/* The ASCII fast path's view of a byte b < 0x80, taken from flags: amap[b]
 * is b lowercased, or ' ' when that is punctuation; acls[b] says whether
 * lowercased it is a digit or a separator, and whether amap[b] is a space. */
enum { A_DIGIT = 1, A_SEP = 2, A_SPACE = 4 };
static uint8_t amap[128], acls[128];
static pthread_once_t flags_once = PTHREAD_ONCE_INIT;

/* datatrove's PUNCTUATION string (the controls are added below). */
static const char punctuation[] =
    "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»";
static const char separators[] = ".,،٫⎖⎗⎘";

static void set_ranges(const uint32_t (*r)[2], size_t n, uint8_t f)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t c = r[i][0]; c <= r[i][1]; c++)
            flags[c] |= f;
}

static void set_chars(const char *s, uint8_t f)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    while (n) {
        uint32_t cp = 0;
        size_t k = sl_utf8_seq(p, n, &cp);
        flags[cp] |= f;
        p += k, n -= k;
    }
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void build_flags(void)
{
    flags = sl_xcalloc(NCP, 1);
    set_ranges(tn_digit, NELEM(tn_digit), F_DIGIT);
    set_ranges(tn_space, NELEM(tn_space), F_SPACE);
    set_ranges(tn_mn, NELEM(tn_mn), F_MN);
    set_ranges(tn_case_ignorable, NELEM(tn_case_ignorable), F_CI);
    set_ranges(tn_cased, NELEM(tn_cased), F_CASED);
    set_chars(punctuation, F_PUNCT);
    for (uint32_t c = 0; c < 160; c++)
        if ((c < 9) || (c >= 11 && c < 32) || c >= 127)
            flags[c] |= F_PUNCT;
    set_chars(separators, F_SEP);
    for (size_t i = 0; i < NELEM(tn_lower); i++)
        for (int32_t c = tn_lower[i][0]; c <= tn_lower[i][1]; c++)
            flags[c] |= F_SPECIAL;
    flags[0x130] |= F_SPECIAL;
    flags[0x3A3] |= F_SPECIAL;
    for (size_t i = 0; i < NELEM(tn_decomp); i++)
        flags[tn_decomp[i][0]] |= F_SPECIAL;
    for (uint32_t c = 0xAC00; c <= 0xD7A3; c++)
        flags[c] |= F_SPECIAL;
    for (size_t i = 0; i < NELEM(tn_ccc); i++)
        for (uint32_t c = tn_ccc[i][0]; c <= tn_ccc[i][1]; c++)
            flags[c] |= F_SPECIAL;
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t l = c >= 'A' && c <= 'Z' ? c + 32 : c;
        amap[c] = (uint8_t)((flags[l] & F_PUNCT) ? ' ' : l);
        acls[c] = (uint8_t)(((flags[l] & F_DIGIT) ? A_DIGIT : 0) | ((flags[l] & F_SEP) ? A_SEP : 0) |
                            ((flags[amap[c]] & F_SPACE) ? A_SPACE : 0));
    }
}

static inline const uint8_t *get_flags(void)
{
    pthread_once(&flags_once, build_flags);
    return flags;
}

int sl_tn_isspace(uint32_t cp)
{
    return cp < NCP && (get_flags()[cp] & F_SPACE);
}

const char *sl_textnorm_unicode_version(void)
{
    return "Python " SL_TN_PYTHON ", Unicode " SL_TN_UNICODE ", regex " SL_TN_REGEX;
}

static uint32_t lower_of(uint32_t c)
{
    size_t lo = 0, hi = NELEM(tn_lower);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if ((int32_t)c > tn_lower[m][1])
            lo = m + 1;
        else
            hi = m;
    }
    if (lo < NELEM(tn_lower) && (int32_t)c >= tn_lower[lo][0]) {
        int32_t st = tn_lower[lo][2];
        if (st <= 1 || ((int32_t)c - tn_lower[lo][0]) % st == 0)
            return (uint32_t)((int32_t)c + tn_lower[lo][3]);
    }
    return c;
}

/* The full NFD decomposition of c into d (at most 16); returns its length. */
static size_t decompose(uint32_t c, uint32_t *d)
{
    if (c >= 0xAC00 && c <= 0xD7A3) { /* Hangul syllables, algorithmically */
        uint32_t s = c - 0xAC00, t = s % 28;
        d[0] = 0x1100 + s / (21 * 28);
        d[1] = 0x1161 + (s % (21 * 28)) / 28;
        if (t) {
            d[2] = 0x11A7 + t;
            return 3;
        }
        return 2;
    }
    size_t lo = 0, hi = NELEM(tn_decomp);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (c > tn_decomp[m][0])
            lo = m + 1;
        else
            hi = m;
    }
    if (lo < NELEM(tn_decomp) && tn_decomp[lo][0] == c) {
        uint32_t off = tn_decomp[lo][1] >> 4, n = tn_decomp[lo][1] & 15;
        memcpy(d, tn_decomp_pool + off, n * sizeof *d);
        return n;
    }
    d[0] = c;
    return 1;
}

static uint32_t ccc_of(uint32_t c)
{
    size_t lo = 0, hi = NELEM(tn_ccc);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (c > tn_ccc[m][1])
            lo = m + 1;
        else
            hi = m;
    }
    return lo < NELEM(tn_ccc) && c >= tn_ccc[lo][0] ? tn_ccc[lo][2] : 0;
}

/* Python's handle_capital_sigma: U+03A3 at i of s[0..n) is final when a
 * cased letter comes before it (case-ignorables skipped) and none after. */
static int final_sigma(const uint8_t *fl, const uint32_t *s, size_t n, size_t i)
{
    size_t j = i;
    while (j > 0 && (fl[s[j - 1]] & F_CI))
        j--;
    if (j == 0 || !(fl[s[j - 1]] & F_CASED))
        return 0;
    j = i + 1;
    while (j < n && (fl[s[j]] & F_CI))
        j++;
    return j == n || !(fl[s[j]] & F_CASED);
}

static void grow(sl_textnorm *t, size_t n)
{
    if (n <= t->cap)
        return;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < n)
        cap *= 2;
    t->a = sl_xrealloc(t->a, cap * sizeof *t->a);
    t->b = sl_xrealloc(t->b, cap * sizeof *t->b);
    t->cap = cap;
}

static int is_ascii(const char *s, size_t n)
{
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        acc |= v;
    }
    for (; i < n; i++)
        acc |= (uint8_t)s[i];
    return !(acc & UINT64_C(0x8080808080808080));
}

/* simplify_text of ASCII text in one pass over the bytes, into out: the
 * general path's steps as they act on code points below 0x80 (no
 * lowercasing beyond A-Z, no decomposition, no nonspacing marks), with the
 * same flags. */
static void simplify_ascii(const uint8_t *s, size_t n, sl_buf *out)
{
    sl_buf_reserve(out, n + 1);
    char *o = out->data;
    size_t k = 0;
    int pend = 0;
    const uint64_t H = UINT64_C(0x8080808080808080), L7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
    for (size_t i = 0; i < n;) {
        if (i + 8 <= n) {
            /* 8 bytes of letters and single spaces at once: the letters
             * lowercased (the bytes are ASCII: no carry between bytes) */
            uint64_t x;
            memcpy(&x, s + i, 8);
            uint64_t y = x | UINT64_C(0x2020202020202020), z = x ^ UINT64_C(0x2020202020202020);
            uint64_t let = (y + UINT64_C(0x1F1F1F1F1F1F1F1F)) & ~(y + UINT64_C(0x0505050505050505)) & H;
            uint64_t spc = ~(((z & L7) + L7) | z) & H;
            if ((let | spc) == H && !(spc & (spc << 8)) && (!(spc & 0x80) || (!pend && k > 0))) {
                if (pend)
                    o[k++] = ' ', pend = 0;
                x |= let >> 2;
                memcpy(o + k, &x, 8);
                i += 8;
                if (spc >> 63) /* a space last: pending */
                    k += 7, pend = 1;
                else
                    k += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (acls[c] & A_DIGIT) { /* a number, with one decimal separator, -> "0" */
            for (i++; i < n && (acls[s[i]] & A_DIGIT);)
                i++;
            if (i + 1 < n && (acls[s[i]] & A_SEP) && (acls[s[i + 1]] & A_DIGIT))
                for (i++; i < n && (acls[s[i]] & A_DIGIT);)
                    i++;
            if (pend)
                o[k++] = ' ', pend = 0;
            o[k++] = '0';
        } else { /* branch-free: a space is written and not counted */
            i++;
            size_t sp = acls[c] & A_SPACE ? 1 : 0;
            o[k] = ' ';
            k += (size_t)pend & !sp;
            o[k] = (char)amap[c];
            k += !sp;
            pend = (int)sp & (k > 0);
        }
    }
    out->len = k;
    o[k] = 0;
}

void sl_simplify_text(sl_textnorm *t, const char *s, size_t n, sl_buf *out)
{
    const uint8_t *fl = get_flags();
    sl_buf_clear(out);
    if (is_ascii(s, n)) {
        simplify_ascii((const uint8_t *)s, n, out);
        return;
    }
    /* decode into b (code points <= bytes), lowercase into a (<= 2 per code point) */
    grow(t, 2 * n + 16);
    uint32_t *a = t->a, *b = t->b;
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = sl_utf8_seq((const uint8_t *)s + i, n - i, &cp);
        if (!len) { /* not expected: the readers give well-formed text */
            cp = 0xFFFD;
            len = 1;
        }
        b[m++] = cp;
        i += len;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t c = b[i];
        if (c < 0x80)
            a[k++] = c >= 'A' && c <= 'Z' ? c + 32 : c;
        else if (!(fl[c] & F_SPECIAL))
            a[k++] = c;
        else if (c == 0x130)
            a[k++] = 'i', a[k++] = 0x307;
        else if (c == 0x3A3)
            a[k++] = final_sigma(fl, b, m, i) ? 0x3C2 : 0x3C3;
        else
            a[k++] = lower_of(c);
    }
    /* numbers to "0", punctuation to a space: a -> b */
    m = 0;
    for (size_t i = 0; i < k;) {
        uint32_t c = a[i];
        uint8_t f = fl[c];
        if (f & F_DIGIT) {
            while (i < k && (fl[a[i]] & F_DIGIT))
                i++;
            if (i + 1 < k && (fl[a[i]] & F_SEP) && (fl[a[i + 1]] & F_DIGIT))
                for (i++; i < k && (fl[a[i]] & F_DIGIT);)
                    i++;
            b[m++] = '0';
            continue;
        }
        b[m++] = (f & F_PUNCT) ? ' ' : c;
        i++;
    }
    /* strip, whitespace runs to one space: b -> a */
    size_t lo = 0, hi = m;
    while (lo < hi && (fl[b[lo]] & F_SPACE))
        lo++;
    while (hi > lo && (fl[b[hi - 1]] & F_SPACE))
        hi--;
    k = 0;
    for (size_t i = lo; i < hi;) {
        if (fl[b[i]] & F_SPACE) {
            while (fl[b[i]] & F_SPACE)
                i++;
            a[k++] = ' ';
        } else {
            a[k++] = b[i++];
        }
    }
    /* NFD, then the nonspacing marks dropped: a -> b. The canonical order
     * matters for the marks that stay (a few Mc with a combining class). */
    size_t need = 0;
    for (size_t i = 0; i < k; i++)
        need += (fl[a[i]] & F_SPECIAL) ? 16 : 1;
    if (need > t->cap) {
        grow(t, need);
        a = t->a, b = t->b;
    }
    m = 0;
    int reorder = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t c = a[i];
        if (!(fl[c] & F_SPECIAL)) {
            b[m++] = c;
            continue;
        }
        size_t d = decompose(c, b + m);
        for (size_t j = 0; j < d; j++)
            if (ccc_of(b[m + j]) && !(fl[b[m + j]] & F_MN))
                reorder = 1;
        m += d;
    }
    if (reorder) { /* stable sort of each run of nonzero classes */
        for (size_t i = 1; i < m; i++) {
            uint32_t c = b[i], cc = ccc_of(c);
            if (!cc)
                continue;
            size_t j = i;
            while (j > 0) {
                uint32_t pc = ccc_of(b[j - 1]);
                if (!pc || pc <= cc)
                    break;
                b[j] = b[j - 1];
                j--;
            }
            b[j] = c;
        }
    }
    /* drop Mn and strip */
    k = 0;
    for (size_t i = 0; i < m; i++)
        if (!(fl[b[i]] & F_MN))
            b[k++] = b[i];
    lo = 0, hi = k;
    while (lo < hi && (fl[b[lo]] & F_SPACE))
        lo++;
    while (hi > lo && (fl[b[hi - 1]] & F_SPACE))
        hi--;
    sl_buf_reserve(out, (hi - lo) * 4 + 1);
    for (size_t i = lo; i < hi; i++) {
        uint32_t c = b[i];
        if (c < 0x80)
            out->data[out->len++] = (char)c;
        else
            out->len += sl_utf8_encode(out->data + out->len, c);
    }
    out->data[out->len] = 0;
}

void sl_textnorm_free(sl_textnorm *t)
{
    free(t->a);
    free(t->b);
    memset(t, 0, sizeof *t);
}
