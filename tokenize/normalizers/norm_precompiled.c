/* The precompiled charsmap (norm_precompiled.h), written from the layout
 * SentencePiece documents for it and Darts' double-array format: a unit is
 * a uint32 with the label in bits 0..7 (bit 31 set on value units), a leaf
 * flag in bit 8, and an offset in bits 10..31 scaled by 2^8 when bit 9 is
 * set. From node position p, a byte c leads to q = p ^ offset(unit[p]) ^ c
 * when label(unit[q]) == c; a node with the leaf flag keeps its value in
 * the unit at q ^ offset(unit[q]). */
#include "tokenize/normalizers/norm_precompiled.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>
#include "base/utf8.h"
#include "tokenize/normalizers/grapheme.h"

static uint32_t u_offset(uint32_t u)
{
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}
static uint32_t u_label(uint32_t u)
{
    return u & ((1u << 31) | 0xFF);
}
static int u_has_leaf(uint32_t u)
{
    return (u >> 8) & 1;
}
static uint32_t u_value(uint32_t u)
{
    return u & ((1u << 31) - 1);
}

/* Depth-first check of every node reachable from the root: positions in
 * range, values inside the string blob. */
static int check_trie(const sl_charsmap *cm, const char *name, size_t base, sl_err *err)
{
    size_t n = cm->n_units;
    uint8_t *seen = sl_xcalloc(n, 1);
    size_t *stack = sl_xmalloc(n * sizeof *stack), sp = 0;
    int rc = 0;
    size_t root = u_offset(cm->units[0]);
    if (root >= n) {
        rc = sl_errf(err, "%s: offset %zu: charsmap trie root points outside the trie", name, base + 4);
        goto done;
    }
    stack[sp++] = root;
    seen[root] = 1;
    while (sp) {
        size_t p = stack[--sp];
        /* the children of p are the units q of its block of 256 (q = p ^ c)
         * whose label is c: tested 4 at a time where SSE2 is */
        size_t q = p & ~(size_t)255, lim = q + 256 < n ? q + 256 : n;
        while (q < lim) {
            uint32_t hits;
            size_t step;
#if defined(__SSE2__)
            if (q + 4 <= lim) {
                __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(cm->units + q));
                __m128i want = _mm_xor_si128(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32((int)((q ^ p) & 255)));
                __m128i eq = _mm_cmpeq_epi32(_mm_and_si128(u, _mm_set1_epi32((int)0x800000FF)), want);
                hits = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(eq));
                step = 4;
            } else
#endif
            {
                hits = u_label(cm->units[q]) == ((q ^ p) & 255);
                step = 1;
            }
            for (; hits; hits &= hits - 1) {
                size_t qq = q + (size_t)__builtin_ctz(hits);
                if (qq == p) /* c = 0 is no child */
                    continue;
                size_t r = qq ^ u_offset(cm->units[qq]);
                if (r >= n) {
                    rc = sl_errf(err, "%s: offset %zu: charsmap trie unit %zu points outside the trie", name,
                                 base + 4 + 4 * qq, qq);
                    goto done;
                }
                if (u_has_leaf(cm->units[qq]) && u_value(cm->units[r]) >= cm->norm_len) {
                    rc = sl_errf(err,
                                 "%s: offset %zu: charsmap value %u is outside the %zu bytes of replacement strings",
                                 name, base + 4 + 4 * r, u_value(cm->units[r]), cm->norm_len);
                    goto done;
                }
                if (!seen[r]) {
                    seen[r] = 1;
                    stack[sp++] = r;
                }
            }
            q += step;
        }
    }
done:
    free(seen);
    free(stack);
    return rc;
}

