/* The o200k pattern (tiktoken's o200k_base) and Mistral's tekken pattern
 * (the same without contractions and with single digits), scanned by hand:
 *   P?U*L+C? | P?U+L*C?   a word: an optional character P that is not CR,
 *                         LF, a letter or a number (so a mark or a space can
 *                         be P), then letters where U = [Lu Lt Lm Lo M] and
 *                         L = [Ll Lm Lo M]: "upper-case" letters followed by
 *                         "lower-case" ones (CamelCase splits before each
 *                         capital); C = (?i:'s|'t|'re|'ve|'m|'ll|'d), o200k only
 *   N{1,3}                up to three digits (tekken: one)
 *    ?O+[\r\n/]*          other characters (not whitespace, letter or number;
 *                         marks are other here), then CR, LF and '/'
 *   S*[\r\n]+             whitespace up to its last CR/LF
 *   S+(?!\S) | S+         whitespace, as in GPT-2's pattern
 * tried in that order at each position, with the backtracking the regex
 * engine does: for the first word form, U* gives back characters until L+
 * can match, so U*L+ ends after the L-run that follows the longest U-run or,
 * when none follows, right after the last character of the U-run that is
 * also in L. The character classes come from a table generated from tiktoken
 * itself (pretok_o200k_classes.h; scripts/gen/gen_o200k_classes.py), whose
 * letter, number and space classes equal HF's table (pretok_classes.h).
 * tests/cli/tok_tiktoken.sh checks the split against tiktoken's ids. */
#include <pthread.h>
#include <string.h>

#include "tokenize/models/bpe_internal.h"
#include "tokenize/pre_tokenizers/pretok_scan.h"
#include "tokenize/tables/pretok_o200k_classes.h"

enum { C_O = 0, C_UP = 1, C_LO = 2, C_LM = 3, C_M = 4, C_N = 5, C_S = 6 };

/* the patterns as tiktoken and Mistral's tekken files write them */
#define O200K_WORDS "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
#define O200K_WORDS2 "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
#define CONTR "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
const char sl_pretok_o200k_pattern[] = O200K_WORDS CONTR
    "|" O200K_WORDS2 CONTR "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char sl_pretok_tekken_pattern[] =
    O200K_WORDS "|" O200K_WORDS2 "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/* for PCRE2: whitespace spelled out as in pretok.c (Oniguruma's and Rust's
 * \s, which PCRE2's is not) */
#define WS "\\t-\\r\\x{85}\\p{Z}"
const char sl_pretok_o200k_pcre2[] =
    O200K_WORDS CONTR "|" O200K_WORDS2 CONTR "|\\p{N}{1,3}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n/]*|[" WS "]*[\\r\\n]+|[" WS
                      "]+(?![^" WS "])|[" WS "]+";
const char sl_pretok_tekken_pcre2[] = O200K_WORDS "|" O200K_WORDS2 "|\\p{N}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n/]*|[" WS
                                                  "]*[\\r\\n]+|[" WS "]+(?![^" WS "])|[" WS "]+";

static uint8_t bmp[0x10000];

static int astral(uint32_t cp)
{
    size_t lo = 0, hi = sizeof o200k_ranges / sizeof *o200k_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < o200k_ranges[mid].first)
            hi = mid;
        else if (cp > o200k_ranges[mid].last)
            lo = mid + 1;
        else
            return o200k_ranges[mid].cls;
    }
    return C_O;
}

static void fill_bmp(void)
{
    /* the ranges are sorted and apart: each written once (the rest is C_O, 0) */
    for (size_t i = 0; i < sizeof o200k_ranges / sizeof *o200k_ranges && o200k_ranges[i].first < 0x10000; i++) {
        uint32_t last = o200k_ranges[i].last < 0xFFFF ? o200k_ranges[i].last : 0xFFFF;
        memset(bmp + o200k_ranges[i].first, o200k_ranges[i].cls, last - o200k_ranges[i].first + 1);
    }
}

/* Filled once, whichever thread gets there first; every caller returns
 * after it is, and sees it whole (pthread_once). */
void sl_pretok_o200k_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_bmp);
}

int sl_pretok_o200k_class(uint32_t cp)
{
    sl_pretok_o200k_init();
    return cp < 0x10000 ? bmp[cp] : astral(cp);
}

#define cls(p, n, i, len) pt_class_at(bmp, astral, C_O, p, n, i, len)

static int in_u(int c)
{
    return c == C_UP || c == C_LM || c == C_M;
}
static int in_l(int c)
{
    return c == C_LO || c == C_LM || c == C_M;
}
static int is_letter(int c)
{
    return c == C_UP || c == C_LO || c == C_LM;
}

