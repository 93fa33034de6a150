/* Normalizers (NFC, NFKC, Lowercase) through ICU, which works on UTF-16:
 * the text is converted, normalized and converted back. Pure ASCII text and
 * text whose code points are all below U+0300 is already in NFC (nothing
 * there decomposes or combines), so NFC skips it without calling ICU; that
 * is nearly all of an English corpus.
 *
 * Unicode versions: HF tokenizers normalizes with the Unicode 9.0 tables of
 * its unicode-normalization-alignments crate (measured: marks added in 10.0
 * or later are not reordered, U+1F16C from 12.0 is not decomposed), so NFC
 * and NFKC here are ICU's filtered to the code points assigned in Unicode
 * 9.0; later characters pass through unchanged, as in HF. Lowercase follows
 * ICU 72 (Unicode 15.0) where HF uses Rust's char::to_lowercase (Unicode
 * 16.0 in its build): the case pairs added in 16.0 differ. */
#include "tokenize/normalize.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uset.h>
#include <unicode/ustring.h>

#include "stream/utf8.h"

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static int load_steps(sl_normalizer *nz, const sl_json *n, int depth, const char *name, sl_err *err)
{
    if (!n || n->type == SL_JSON_NULL)
        return 0;
    const char *t = type_of(n);
    if (!strcmp(t, "Sequence") && depth == 0) {
        const sl_json *list = sl_json_get(n, "normalizers");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: normalizer Sequence has no 'normalizers' array", name);
        for (size_t i = 0; i < list->n; i++)
            if (load_steps(nz, list->kids[i], 1, name, err))
                return -1;
        return 0;
    }
    int kind = !strcmp(t, "NFC")         ? SL_NORM_NFC
               : !strcmp(t, "NFKC")      ? SL_NORM_NFKC
               : !strcmp(t, "Lowercase") ? SL_NORM_LOWER
                                         : 0;
    if (!kind)
        return sl_errf(err, "%s: normalizer '%s' is not supported (supported: NFC, NFKC, Lowercase, Sequence of them)",
                       name, t);
    if (nz->n == SL_NORM_MAX)
        return sl_errf(err, "%s: too many normalizer steps", name);
    nz->step[nz->n++] = kind;
    return 0;
}

int sl_normalizer_load(sl_normalizer *nz, const sl_json *n, const char *name, sl_err *err)
{
    return load_steps(nz, n, 0, name, err);
}

void sl_norm_scratch_free(sl_norm_scratch *sc)
{
    sl_buf_free(&sc->tmp);
    free(sc->u16a);
    free(sc->u16b);
    sc->u16a = sc->u16b = NULL;
    sc->u16_cap = 0;
}

int sl_uc_is_space(uint32_t c)
{
    return u_isUWhiteSpace((UChar32)c);
}

/* HF tests single_word with the Rust regex \w (UTS #18 word character):
 * Alphabetic, marks, decimal digits, connector punctuation, join controls. */
int sl_uc_is_word(uint32_t c)
{
    return u_hasBinaryProperty((UChar32)c, UCHAR_ALPHABETIC) ||
           (U_GET_GC_MASK((UChar32)c) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) ||
           u_hasBinaryProperty((UChar32)c, UCHAR_JOIN_CONTROL);
}

static void reserve_u16(sl_norm_scratch *s, size_t n)
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

static const UNormalizer2 *nf[2]; /* NFC, NFKC filtered to Unicode 9.0 */
static UErrorCode nf_err = U_ZERO_ERROR;

static void open_normalizers(void)
{
    UChar pat[32];
    u_uastrcpy(pat, "[:age=9.0:]");
    USet *set = uset_openPattern(pat, -1, &nf_err);
    if (U_FAILURE(nf_err))
        return;
    uset_freeze(set); /* shared by the normalizers for the life of the process */
    nf[0] = unorm2_openFiltered(unorm2_getNFCInstance(&nf_err), set, &nf_err);
    nf[1] = unorm2_openFiltered(unorm2_getNFKCInstance(&nf_err), set, &nf_err);
}

static const UNormalizer2 *normalizer(int kind, UErrorCode *e)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, open_normalizers);
    if (U_FAILURE(nf_err)) {
        *e = nf_err;
        return NULL;
    }
    return nf[kind == SL_NORM_NFKC];
}

#include "tokenize/lower_table.h"

/* Lowercase as HF does it: character by character (Rust
 * char::to_lowercase), so without context rules (a final capital sigma
 * becomes U+03C3, not U+03C2), with full mappings (U+0130 -> i + U+0307) and
 * HF's Unicode version, through a table generated from HF itself. */
