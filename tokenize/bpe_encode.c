/* The encode pipeline (see bpe.h for the order of the steps and why). */
#include <stdlib.h>
#include <string.h>

#include "tokenize/bpe_internal.h"

void sl_bpe_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, sl_ids *out);

sl_bpe_state *sl_bpe_state_new(const sl_bpe *b)
{
    sl_bpe_state *s = sl_xcalloc(1, sizeof *s);
    s->bpe = b;
    if (b->re)
        s->md = pcre2_match_data_create_from_pattern(b->re, NULL);
    s->cache = sl_xcalloc((size_t)1 << SL_BPE_CACHE_BITS, sizeof *s->cache);
    return s;
}

void sl_bpe_state_free(sl_bpe_state *s)
{
    if (!s)
        return;
    if (s->md)
        pcre2_match_data_free(s->md);
    free(s->cache);
    sl_buf_free(&s->norm);
    sl_buf_free(&s->tmp);
    sl_buf_free(&s->piece);
    free(s->sym);
    free(s->prev);
    free(s->next);
    free(s->heap);
    sl_norm_scratch_free(&s->ns);
    free(s);
}

uint64_t sl_bpe_state_work(const sl_bpe_state *s)
{
    return s->work;
}

/* Calls fn on each regex piece of p[0..n) (valid UTF-8). Every byte lands
 * in exactly one piece: the pattern's last alternatives cover every code
 * point; a gap or an empty match would be a bug, and is still handled by
 * making the gap a piece of its own. */
static void regex_pieces(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, int ends_only)
{
    size_t pos = 0;
    if (b->scan) {
        while (pos < n) {
            size_t e = b->scanner((const uint8_t *)p, n, pos);
            if (ends_only)
                sl_ids_push(out, (uint32_t)e);
            else
                sl_bpe_piece(b, s, (const uint8_t *)p + pos, e - pos, out);
            pos = e;
        }
        return;
    }
    while (pos < n) {
        int rc = b->jit ? pcre2_jit_match(b->re, (PCRE2_SPTR)p, n, pos, 0, s->md, NULL)
                        : pcre2_match(b->re, (PCRE2_SPTR)p, n, pos, PCRE2_NO_UTF_CHECK, s->md, NULL);
        size_t ms = n, me = n;
        if (rc >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
            ms = ov[0];
            me = ov[1];
        }
        if (ms > pos) { /* gap (never expected) */
            if (ends_only)
                sl_ids_push(out, (uint32_t)ms);
            else
                sl_bpe_piece(b, s, (const uint8_t *)p + pos, ms - pos, out);
        }
        if (me <= ms) { /* empty match (never expected): take one character */
            uint32_t cp;
            size_t k = ms < n ? sl_utf8_seq((const uint8_t *)p + ms, n - ms, &cp) : 0;
            me = ms + (k ? k : 1);
            if (me > n)
                me = n;
        }
        if (me > ms) {
            if (ends_only)
                sl_ids_push(out, (uint32_t)me);
            else
                sl_bpe_piece(b, s, (const uint8_t *)p + ms, me - ms, out);
        }
        pos = me;
    }
}

int sl_bpe_pretokenize(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_ids *ends)
{
    if (!b->re)
        return -1;
    regex_pieces(b, s, text, n, ends, 1);
    return 0;
}

/* A normalized piece with no added tokens in it: ByteLevel pre-tokenizer
 * (optional prefix space, regex split) and BPE. */
static void encode_plain(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out)
{
    if (n == 0)
        return;
    if (b->add_prefix_space && p[0] != ' ') {
        sl_buf_clear(&s->tmp);
        sl_buf_putc(&s->tmp, ' ');
        sl_buf_append(&s->tmp, p, n);
        p = s->tmp.data;
        n = s->tmp.len;
    }
    if (b->use_regex)
        regex_pieces(b, s, p, n, out, 0);
    else
        sl_bpe_piece(b, s, (const uint8_t *)p, n, out);
}