int sl_charsmap_parse(sl_charsmap *cm, const uint8_t *blob, size_t n, const char *name, size_t base, sl_err *err)
{
    memset(cm, 0, sizeof *cm);
    if (n <= 4)
        return sl_errf(err, "%s: offset %zu: precompiled charsmap of %zu bytes is too short", name, base, n);
    uint32_t trie = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 | (uint32_t)blob[3] << 24;
    if (trie >= n - 4 + 1 || trie < 4 || trie % 4)
        return sl_errf(err,
                       "%s: offset %zu: charsmap trie size %u does not fit the %zu-byte charsmap (or is not a "
                       "multiple of 4)",
                       name, base, trie, n);
    cm->n_units = trie / 4;
    cm->units = sl_xmalloc(cm->n_units * sizeof *cm->units);
    for (size_t i = 0; i < cm->n_units; i++) {
        const uint8_t *u = blob + 4 + 4 * i;
        cm->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    cm->norm_len = n - 4 - trie;
    cm->norm = sl_xmalloc(cm->norm_len + 1);
    memcpy(cm->norm, blob + 4 + trie, cm->norm_len);
    cm->norm[cm->norm_len] = 0;
    if (check_trie(cm, name, base, err)) {
        sl_charsmap_free(cm);
        return -1;
    }
    size_t root = u_offset(cm->units[0]);
    for (uint32_t c = 0; c < 256; c++)
        cm->first[c] = (root ^ c) < cm->n_units && u_label(cm->units[root ^ c]) == c;
    for (uint32_t c = 0; c < 128; c++) {
        cm->ascii_fast[c] = 1;
        if (!cm->first[c])
            continue;
        size_t q = root ^ c, r = q ^ u_offset(cm->units[q]);
        if (r >= cm->n_units || (u_has_leaf(cm->units[q]) && u_value(cm->units[r]) >= cm->norm_len)) {
            cm->ascii_fast[c] = 0; /* only byte 0 gets here (check_trie saw the rest): the slow, checked way */
            continue;
        }
        if (u_has_leaf(cm->units[q])) {
            cm->ascii_rep[c] = cm->norm + u_value(cm->units[r]);
            size_t len = strlen(cm->ascii_rep[c]);
            cm->ascii_rep_len[c] = (uint8_t)(len < 255 ? len : 255);
            if (len >= 255)
                cm->ascii_fast[c] = 0;
        }
        for (uint32_t d = 0; d < 128 && cm->ascii_fast[c]; d++) /* a longer rule c d...? */
            if ((r ^ d) < cm->n_units && u_label(cm->units[r ^ d]) == d)
                cm->ascii_fast[c] = 0;
    }
    return 0;
}

void sl_charsmap_free(sl_charsmap *cm)
{
    free(cm->units);
    free(cm->norm);
    memset(cm, 0, sizeof *cm);
}

size_t sl_charsmap_match(const sl_charsmap *cm, const char *s, size_t n, int longest, const char **rep)
{
    const uint32_t *a = cm->units;
    size_t pos = u_offset(a[0]), best = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        pos ^= c;
        if (pos >= cm->n_units || u_label(a[pos]) != c)
            break;
        int leaf = u_has_leaf(a[pos]);
        pos ^= u_offset(a[pos]);
        if (pos >= cm->n_units)
            break;
        if (leaf) {
            uint32_t v = u_value(a[pos]);
            if (v < cm->norm_len) { /* always, after check_trie */
                best = i + 1;
                *rep = cm->norm + v;
                if (!longest)
                    break;
            }
        }
    }
    return best;
}

#define SPACE_SYMBOL "\xE2\x96\x81"

/* SentencePiece's Normalizer::NormalizePrefix: a user-defined symbol as it
 * is, else the longest charsmap rule, else one character (a byte that does
 * not start valid UTF-8: U+FFFD for one byte). */
static size_t norm_prefix(const sl_spm_norm *nz, const char *s, size_t n, const char **rep, size_t *rep_len)
{
    if (nz->user && nz->user->first[(uint8_t)s[0]]) {
        size_t len;
        if (sl_trie_longest(nz->user, s, n, 0, &len) >= 0) {
            *rep = s;
            *rep_len = len;
            return len;
        }
    }
    uint8_t c = (uint8_t)s[0];
    if (c < 0x80 && nz->cm && nz->cm->ascii_fast[c] && (n == 1 || (uint8_t)s[1] < 0x80)) {
        *rep = nz->cm->ascii_rep[c] ? nz->cm->ascii_rep[c] : s;
        *rep_len = nz->cm->ascii_rep[c] ? nz->cm->ascii_rep_len[c] : 1;
        return 1;
    }
    if (nz->cm && nz->cm->first[c]) {
        size_t len = sl_charsmap_match(nz->cm, s, n, 1, rep);
        if (len) {
            *rep_len = strlen(*rep);
            return len;
        }
    }
    uint32_t cp;
    size_t k = sl_utf8_seq((const uint8_t *)s, n, &cp);
    if (!k) {
        *rep = "\xEF\xBF\xBD";
        *rep_len = 3;
        return 1;
    }
    *rep = s;
    *rep_len = k;
    return k;
}

