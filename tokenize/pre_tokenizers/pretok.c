/* Pre-tokenization: the GPT-2 regex through PCRE2 (JIT, UTF mode).
 *
 * HF compiles the pattern with Oniguruma, whose \s is U+0009..U+000D,
 * U+0085 and the Z categories. PCRE2's \s differs (it also matches U+180E),
 * so the pattern spells the class out: [\t-\r\x{85}\p{Z}]. The contraction
 * alternatives are the shorter but equivalent form tiktoken uses. */
#include <pthread.h>
#include <string.h>

#include "tokenize/models/bpe_internal.h"
#include "tokenize/pre_tokenizers/hf_regex.h"

#define WS "\\t-\\r\\x{85}\\p{Z}"
const char sl_pretok_gpt2_pcre2[] =
    "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^" WS "\\p{L}\\p{N}]+|[" WS "]+(?![^" WS "])|[" WS "]+";

/* Llama-3's (= cl100k's) and Qwen2's patterns, in the Oniguruma syntax of
 * their tokenizer.json files, and for PCRE2 with the whitespace class
 * spelled out. */
const char sl_pretok_llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char sl_pretok_qwen2_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char sl_pretok_qwen2_pcre2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^" WS
                                     "\\p{L}\\p{N}]+[\\r\\n]*|[" WS "]*[\\r\\n]+|[" WS "]+(?![^" WS "])|[" WS "]+";
const char sl_pretok_llama3_pcre2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^" WS
                                      "\\p{L}\\p{N}]+[\\r\\n]*|[" WS "]*[\\r\\n]+|[" WS "]+(?![^" WS "])|[" WS "]+";

static void init_classes(void);

void sl_bpe_set_scanner(sl_bpe *b, int on)
{
    /* a pattern without a PCRE2 form (Falcon's) is always scanned */
    b->scan = b->scanner && (on || !b->re);
}

int sl_pretok_compile(sl_bpe *b, sl_err *err)
{
    init_classes();
    if (b->pretok == SL_PRETOK_GPT2_DIGITS)
        return sl_pretok_compile_digits(b, err);
    if (b->pretok == SL_PRETOK_FALCON)
        return sl_pretok_compile_falcon(b, err);
    if (!b->use_regex)
        return 0;
    int ec;
    PCRE2_SIZE eo;
    const char *pat = b->pretok == SL_PRETOK_LLAMA3   ? sl_pretok_llama3_pcre2
                      : b->pretok == SL_PRETOK_QWEN2  ? sl_pretok_qwen2_pcre2
                      : b->pretok == SL_PRETOK_O200K  ? sl_pretok_o200k_pcre2
                      : b->pretok == SL_PRETOK_TEKKEN ? sl_pretok_tekken_pcre2
                                                      : sl_pretok_gpt2_pcre2;
    b->scanner = b->pretok == SL_PRETOK_LLAMA3   ? sl_pretok_scan_llama3
                 : b->pretok == SL_PRETOK_QWEN2  ? sl_pretok_scan_qwen2
                 : b->pretok == SL_PRETOK_O200K  ? sl_pretok_scan_o200k
                 : b->pretok == SL_PRETOK_TEKKEN ? sl_pretok_scan_tekken
                                                 : sl_pretok_scan;
    b->scan_many = sl_pretok_many_isa(b->pretok, -1);
    if (b->pretok == SL_PRETOK_O200K || b->pretok == SL_PRETOK_TEKKEN)
        sl_pretok_o200k_init();
    b->re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!b->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sl_errf(err, "internal: pre-tokenizer regex at %zu: %s", (size_t)eo, (char *)msg);
    }
    b->jit = sl_pcre2_jit_wanted() && pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE) == 0;
    b->scan = 1;
    return 0;
}

