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
 * 16.0 in its build): the case pairs added in 16.0 differ.
 *
 * Precompiled is SentencePiece's charsmap applied HF's way
 * (sl_precompiled_hf: per grapheme cluster, ASCII through a table).
 *
 * Alignment: HF keeps, for each normalized byte, the range of the original
 * it comes from, and a Metaspace "first" prepends only to a piece whose
 * first byte comes from offset 0. sl_normalize follows that for the start
 * only: z is the number of leading bytes of the text so far that HF aligns
 * with the input's first character (0: the start was removed). A step that
 * maps characters (or clusters) keeps what the first z bytes become (found
 * by running the step on them alone), so a filter that removes the start
 * (StripAccents, BertNormalizer's cleaning) cuts it; Strip removes its
 * leading whitespace from z; Replace aligns a replacement with the last
 * character of its match; Prepend aligns with the first character; and
 * Precompiled aligns its output with its input in order (HF's code), so a
 * start it removes does not cut.
 */
#include "tokenize/normalizers/normalize.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uset.h>
#include <unicode/ustring.h>

#include "base/utf8.h"
#include "tokenize/normalizers/hf_classes.h"

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static int get_flag(const sl_json *v, const char *key, int def)
{
    int b;
    return sl_json_get_bool(v, key, &b) == 0 ? b : def;
}

static int b64val(int c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

/* Standard base64 (padding optional) into out; -1 at the first bad
 * character (its index in *bad). */
static int b64_decode(const char *s, size_t n, sl_buf *out, size_t *bad)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t i = 0;
    for (; i < n && s[i] != '='; i++) {
        int v = b64val((uint8_t)s[i]);
        if (v < 0) {
            *bad = i;
            return -1;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            sl_buf_putc(out, (char)(acc >> bits));
        }
    }
    for (; i < n; i++)
        if (s[i] != '=') {
            *bad = i;
            return -1;
        }
    return 0;
}

/* The Precompiled normalizer's charsmap (base64 in the file). */
static int load_precompiled(sl_norm_step *st, const sl_json *n, const char *name, sl_err *err)
{
    const sl_json *c = sl_json_get(n, "precompiled_charsmap");
    if (!c || c->type != SL_JSON_STRING)
        return sl_errf(err, "%s: offset %zu: normalizer Precompiled has no string 'precompiled_charsmap'", name,
                       n->offset);
    sl_buf blob = {0};
    size_t bad = 0;
    if (b64_decode(c->str, c->str_len, &blob, &bad)) {
        sl_buf_free(&blob);
        return sl_errf(err, "%s: offset %zu: precompiled_charsmap is not base64 (character %zu)", name, c->offset, bad);
    }
    /* messages: "FILE: precompiled_charsmap (base64 at offset N), decoded: offset M: ..." */
    sl_buf nm = {0};
    sl_buf_printf(&nm, "%s: precompiled_charsmap (base64 at offset %zu), decoded", name, c->offset);
    st->cm = sl_xcalloc(1, sizeof *st->cm);
    int rc = sl_charsmap_parse(st->cm, (const uint8_t *)(blob.data ? blob.data : ""), blob.len, nm.data, 0, err);
    sl_buf_free(&blob);
    sl_buf_free(&nm);
    return rc;
}

static int load_steps(sl_normalizer *nz, const sl_json *n, int depth, const char *name, sl_err *err)
{
    if (!n || n->type == SL_JSON_NULL)
        return 0;
    const char *t = type_of(n);
    if (!strcmp(t, "Sequence")) {
        const sl_json *list = sl_json_get(n, "normalizers");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: normalizer Sequence has no 'normalizers' array", name);
        if (depth >= 8)
            return sl_errf(err, "%s: normalizer Sequences nested too deeply", name);
        for (size_t i = 0; i < list->n; i++)
            if (load_steps(nz, list->kids[i], depth + 1, name, err))
                return -1;
        return 0;
    }
    int kind = !strcmp(t, "NFC")              ? SL_NORM_NFC
               : !strcmp(t, "NFKC")           ? SL_NORM_NFKC
               : !strcmp(t, "NFD")            ? SL_NORM_NFD
               : !strcmp(t, "NFKD")           ? SL_NORM_NFKD
               : !strcmp(t, "Lowercase")      ? SL_NORM_LOWER
               : !strcmp(t, "BertNormalizer") ? SL_NORM_BERT
               : !strcmp(t, "Strip")          ? SL_NORM_STRIP
               : !strcmp(t, "StripAccents")   ? SL_NORM_STRIP_ACCENTS
               : !strcmp(t, "Replace")        ? SL_NORM_REPLACE
               : !strcmp(t, "Prepend")        ? SL_NORM_PREPEND
               : !strcmp(t, "Precompiled")    ? SL_NORM_PRECOMPILED
                                              : 0;
    if (!kind)
        return sl_errf(err,
                       "%s: normalizer '%s' is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, "
                       "BertNormalizer, Strip, StripAccents, Replace, Prepend, Precompiled, Sequence)",
                       name, t);
    if (nz->n == SL_NORM_MAX)
        return sl_errf(err, "%s: more than %d normalizer steps", name, SL_NORM_MAX);
    sl_norm_step *st = &nz->step[nz->n];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    if (kind == SL_NORM_PRECOMPILED) {
        nz->n++; /* counted now: a partly loaded step is freed with the normalizer */
        return load_precompiled(st, n, name, err);
    } else if (kind == SL_NORM_BERT) {
        int lower = get_flag(n, "lowercase", 1);
        const sl_json *sa = sl_json_get(n, "strip_accents");
        int strip = lower; /* HF: strip_accents null follows lowercase */
        if (sa && sa->type != SL_JSON_NULL && sl_json_get_bool(n, "strip_accents", &strip))
            return sl_errf(err, "%s: normalizer BertNormalizer: strip_accents is not a boolean or null", name);
        st->flags = (get_flag(n, "clean_text", 1) ? SL_BERT_CLEAN : 0) |
                    (get_flag(n, "handle_chinese_chars", 1) ? SL_BERT_CHINESE : 0) |
                    (strip ? SL_BERT_STRIP_ACCENTS : 0) | (lower ? SL_BERT_LOWER : 0);
    } else if (kind == SL_NORM_STRIP) {
        /* "left" / "right": an older spelling some converted files have */
        st->flags = (get_flag(n, "strip_left", get_flag(n, "left", 1)) ? SL_STRIP_LEFT : 0) |
                    (get_flag(n, "strip_right", get_flag(n, "right", 1)) ? SL_STRIP_RIGHT : 0);
    } else if (kind == SL_NORM_PREPEND) {
        const sl_json *p = sl_json_get(n, "prepend");
        if (!p || p->type != SL_JSON_STRING)
            return sl_errf(err, "%s: normalizer Prepend has no string 'prepend'", name);
        st->a = sl_xstrndup(p->str, p->str_len), st->a_len = p->str_len;
    } else if (kind == SL_NORM_REPLACE) {
        const sl_json *pat = sl_json_get(n, "pattern"), *c = sl_json_get(n, "content");
        const sl_json *str = pat && pat->type == SL_JSON_OBJECT ? sl_json_get(pat, "String") : NULL;
        const sl_json *rx = pat && pat->type == SL_JSON_OBJECT ? sl_json_get(pat, "Regex") : NULL;
        const sl_json *p = str ? str : rx;
        if (!p || p->type != SL_JSON_STRING || !c || c->type != SL_JSON_STRING)
            return sl_errf(err, "%s: normalizer Replace needs a pattern {\"String\"|\"Regex\": ...} and a content",
                           name);
        if (p->str_len == 0)
            return sl_errf(err, "%s: normalizer Replace: the pattern is empty", name);
        if (rx) {
            sl_buf what = {0};
            sl_buf_printf(&what, "%s: normalizer Replace", name);
            st->re = sl_hf_regex_new(p->str, p->str_len, what.data, err);
            sl_buf_free(&what);
            if (!st->re)
                return -1;
        }
        st->a = sl_xstrndup(p->str, p->str_len), st->a_len = p->str_len;
        st->b = sl_xstrndup(c->str, c->str_len), st->b_len = c->str_len;
    }
    nz->n++;
    return 0;
}

int sl_normalizer_load(sl_normalizer *nz, const sl_json *n, const char *name, sl_err *err)
{
    sl_hf_classes_init();
    return load_steps(nz, n, 0, name, err);
}

void sl_normalizer_free(sl_normalizer *nz)
{
    for (int i = 0; i < nz->n; i++) {
        free(nz->step[i].a);
        free(nz->step[i].b);
        sl_hf_regex_free(nz->step[i].re);
        if (nz->step[i].cm) {
            sl_charsmap_free(nz->step[i].cm);
            free(nz->step[i].cm);
        }
    }
    nz->n = 0;
}

void sl_norm_scratch_free(sl_norm_scratch *sc)
{
    sl_buf_free(&sc->tmp);
    sl_buf_free(&sc->t1);
    sl_buf_free(&sc->t2);
    sl_buf_free(&sc->zb);
    sl_hf_match_free(&sc->rx);
    free(sc->u16a);
    free(sc->u16b);
    sc->u16a = sc->u16b = NULL;
    sc->u16_cap = 0;
}

/* Both from HF's own classes (hf_classes.h, measured on tokenizers 0.23.3:
 * Unicode 16.0), not the system ICU's: an ICU of an older Unicode (72 is
 * 15.0) does not know the letters and digits added since, and the added
 * token's split would then depend on the machine. */
int sl_uc_is_space(uint32_t c)
{
    sl_hf_classes_init();
    return (sl_hf_class(c) & SL_HF_WS) != 0;
}

/* HF tests single_word with the Rust regex \w (UTS #18 word character:
 * Alphabetic, marks, decimal digits, connector punctuation, join controls),
 * the class its Whitespace pre-tokenizer splits on. */
int sl_uc_is_word(uint32_t c)
{
    sl_hf_classes_init();
    return (sl_hf_class(c) & SL_HF_WORD) != 0;
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

/* 1 when every character is below U+00C0: NFD leaves such text as it is,
 * and it has no marks. */
static int below_u00c0(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((uint8_t)s[i] >= 0xC3)
            return 0;
    return 1;
}

static const UNormalizer2 *nf[4]; /* NFC, NFKC, NFD, NFKD filtered to Unicode 9.0 */
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
    nf[2] = unorm2_openFiltered(unorm2_getNFDInstance(&nf_err), set, &nf_err);
    nf[3] = unorm2_openFiltered(unorm2_getNFKDInstance(&nf_err), set, &nf_err);
}

static const UNormalizer2 *normalizer(int kind, UErrorCode *e)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, open_normalizers);
    if (U_FAILURE(nf_err)) {
        *e = nf_err;
        return NULL;
    }
    return nf[kind == SL_NORM_NFKC ? 1 : kind == SL_NORM_NFD ? 2 : kind == SL_NORM_NFKD ? 3 : 0];
}