static uint32_t char_before(const char *t, size_t pos, size_t *start)
{
    size_t i = pos;
    while (i > 0 && ((uint8_t)t[i - 1] & 0xC0) == 0x80 && pos - i < 3)
        i--;
    if (i > 0)
        i--;
    uint32_t cp = 0;
    if (!sl_utf8_seq((const uint8_t *)t + i, pos - i, &cp))
        cp = (uint8_t)t[pos - 1];
    if (start)
        *start = i;
    return cp;
}

typedef void (*gap_fn)(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err, int *rc);

/* Splits t[0..n) on the tokens of trie: emits gaps through gap(), tokens
 * as their ids. Follows HF AddedVocabulary::find_matches, including
 * single_word (skip a match inside a word), lstrip and rstrip (the token
 * absorbs whitespace on that side). */
static int split_added(const sl_bpe *b, sl_bpe_state *s, const sl_trie *trie, const char *t, size_t n,
                       sl_special_mode mode, gap_fn gap, sl_ids *out, sl_err *err)
{
    size_t done = 0, i = 0;
    int rc = 0;
    while (i < n && trie->n) {
        size_t len = 0;
        int32_t k = sl_trie_longest(trie, t, n, i, &len);
        if (k < 0) {
            i++;
            continue;
        }
        const sl_added *a = &b->added[k];
        size_t start = i, stop = i + len;
        i = stop;
        if (a->special && mode == SL_SPECIAL_PLAIN)
            continue;
        if (a->special && mode == SL_SPECIAL_ERROR)
            return sl_errf(err, "byte %zu: special token '%s' in the text (`special`=error)", s->base + start,
                           a->content);
        if (a->single_word) {
            uint32_t cp;
            int before = start > 0 && sl_uc_is_word(char_before(t, start, NULL));
            int after = stop < n && sl_utf8_seq((const uint8_t *)t + stop, n - stop, &cp) && sl_uc_is_word(cp);
            if (before || after)
                continue;
        }
        if (a->lstrip) {
            while (start > done) {
                size_t cs;
                uint32_t cp = char_before(t, start, &cs);
                if (!sl_uc_is_space(cp) || cs < done)
                    break;
                start = cs;
            }
        }
        if (a->rstrip) {
            uint32_t cp;
            size_t k2;
            while (stop < n && (k2 = sl_utf8_seq((const uint8_t *)t + stop, n - stop, &cp)) && sl_uc_is_space(cp))
                stop += k2;
            i = stop;
        }
        if (start > done) {
            gap(b, s, t + done, start - done, out, err, &rc);
            if (rc)
                return rc;
        }
        sl_ids_push(out, a->id);
        done = stop;
    }
    if (n > done)
        gap(b, s, t + done, n - done, out, err, &rc);
    return rc;
}

static void gap_normalized(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err, int *rc)
{
    (void)err, (void)rc;
    encode_plain(b, s, p, n, out);
}

static void gap_raw(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err, int *rc);

int sl_bpe_encode(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_special_mode mode, sl_ids *out,
                  sl_err *err)
{
    size_t pos = 0;
    while (pos < n) {
        size_t v = pos + sl_utf8_check(text + pos, n - pos);
        if (v > pos) {
            s->mode = (int)mode;
            s->base = pos;
            if (split_added(b, s, &b->raw_trie, text + pos, v - pos, mode, gap_raw, out, err))
                return -1;
        }
        if (v < n) {
            /* Invalid UTF-8 (callers normally repair it first): each byte is
             * a piece of its own, so nothing is lost where the vocab has a
             * token for it. */
            sl_bpe_piece(b, s, (const uint8_t *)text + v, 1, out);
            v++;
        }
        pos = v;
    }
    return 0;
}

static void gap_raw(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err, int *rc)
{
    const char *t = p;
    size_t tn = n;
    if (b->norm.n) {
        if (sl_normalize(&b->norm, &s->ns, p, n, &s->norm, err)) {
            *rc = -1;
            return;
        }
        t = s->norm.data;
        tn = s->norm.len;
    }
    *rc = split_added(b, s, &b->norm_trie, t, tn, (sl_special_mode)s->mode, gap_normalized, out, err);
}