int sl_spm_norm_fast = 1;

#if defined(__SSE2__)
/* The stretch at s[0..n) of printable ASCII without a rule and spaces with
 * none (fast: every byte 0x21..0x7E but the 4 stops is plain, and so is
 * the space), written straight to out 16 bytes at a time, as the loop
 * below would write it; it stops at any other byte, 16 bytes before the
 * end, or after FAST_CHUNK bytes (the room it reserves: a space may become
 * 3 bytes). The bytes it took are returned. */
#define FAST_CHUNK 4096
/* A space as put_space writes it, at o (room known); past it returned. */
static inline char *space_at(char *o, int esc)
{
    if (!esc) {
        *o = ' ';
        return o + 1;
    }
    memcpy(o, SPACE_SYMBOL, 3);
    return o + 3;
}

static size_t fast_stretch(const sl_spm_norm *nz, const char *s, size_t n, const uint8_t stop[4], int ctl_sp,
                           sl_buf *out, int *prev_space)
{
    const __m128i st0 = _mm_set1_epi8((char)stop[0]), st1 = _mm_set1_epi8((char)stop[1]);
    const __m128i st2 = _mm_set1_epi8((char)stop[2]), st3 = _mm_set1_epi8((char)stop[3]);
    sl_buf_reserve(out, 3 * FAST_CHUNK + 32);
    char *o = out->data + out->len;
    const char *s0 = s, *end = s + (n < FAST_CHUNK + 16 ? n - 16 : FAST_CHUNK);
    int ps = *prev_space, cm = nz->cm != NULL, rx = nz->remove_extra_whitespaces, esc = nz->escape_whitespaces;
    const char *wend = s0 + n - 32; /* whole blocks up to here: they read 32 bytes */
    while (s < end) {
        __m128i v = _mm_loadu_si128((const __m128i *)s);
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmplt_epi8(v, _mm_set1_epi8(0x7F)));
        __m128i no = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, st0), _mm_cmpeq_epi8(v, st1)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, st2), _mm_cmpeq_epi8(v, st3)));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_andnot_si128(no, ok));
        __m128i is_sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
        if (ctl_sp) /* \t-\r: rules that make each a space */
            is_sp = _mm_or_si128(is_sp, _mm_cmpgt_epi8(_mm_set1_epi8(-123), _mm_add_epi8(v, _mm_set1_epi8(0x77))));
        unsigned sp = (unsigned)_mm_movemask_epi8(is_sp);
        /* A whole block of such bytes and spaces with no non-ASCII byte
         * after it: the stretches between its spaces, each space written as
         * it becomes; with remove_extra_whitespaces one for each run, none
         * for a run right after a space just written. */
        if ((m | sp) == 0xFFFF && s <= wend && !(cm && (uint8_t)s[16] >= 0x80)) {
            unsigned from = rx && ps && (sp & 1) ? (unsigned)__builtin_ctz(~sp) : 0;
            for (unsigned t = rx ? sp & ~(sp << 1) & ~((1u << from) - 1) : sp; t; t &= t - 1) {
                unsigned j = (unsigned)__builtin_ctz(t);
                _mm_storeu_si128((__m128i *)o, _mm_loadu_si128((const __m128i *)(s + from)));
                o = space_at(o + (j - from), esc);
                from = rx ? j + (unsigned)__builtin_ctz(~(sp >> j)) : j + 1;
            }
            _mm_storeu_si128((__m128i *)o, _mm_loadu_si128((const __m128i *)(s + from)));
            o += 16 - from;
            ps = rx && sp >> 15;
            s += 16;
            continue;
        }
        _mm_storeu_si128((__m128i *)o, v);
        size_t r = (size_t)__builtin_ctz(~m); /* at most 16; s[16] is there */
        if (r && cm && (uint8_t)s[r] >= 0x80) /* a rule may join the last one to what follows */
            r--;
        if (r) {
            o += r, s += r;
            ps = 0;
            continue;
        }
        if (s[0] != ' ' || (cm && (uint8_t)s[1] >= 0x80))
            break;
        if (!ps)
            o = space_at(o, esc);
        ps = rx;
        s++;
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = 0;
    *prev_space = ps;
    return (size_t)(s - s0);
}