#include "tokenize/tables/lower_table.h"

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

/* The next character of t[i..n): its code point and length (an invalid
 * byte, not expected here, is a character of its own with code point
 * 0xFFFFFFFF). */
static size_t next_cp(const char *t, size_t n, size_t i, uint32_t *cp)
{
    if ((uint8_t)t[i] < 0x80) {
        *cp = (uint8_t)t[i];
        return 1;
    }
    size_t k = sl_utf8_seq((const uint8_t *)t + i, n - i, cp);
    if (!k)
        *cp = 0xFFFFFFFF, k = 1;
    return k;
}

/* The length of the first character of t[0..n) (0 when n is 0). */
static size_t first_len(const char *t, size_t n)
{
    uint32_t cp;
    return n ? next_cp(t, n, 0, &cp) : 0;
}

/* BertNormalizer's clean_text and handle_chinese_chars (character by
 * character), then its strip_accents (NFD, then Mn removed) and lowercase. */
static int bert(sl_norm_scratch *s, unsigned fl, const char *t, size_t n, sl_buf *out, sl_err *err)
{
    sl_buf *b = &s->t1;
    sl_buf_clear(b);
    sl_buf_reserve(b, n + 16);
    for (size_t i = 0; i < n;) {
        /* a run of printable ASCII stays as it is */
        size_t j = i;
        while (j < n && (uint8_t)t[j] > 0x20 && (uint8_t)t[j] < 0x7F)
            j++;
        if (j > i) {
            sl_buf_append(b, t + i, j - i);
            i = j;
            if (i == n)
                break;
        }
        uint32_t cp;
        size_t k = next_cp(t, n, i, &cp);
        uint8_t c = cp < 0x110000 ? sl_hf_class(cp) : 0;
        if (fl & SL_BERT_CLEAN) {
            if (c & SL_HF_CTRL) {
                i += k;
                continue;
            }
            if ((c & SL_HF_WS) || cp == '\t' || cp == '\n' || cp == '\r') {
                sl_buf_putc(b, ' ');
                i += k;
                continue;
            }
        }
        if ((fl & SL_BERT_CHINESE) && sl_hf_is_chinese(cp)) {
            sl_buf_putc(b, ' ');
            sl_buf_append(b, t + i, k);
            sl_buf_putc(b, ' ');
        } else {
            sl_buf_append(b, t + i, k);
        }
        i += k;
    }
    const char *cur = b->data ? b->data : "";
    size_t cur_n = b->len;
    if ((fl & SL_BERT_STRIP_ACCENTS) && !below_u00c0(cur, cur_n)) {
        sl_buf_clear(&s->t2);
        if (nf_utf8(s, SL_NORM_NFD, cur, cur_n, &s->t2, err))
            return -1;
        sl_buf_clear(b);
        for (size_t i = 0; i < s->t2.len;) {
            uint32_t cp;
            size_t k = next_cp(s->t2.data, s->t2.len, i, &cp);
            if (!(cp < 0x110000 && (sl_hf_class(cp) & SL_HF_MN)))
                sl_buf_append(b, s->t2.data + i, k);
            i += k;
        }
        cur = b->data ? b->data : "";
        cur_n = b->len;
    }
    if (fl & SL_BERT_LOWER)
        lower_utf8(cur, cur_n, out);
    else
        sl_buf_append(out, cur, cur_n);
    return 0;
}

