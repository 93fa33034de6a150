/* The junction filter of joins.h. */
#include "tokenize/models/joins.h"

#include <stdlib.h>

#include "base/err.h"
#include "base/utf8.h"

void sl_joins_init(sl_joins *j)
{
    j->bits = sl_xcalloc(((size_t)1 << SL_JOINS_BITS) / 64, sizeof *j->bits);
}

void sl_joins_free(sl_joins *j)
{
    free(j->bits);
    j->bits = NULL;
}

void sl_joins_add(sl_joins *j, uint32_t x, uint32_t y)
{
    if (!j->bits)
        return;
    size_t h = sl_joins_hash(x, y);
    j->bits[h >> 6] |= (uint64_t)1 << (h & 63);
}

void sl_joins_add_inner(sl_joins *j, const char *s, size_t n)
{
    uint32_t prev = 0;
    for (size_t i = 0; i < n && j->bits;) {
        uint32_t cp;
        size_t k = sl_utf8_seq((const uint8_t *)s + i, n - i, &cp);
        if (!k) { /* not text: no telling what it joins */
            sl_joins_free(j);
            return;
        }
        if (i)
            sl_joins_add(j, prev, cp);
        prev = cp;
        i += k;
    }
}

void sl_joins_add_junction(sl_joins *j, const char *l, size_t ln, const char *r, size_t rn)
{
    if (!j->bits)
        return;
    size_t a = ln;
    while (a > 1 && ((uint8_t)l[a - 1] & 0xC0) == 0x80) /* back to the last character's lead byte */
        a--;
    uint32_t x = 0, y = 0;
    if (!ln || !rn || sl_utf8_seq((const uint8_t *)l + a - 1, ln - a + 1, &x) != ln - a + 1 ||
        !sl_utf8_seq((const uint8_t *)r, rn, &y)) {
        sl_joins_free(j);
        return;
    }
    sl_joins_add(j, x, y);
}

size_t sl_joins_part(const sl_joins *j, const char *p, size_t n)
{
    const uint8_t *s = (const uint8_t *)p;
    uint32_t prev;
    size_t i = sl_utf8_seq(s, n, &prev);
    if (!i)
        return n; /* an invalid byte: no cut next to it */
    while (i < n) {
        uint32_t cp;
        size_t k;
        if (s[i] < 0x80)
            cp = s[i], k = 1;
        else if (!(k = sl_utf8_seq(s + i, n - i, &cp)))
            return n;
        if (!sl_joins_has(j, prev, cp))
            return i;
        prev = cp;
        i += k;
    }
    return n;
}

size_t sl_joins_word(const char *p, size_t n)
{
    for (size_t at = 1; at + 3 <= n; at++)
        if (p[at] == '\xE2' && p[at + 1] == '\x96' && p[at + 2] == '\x81') {
            if (!(at >= 3 && p[at - 3] == '\xE2' && p[at - 2] == '\x96' && p[at - 1] == '\x81'))
                return at;
            at += 2;
        }
    return n;
}