#endif

static void put_space(const sl_spm_norm *nz, sl_buf *out)
{
    if (nz->escape_whitespaces)
        sl_buf_append(out, SPACE_SYMBOL, 3);
    else
        sl_buf_putc(out, ' ');
}

void sl_spm_normalize(const sl_spm_norm *nz, const char *s, size_t n, sl_buf *out)
{
    sl_buf_clear(out);
    const char *rep;
    size_t rl;
    if (nz->remove_extra_whitespaces) { /* leading spaces */
        while (n) {
            size_t k = norm_prefix(nz, s, n, &rep, &rl);
            if (!(rl == 1 && rep[0] == ' '))
                break;
            s += k, n -= k;
        }
    }
    if (!n)
        return;
    if (!nz->ws_suffix && nz->add_dummy_prefix)
        put_space(nz, out);
    /* ASCII bytes that stay as they are (no rule, not a space, no
     * user-defined piece starts there) are copied in runs; with a charsmap,
     * not the one right before a non-ASCII byte (a rule may join them) */
    uint8_t plain[256] = {0};
    for (int c = 0; c < 128; c++)
        plain[c] = c != ' ' && !(nz->user && nz->user->first[c]) &&
                   !(nz->cm && (!nz->cm->ascii_fast[c] || nz->cm->ascii_rep[c]));
    int prev_space = nz->remove_extra_whitespaces;
    /* a space with no rule and no user-defined piece: its effect inline */
    int plain_sp =
        !(nz->user && nz->user->first[' ']) && !(nz->cm && (!nz->cm->ascii_fast[' '] || nz->cm->ascii_rep[' ']));
    /* the fast way takes up to 4 printable bytes that are not plain (the
     * first bytes of user-defined pieces, say) as stops */
    uint8_t stop[4];
#if defined(__SSE2__)
    int n_stop = 0, fast = plain_sp && sl_spm_norm_fast;
#else
    int n_stop = 0, fast = 0; /* (no 16-byte way without SSE2) */
    (void)stop;
#endif
    for (int c = 0x21; c < 0x7F && fast; c++)
        if (!plain[c]) {
            if (n_stop < 4)
                stop[n_stop++] = (uint8_t)c;
            else
                fast = 0;
        }
    for (int i = n_stop; i < 4; i++)
        stop[i] = n_stop ? stop[0] : ' ';
    /* \t-\r each a space by a one-character rule (nmt_nfkc's): spaces too
     * in the fast way's whole blocks */
    int ctl_sp = fast && nz->cm != NULL;
    for (int c = '\t'; c <= '\r' && ctl_sp; c++)
        ctl_sp = !(nz->user && nz->user->first[c]) && nz->cm->ascii_fast[c] && nz->cm->ascii_rep[c] &&
                 !strcmp(nz->cm->ascii_rep[c], " ");
    while (n) {
#if defined(__SSE2__)
        if (fast && n > 16) {
            size_t k = fast_stretch(nz, s, n, stop, ctl_sp, out, &prev_space);
            s += k, n -= k;
            if (k)
                continue;
        }
#endif
        if (s[0] == ' ' && plain_sp && (!nz->cm || n == 1 || (uint8_t)s[1] < 0x80)) {
            if (!prev_space)
                put_space(nz, out);
            prev_space = nz->remove_extra_whitespaces;
            s++, n--;
            continue;
        }
        size_t run = 0;
        while (run < n && plain[(uint8_t)s[run]])
            run++;
        if (run && run < n && nz->cm && (uint8_t)s[run] >= 0x80)
            run--;
        if (run) {
            sl_buf_append(out, s, run);
            s += run, n -= run;
            prev_space = 0;
            continue;
        }
        size_t k = norm_prefix(nz, s, n, &rep, &rl);
        if (prev_space)
            while (rl && rep[0] == ' ')
                rep++, rl--;
        if (rl) {
            if (!memchr(rep, ' ', rl)) {
                sl_buf_append(out, rep, rl);
            } else {
                for (size_t i = 0; i < rl; i++) {
                    if (rep[i] == ' ')
                        put_space(nz, out);
                    else
                        sl_buf_putc(out, rep[i]);
                }
            }
            prev_space = rep[rl - 1] == ' ';
        }
        s += k, n -= k;
        if (!nz->remove_extra_whitespaces)
            prev_space = 0;
    }
    if (nz->remove_extra_whitespaces) { /* trailing spaces */
        size_t sl = nz->escape_whitespaces ? 3 : 1;
        const char *sp = nz->escape_whitespaces ? SPACE_SYMBOL : " ";
        while (out->len >= sl && !memcmp(out->data + out->len - sl, sp, sl))
            out->len -= sl;
        if (out->data)
            out->data[out->len] = 0;
    }
    if (nz->ws_suffix && nz->add_dummy_prefix)
        put_space(nz, out);
}

