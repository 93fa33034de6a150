/* See pretokenizer.h. Each step turns the list of pieces into a new one:
 * for each piece, the matches of the step's pattern (HF's
 * Pattern::find_matches: a list of ranges covering the piece, each a match
 * or not), then the behavior folds them into the new pieces
 * (NormalizedString::split), and empty pieces are dropped
 * (PreTokenizedString::split). */
#include "tokenize/pretokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "stream/buf.h"
#include "stream/utf8.h"
#include "tokenize/decoders.h"
#include "tokenize/hf_classes.h"

struct sl_pt_match {
    size_t a, b;
    int is_match;
};

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static int behavior_of(const sl_json *v, const char *what, int def, int *out, const char *name, sl_err *err)
{
    const sl_json *b = sl_json_get(v, "behavior");
    if (!b || b->type == SL_JSON_NULL) {
        if (def < 0)
            return sl_errf(err, "%s: pre_tokenizer %s has no 'behavior'", name, what);
        *out = def;
        return 0;
    }
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    for (int i = 0; i < 5; i++)
        if (b->type == SL_JSON_STRING && !strcmp(b->str, names[i])) {
            *out = i;
            return 0;
        }
    return sl_errf(err,
                   "%s: pre_tokenizer %s: behavior '%.40s' is not one of Removed, Isolated, "
                   "MergedWithPrevious, MergedWithNext, Contiguous",
                   name, what, b->type == SL_JSON_STRING ? b->str : "?");
}

static sl_pretok_step *add(sl_pretokenizer *p, int kind, const char *name, sl_err *err)
{
    if (p->n == SL_PRETOK_MAX) {
        sl_errf(err, "%s: more than %d pre_tokenizer steps", name, SL_PRETOK_MAX);
        return NULL;
    }
    sl_pretok_step *s = &p->step[p->n++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

static int load(sl_pretokenizer *p, const sl_json *v, int depth, const char *name, sl_err *err)
{
    if (!v || v->type == SL_JSON_NULL)
        return 0;
    const char *t = type_of(v);
    sl_pretok_step *s;
    if (!strcmp(t, "Sequence")) {
        const sl_json *list = sl_json_get(v, "pretokenizers");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: pre_tokenizer Sequence has no 'pretokenizers' array", name);
        if (depth >= 8)
            return sl_errf(err, "%s: pre_tokenizer Sequences nested too deeply", name);
        for (size_t i = 0; i < list->n; i++)
            if (load(p, list->kids[i], depth + 1, name, err))
                return -1;
        return 0;
    }
    if (!strcmp(t, "BertPreTokenizer")) { /* whitespace removed, then punctuation isolated */
        if (!(s = add(p, SL_PT_CHARS, name, err)))
            return -1;
        s->cls = SL_HF_WS, s->behavior = SL_SPLIT_REMOVED;
        if (!(s = add(p, SL_PT_CHARS, name, err)))
            return -1;
        s->cls = SL_HF_PUNC, s->behavior = SL_SPLIT_ISOLATED;
        return 0;
    }
    if (!strcmp(t, "WhitespaceSplit")) {
        if (!(s = add(p, SL_PT_CHARS, name, err)))
            return -1;
        s->cls = SL_HF_WS, s->behavior = SL_SPLIT_REMOVED;
        return 0;
    }
    if (!strcmp(t, "Whitespace")) {
        if (!(s = add(p, SL_PT_WHITESPACE, name, err)))
            return -1;
        s->behavior = SL_SPLIT_REMOVED;
        return 0;
    }
    if (!strcmp(t, "Punctuation")) {
        if (!(s = add(p, SL_PT_CHARS, name, err)))
            return -1;
        s->cls = SL_HF_PUNC;
        return behavior_of(v, t, SL_SPLIT_ISOLATED, &s->behavior, name, err);
    }
    if (!strcmp(t, "Digits")) {
        if (!(s = add(p, SL_PT_CHARS, name, err)))
            return -1;
        int ind = 0;
        if (sl_json_get(v, "individual_digits") && sl_json_get_bool(v, "individual_digits", &ind))
            return sl_errf(err, "%s: pre_tokenizer Digits: individual_digits is not a boolean", name);
        s->cls = SL_HF_NUM, s->behavior = ind ? SL_SPLIT_ISOLATED : SL_SPLIT_CONTIGUOUS;
        return 0;
    }
    if (!strcmp(t, "Split")) {
        const sl_json *pat = sl_json_get(v, "pattern");
        const sl_json *str = pat && pat->type == SL_JSON_OBJECT ? sl_json_get(pat, "String") : NULL;
        const sl_json *rx = pat && pat->type == SL_JSON_OBJECT ? sl_json_get(pat, "Regex") : NULL;
        const sl_json *ps = str ? str : rx;
        if (!ps || ps->type != SL_JSON_STRING)
            return sl_errf(err, "%s: pre_tokenizer Split needs a pattern {\"String\"|\"Regex\": ...}", name);
        if (ps->str_len == 0)
            return sl_errf(err, "%s: pre_tokenizer Split: the pattern is empty", name);
        if (!(s = add(p, SL_PT_SPLIT, name, err)))
            return -1;
        s->pat = sl_xstrndup(ps->str, ps->str_len);
        s->pat_len = ps->str_len;
        int inv = 0;
        if (sl_json_get(v, "invert") && sl_json_get_bool(v, "invert", &inv))
            return sl_errf(err, "%s: pre_tokenizer Split: invert is not a boolean", name);
        s->invert = inv;
        if (behavior_of(v, t, -1, &s->behavior, name, err))
            return -1;
        if (rx) {
            sl_buf what = {0};
            sl_buf_printf(&what, "%s: pre_tokenizer Split", name);
            s->re = sl_hf_regex_new(ps->str, ps->str_len, what.data, err);
            sl_buf_free(&what);
            if (!s->re)
                return -1;
        }
        return 0;
    }
    if (!strcmp(t, "Metaspace")) {
        const sl_json *r = sl_json_get(v, "replacement");
        uint32_t cp;
        if (!r || r->type != SL_JSON_STRING || r->str_len > 4 || !r->str_len ||
            sl_utf8_seq((const uint8_t *)r->str, r->str_len, &cp) != r->str_len)
            return sl_errf(err, "%s: pre_tokenizer Metaspace needs a one-character 'replacement'", name);
        if (!(s = add(p, SL_PT_METASPACE, name, err)))
            return -1;
        memcpy(s->rep, r->str, r->str_len);
        s->rep_len = r->str_len;
        int split;
        s->split = sl_json_get_bool(v, "split", &split) == 0 ? split : 1; /* HF's default: true */
        return sl_prepend_scheme(v, name, "pre_tokenizer", &s->scheme, err);
    }
    return sl_errf(err,
                   "%s: pre_tokenizer '%s' is not supported with this model (supported: BertPreTokenizer, Whitespace, "
                   "WhitespaceSplit, Punctuation, Digits, Split, Metaspace, Sequence)",
                   name, t);
}

int sl_pretokenizer_load(sl_pretokenizer *p, const sl_json *v, const char *name, sl_err *err)
{
    sl_hf_classes_init();
    return load(p, v, 0, name, err);
}

void sl_pretokenizer_free(sl_pretokenizer *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->step[i].pat);
        sl_hf_regex_free(p->step[i].re);
    }
    p->n = 0;
}