static void lower_utf8(const char *t, size_t n, sl_buf *out)
{
    sl_buf_reserve(out, n);
    for (size_t i = 0; i < n;) {
        uint8_t c = (uint8_t)t[i];
        if (c < 0x80) {
            sl_buf_putc(out, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = sl_utf8_seq((const uint8_t *)t + i, n - i, &cp);
        if (!k) { /* not expected: normalizers get valid UTF-8 */
            sl_buf_putc(out, (char)c);
            i++;
            continue;
        }
        size_t lo = 0, hi = sizeof lower_map / sizeof *lower_map;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (lower_map[mid].cp < cp)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < sizeof lower_map / sizeof *lower_map && lower_map[lo].cp == cp)
            sl_buf_puts(out, lower_map[lo].lower);
        else
            sl_buf_append(out, t + i, k);
        i += k;
    }
}

/* NFC or NFKC of t[0..n) into out, through UTF-16. */
static int nf_utf8(sl_norm_scratch *s, int kind, const char *t, size_t n, sl_buf *out, sl_err *err)
{
    if (n > INT32_MAX / 4)
        return sl_errf(err, "text too long to normalize (%zu bytes)", n);
    reserve_u16(s, n + 1);
    UErrorCode e = U_ZERO_ERROR;
    int32_t len, got;
    u_strFromUTF8((UChar *)s->u16a, (int32_t)s->u16_cap, &len, t, (int32_t)n, &e);
    if (U_FAILURE(e))
        return sl_errf(err, "invalid UTF-8 given to the normalizer: %s", u_errorName(e));
    const UNormalizer2 *nf = normalizer(kind, &e);
    if (!nf)
        return sl_errf(err, "ICU normalizer unavailable: %s", u_errorName(e));
    const uint16_t *res = s->u16a;
    if (unorm2_spanQuickCheckYes(nf, (const UChar *)s->u16a, len, &e) != len || U_FAILURE(e)) {
        for (int attempt = 0; attempt < 2; attempt++) {
            e = U_ZERO_ERROR;
            got = unorm2_normalize(nf, (const UChar *)s->u16a, len, (UChar *)s->u16b, (int32_t)s->u16_cap, &e);
            if (e != U_BUFFER_OVERFLOW_ERROR)
                break;
            reserve_u16(s, (size_t)got + 1);
        }
        if (U_FAILURE(e))
            return sl_errf(err, "normalization failed: %s", u_errorName(e));
        res = s->u16b;
        len = got;
    }
    int32_t need;
    e = U_ZERO_ERROR;
    u_strToUTF8(NULL, 0, &need, (const UChar *)res, len, &e);
    sl_buf_reserve(out, (size_t)need + 1);
    e = U_ZERO_ERROR;
    u_strToUTF8(out->data + out->len, (int32_t)(out->cap - out->len), &need, (const UChar *)res, len, &e);
    if (U_FAILURE(e))
        return sl_errf(err, "normalization output failed: %s", u_errorName(e));
    out->len += (size_t)need;
    out->data[out->len] = 0;
    return 0;
}

int sl_normalize(const sl_normalizer *nz, sl_norm_scratch *s, const char *text, size_t n, sl_buf *out, sl_err *err)
{
    /* Steps run UTF-8 to UTF-8, alternating between out and s->tmp; the
     * last one must land in out. */
    sl_buf_clear(out);
    const char *cur = text;
    size_t cur_n = n;
    sl_buf *dst = out, *other = &s->tmp;
    int wrote = 0;
    for (int i = 0; i < nz->n; i++) {
        int kind = nz->step[i];
        if (kind == SL_NORM_NFC && below_u0300(cur, cur_n))
            continue; /* already NFC */
        sl_buf_clear(dst);
        if (kind == SL_NORM_LOWER)
            lower_utf8(cur, cur_n, dst);
        else if (nf_utf8(s, kind, cur, cur_n, dst, err))
            return -1;
        cur = dst->data;
        cur_n = dst->len;
        sl_buf *t = dst;
        dst = other;
        other = t;
        wrote = 1;
    }
    if (!wrote || cur != out->data) {
        sl_buf tmp = {0};
        sl_buf_append(&tmp, cur, cur_n); /* cur may point into out or tmp */
        sl_buf_clear(out);
        sl_buf_append(out, tmp.data ? tmp.data : "", tmp.len);
        sl_buf_free(&tmp);
    }
    return 0;
}