int sl_pretok_compile_regex(sl_bpe *b, const char *pattern, const char *name, sl_err *err)
{
    int ec;
    PCRE2_SIZE eo;
    b->scanner = NULL;
    b->scan_many = NULL;
    b->scan = 0;
    b->use_regex = 1;
    b->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &ec,
                          &eo, NULL);
    if (!b->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sl_errf(err, "%s: pattern at offset %zu: %s", name, (size_t)eo, (char *)msg);
    }
    b->jit = sl_pcre2_jit_wanted() && pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE) == 0;
    return 0;
}

/* --- the same split by hand ---------------------------------------------
 * The GPT-2 pattern is simple enough to scan without a regex engine:
 *   's|'t|'re|'ve|'m|'ll|'d        contractions (case-sensitive)
 *   ' '? L+ | ' '? N+ | ' '? O+    letters, numbers, other (not L/N/space)
 *   S+(?!\S) | S+                  whitespace; before a non-space character
 *                                  the last whitespace character is left to
 *                                  start the next piece
 * tried in that order at each position. The character classes come from a
 * table (pretok_classes.h) generated from HF tokenizers itself: its
 * Oniguruma knows Unicode 16.0, while PCRE2 10.42 knows 14.0 and ICU 72
 * 15.0, so only a table gives HF's split for every code point.
 * test_tokenize_bpe_pretok checks the scanner against that table and against the
 * PCRE2 pattern (on the code points PCRE2 knows). */
#include "tokenize/pre_tokenizers/pretok_scan.h"
#include "tokenize/tables/pretok_classes.h"

enum { CL_L = 1, CL_N = 2, CL_S = 3, CL_O = 4 };

/* The Basic Multilingual Plane as a byte table, filled from the ranges when
 * a tokenizer is loaded; above it, a binary search over the ranges. */
static uint8_t bmp_class[0x10000];

static int astral_class(uint32_t cp)
{
    size_t lo = 0, hi = sizeof pretok_ranges / sizeof *pretok_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < pretok_ranges[mid].first)
            hi = mid;
        else if (cp > pretok_ranges[mid].last)
            lo = mid + 1;
        else
            return pretok_ranges[mid].cls;
    }
    return CL_O;
}

static void fill_classes(void)
{
    /* the ranges are sorted and apart: each written once over CL_O */
    memset(bmp_class, CL_O, sizeof bmp_class);
    for (size_t i = 0; i < sizeof pretok_ranges / sizeof *pretok_ranges && pretok_ranges[i].first < 0x10000; i++) {
        uint32_t first = pretok_ranges[i].first, last = pretok_ranges[i].last < 0xFFFF ? pretok_ranges[i].last : 0xFFFF;
        memset(bmp_class + first, pretok_ranges[i].cls, last - first + 1);
    }
}

/* The table is filled once, whichever thread gets there first; every
 * caller returns after it is, and sees it whole (pthread_once). The
 * scanners read it with no check: a tokenizer's load calls this. */
static void init_classes(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_classes);
}

int sl_pretok_class(uint32_t cp)
{
    init_classes();
    return cp < 0x10000 ? bmp_class[cp] : astral_class(cp);
}

/* Class of the character at p[i] (valid UTF-8) and its length. */
#define class_at(p, n, i, len) pt_class_at(bmp_class, astral_class, CL_O, p, n, i, len)

/* The ASCII fast path of scan_gpt2 (pretok_scan.h): the end of the piece
 * at pos, or 0 when the general way must take it. */
static inline __attribute__((always_inline)) size_t fast_gpt2(const uint8_t *p, size_t n, size_t pos)
{
    if (pos + 1 >= n)
        return 0;
    unsigned t0 = sl_pf[p[pos]], t1 = sl_pf[p[pos + 1]];
    if (t0 & (PF_X | PF_APOS))
        return 0;
    if (p[pos] == ' ') {
        if (t1 & PF_X)
            return 0;
        if (!(t1 & PF_SP)) /* ' '? and a run of the next character's class */
            t0 = t1;
    }
    size_t k;
    if (t0 & PF_L)
        k = pf_run(p, n, pos + 1, PF_L);
    else if (t0 & PF_OTH)
        k = pf_run(p, n, pos + 1, PF_OTH);
    else if (t0 & PF_DIG)
        k = pf_run(p, n, pos + 1, PF_DIG);
    else { /* whitespace from pos: S+(?!\S) | S+ */
        k = pf_run(p, n, pos + 1, PF_SP);
        if (k < n && p[k] >= 0x80)
            return 0;
        return k == n || k - pos == 1 ? k : k - 1;
    }
    return k < n && p[k] >= 0x80 ? 0 : k;
}