void sl_pretok_scratch_free(sl_pretok_scratch *s)
{
    free(s->a);
    free(s->b);
    free(s->m);
    sl_hf_match_free(&s->rx);
    sl_buf_free(&s->ms[0]);
    sl_buf_free(&s->ms[1]);
    memset(s, 0, sizeof *s);
}

/* --- matching ------------------------------------------------------------ */
static void push_match(sl_pretok_scratch *s, size_t a, size_t b, int is_match)
{
    if (s->nm == s->cap_m) {
        s->cap_m = s->cap_m ? 2 * s->cap_m : 64;
        s->m = sl_xrealloc(s->m, s->cap_m * sizeof *s->m);
    }
    s->m[s->nm++] = (struct sl_pt_match){a, b, is_match};
}

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

static uint8_t cls_at(const char *t, size_t n, size_t i, size_t *k)
{
    uint32_t cp;
    *k = next_cp(t, n, i, &cp);
    return cp < 0x110000 ? sl_hf_class(cp) : 0;
}

/* A character class (HF's Pattern for Fn(char) -> bool): each matching
 * character is a match of its own. */
static void match_chars(sl_pretok_scratch *s, uint8_t cls, const char *t, size_t n)
{
    size_t last = 0;
    for (size_t i = 0; i < n;) {
        size_t k;
        if (cls_at(t, n, i, &k) & cls) {
            if (last < i)
                push_match(s, last, i, 0);
            push_match(s, i, i + k, 1);
            last = i + k;
        }
        i += k;
    }
    if (last < n)
        push_match(s, last, n, 0);
}

