/* Extended grapheme cluster boundaries (grapheme.h), written from the rules
 * of UAX #29 (GB3 to GB999) as they read for Unicode 15.1 to 17.0: a
 * boundary is looked for between each two code points, left to right, with
 * three pieces of state for the rules that look further back (GB9c's Indic
 * conjunct, GB11's emoji ZWJ sequence, GB12/13's regional indicator pairs). */
#include "tokenize/normalizers/grapheme.h"

#include "base/utf8.h"
#include "tokenize/tables/grapheme_table.h"

#define N_RANGES (sizeof grapheme_ranges / sizeof *grapheme_ranges)

enum { EXT_PICT = 0x10 };
enum { INCB_CONSONANT = 1, INCB_EXTEND = 2, INCB_LINKER = 3 };

uint8_t sl_grapheme_props(uint32_t c)
{
    if (c < 0x80) /* ASCII: CR, LF, the other C0 controls and DEL are Control; the rest have no property */
        return c == '\r' ? SL_GCB_CR : c == '\n' ? SL_GCB_LF : c < 0x20 || c == 0x7F ? SL_GCB_CONTROL : 0;
    size_t lo = 0, hi = N_RANGES;
    while (lo < hi) { /* the first range ending at or after c */
        size_t mid = lo + (hi - lo) / 2;
        if (grapheme_ranges[mid].hi < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < N_RANGES && grapheme_ranges[lo].lo <= c ? grapheme_ranges[lo].v : 0;
}

const char *sl_grapheme_unicode_version(void)
{
    return SL_GRAPHEME_UNICODE_VERSION;
}

/* The code point at s[i] and its length (1 for a byte that does not start
 * well-formed UTF-8, taken as a Control so that it stands alone). */
static size_t next_cp(const char *s, size_t n, size_t i, uint8_t *props)
{
    uint32_t c;
    size_t k = sl_utf8_seq((const uint8_t *)s + i, n - i, &c);
    if (!k) {
        *props = SL_GCB_CONTROL;
        return 1;
    }
    *props = sl_grapheme_props(c);
    return k;
}

static int is_control(int g)
{
    return g == SL_GCB_CR || g == SL_GCB_LF || g == SL_GCB_CONTROL;
}

size_t sl_grapheme_end(const char *s, size_t n, size_t at)
{
    uint8_t prev;
    size_t i = at + next_cp(s, n, at, &prev);
    /* incb: 0, or 1 after a consonant followed by InCB Extend/Linker only,
     * 2 when one of those was a Linker; emoji: 1 after an Extended_Pictographic
     * and Extend characters, 2 when a ZWJ followed them; ri: the regional
     * indicators just before */
    int incb = (prev >> 5) == INCB_CONSONANT, emoji = (prev & EXT_PICT) != 0, ri = (prev & 0xF) == SL_GCB_RI;
    while (i < n) {
        uint8_t cur;
        size_t k = next_cp(s, n, i, &cur);
        int p = prev & 0xF, c = cur & 0xF, ic = cur >> 5, join;
        if (p == SL_GCB_CR && c == SL_GCB_LF)
            join = 1; /* GB3 */
        else if (is_control(p) || is_control(c))
            join = 0; /* GB4, GB5 */
        else if (p == SL_GCB_L && (c == SL_GCB_L || c == SL_GCB_V || c == SL_GCB_LV || c == SL_GCB_LVT))
            join = 1; /* GB6 */
        else if ((p == SL_GCB_LV || p == SL_GCB_V) && (c == SL_GCB_V || c == SL_GCB_T))
            join = 1; /* GB7 */
        else if ((p == SL_GCB_LVT || p == SL_GCB_T) && c == SL_GCB_T)
            join = 1; /* GB8 */
        else if (c == SL_GCB_EXTEND || c == SL_GCB_ZWJ || c == SL_GCB_SPACING_MARK || p == SL_GCB_PREPEND)
            join = 1; /* GB9, GB9a, GB9b */
        else if (ic == INCB_CONSONANT && incb == 2)
            join = 1; /* GB9c */
        else if (p == SL_GCB_ZWJ && (cur & EXT_PICT) && emoji == 2)
            join = 1; /* GB11 */
        else if (p == SL_GCB_RI && c == SL_GCB_RI && ri % 2 == 1)
            join = 1; /* GB12, GB13 */
        else
            join = 0; /* GB999 */
        if (!join)
            break;
        incb = ic == INCB_CONSONANT ? 1 : incb && ic == INCB_LINKER ? 2 : incb && ic == INCB_EXTEND ? incb : 0;
        emoji = (cur & EXT_PICT) ? 1 : emoji == 1 && c == SL_GCB_EXTEND ? 1 : emoji == 1 && c == SL_GCB_ZWJ ? 2 : 0;
        ri = c == SL_GCB_RI ? ri + 1 : 0;
        prev = cur;
        i += k;
    }
    return i;
}