/* The general way: any UTF-8. */
static __attribute__((noinline)) size_t scan_gpt2(const uint8_t *p, size_t n, size_t pos)
{
    if (p[pos] == '\'' && pos + 1 < n) {
        uint8_t c = p[pos + 1];
        if (c == 's' || c == 'd' || c == 'm' || c == 't')
            return pos + 2;
        if (pos + 2 < n &&
            ((c == 'l' && p[pos + 2] == 'l') || (c == 'v' && p[pos + 2] == 'e') || (c == 'r' && p[pos + 2] == 'e')))
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

static inline __attribute__((always_inline)) size_t piece_gpt2(const uint8_t *p, size_t n, size_t pos)
{
    size_t e = fast_gpt2(p, n, pos);
    return e ? e : scan_gpt2(p, n, pos);
}

size_t sl_pretok_scan(const uint8_t *p, size_t n, size_t pos)
{
    return piece_gpt2(p, n, pos);
}

/* The scan_many form of a scanner: its loop with the scanner inlined. */
#define SL_SCAN_MANY(name, ...)                                                                                        \
    size_t name(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)                                      \
    {                                                                                                                  \
        size_t m = 0;                                                                                                  \
        while (m < cap && pos < n) {                                                                                   \
            pos = __VA_ARGS__;                                                                                         \
            ends[m++] = pos;                                                                                           \
        }                                                                                                              \
        return m;                                                                                                      \
    }

/* The piece starts of a window of ASCII text (pretok_scan.h), GPT-2's
 * pattern: a start where the class (letter, number, whitespace, other)
 * changes, except after a space that the next piece takes (' ' before a
 * letter, number or other character: the space is the start); at the last
 * whitespace character before a non-space (S+(?!\S) leaves it); and a
 * contraction at an apostrophe that starts a piece is a piece of its own. */
#define GPT2_STARTS(w, p, n, wb, st, hd)                                                                               \
    do {                                                                                                               \
        uint64_t L_ = w.up | w.lo, N_ = w.dig, W_ = w.sp, O_ = w.v & ~(L_ | N_ | W_);                                  \
        uint64_t B_ = (L_ & ~(L_ << 1)) | (N_ & ~(N_ << 1)) | (O_ & ~(O_ << 1)) | (W_ & ~(W_ << 1));                   \
        uint64_t J_ = w.spc & ((L_ | N_ | O_) >> 1);                                                                   \
        uint64_t E_ = W_ & ~((W_ | ~w.v) >> 1);                                                                        \
        st = (B_ | E_) & ~(J_ << 1);                                                                                   \
        hd = 0;                                                                                                        \
        for (uint64_t a_ = w.apos & st & ~(uint64_t)1; a_; a_ &= a_ - 1)                                               \
            st = pt_piece_bits(st, (unsigned)__builtin_ctzll(a_),                                                      \
                               pt_contraction_len(p, n, wb + (unsigned)__builtin_ctzll(a_), 0), 1);                    \
    } while (0)

size_t sl_pretok_many_gpt2(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY(GPT2_STARTS, piece_gpt2);
}
#ifdef PT_HAVE_ISA
PT_V4 size_t sl_pretok_many_gpt2_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY_L(pt_win_load_v4, GPT2_STARTS, piece_gpt2);
}
#endif

/* --- the Llama-3 and Qwen2 patterns by hand -------------------------------
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)   contractions, any case; Oniguruma's case
 *                                  folding also matches U+017F (long s) for s
 *   [^\r\nLN]?L+                   letters after at most one character that
 *                                  is not CR, LF, a letter or a number
 *   N{1,3}                         up to three digits (Qwen2: one)
 *    ?O+[\r\n]*                    other characters, then any CR/LF
 *   S*[\r\n]+                      whitespace up to its last CR/LF
 *   S+(?!\S) | S+                  whitespace, as in GPT-2's pattern
 * tried in that order; the classes are the table's (HF's). Checked against
 * HF's own splits in test_tokenize_bpe_split. */
static int fold_is(const uint8_t *p, size_t n, size_t i, char lower, size_t *len)
{
    if (i >= n)
        return 0;
    *len = 1;
    if (p[i] == (uint8_t)lower || p[i] == (uint8_t)(lower - 32))
        return 1;
    if (lower == 's' && i + 1 < n && p[i] == 0xC5 && p[i + 1] == 0xBF) { /* U+017F */
        *len = 2;
        return 1;
    }
    return 0;
}

static size_t contraction(const uint8_t *p, size_t n, size_t pos)
{
    if (p[pos] != '\'')
        return 0;
    size_t i = pos + 1, a, b;
    static const char one[] = {'s', 't'};
    for (int k = 0; k < 2; k++)
        if (fold_is(p, n, i, one[k], &a))
            return i + a;
    if (fold_is(p, n, i, 'r', &a) && fold_is(p, n, i + a, 'e', &b))
        return i + a + b;
    if (fold_is(p, n, i, 'v', &a) && fold_is(p, n, i + a, 'e', &b))
        return i + a + b;
    if (fold_is(p, n, i, 'm', &a))
        return i + a;
    if (fold_is(p, n, i, 'l', &a) && fold_is(p, n, i + a, 'l', &b))
        return i + a + b;
    if (fold_is(p, n, i, 'd', &a))
        return i + a;
    return 0;
}

static int is_crlf(uint8_t c)
{
    return c == '\r' || c == '\n';
}

static __attribute__((noinline)) size_t scan_cl100k(const uint8_t *p, size_t n, size_t pos, int max_digits)
{
    size_t e = contraction(p, n, pos), len, len2;
    if (e)
        return e;
    int cl = class_at(p, n, pos, &len);
    /* [^\r\nLN]?L+ */
    size_t j = pos;
    if (cl != CL_L && cl != CL_N && !is_crlf(p[pos]) && pos + len < n && class_at(p, n, pos + len, &len2) == CL_L)
        j = pos + len;
    if (j > pos || cl == CL_L) {
        size_t k = j;
        while (k < n && class_at(p, n, k, &len2) == CL_L)
            k += len2;
        return k;
    }
    if (cl == CL_N) { /* N{1,max_digits} */
        size_t k = pos + len;
        for (int d = 1; d < max_digits && k < n && class_at(p, n, k, &len2) == CL_N; d++)
            k += len2;
        return k;
    }
    /*  ?O+[\r\n]* */
    size_t o = p[pos] == ' ' && pos + 1 < n ? pos + 1 : pos;
    if (class_at(p, n, o, &len2) == CL_O) {
        size_t k = o;
        while (k < n && class_at(p, n, k, &len2) == CL_O)
            k += len2;
        while (k < n && is_crlf(p[k]))
            k++;
        return k;
    }
    /* whitespace from pos (cl == CL_S) */
    size_t k = pos, last = pos, crlf = 0;
    while (k < n && class_at(p, n, k, &len2) == CL_S) {
        last = k;
        if (is_crlf(p[k]))
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
static inline __attribute__((always_inline)) size_t piece_cl100k(const uint8_t *p, size_t n, size_t pos, int max_digits)
{
    size_t e = pt_fast_cl100k(p, n, pos, max_digits, 0, 0);
    return e ? e : scan_cl100k(p, n, pos, max_digits);
}

size_t sl_pretok_scan_llama3(const uint8_t *p, size_t n, size_t pos)
{
    return piece_cl100k(p, n, pos, 3);
}

size_t sl_pretok_scan_qwen2(const uint8_t *p, size_t n, size_t pos)
{
    return piece_cl100k(p, n, pos, 1);
}

/* The piece starts of a window of ASCII text (pretok_scan.h), the Llama-3
 * (max_digits 3) and Qwen2 (1) patterns, where the rules are local:
 *  - the first letter of a run, unless after a whitespace character other
 *    than CR/LF, or after an "other" character that starts a piece, which
 *    [^\r\nLN]?L+ takes;
 *  - the first of a run of other characters, unless after a space ( ?O+);
 *  - digits: pt_digit_starts; whitespace: pt_ws_starts;
 *  - and a contraction at an apostrophe that starts a piece. */
#define CL100K_STARTS(w, p, n, wb, st, hd, max_digits)                                                                 \
    do {                                                                                                               \
        uint64_t L_ = w.up | w.lo, N_ = w.dig, W_ = w.sp, O_ = w.v & ~(L_ | N_ | W_);                                  \
        uint64_t Os_ = O_ & ~(O_ << 1) & ~(w.spc << 1);                                                                \
        uint64_t SL_ = L_ & ~(L_ << 1) & ~(((W_ & ~w.crlf) | Os_) << 1);                                               \
        hd = 0;                                                                                                        \
        st = SL_ | Os_ | pt_digit_starts(N_, max_digits, &hd) | pt_ws_starts(&w, W_, O_, &hd, p, n, wb);               \
        for (uint64_t a_ = w.apos & Os_ & ~(uint64_t)1; a_; a_ &= a_ - 1)                                              \
            st = pt_piece_bits(st, (unsigned)__builtin_ctzll(a_),                                                      \
                               pt_contraction_len(p, n, wb + (unsigned)__builtin_ctzll(a_), 1), 1);                    \
    } while (0)

#define LLAMA3_STARTS(w, p, n, wb, st, hd) CL100K_STARTS(w, p, n, wb, st, hd, 3)
#define QWEN2_STARTS(w, p, n, wb, st, hd) CL100K_STARTS(w, p, n, wb, st, hd, 1)
static size_t piece_llama3(const uint8_t *p, size_t n, size_t pos)
{
    return piece_cl100k(p, n, pos, 3);
}
static size_t piece_qwen2(const uint8_t *p, size_t n, size_t pos)
{
    return piece_cl100k(p, n, pos, 1);
}

size_t sl_pretok_many_llama3(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY(LLAMA3_STARTS, piece_llama3);
}
#ifdef PT_HAVE_ISA
PT_V4 size_t sl_pretok_many_llama3_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY_L(pt_win_load_v4, LLAMA3_STARTS, piece_llama3);
}
#endif

size_t sl_pretok_many_qwen2(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY(QWEN2_STARTS, piece_qwen2);
}
#ifdef PT_HAVE_ISA
PT_V4 size_t sl_pretok_many_qwen2_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap)
{
    PT_MANY_L(pt_win_load_v4, QWEN2_STARTS, piece_qwen2);
}
#endif

sl_pretok_many_fn sl_pretok_many_isa(int pretok, int isa)
{
    static const sl_pretok_many_fn base[] = {sl_pretok_many_gpt2, sl_pretok_many_llama3, sl_pretok_many_qwen2,
                                             sl_pretok_many_o200k, sl_pretok_many_tekken};
    if (pretok < 0 || pretok > SL_PRETOK_TEKKEN)
        return NULL;
#ifdef PT_HAVE_ISA
    static const sl_pretok_many_fn v4[] = {sl_pretok_many_gpt2_v4, sl_pretok_many_llama3_v4, sl_pretok_many_qwen2_v4,
                                           sl_pretok_many_o200k_v4, sl_pretok_many_tekken_v4};
    int v4_ok = __builtin_cpu_supports("avx512bw");
    if (isa < 0)
        isa = v4_ok ? 4 : 0;
    if (isa == 4)
        return v4_ok ? v4[pretok] : NULL;
#else
    if (isa < 0)
        isa = 0;
#endif
    return isa == 0 ? base[pretok] : NULL;
}

/* --- Digits(individual_digits) then ByteLevel's GPT-2 regex -----------------
 * StarCoder / StarCoder2, Refact (and Command-R, SmolLM): HF first splits off
 * every numeric character (Rust's char::is_numeric: the table's numbers, plus
 * 13 numbers of Unicode 17 that the table, from Oniguruma's Unicode 16, has as
 * other), then runs GPT-2's regex inside each stretch between them. Scanned
 * as GPT-2's pattern in which a number is a piece of its own, never follows
 * the optional space, and ends a whitespace run as the end of the text does:
 *   's|'t|'re|'ve|'m|'ll|'d | N | ' '? L+ | ' '? O+ | S+(?!\S) with N as end | S+
 * Checked against HF's ids on llama.cpp's starcoder and refact vectors and
 * on random strings (tests/cli/llamacpp_vectors.sh). */
static const char DIGITS_PCRE2[] =
    "'(?:[sdmt]|ll|ve|re)|\\p{N}| ?\\p{L}+| ?[^" WS "\\p{L}\\p{N}]+|[" WS "]+(?![^" WS "\\p{N}])|[" WS "]+";

static int digits_class_at(const uint8_t *p, size_t n, size_t i, size_t *len)
{
    int cl = class_at(p, n, i, len);
    if (cl == CL_O && *len == 4) {
        uint32_t cp = 0;
        sl_utf8_seq(p + i, n - i, &cp);
        if ((cp >= 0x11DE0 && cp <= 0x11DE9) || (cp >= 0x16FF4 && cp <= 0x16FF6))
            return CL_N;
    }
    return cl;
}

size_t sl_pretok_scan_digits(const uint8_t *p, size_t n, size_t pos)
{
    size_t len, len2;
    int cl = digits_class_at(p, n, pos, &len);
    if (cl == CL_N)
        return pos + len;
    if (p[pos] == '\'' && pos + 1 < n) {
        uint8_t c = p[pos + 1];
        if (c == 's' || c == 'd' || c == 'm' || c == 't')
            return pos + 2;
        if (pos + 2 < n &&
            ((c == 'l' && p[pos + 2] == 'l') || (c == 'v' && p[pos + 2] == 'e') || (c == 'r' && p[pos + 2] == 'e')))
            return pos + 3;
    }
    size_t j = pos;
    if (p[pos] == ' ' && pos + 1 < n) {
        j = pos + 1;
        cl = digits_class_at(p, n, j, &len);
    }
    if (cl == CL_L || cl == CL_O) { /* a run of one class, after an optional space */
        size_t k = j + len;
        while (k < n && digits_class_at(p, n, k, &len2) == cl)
            k += len2;
        return k;
    }
    /* whitespace from pos; a number after it ends it as the text's end does */
    size_t k = pos, last = pos;
    while (k < n && (cl = digits_class_at(p, n, k, &len2)) == CL_S) {
        last = k;
        k += len2;
    }
    if (k == n || last == pos || cl == CL_N)
        return k;
    return last;
}

int sl_pretok_compile_digits(sl_bpe *b, sl_err *err)
{
    int ec;
    PCRE2_SIZE eo;
    b->scanner = sl_pretok_scan_digits;
    b->scan_many = NULL;
    b->re = pcre2_compile((PCRE2_SPTR)DIGITS_PCRE2, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!b->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sl_errf(err, "internal: pre-tokenizer regex at %zu: %s", (size_t)eo, (char *)msg);
    }
    b->jit = sl_pcre2_jit_wanted() && pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE) == 0;
    b->scan = 1;
    return 0;
}