/* Returns the number of leading bytes removed. */
static size_t strip_ws(unsigned fl, const char *t, size_t n, sl_buf *out)
{
    size_t a = 0, z = n;
    while ((fl & SL_STRIP_LEFT) && a < z) {
        uint32_t cp;
        size_t k = next_cp(t, z, a, &cp);
        if (!(cp < 0x110000 && (sl_hf_class(cp) & SL_HF_WS)))
            break;
        a += k;
    }
    while ((fl & SL_STRIP_RIGHT) && z > a) {
        size_t j = z - 1;
        while (j > a && ((uint8_t)t[j] & 0xC0) == 0x80)
            j--;
        uint32_t cp;
        next_cp(t, z, j, &cp);
        if (!(cp < 0x110000 && (sl_hf_class(cp) & SL_HF_WS)))
            break;
        z = j;
    }
    sl_buf_append(out, t + a, z - a);
    return a;
}

static void strip_accents(const char *t, size_t n, sl_buf *out)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = next_cp(t, n, i, &cp);
        if (!(cp < 0x110000 && (sl_hf_class(cp) & SL_HF_COMB)))
            sl_buf_append(out, t + i, k);
        i += k;
    }
}

/* Replace: each match of the pattern in s becomes b. HF aligns the
 * replacement with the last character of the match, so z becomes the
 * output bytes that come from the first z input bytes or replace a match
 * inside them. */