/* The clusters of s[0..n) (a stretch that starts and ends at cluster
 * boundaries), found by grapheme.h (Unicode 17.0, as HF's). */
static void hf_clusters(const sl_charsmap *cm, const char *s, size_t n, sl_buf *out)
{
    for (size_t a = 0, b; a < n; a = b) {
        b = sl_grapheme_end(s, n, a);
        const char *g = s + a, *rep;
        size_t gl = b - a;
        if (gl < 6) {
            /* the shortest rule matches the cluster's start, wherever it ends */
            if (sl_charsmap_match(cm, g, gl, 0, &rep)) {
                sl_buf_puts(out, rep);
                continue;
            }
        }
        for (size_t i = 0; i < gl;) {
            uint32_t cp;
            size_t k = sl_utf8_seq((const uint8_t *)g + i, gl - i, &cp);
            if (!k)
                k = 1;
            if (sl_charsmap_match(cm, g + i, k, 0, &rep))
                sl_buf_puts(out, rep);
            else
                sl_buf_append(out, g + i, k);
            i += k;
        }
    }
}

/* 1 when the ASCII character at s[i] is a cluster of its own: its
 * neighbours are ASCII too (no ASCII character extends a cluster or is a
 * Prepend character) and it is not half of CR LF. */
static int ascii_alone(const char *s, size_t n, size_t i)
{
    uint8_t c = (uint8_t)s[i];
    if (c >= 0x80 || (i > 0 && (uint8_t)s[i - 1] >= 0x80) || (i + 1 < n && (uint8_t)s[i + 1] >= 0x80))
        return 0;
    return !(c == '\r' && i + 1 < n && s[i + 1] == '\n') && !(c == '\n' && i > 0 && s[i - 1] == '\r');
}

/* HF: each extended grapheme cluster (grapheme.h: unicode-segmentation's
 * Unicode 17.0 clusters) of fewer than 6 bytes is replaced whole when a rule
 * matches its start (the shortest rule); otherwise each of its characters
 * is replaced by the rule matching its start, or kept. An ASCII character
 * alone in its cluster takes its one-byte rule from a table; the clusters
 * are looked for in the stretches between such characters, which start and
 * end at cluster boundaries. */
int sl_precompiled_hf(const sl_charsmap *cm, const char *s, size_t n, sl_buf *out, sl_err *err)
{
    (void)err;
    for (size_t i = 0; i < n;) {
        uint8_t c = (uint8_t)s[i];
        if (ascii_alone(s, n, i) && (!cm->ascii_rep[c] || cm->ascii_rep_len[c] < 255)) {
            if (cm->ascii_rep[c]) {
                sl_buf_append(out, cm->ascii_rep[c], cm->ascii_rep_len[c]);
                i++;
                continue;
            }
            size_t j = i + 1; /* a run of such characters that stay as they are */
            while (j < n && (uint8_t)s[j] < 0x80 && !cm->ascii_rep[(uint8_t)s[j]] && ascii_alone(s, n, j))
                j++;
            sl_buf_append(out, s + i, j - i);
            i = j;
            continue;
        }
        size_t j = i + 1;
        while (j < n && !ascii_alone(s, n, j))
            j++;
        hf_clusters(cm, s + i, j - i, out);
        i = j;
    }
    return 0;
}