/* The Whitespace pre-tokenizer: the matches of \w+|[^\w\s]+, inverted. */
static void match_whitespace(sl_pretok_scratch *s, const char *t, size_t n)
{
    size_t prev = 0;
    for (size_t i = 0; i < n;) {
        size_t k;
        uint8_t c = cls_at(t, n, i, &k);
        if (c & SL_HF_WS) {
            i += k;
            continue;
        }
        int word = (c & SL_HF_WORD) != 0;
        size_t j = i + k;
        while (j < n) {
            uint8_t d = cls_at(t, n, j, &k);
            if (word ? !(d & SL_HF_WORD) : (d & (SL_HF_WORD | SL_HF_WS)) != 0)
                break;
            j += k;
        }
        if (prev != i)
            push_match(s, prev, i, 1); /* inverted: the whitespace between is the match */
        push_match(s, i, j, 0);
        prev = i = j;
    }
    if (prev != n)
        push_match(s, prev, n, 1);
}

typedef struct {
    sl_pretok_scratch *s;
    size_t prev;
} rx_ctx;

static void on_match(void *ctx, size_t a, size_t b)
{
    rx_ctx *c = ctx;
    if (c->prev != a)
        push_match(c->s, c->prev, a, 0);
    push_match(c->s, a, b, 1);
    c->prev = b;
}

static int match_split(sl_pretok_scratch *s, const sl_pretok_step *st, const char *t, size_t n, sl_err *err)
{
    rx_ctx c = {s, 0};
    if (st->re) {
        if (sl_hf_regex_each(st->re, &s->rx, t, n, on_match, &c, err))
            return -1;
    } else {
        for (size_t i = 0; i + st->pat_len <= n;) {
            const char *hit = memmem(t + i, n - i, st->pat, st->pat_len);
            if (!hit)
                break;
            size_t a = (size_t)(hit - t);
            on_match(&c, a, a + st->pat_len);
            i = a + st->pat_len;
        }
    }
    if (c.prev != n)
        push_match(s, c.prev, n, 0);
    return 0;
}

/* --- behaviors ----------------------------------------------------------- */
static void push_span(sl_pretok_scratch *s, size_t off, size_t len)
{
    if (s->nb == s->cap_b) {
        s->cap_b = s->cap_b ? 2 * s->cap_b : 64;
        s->b = sl_xrealloc(s->b, s->cap_b * sizeof *s->b);
    }
    s->b[s->nb++] = (sl_span){off, len};
}

/* Folds the matches of the piece at `base` into pieces appended to s->b
 * (HF's NormalizedString::split; empty pieces dropped). */
static void fold(sl_pretok_scratch *s, int behavior, int invert, size_t base)
{
    struct sl_pt_match *m = s->m;
    size_t n = s->nm, k = 0; /* k: folded ranges, written over m[0..k) */
    if (invert)
        for (size_t i = 0; i < n; i++)
            m[i].is_match = !m[i].is_match;
    int prev = 0;
    switch (behavior) {
    case SL_SPLIT_REMOVED:
        for (size_t i = 0; i < n; i++)
            if (!m[i].is_match)
                m[k++] = m[i];
        break;
    case SL_SPLIT_ISOLATED: k = n; break;
    case SL_SPLIT_CONTIGUOUS:
        for (size_t i = 0; i < n; i++) {
            if (m[i].is_match == prev && k)
                m[k - 1].b = m[i].b;
            else
                m[k++] = m[i];
            prev = m[i].is_match;
        }
        break;
    case SL_SPLIT_MERGED_PREV:
        for (size_t i = 0; i < n; i++) {
            if (m[i].is_match && !prev && k)
                m[k - 1].b = m[i].b;
            else
                m[k++] = m[i];
            prev = m[i].is_match;
        }
        break;
    case SL_SPLIT_MERGED_NEXT: { /* from the end: a match joins the range after it */
        size_t top = n;          /* folded ranges, written over m[top..n) from the end */
        for (size_t i = n; i-- > 0;) {
            if (m[i].is_match && !prev && top < n)
                m[top].a = m[i].a;
            else
                m[--top] = m[i];
            prev = m[i].is_match;
        }
        for (size_t i = top; i < n; i++)
            m[k++] = m[i];
        break;
    }
    }
    for (size_t i = 0; i < k; i++)
        if (m[i].b > m[i].a)
            push_span(s, base + m[i].a, m[i].b - m[i].a);
}