/* --- Falcon: Punctuation(contiguous), ByteLevel, Digits, Split [0-9]{3} ----
 * HF splits the text into runs of punctuation (its own table, older Unicode
 * than the class table's: pretok_punct.h) and runs of anything else, and
 * runs GPT-2's regex inside each run (no contraction can match: the
 * apostrophe is punctuation; a whitespace run before punctuation ends as at
 * the end of the text). Digits and Split come after ByteLevel, so they see
 * the byte-level alphabet: Digits (not individual) parts each regex piece
 * into runs of "numeric" bytes (the ASCII digits and 0xB2 0xB3 0xB9 0xBC
 * 0xBD 0xBE, whose byte-level characters are ² ³ ¹ ¼ ½ ¾) and runs of the
 * other bytes, also inside a character ("ü" = C3 BC gives C3 | BC); Split
 * then isolates each [0-9]{3}, left to right. A scan that starts inside a
 * character belongs to the regex piece of that character, which runs to the
 * end of its class run, as from any other point of the piece. Checked
 * against HF's ids on llama.cpp's falcon vectors and on random strings
 * (tests/cli/llamacpp_vectors.sh). There is no PCRE2 form: Falcon files are
 * always scanned. */
#include "tokenize/tables/pretok_punct.h"

enum { CL_P = 5 };

