/* spaCy's Sentencizer (text/sentsplit.h): spacy/pipeline/sentencizer.pyx,
 * Sentencizer.predict, and Doc.sents. */
#include "text/sentsplit.h"

#include <stdlib.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "text/sentsplit_en_tables.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

void sl_sents_free(sl_sents *s)
{
    free(s->v);
    *s = (sl_sents){0};
}

static void sents_push(sl_sents *s, uint32_t off, uint32_t len)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = sl_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = (sl_word){off, len};
}

int sl_sentsplit_is_punct_char(const char *s, size_t n)
{
    uint32_t c = 0;
    size_t k = sl_utf8_seq((const uint8_t *)s, n, &c);
    if (!k || k != n)
        return 0;
    size_t lo = 0, hi = NELEM(ss_punct_chars);
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (ss_punct_chars[m] < c)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < NELEM(ss_punct_chars) && ss_punct_chars[lo] == c;
}

int sl_sentsplit_is_punct(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    while (n) {
        uint32_t c = 0;
        size_t k = sl_utf8_seq(p, n, &c);
        if (!k || !sl_cp_in_ranges(ss_cat_p, NELEM(ss_cat_p), c))
            return 0;
        p += k, n -= k;
    }
    return 1;
}

size_t sl_sentsplit_spans(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, sl_sents *s,
                          const char **base)
{
    const sl_word *tok;
    size_t nt = sl_wordtok_doc(t, w, text, n, &tok, base);
    const char *b = *base;
    s->n = 0;
    if (!nt)
        return 0;
    size_t start = 0;
    int seen_period = 0;
    for (size_t i = 0; i < nt; i++) {
        const char *x = b + tok[i].off;
        int pc = sl_sentsplit_is_punct_char(x, tok[i].len);
        if (seen_period && !pc && !sl_sentsplit_is_punct(x, tok[i].len)) {
            if (i > start) /* always: a sentence of tokens start..i-1 */
                sents_push(s, tok[start].off, tok[i - 1].off + tok[i - 1].len - tok[start].off);
            start = i;
            seen_period = 0;
        } else if (pc) {
            seen_period = 1;
        }
    }
    sents_push(s, tok[start].off, tok[nt - 1].off + tok[nt - 1].len - tok[start].off);
    return s->n;
}

/* Code points of s[0..n). */
static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((uint8_t)s[i] & 0xC0) != 0x80;
    return c;
}

size_t sl_sentsplit_pieces(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, sl_sents *s)
{
    const char *base;
    size_t k = sl_sentsplit_spans(t, w, text, n, s, &base);
    /* datatrove cuts the text it was given at the ends (in code points)
     * that the tokenized one (perhaps without "IS_ALPHA") has */
    size_t a = 0, pos = 0, cps = 0; /* text: bytes and code points before pos */
    for (size_t i = 0; i + 1 < k; i++) {
        size_t e = s->v[i].off + s->v[i].len;
        if (base != text) {
            size_t want = cp_count(base, e);
            while (cps < want && pos < n) {
                pos++;
                while (pos < n && ((uint8_t)text[pos] & 0xC0) == 0x80)
                    pos++;
                cps++;
            }
            e = pos;
        }
        s->v[i] = (sl_word){(uint32_t)a, (uint32_t)(e - a)};
        a = e;
    }
    if (!k)
        sents_push(s, 0, 0);
    s->v[s->n - 1] = (sl_word){(uint32_t)a, (uint32_t)(n - a)};
    return s->n;
}
