/* Normalizers (NFC, NFKC, Lowercase) through ICU, which works on UTF-16:
 * the text is converted, normalized and converted back. Pure ASCII text and
 * text whose code points are all below U+0300 is already in NFC (nothing
 * there decomposes or combines), so NFC skips it without calling ICU; that
 * is nearly all of an English corpus. */
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "tokenize/bpe_internal.h"

int sl_uc_is_space(uint32_t c) { return u_isUWhiteSpace((UChar32)c); }

/* HF tests single_word with the Rust regex \w (UTS #18 word character):
 * Alphabetic, marks, decimal digits, connector punctuation, join controls. */
int sl_uc_is_word(uint32_t c)
{
    return u_hasBinaryProperty((UChar32)c, UCHAR_ALPHABETIC) ||
           (U_GET_GC_MASK((UChar32)c) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) ||
           u_hasBinaryProperty((UChar32)c, UCHAR_JOIN_CONTROL);
}

static void reserve_u16(sl_bpe_state *s, size_t n)
{
    if (n <= s->u16_cap)
        return;
    size_t cap = s->u16_cap ? s->u16_cap : 1024;
    while (cap < n)
        cap *= 2;
    s->u16a = sl_xrealloc(s->u16a, cap * sizeof *s->u16a);
    s->u16b = sl_xrealloc(s->u16b, cap * sizeof *s->u16b);
    s->u16_cap = cap;
}

static int below_u0300(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((uint8_t)s[i] >= 0xCC)
            return 0;
    return 1;
}

/* HF lowercases character by character (Rust char::to_lowercase), so
 * without context rules: a final capital sigma becomes U+03C3, not the
 * final form U+03C2 that a whole-string u_strToLower would give. Each code
 * point is lowercased on its own (full mappings such as U+0130 -> i +
 * U+0307 are kept). Writes s->u16b; returns the length (or the needed
 * length with U_BUFFER_OVERFLOW_ERROR). */
static int32_t lower_each(sl_bpe_state *s, int32_t len, UErrorCode *e)
{
    int32_t cap = (int32_t)s->u16_cap, o = 0;
    for (int32_t i = 0; i < len;) {
        int32_t k = U16_IS_LEAD(s->u16a[i]) && i + 1 < len && U16_IS_TRAIL(s->u16a[i + 1]) ? 2 : 1;
        UChar tmp[8];
        UErrorCode e1 = U_ZERO_ERROR;
        int32_t got = u_strToLower(tmp, 8, (const UChar *)s->u16a + i, k, "", &e1);
        if (U_FAILURE(e1)) {
            *e = e1;
            return 0;
        }
        if (o + got <= cap)
            memcpy(s->u16b + o, tmp, (size_t)got * sizeof *tmp);
        o += got;
        i += k;
    }
    if (o > cap)
        *e = U_BUFFER_OVERFLOW_ERROR;
    return o;
}

/* One step on UTF-16 in s->u16a (length *len); result back in s->u16a. */
static int step(sl_bpe_state *s, int kind, int32_t *len, sl_err *err)
{
    UErrorCode e = U_ZERO_ERROR;
    int32_t cap = (int32_t)s->u16_cap, got;
    for (int attempt = 0; attempt < 2; attempt++) {
        e = U_ZERO_ERROR;
        if (kind == SL_NORM_LOWER) {
            got = lower_each(s, *len, &e);
        } else {
            const UNormalizer2 *nf = kind == SL_NORM_NFC ? unorm2_getNFCInstance(&e) : unorm2_getNFKCInstance(&e);
            if (U_FAILURE(e))
                return sl_errf(err, "ICU normalizer unavailable: %s", u_errorName(e));
            if (kind == SL_NORM_NFC && unorm2_spanQuickCheckYes(nf, (const UChar *)s->u16a, *len, &e) == *len &&
                U_SUCCESS(e))
                return 0;
            e = U_ZERO_ERROR;
            got = unorm2_normalize(nf, (const UChar *)s->u16a, *len, (UChar *)s->u16b, cap, &e);
        }
        if (e == U_BUFFER_OVERFLOW_ERROR) {
            reserve_u16(s, (size_t)got + 1);
            cap = (int32_t)s->u16_cap;
            continue;
        }
        break;
    }
    if (U_FAILURE(e))
        return sl_errf(err, "normalization failed: %s", u_errorName(e));
    uint16_t *t = s->u16a;
    s->u16a = s->u16b;
    s->u16b = t;
    *len = got;
    return 0;
}

int sl_normalize(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_buf *out, sl_err *err)
{
    sl_buf_clear(out);
    int easy = 1; /* every step is a no-op on this text */
    for (int i = 0; i < b->n_norm; i++)
        if (b->norm[i] != SL_NORM_NFC || !below_u0300(text, n))
            easy = 0;
    if (easy || n > INT32_MAX / 4) {
        if (!easy)
            return sl_errf(err, "text too long to normalize (%zu bytes)", n);
        sl_buf_append(out, text, n);
        return 0;
    }
    reserve_u16(s, n + 1);
    UErrorCode e = U_ZERO_ERROR;
    int32_t len;
    u_strFromUTF8((UChar *)s->u16a, (int32_t)s->u16_cap, &len, text, (int32_t)n, &e);
    if (U_FAILURE(e))
        return sl_errf(err, "invalid UTF-8 given to the normalizer: %s", u_errorName(e));
    for (int i = 0; i < b->n_norm; i++)
        if (step(s, b->norm[i], &len, err))
            return -1;
    int32_t need;
    e = U_ZERO_ERROR;
    u_strToUTF8(NULL, 0, &need, (const UChar *)s->u16a, len, &e);
    sl_buf_reserve(out, (size_t)need + 1);
    e = U_ZERO_ERROR;
    u_strToUTF8(out->data, (int32_t)out->cap, &need, (const UChar *)s->u16a, len, &e);
    if (U_FAILURE(e))
        return sl_errf(err, "normalization output failed: %s", u_errorName(e));
    out->len = (size_t)need;
    out->data[out->len] = 0;
    return 0;
}
