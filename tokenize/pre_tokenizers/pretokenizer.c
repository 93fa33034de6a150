/* See pretokenizer.h. Each step splits a piece into new ones: the matches
 * of the step's pattern (HF's Pattern::find_matches: ranges covering the
 * piece, each a match or not), folded by the behavior into the new pieces
 * (NormalizedString::split), empty pieces dropped (PreTokenizedString::
 * split). HF runs each step over every piece before the next step; as the
 * pieces of a step are split independently, each piece here goes through
 * all the later steps as soon as it is cut (the same pieces in the same
 * order), so nothing is held per piece of the document. */
#include "tokenize/pre_tokenizers/pretokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "tokenize/decoders/decoders.h"
#include "tokenize/normalizers/hf_classes.h"

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
    sl_buf_free(&s->text_copy);
    for (int k = 0; k < SL_PRETOK_MAX; k++) {
        sl_hf_match_free(&s->step_rx[k]);
        sl_buf_free(&s->step_ms[k]);
    }
    memset(s, 0, sizeof *s);
}

/* --- one piece through the steps ----------------------------------------- */
typedef struct {
    const sl_pretokenizer *p;
    sl_pretok_scratch *sc;
    sl_pretok_fn fn;
    void *ctx;
    sl_err *err;
    int failed; /* fn or a step failed (err set): the rest is skipped */
} walk;

static int piece_at(walk *w, int k, const char *t, size_t off, size_t len, size_t first);

/* HF's NormalizedString::split as the matches of a piece come, left to
 * right: a range goes on to the next step as soon as no later match can
 * join it. */
typedef struct {
    walk *w;
    int k, behavior, invert;
    const char *t; /* the text of the piece (its step's) */
    size_t base;   /* the piece's offset in t */
    size_t first;  /* leading bytes of t aligned with the document's offset 0 */
    int prev;      /* the last match's is_match (after invert) */
    int has;       /* a range is pending: [pa, pb) */
    size_t pa, pb;
    size_t rx_prev; /* regex and literal: where the last match ended */
} folder;

static void pass_on(folder *f, size_t a, size_t b)
{
    if (b > a && !f->w->failed && piece_at(f->w, f->k + 1, f->t, f->base + a, b - a, f->first))
        f->w->failed = 1;
}

/* One range of the piece, a match or not (HF's find_matches, in order). */
static void fold_one(folder *f, size_t a, size_t b, int is_match)
{
    if (f->invert)
        is_match = !is_match;
    switch (f->behavior) {
    case SL_SPLIT_REMOVED:
        if (!is_match)
            pass_on(f, a, b);
        break;
    case SL_SPLIT_ISOLATED: pass_on(f, a, b); break;
    case SL_SPLIT_CONTIGUOUS: /* a range joins the one before when both are matches or both not */
        if (f->has && is_match == f->prev) {
            f->pb = b;
            break;
        }
        if (f->has)
            pass_on(f, f->pa, f->pb);
        f->pa = a, f->pb = b, f->has = 1;
        break;
    case SL_SPLIT_MERGED_PREV: /* a match joins the range before it when that is not a match */
        if (is_match && !f->prev && f->has) {
            f->pb = b;
            break;
        }
        if (f->has)
            pass_on(f, f->pa, f->pb);
        f->pa = a, f->pb = b, f->has = 1;
        break;
    case SL_SPLIT_MERGED_NEXT: /* a match joins the range after it when that is not a match */
        if (f->has) {          /* the pending range is a match */
            if (!is_match) {
                pass_on(f, f->pa, b);
                f->has = 0;
                break;
            }
            pass_on(f, f->pa, f->pb);
            f->has = 0;
        }
        if (is_match)
            f->pa = a, f->pb = b, f->has = 1;
        else
            pass_on(f, a, b);
        break;
    }
    f->prev = is_match;
}