static int in_punct_table(uint32_t cp)
{
    size_t lo = 0, hi = sizeof pretok_punct / sizeof *pretok_punct;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < pretok_punct[mid].first)
            hi = mid;
        else if (cp > pretok_punct[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* The class table's class, with punctuation (all of it "other" there) as
 * CL_P. */
static int falcon_class_at(const uint8_t *p, size_t n, size_t i, size_t *len)
{
    int cl = class_at(p, n, i, len);
    if (cl != CL_O)
        return cl;
    if (p[i] < 0x80)
        return in_punct_table(p[i]) ? CL_P : CL_O;
    uint32_t cp = 0;
    sl_utf8_seq(p + i, n - i, &cp);
    return in_punct_table(cp) ? CL_P : CL_O;
}

static int numeric_byte(uint8_t c)
{
    return (c >= '0' && c <= '9') || c == 0xB2 || c == 0xB3 || c == 0xB9 || c == 0xBC || c == 0xBD || c == 0xBE;
}

static int ascii_digit3(const uint8_t *p, size_t n, size_t i)
{
    return i + 3 <= n && p[i] >= '0' && p[i] <= '9' && p[i + 1] >= '0' && p[i + 1] <= '9' && p[i + 2] >= '0' &&
           p[i + 2] <= '9';
}

size_t sl_pretok_scan_falcon(const uint8_t *p, size_t n, size_t pos)
{
    size_t len, len2, k, j = pos;
    int cl;
    if ((p[pos] & 0xC0) == 0x80) { /* inside a character: the piece of its class run */
        size_t c0 = pos;
        while (c0 > 0 && pos - c0 < 3 && (p[c0] & 0xC0) == 0x80)
            c0--;
        cl = falcon_class_at(p, n, c0, &len);
    } else {
        cl = falcon_class_at(p, n, pos, &len);
        if (p[pos] == ' ' && pos + 1 < n) {
            int c2 = falcon_class_at(p, n, pos + 1, &len2);
            if (c2 == CL_L || c2 == CL_N || c2 == CL_O)
                j = pos + 1, cl = c2;
        }
    }
    if (cl == CL_S) { /* whitespace (no numeric bytes): up to punctuation as to the end */
        size_t last = pos;
        for (k = pos; k < n && (cl = falcon_class_at(p, n, k, &len2)) == CL_S; k += len2)
            last = k;
        return k == n || last == pos || cl == CL_P ? k : last;
    }
    /* ' '? and a run of class cl, cut by Digits into runs of numeric and other
     * bytes, and by Split before and after each [0-9]{3} */
    int num = numeric_byte(p[pos]);
    if (num && ascii_digit3(p, n, pos))
        return pos + 3;
    for (k = pos + 1; k < n; k++) {
        if (k >= j && (p[k] & 0xC0) != 0x80 && falcon_class_at(p, n, k, &len2) != cl)
            break;
        if (numeric_byte(p[k]) != num || (num && ascii_digit3(p, n, k)))
            break;
    }
    return k;
}

int sl_pretok_compile_falcon(sl_bpe *b, sl_err *err)
{
    (void)err;
    b->scanner = sl_pretok_scan_falcon;
    b->scan_many = NULL;
    b->scan = 1;
    return 0;
}