/* (?i:...) of one ASCII letter: Rust's simple case folding adds U+017F
 * (long s) to s, nothing to the other letters used here. */
static size_t fold(const uint8_t *p, size_t n, size_t i, char lower)
{
    if (i >= n)
        return 0;
    if (p[i] == (uint8_t)lower || p[i] == (uint8_t)(lower - 32))
        return 1;
    if (lower == 's' && i + 1 < n && p[i] == 0xC5 && p[i + 1] == 0xBF)
        return 2;
    return 0;
}

/* End of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or i. */
static size_t contraction(const uint8_t *p, size_t n, size_t i)
{
    if (i >= n || p[i] != '\'')
        return i;
    size_t j = i + 1, a, b;
    if ((a = fold(p, n, j, 's')) || (a = fold(p, n, j, 't')))
        return j + a;
    if ((a = fold(p, n, j, 'r')) && (b = fold(p, n, j + a, 'e')))
        return j + a + b;
    if ((a = fold(p, n, j, 'v')) && (b = fold(p, n, j + a, 'e')))
        return j + a + b;
    if ((a = fold(p, n, j, 'm')))
        return j + a;
    if ((a = fold(p, n, j, 'l')) && (b = fold(p, n, j + a, 'l')))
        return j + a + b;
    if ((a = fold(p, n, j, 'd')))
        return j + a;
    return i;
}

/* U*L+ from s: its end, or 0 when it does not match. */
static size_t upper_lower(const uint8_t *p, size_t n, size_t s)
{
    size_t k = s, len, last_l = 0, last_len = 0;
    int c = C_O;
    while (k < n && in_u(c = cls(p, n, k, &len))) {
        if (in_l(c))
            last_l = k + 1, last_len = len;
        k += len;
    }
    if (k < n && in_l(c)) { /* the L-run after the U-run */
        while (k < n && in_l(cls(p, n, k, &len)))
            k += len;
        return k;
    }
    return last_l ? last_l - 1 + last_len : 0; /* U* gives back down to its last L character */
}

/* U+L* from s: its end, or 0. */
static size_t upper_then_lower(const uint8_t *p, size_t n, size_t s)
{
    size_t k = s, len;
    while (k < n && in_u(cls(p, n, k, &len)))
        k += len;
    if (k == s)
        return 0;
    while (k < n && in_l(cls(p, n, k, &len)))
        k += len;
    return k;
}

/* The general way: any UTF-8. */
static __attribute__((noinline)) size_t scan_any(const uint8_t *p, size_t n, size_t pos, int contractions,
                                                 int max_digits)
{
    size_t len, len2;
    int c = cls(p, n, pos, &len);
    /* P? is taken first when it can be: the starts to try, in order */
    size_t starts[2], ns = 0;
    if (!is_letter(c) && c != C_N && p[pos] != '\r' && p[pos] != '\n' && pos + len < n)
        starts[ns++] = pos + len;
    starts[ns++] = pos;
    for (int form = 0; form < 2; form++)
        for (size_t i = 0; i < ns; i++) {
            size_t e = form == 0 ? upper_lower(p, n, starts[i]) : upper_then_lower(p, n, starts[i]);
            if (e)
                return contractions ? contraction(p, n, e) : e;
        }
    if (c == C_N) { /* N{1,max_digits} */
        size_t k = pos + len;
        for (int d = 1; d < max_digits && k < n && cls(p, n, k, &len2) == C_N; d++)
            k += len2;
        return k;
    }
    /*  ?O+[\r\n/]* (marks count as O here) */
    size_t o = p[pos] == ' ' && pos + 1 < n ? pos + 1 : pos;
    int oc = cls(p, n, o, &len2);
    if (oc == C_O || oc == C_M) {
        size_t k = o;
        while (k < n && ((oc = cls(p, n, k, &len2)) == C_O || oc == C_M))
            k += len2;
        while (k < n && (p[k] == '\r' || p[k] == '\n' || p[k] == '/'))
            k++;
        return k;
    }
    /* whitespace from pos (c == C_S) */
    size_t k = pos, last = pos, crlf = 0;
    while (k < n && cls(p, n, k, &len2) == C_S) {
        last = k;
        if (p[k] == '\r' || p[k] == '\n')
            crlf = k + 1;
        k += len2;
    }
    if (crlf)
        return crlf;
    if (k == n || last == pos)
        return k;
    return last;
}