static void fold_end(folder *f)
{
    if (f->has)
        pass_on(f, f->pa, f->pb);
    f->has = 0;
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
static void match_chars(folder *f, uint8_t cls, const char *t, size_t n)
{
    size_t last = 0;
    for (size_t i = 0; i < n && !f->w->failed;) {
        size_t k;
        if (cls_at(t, n, i, &k) & cls) {
            if (last < i)
                fold_one(f, last, i, 0);
            fold_one(f, i, i + k, 1);
            last = i + k;
        }
        i += k;
    }
    if (last < n)
        fold_one(f, last, n, 0);
}

/* The Whitespace pre-tokenizer: the matches of \w+|[^\w\s]+, inverted. */
static void match_whitespace(folder *f, const char *t, size_t n)
{
    size_t prev = 0;
    for (size_t i = 0; i < n && !f->w->failed;) {
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
            fold_one(f, prev, i, 1); /* inverted: the whitespace between is the match */
        fold_one(f, i, j, 0);
        prev = i = j;
    }
    if (prev != n)
        fold_one(f, prev, n, 1);
}

static void on_match(void *ctx, size_t a, size_t b)
{
    folder *f = ctx;
    if (f->rx_prev != a)
        fold_one(f, f->rx_prev, a, 0);
    fold_one(f, a, b, 1);
    f->rx_prev = b;
}

static int match_split(folder *f, const sl_pretok_step *st, const char *t, size_t n, sl_err *err)
{
    f->rx_prev = 0;
    if (st->re) {
        if (sl_hf_regex_each(st->re, &f->w->sc->step_rx[f->k], t, n, on_match, f, err))
            return -1;
    } else {
        for (size_t i = 0; i + st->pat_len <= n && !f->w->failed;) {
            const char *hit = memmem(t + i, n - i, st->pat, st->pat_len);
            if (!hit)
                break;
            size_t a = (size_t)(hit - t);
            on_match(f, a, a + st->pat_len);
            i = a + st->pat_len;
        }
    }
    if (f->rx_prev != n)
        fold_one(f, f->rx_prev, n, 0);
    return 0;
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

/* HF's Metaspace on one piece: spaces become the replacement, which is
 * prepended (always; or with "first" to a piece HF aligns with the
 * document's offset 0) unless the piece already starts with it, then with
 * split a piece starts at each replacement (MergedWithNext). The new text
 * is the step's own; its leading bytes aligned with the document's offset 0
 * are the `first` of the steps after. */
static int metaspace(walk *w, int k, const char *t, size_t off, size_t n, size_t first)
{
    const sl_pretok_step *st = &w->p->step[k];
    sl_buf *out = &w->sc->step_ms[k];
    const char *p = t + off;
    sl_buf_clear(out);
    size_t nf = 0;
    int starts = off < first;
    int prepend = st->scheme == SL_PREPEND_ALWAYS || (st->scheme == SL_PREPEND_FIRST && starts);
    if (prepend && p[0] != ' ' && !(n >= st->rep_len && !memcmp(p, st->rep, st->rep_len)))
        sl_buf_append(out, st->rep, st->rep_len);
    if (starts) { /* the bytes of the piece that stand for the document's first character */
        size_t kk = first - off < n ? first - off : n;
        replace_spaces(p, kk, st->rep, st->rep_len, out);
        nf = out->len;
        replace_spaces(p + kk, n - kk, st->rep, st->rep_len, out);
    } else {
        replace_spaces(p, n, st->rep, st->rep_len, out);
    }
    /* out does not move below: the later steps have texts of their own */
    size_t start = 0;
    if (st->split) /* (pieces are words: a byte loop beats memmem's setup) */
        for (size_t j = 1; j + st->rep_len <= out->len; j++) {
            if (out->data[j] != st->rep[0] || memcmp(out->data + j, st->rep, st->rep_len))
                continue;
            if (j > start) {
                if (piece_at(w, k + 1, out->data, start, j - start, nf))
                    return -1;
                start = j;
            }
            j += st->rep_len - 1;
        }
    if (out->len > start)
        return piece_at(w, k + 1, out->data, start, out->len - start, nf);
    return 0;
}

/* The piece t[off, off + len) through steps k, k + 1, ...: its pieces to fn. */
static int piece_at(walk *w, int k, const char *t, size_t off, size_t len, size_t first)
{
    if (w->failed)
        return -1;
    if (k == w->p->n) {
        if (w->fn(w->ctx, t + off, len, w->err))
            w->failed = 1;
        return w->failed ? -1 : 0;
    }
    const sl_pretok_step *st = &w->p->step[k];
    if (st->kind == SL_PT_METASPACE) {
        if (metaspace(w, k, t, off, len, first))
            w->failed = 1;
        return w->failed ? -1 : 0;
    }
    folder f = {.w = w, .k = k, .behavior = st->behavior, .invert = st->invert, .t = t, .base = off, .first = first};
    const char *piece = t + off;
    if (st->kind == SL_PT_CHARS)
        match_chars(&f, st->cls, piece, len);
    else if (st->kind == SL_PT_WHITESPACE)
        match_whitespace(&f, piece, len);
    else if (match_split(&f, st, piece, len, w->err))
        w->failed = 1;
    if (!w->failed)
        fold_end(&f);
    return w->failed ? -1 : 0;
}

int sl_pretokenize_each(const sl_pretokenizer *p, sl_pretok_scratch *sc, const char *s, size_t n, size_t first,
                        sl_pretok_fn fn, void *ctx, sl_err *err)
{
    if (n == 0)
        return 0;
    walk w = {p, sc, fn, ctx, err, 0};
    return piece_at(&w, 0, s, 0, n, first);
}

/* --- every piece at once --------------------------------------------------- */
typedef struct {
    sl_pretok_scratch *sc;
    const char *t;
    int copy; /* the pieces are in the steps' texts: copied to text_copy */
} collect;

static int collect_piece(void *vc, const char *q, size_t len, sl_err *err)
{
    (void)err;
    collect *c = vc;
    sl_pretok_scratch *s = c->sc;
    size_t off = (size_t)(q - c->t);
    if (c->copy) {
        off = s->text_copy.len;
        sl_buf_append(&s->text_copy, q, len);
    }
    if (s->na == s->cap_a) {
        s->cap_a = s->cap_a ? 2 * s->cap_a : 64;
        s->a = sl_xrealloc(s->a, s->cap_a * sizeof *s->a);
    }
    s->a[s->na++] = (sl_span){off, len};
    return 0;
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
    collect c = {s, t, sl_pretokenizer_has_metaspace(p)};
    sl_buf_clear(&s->text_copy);
    if (sl_pretokenize_each(p, s, t, n, first, collect_piece, &c, err))
        return -1;
    if (c.copy)
        s->text = s->text_copy.data;
    return 0;
}