int sl_pretokenizer_has_metaspace(const sl_pretokenizer *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->step[i].kind == SL_PT_METASPACE)
            return 1;
    return 0;
}

/* s[0..n) with every space replaced by rep, appended to out. */
static void replace_spaces(const char *s, size_t n, const char *rep, size_t rep_len, sl_buf *out)
{
    size_t done = 0;
    for (const char *q; done < n && (q = memchr(s + done, ' ', n - done));) {
        size_t i = (size_t)(q - s);
        sl_buf_append(out, s + done, i - done);
        sl_buf_append(out, rep, rep_len);
        done = i + 1;
    }
    sl_buf_append(out, s + done, n - done);
}

/* HF's Metaspace on every piece of t: spaces become the replacement, which
 * is prepended (always; or with "first" to a piece HF aligns with the
 * document's offset 0) unless the piece already starts with it, then with
 * split a piece starts at each replacement (MergedWithNext). The new text
 * goes to out; *first becomes the number of its leading bytes aligned with
 * the document's offset 0. */
static void metaspace(const sl_pretok_step *st, sl_pretok_scratch *s, const char *t, size_t *first, sl_buf *out)
{
    sl_buf_clear(out);
    size_t nf = 0;
    s->nb = 0;
    for (size_t i = 0; i < s->na; i++) {
        const char *p = t + s->a[i].off;
        size_t n = s->a[i].len, at = out->len;
        int starts = s->a[i].off < *first;
        int prepend = st->scheme == SL_PREPEND_ALWAYS || (st->scheme == SL_PREPEND_FIRST && starts);
        if (prepend && p[0] != ' ' && !(n >= st->rep_len && !memcmp(p, st->rep, st->rep_len)))
            sl_buf_append(out, st->rep, st->rep_len);
        if (starts) { /* the bytes of the piece that stand for the document's first character */
            size_t k = *first - s->a[i].off < n ? *first - s->a[i].off : n;
            replace_spaces(p, k, st->rep, st->rep_len, out);
            nf = out->len;
            replace_spaces(p + k, n - k, st->rep, st->rep_len, out);
        } else {
            replace_spaces(p, n, st->rep, st->rep_len, out);
        }
        size_t start = at;
        if (st->split) /* (pieces are words: a byte loop beats memmem's setup) */
            for (size_t j = at + 1; j + st->rep_len <= out->len; j++) {
                if (out->data[j] != st->rep[0] || memcmp(out->data + j, st->rep, st->rep_len))
                    continue;
                if (j > start) {
                    push_span(s, start, j - start);
                    start = j;
                }
                j += st->rep_len - 1;
            }
        if (out->len > start)
            push_span(s, start, out->len - start);
    }
    *first = nf;
}

int sl_pretokenize(const sl_pretokenizer *p, sl_pretok_scratch *s, const char *t, size_t n, sl_err *err)
{
    return sl_pretokenize_first(p, s, t, n, 0, err);
}

int sl_pretokenize_first(const sl_pretokenizer *p, sl_pretok_scratch *s, const char *t, size_t n, size_t first,
                         sl_err *err)
{
    s->na = 0;
    s->text = t;
    if (n == 0)
        return 0;
    int which = 0;
    if (s->cap_a == 0) {
        s->cap_a = 64;
        s->a = sl_xmalloc(s->cap_a * sizeof *s->a);
    }
    s->a[s->na++] = (sl_span){0, n};
    for (int k = 0; k < p->n; k++) {
        const sl_pretok_step *st = &p->step[k];
        s->nb = 0;
        if (st->kind == SL_PT_METASPACE) {
            sl_buf *out = &s->ms[which];
            which ^= 1;
            metaspace(st, s, t, &first, out);
            t = s->text = out->data;
        }
        for (size_t i = 0; i < s->na && st->kind != SL_PT_METASPACE; i++) {
            const char *piece = t + s->a[i].off;
            size_t len = s->a[i].len;
            s->nm = 0;
            if (st->kind == SL_PT_CHARS)
                match_chars(s, st->cls, piece, len);
            else if (st->kind == SL_PT_WHITESPACE)
                match_whitespace(s, piece, len);
            else if (match_split(s, st, piece, len, err))
                return -1;
            fold(s, st->behavior, st->invert, s->a[i].off);
        }
        sl_span *sw = s->a;
        s->a = s->b, s->b = sw;
        size_t cw = s->cap_a;
        s->cap_a = s->cap_b, s->cap_b = cw;
        s->na = s->nb;
    }
    return 0;
}