typedef struct {
    const char *s, *b;
    size_t bn, done, z, zout;
    sl_buf *out;
} replace_ctx;

static void on_match(void *ctx, size_t start, size_t end)
{
    replace_ctx *c = ctx;
    if (c->done < c->z)
        c->zout += (start < c->z ? start : c->z) - c->done;
    if (end <= c->z)
        c->zout += c->bn;
    sl_buf_append(c->out, c->s + c->done, start - c->done);
    sl_buf_append(c->out, c->b, c->bn);
    c->done = end;
}

static void replace_end(replace_ctx *c, size_t n)
{
    if (c->done < c->z)
        c->zout += c->z - c->done;
    sl_buf_append(c->out, c->s + c->done, n - c->done);
}

/* Every occurrence of the string a in c->s[0..n). */
static void replace_str(replace_ctx *c, size_t n, const char *a, size_t an)
{
    const char *s = c->s;
    size_t i = 0;
    while (i + an <= n) {
        const char *hit = memchr(s + i, a[0], n - i - an + 1);
        if (!hit)
            break;
        i = (size_t)(hit - s);
        if (!memcmp(hit, a, an)) {
            on_match(c, i, i + an);
            i += an;
        } else {
            i++;
        }
    }
    replace_end(c, n);
}

/* A Unicode normal form of t[0..n) into out, ICU seeing only the stretches
 * that can change: a character that no normal form changes, that never
 * combines with the one before it and is never reordered (ASCII; for NFC
 * anything below U+0300: nothing there decomposes, and the second
 * characters of compositions and the combining marks all lie above) starts
 * a stretch whose form does not depend on what came before. So the text
 * is copied up to the character before the next one that may change
 * (that character may combine with it), and from there to the next
 * inert character goes through ICU. A document with one curly quote in
 * 40 kB no longer makes a round trip through UTF-16 whole (GPT-NeoX's
 * NFC: 10% of an encode). */