/* The fast path (pretok_scan.h), else the general way. */
static inline __attribute__((always_inline)) size_t scan(const uint8_t *p, size_t n, size_t pos, int contractions,
                                                         int max_digits)
{
    size_t e = pt_fast_cl100k(p, n, pos, max_digits, 1, contractions);
    return e ? e : scan_any(p, n, pos, contractions, max_digits);
}

size_t sl_pretok_scan_o200k(const uint8_t *p, size_t n, size_t pos)
{
    return scan(p, n, pos, 1, 3);
}

size_t sl_pretok_scan_tekken(const uint8_t *p, size_t n, size_t pos)
{
    return scan(p, n, pos, 0, 1);
}

/* The piece starts of a window of ASCII text (pretok_scan.h): as the
 * Llama-3 pattern's (CL100K_STARTS in pretok.c), and also before a capital
 * after a small letter (U*L+ | U+L*); with contractions, one right after a
 * letter belongs to the word (no start at it, one after it). Hard: the
 * [\r\n/] run from a '/' after the CR/LF that O+[\r\n/]* takes (the rules
 * would see the '/' as other characters of their own); and so from a '/'
 * after a CR/LF run that holds the window's first byte, whose O may lie
 * before the window. */
#define O200K_STARTS(w, p, n, wb, st, hd, contractions, max_digits)                                                    \
    do {                                                                                                               \
        uint64_t L_ = w.up | w.lo, N_ = w.dig, W_ = w.sp, O_ = w.v & ~(L_ | N_ | W_);                                  \
        uint64_t Os_ = O_ & ~(O_ << 1) & ~(w.spc << 1);                                                                \
        uint64_t SL_ = (L_ & ~(L_ << 1) & ~(((W_ & ~w.crlf) | Os_) << 1)) | (w.up & (w.lo << 1));                      \
        hd = 0;                                                                                                        \
        st = SL_ | Os_ | pt_digit_starts(N_, max_digits, &hd) | pt_ws_starts(&w, W_, O_, &hd, p, n, wb);               \
        /* a run at the window's first byte may follow an O before the window: taken as one O+ takes (so the           \
         * '/' after it is hard, and the scanner decides) */                                                           \
        uint64_t C_ = w.crlf, ab_ = (((C_ + (C_ & (O_ << 1))) ^ C_) & C_) | pt_low_run(C_);                            \
        uint64_t r_ = (C_ | w.slash) & ~ab_, s1_ = w.slash & (ab_ << 1);                                               \
        hd |= ((r_ + s1_) ^ r_) & r_;  /* [\r\n/]* on from a '/' after the CR/LF that O+ takes */                      \
        if (contractions) {            /* not right after another contraction: a start there */                        \
            unsigned e_ = 64, u_ = 64; /* the end of the last one; of the last one after an unknown */                 \
            for (uint64_t a_ = w.apos & (L_ << 1); a_; a_ &= a_ - 1) {                                                 \
                unsigned s_ = (unsigned)__builtin_ctzll(a_), len_ = pt_contraction_len(p, n, wb + s_, 1);              \
                if (s_ < 4 || s_ == u_) { /* one before the window may end here: hard */                               \
                    hd |= (((uint64_t)2 << (len_ ? len_ - 1 : 0)) - 1) << s_;                                          \
                    u_ = len_ ? s_ + len_ : 64;                                                                        \
                } else if (s_ != e_ && len_) {                                                                         \
                    st = pt_piece_bits(st, s_, len_, 0);                                                               \
                    e_ = s_ + len_;                                                                                    \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

#define O200K_W(w, p, n, wb, st, hd) O200K_STARTS(w, p, n, wb, st, hd, 1, 3)
#define TEKKEN_W(w, p, n, wb, st, hd) O200K_STARTS(w, p, n, wb, st, hd, 0, 1)
static size_t piece_o200k(const uint8_t *p, size_t n, size_t pos)
{
    return scan(p, n, pos, 1, 3);
}
static size_t piece_tekken(const uint8_t *p, size_t n, size_t pos)
{
    return scan(p, n, pos, 0, 1);
}

size_t sl_pretok_many_o200k(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY(O200K_W, piece_o200k);
}
#ifdef PT_HAVE_ISA
PT_V4 size_t sl_pretok_many_o200k_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY_L(pt_win_load_v4, O200K_W, piece_o200k);
}
#endif

size_t sl_pretok_many_tekken(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY(TEKKEN_W, piece_tekken);
}
#ifdef PT_HAVE_ISA
PT_V4 size_t sl_pretok_many_tekken_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY_L(pt_win_load_v4, TEKKEN_W, piece_tekken);
}
#endif
