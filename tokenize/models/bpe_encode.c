/* The encode pipeline (see bpe.h for the order of the steps and why). */
#include <stdlib.h>
#include <string.h>

#include "tokenize/models/bpe_internal.h"

sl_bpe_state *sl_bpe_state_new(const sl_bpe *b)
{
    sl_bpe_state *s = sl_xcalloc(1, sizeof *s);
    s->bpe = b;
    if (b->re)
        s->md = pcre2_match_data_create_from_pattern(b->re, NULL);
    sl_scache_init(&s->cache, b->cache);
    s->raw_special = s->norm_special = 1;
    for (size_t i = 0; i < b->n_added; i++)
        if (!b->added[i].special)
            *(b->added[i].normalized ? &s->norm_special : &s->raw_special) = 0;
    return s;
}

void sl_bpe_state_free(sl_bpe_state *s)
{
    if (!s)
        return;
    if (s->md)
        pcre2_match_data_free(s->md);
    sl_scache_free(&s->cache);
    free(s->pc);
    free(s->pw);
    sl_buf_free(&s->norm);
    sl_buf_free(&s->tmp);
    sl_buf_free(&s->piece);
    free(s->sym);
    free(s->prev);
    free(s->next);
    free(s->link);
    free(s->heap);
    free(s->memo);
    free(s->grid);
    free(s->cat);
    sl_norm_scratch_free(&s->ns);
    sl_pretok_scratch_free(&s->ps1);
    sl_pretok_scratch_free(&s->ps2);
    sl_buf_free(&s->gp);
    sl_buf_free(&s->bl);
    sl_buf_free(&s->bl2);
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
    if (b->scan && b->scan_many) {
        size_t ends[256];
        while (pos < n) {
            size_t m = b->scan_many((const uint8_t *)p, n, pos, ends, sizeof ends / sizeof *ends);
            if (ends_only)
                for (size_t i = 0; i < m; i++)
                    sl_ids_push(out, (uint32_t)ends[i]);
            else
                sl_bpe_pieces(b, s, (const uint8_t *)p, n, pos, ends, m, out);
            pos = ends[m - 1];
        }
        return;
    }
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
        if (ms > pos && !b->drop_gaps) { /* gap (never expected of the known patterns) */
            if (ends_only)
                sl_ids_push(out, (uint32_t)ms);
            else
                sl_bpe_piece(b, s, (const uint8_t *)p + pos, ms - pos, out);
        }
        if (me <= ms && b->drop_gaps) { /* an empty match: go on after it */
            uint32_t cp;
            size_t k = ms < n ? sl_utf8_seq((const uint8_t *)p + ms, n - ms, &cp) : 0;
            pos = ms + (k ? k : 1);
            continue;
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

/* The general pre-tokenizer, after the ByteLevel step: one piece of its
 * output (bytes; p[0..n) valid UTF-8 or not). Without steps after it the
 * piece is encoded as is; otherwise they split its byte-level text, and
 * each of their pieces is mapped back to the bytes it stands for. */
static int general_bl_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, sl_ids *out, sl_err *err)
{
    if (!b->pre_after.n) {
        sl_bpe_piece(b, s, p, n, out);
        return 0;
    }
    sl_buf_clear(&s->bl);
    for (size_t i = 0; i < n; i++)
        sl_utf8_put(&s->bl, b->b2u[p[i]]);
    if (sl_pretokenize(&b->pre_after, &s->ps2, s->bl.data, s->bl.len, err))
        return -1;
    for (size_t i = 0; i < s->ps2.na; i++) {
        const uint8_t *q = (const uint8_t *)s->bl.data + s->ps2.a[i].off;
        size_t k = s->ps2.a[i].len;
        sl_buf_clear(&s->bl2);
        for (size_t j = 0; j < k;) {
            uint32_t cp = 0;
            size_t m = sl_utf8_seq(q + j, k - j, &cp);
            if (m && cp < 512 && b->u2b[cp] >= 0) /* always: the pieces are whole characters of the 256 */
                sl_buf_putc(&s->bl2, (char)b->u2b[cp]);
            j += m ? m : 1;
        }
        sl_bpe_piece(b, s, (const uint8_t *)s->bl2.data, s->bl2.len, out);
    }
    return 0;
}

/* HF's PreTokenizedString through the general steps (each step splits
 * every piece independently, so each piece goes through all of them in
 * turn): the steps before ByteLevel, ByteLevel's prefix space and GPT-2
 * split, then general_bl_piece. */
static int encode_general(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    if (sl_pretokenize(&b->pre_before, &s->ps1, p, n, err))
        return -1;
    for (size_t i = 0; i < s->ps1.na; i++) {
        const char *q = p + s->ps1.a[i].off;
        size_t k = s->ps1.a[i].len;
        if (b->add_prefix_space && q[0] != ' ') {
            sl_buf_clear(&s->gp);
            sl_buf_putc(&s->gp, ' ');
            sl_buf_append(&s->gp, q, k);
            q = s->gp.data;
            k = s->gp.len;
        }
        if (!b->bl_regex) {
            if (general_bl_piece(b, s, (const uint8_t *)q, k, out, err))
                return -1;
            continue;
        }
        for (size_t pos = 0; pos < k;) {
            size_t e = sl_pretok_scan((const uint8_t *)q, k, pos);
            if (general_bl_piece(b, s, (const uint8_t *)q + pos, e - pos, out, err))
                return -1;
            pos = e;
        }
    }
    return 0;
}

/* A normalized piece with no added tokens in it: ByteLevel pre-tokenizer
 * (optional prefix space, regex split) and BPE. */
static int encode_plain(const sl_bpe *b, sl_bpe_state *s, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    if (n == 0)
        return 0;
    if (b->general)
        return encode_general(b, s, p, n, out, err);
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
    return 0;
}

/* What the gap callbacks of sl_added_split need. */
typedef struct {
    const sl_bpe *b;
    sl_bpe_state *s;
    sl_ids *out;
} gap_ctx;

static int gap_normalized(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    gap_ctx *g = ctx;
    (void)off;
    return encode_plain(g->b, g->s, p, n, g->out, err);
}

static int gap_raw(void *ctx, const char *p, size_t n, size_t off, sl_err *err);

int sl_bpe_encode(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_special_mode mode, sl_ids *out,
                  sl_err *err)
{
    size_t pos = 0;
    while (pos < n) {
        size_t v = pos + sl_utf8_check(text + pos, n - pos);
        if (v > pos) {
            s->mode = (int)mode;
            s->base = pos;
            gap_ctx g = {b, s, out};
            if (mode == SL_SPECIAL_PLAIN && s->raw_special) { /* no added token to split off */
                if (gap_raw(&g, text + pos, v - pos, 0, err))
                    return -1;
            } else if (sl_added_split(b->added, &b->raw_trie, text + pos, v - pos, pos, mode, gap_raw, &g, out, err)) {
                return -1;
            }
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

static int gap_raw(void *ctx, const char *p, size_t n, size_t off, sl_err *err)
{
    gap_ctx *g = ctx;
    const sl_bpe *b = g->b;
    sl_bpe_state *s = g->s;
    const char *t = p;
    size_t tn = n;
    if (b->norm.n) {
        if (sl_normalize(&b->norm, &s->ns, p, n, &s->norm, err))
            return -1;
        t = s->norm.data;
        tn = s->norm.len;
    }
    (void)off;
    if (s->mode == SL_SPECIAL_PLAIN && s->norm_special)
        return encode_plain(b, s, t, tn, g->out, err);
    return sl_added_split(b->added, &b->norm_trie, t, tn, s->base, (sl_special_mode)s->mode, gap_normalized, g, g->out,
                          err);
}