static int nf_runs(sl_norm_scratch *s, int kind, const char *t, size_t n, sl_buf *out, sl_err *err)
{
    const uint8_t *p = (const uint8_t *)t, lim = kind == SL_NORM_NFC ? 0xCC : 0x80; /* lead bytes from lim on */
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] < lim) /* (continuation bytes are below 0xC0, so below lim or skipped as safe) */
            j++;
        if (j == n)
            break;
        size_t rs = j; /* the character before, which the stretch may combine with */
        if (rs > i)
            for (rs--; rs > i && (p[rs] & 0xC0) == 0x80; rs--)
                ;
        sl_buf_append(out, t + i, rs - i);
        size_t re = j + 1;
        while (re < n && ((p[re] & 0xC0) == 0x80 || p[re] >= lim)) /* up to the next inert character */
            re++;
        if (nf_utf8(s, kind, t + rs, re - rs, out, err))
            return -1;
        i = re;
    }
    sl_buf_append(out, t + i, n - i);
    return 0;
}

/* The steps that map the text character by character (or cluster by
 * cluster), into dst. */
static int transform(const sl_norm_step *st, sl_norm_scratch *s, const char *cur, size_t n, sl_buf *dst, sl_err *err)
{
    switch (st->kind) {
    case SL_NORM_LOWER: lower_utf8(cur, n, dst); return 0;
    case SL_NORM_BERT: return bert(s, st->flags, cur, n, dst, err);
    case SL_NORM_STRIP_ACCENTS: strip_accents(cur, n, dst); return 0;
    case SL_NORM_PRECOMPILED: return sl_precompiled_hf(st->cm, cur, n, dst, err);
    default: return nf_runs(s, st->kind, cur, n, dst, err);
    }
}

/* One step on cur[0..n) into dst; *z as at the top of the file. */
static int apply(const sl_norm_step *st, sl_norm_scratch *s, const char *cur, size_t n, sl_buf *dst, size_t *z,
                 sl_err *err)
{
    switch (st->kind) {
    case SL_NORM_STRIP: {
        size_t a = strip_ws(st->flags, cur, n, dst);
        *z = a >= *z ? 0 : *z - a;
        return 0;
    }
    case SL_NORM_PREPEND:
        if (n) {
            sl_buf_append(dst, st->a, st->a_len);
            if (*z)
                *z += st->a_len;
        }
        sl_buf_append(dst, cur, n);
        return 0;
    case SL_NORM_REPLACE: {
        replace_ctx c = {cur, st->b, st->b_len, 0, *z, 0, dst};
        if (!st->re) {
            replace_str(&c, n, st->a, st->a_len);
        } else {
            if (sl_hf_regex_each(st->re, &s->rx, cur, n, on_match, &c, err))
                return -1;
            replace_end(&c, n);
        }
        *z = c.zout;
        return 0;
    }
    default: break;
    }
    if (transform(st, s, cur, n, dst, err))
        return -1;
    if (*z) {
        /* what the first z bytes become (HF aligns each output character
         * with the one it comes from); Precompiled aligns its output with
         * the input in order, so a removed start does not cut */
        sl_buf_clear(&s->zb);
        if (transform(st, s, cur, *z, &s->zb, err))
            return -1;
        *z = s->zb.len < dst->len ? s->zb.len : dst->len;
        while (*z < dst->len && ((uint8_t)dst->data[*z] & 0xC0) == 0x80)
            (*z)++; /* a whole character (the text may combine differently) */
        if (!*z && st->kind == SL_NORM_PRECOMPILED)
            *z = first_len(dst->data, dst->len);
    }
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
    int where = 0; /* the result so far: 0 the input, 1 out, 2 s->tmp */
    size_t z = first_len(text, n);
    for (int i = 0; i < nz->n; i++) {
        const sl_norm_step *st = &nz->step[i];
        if ((st->kind == SL_NORM_NFC && below_u0300(cur, cur_n)) ||
            (st->kind == SL_NORM_NFD && below_u00c0(cur, cur_n)))
            continue; /* already NFC / NFD */
        sl_buf_clear(dst);
        if (apply(st, s, cur ? cur : "", cur_n, dst, &z, err))
            return -1;
        cur = dst->data ? dst->data : "";
        cur_n = dst->len;
        where = dst == out ? 1 : 2;
        sl_buf *t = dst;
        dst = other;
        other = t;
    }
    s->lead = z;
    if (where == 0) {
        sl_buf_append(out, text, n);
    } else if (where == 2) {
        sl_buf t = *out;
        *out = s->tmp;
        s->tmp = t;
    }
    return 0;
}
