/* datatrove 0.10.1's quality filters (text/rules.h). Each rule is its
 * datatrove filter() step by step: datatrove/pipeline/filters/
 * gopher_quality_filter.py, gopher_repetition_filter.py, c4_filters.py
 * (C4QualityFilter) and fineweb_quality_filter.py. A rule runs in one of
 * two ways: as datatrove runs it (returning at the first failed check), or
 * in full for --annotate (every signal computed, the first failed check
 * remembered). */
#include "text/rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/json.h"
#include "base/utf8.h"
#include "text/rules_tables.h"
#include "text/sentsplit.h"
#include "text/textnorm.h"
#include "text/wordtok.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_NGRAMS 32

/* --- parameters ------------------------------------------------------------ */

enum { P_GUARD, P_NUM, P_BOOL };

typedef struct {
    const char *key;
    int kind; /* P_GUARD: a number, 0 or none turns the check off (Python's `if self.x and ...`); P_NUM: a
                 number; P_BOOL: true/false */
    double def;
} pdef;

enum { GQ_MIN_WORDS, GQ_MAX_WORDS, GQ_MIN_AVG, GQ_MAX_AVG, GQ_SYMBOL, GQ_BULLET, GQ_ELLIPSIS, GQ_ALPHA, GQ_STOP, GQ_N };
static const pdef gq_defs[] = {
    {"min_doc_words", P_GUARD, 50},
    {"max_doc_words", P_GUARD, 100000},
    {"min_avg_word_length", P_GUARD, 3},
    {"max_avg_word_length", P_GUARD, 10},
    {"max_symbol_word_ratio", P_GUARD, 0.1},
    {"max_bullet_lines_ratio", P_GUARD, 0.9},
    {"max_ellipsis_lines_ratio", P_GUARD, 0.3},
    {"max_non_alpha_words_ratio", P_GUARD, 0.8},
    {"min_stop_words", P_GUARD, 2},
};
enum { GR_LINE, GR_PARA, GR_LINE_CHAR, GR_PARA_CHAR, GR_N };
static const pdef gr_defs[] = {
    {"dup_line_frac", P_GUARD, 0.3},
    {"dup_para_frac", P_GUARD, 0.3},
    {"dup_line_char_frac", P_GUARD, 0.2},
    {"dup_para_char_frac", P_GUARD, 0.2},
};
enum {
    C4_SPLIT_PARAGRAPH,
    C4_CITATIONS,
    C4_TERMINAL,
    C4_MIN_SENTENCES,
    C4_MIN_WORDS,
    C4_MAX_WORD_LEN,
    C4_LOREM,
    C4_JS,
    C4_CURLY,
    C4_POLICY,
    C4_N
};
static const pdef c4_defs[] = {
    {"split_paragraph", P_BOOL, 1},    {"remove_citations", P_BOOL, 1},  {"filter_no_terminal_punct", P_BOOL, 1},
    {"min_num_sentences", P_NUM, 5},   {"min_words_per_line", P_NUM, 3}, {"max_word_length", P_NUM, 1000},
    {"filter_lorem_ipsum", P_BOOL, 1}, {"filter_javascript", P_BOOL, 1}, {"filter_curly_bracket", P_BOOL, 1},
    {"filter_policy", P_BOOL, 1},
};
enum { FW_PUNCT, FW_EXCL_ZERO, FW_SHORT_THR, FW_SHORT_LEN, FW_CHAR_DUP, FW_NEW_LINE, FW_N };
static const pdef fw_defs[] = {
    {"line_punct_thr", P_NUM, 0.12},  {"line_punct_exclude_zero", P_BOOL, 0}, {"short_line_thr", P_NUM, 0.67},
    {"short_line_length", P_NUM, 30}, {"char_duplicates_ratio", P_NUM, 0.01}, {"new_line_ratio", P_NUM, 0.3},
};

static const char *const rule_names[] = {"gopher-quality", "gopher-repetition", "c4", "fineweb"};
static const pdef *const rule_defs[] = {gq_defs, gr_defs, c4_defs, fw_defs};
static const size_t rule_ndefs[] = {NELEM(gq_defs), NELEM(gr_defs), NELEM(c4_defs), NELEM(fw_defs)};

typedef struct {
    int n;
    double frac;  /* NaN: removed */
    char sig[40]; /* its --annotate signal's name */
} ngram_thr;

typedef struct {
    int kind;
    double p[10];
    /* gopher-quality */
    char **stop_words;
    size_t n_stop;
    /* gopher-repetition: (n, fraction) in the order datatrove checks them */
    ngram_thr top[MAX_NGRAMS], dup[MAX_NGRAMS];
    int n_top, n_dup;
    /* fineweb */
    uint32_t *stop_chars; /* sorted; NULL: TERMINAL_PUNCTUATION */
    size_t n_stop_chars;
} rule;

struct sl_rules {
    rule r[SL_RULE_KINDS];
    size_t n;
    sl_wordtok *tok;
};

static const char *const default_stop_words[] = {"the", "be", "to", "of", "and", "that", "have", "with"};

sl_rules *sl_rules_new(void)
{
    return sl_xcalloc(1, sizeof(sl_rules));
}

void sl_rules_free(sl_rules *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        sl_list_free(r->r[i].stop_words, r->r[i].n_stop);
        free(r->r[i].stop_chars);
    }
    sl_wordtok_free(r->tok);
    free(r);
}

static rule *find_rule(sl_rules *r, int kind)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->r[i].kind == kind)
            return &r->r[i];
    return NULL;
}

/* n-grams of size n checked against frac (NaN: no longer), kept sorted by
 * n; top: a top_N_gram threshold, else duplicated_N_n_grams */
static int set_ngram(ngram_thr *t, int *nt, int n, double frac, int top)
{
    for (int i = 0; i < *nt; i++)
        if (t[i].n == n) {
            t[i].frac = frac;
            return 0;
        }
    if (isnan(frac))
        return 0;
    if (*nt == MAX_NGRAMS)
        return -1;
    int i = *nt;
    while (i > 0 && t[i - 1].n > n) {
        t[i] = t[i - 1];
        i--;
    }
    t[i] = (ngram_thr){n, frac, ""};
    snprintf(t[i].sig, sizeof t[i].sig, top ? "gopher_top_%d_gram_char_frac" : "gopher_dup_%d_gram_char_frac", n);
    (*nt)++;
    return 0;
}

static rule *add_rule(sl_rules *r, int kind)
{
    rule *x = find_rule(r, kind);
    if (x)
        return x;
    x = &r->r[r->n++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    for (size_t i = 0; i < rule_ndefs[kind]; i++)
        x->p[i] = rule_defs[kind][i].def;
    if (kind == SL_RULE_GOPHER_QUALITY) {
        x->n_stop = NELEM(default_stop_words);
        x->stop_words = sl_xcalloc(x->n_stop, sizeof *x->stop_words);
        for (size_t i = 0; i < x->n_stop; i++)
            x->stop_words[i] = sl_xstrdup(default_stop_words[i]);
    } else if (kind == SL_RULE_GOPHER_REPETITION) {
        static const struct {
            int n;
            double frac;
        } top[] = {{2, 0.2}, {3, 0.18}, {4, 0.16}},
          dup[] = {{5, 0.15}, {6, 0.14}, {7, 0.13}, {8, 0.12}, {9, 0.11}, {10, 0.10}};
        for (size_t i = 0; i < NELEM(top); i++)
            set_ngram(x->top, &x->n_top, top[i].n, top[i].frac, 1);
        for (size_t i = 0; i < NELEM(dup); i++)
            set_ngram(x->dup, &x->n_dup, dup[i].n, dup[i].frac, 0);
    }
    return x;
}

static int kind_of(const char *name, size_t len)
{
    for (int k = 0; k < SL_RULE_KINDS; k++)
        if (strlen(rule_names[k]) == len && !memcmp(rule_names[k], name, len))
            return k;
    return -1;
}

static int unknown_rule(const char *name, size_t len, sl_err *err)
{
    sl_errf(err, "unknown rule '%.*s' (there are: gopher-quality, gopher-repetition, c4, fineweb)", (int)len, name);
    return -1;
}

int sl_rules_add(sl_rules *r, const char *list, sl_err *err)
{
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int k = kind_of(p, len);
        if (k < 0)
            return unknown_rule(p, len, err);
        add_rule(r, k);
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* A value: number, true/false, none (NaN). */
static int parse_value(const char *v, int kind, double *out)
{
    if (!strcmp(v, "none") || !strcmp(v, "None")) {
        if (kind != P_GUARD)
            return -1;
        *out = NAN;
        return 0;
    }
    if (!strcmp(v, "true") || !strcmp(v, "True")) {
        *out = 1;
        return kind == P_BOOL ? 0 : -1;
    }
    if (!strcmp(v, "false") || !strcmp(v, "False")) {
        *out = 0;
        return kind == P_BOOL ? 0 : -1;
    }
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !isfinite(d))
        return -1;
    if (kind == P_BOOL && d != 0 && d != 1)
        return -1;
    *out = d;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* top_N_gram / duplicated_N_n_grams */
static int ngram_key(const char *key, const char *pre, const char *post, int *n)
{
    size_t lp = strlen(pre), lq = strlen(post), lk = strlen(key);
    if (lk <= lp + lq || memcmp(key, pre, lp) || memcmp(key + lk - lq, post, lq))
        return 0;
    int v = 0;
    for (size_t i = lp; i < lk - lq; i++) {
        if (key[i] < '0' || key[i] > '9' || v > 100000)
            return 0;
        v = v * 10 + (key[i] - '0');
    }
    *n = v;
    return 1;
}

static void param_list(const rule *x, sl_buf *b)
{
    for (size_t i = 0; i < rule_ndefs[x->kind]; i++)
        sl_buf_printf(b, "%s%s", i ? ", " : "", rule_defs[x->kind][i].key);
    if (x->kind == SL_RULE_GOPHER_QUALITY)
        sl_buf_puts(b, ", stop_words");
    if (x->kind == SL_RULE_GOPHER_REPETITION)
        sl_buf_puts(b, ", top_<N>_gram, duplicated_<N>_n_grams");
    if (x->kind == SL_RULE_FINEWEB)
        sl_buf_puts(b, ", stop_chars");
    sl_buf_puts(b, ", language");
}

static int set_param(rule *x, const char *key, const char *val, sl_err *err)
{
    const char *rn = rule_names[x->kind];
    for (size_t i = 0; i < rule_ndefs[x->kind]; i++) {
        const pdef *d = &rule_defs[x->kind][i];
        if (strcmp(d->key, key))
            continue;
        if (parse_value(val, d->kind, &x->p[i]) < 0) {
            sl_errf(err, "%s: %s=%s: not %s", rn, key, val,
                    d->kind == P_BOOL    ? "true or false"
                    : d->kind == P_GUARD ? "a number or none"
                                         : "a number");
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "language")) {
        if (strcmp(val, "en")) {
            sl_errf(err, "%s: language=%s: only en (English) has a word tokenizer so far", rn, val);
            return -1;
        }
        return 0;
    }
    int n;
    if (x->kind == SL_RULE_GOPHER_QUALITY && !strcmp(key, "stop_words")) {
        sl_list_free(x->stop_words, x->n_stop);
        x->stop_words = NULL;
        x->n_stop = 0;
        for (const char *p = val; *p;) {
            const char *e = strchr(p, '|');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            x->stop_words = sl_xrealloc(x->stop_words, (x->n_stop + 1) * sizeof *x->stop_words);
            char *s = sl_xmalloc(len + 1);
            memcpy(s, p, len);
            s[len] = 0;
            x->stop_words[x->n_stop++] = s;
            p = e ? e + 1 : p + len;
        }
        return 0;
    }
    if (x->kind == SL_RULE_FINEWEB && !strcmp(key, "stop_chars")) {
        free(x->stop_chars);
        size_t len = strlen(val);
        x->stop_chars = sl_xcalloc(len + 1, sizeof *x->stop_chars);
        x->n_stop_chars = 0;
        for (const uint8_t *p = (const uint8_t *)val; len;) {
            uint32_t c = 0;
            size_t k = sl_utf8_seq(p, len, &c);
            if (!k) {
                sl_errf(err, "%s: stop_chars: not UTF-8", rn);
                return -1;
            }
            x->stop_chars[x->n_stop_chars++] = c;
            p += k, len -= k;
        }
        qsort(x->stop_chars, x->n_stop_chars, sizeof *x->stop_chars, cmp_u32);
        return 0;
    }
    int top = 0;
    if (x->kind == SL_RULE_GOPHER_REPETITION &&
        ((top = ngram_key(key, "top_", "_gram", &n)) || ngram_key(key, "duplicated_", "_n_grams", &n))) {
        double f;
        if (n < 1 || n > 1000 || parse_value(val, P_GUARD, &f) < 0) {
            sl_errf(err, "%s: %s=%s: N from 1 to 1000 and a number or none", rn, key, val);
            return -1;
        }
        if (set_ngram(top ? x->top : x->dup, top ? &x->n_top : &x->n_dup, n, f, top) < 0) {
            sl_errf(err, "%s: more than %d n-gram sizes", rn, MAX_NGRAMS);
            return -1;
        }
        return 0;
    }
    sl_buf b = {0};
    param_list(x, &b);
    sl_errf(err, "%s has no parameter '%s' (it has: %s)", rn, key, b.data);
    sl_buf_free(&b);
    return -1;
}

int sl_rules_set(sl_rules *r, const char *spec, sl_err *err)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    int k = kind_of(spec, len);
    if (k < 0)
        return unknown_rule(spec, len, err);
    rule *x = add_rule(r, k);
    if (!colon)
        return 0;
    char *s = sl_xstrdup(colon + 1);
    int rc = 0;
    for (char *p = s; rc == 0 && *p;) {
        char *e = strchr(p, ',');
        if (e)
            *e = 0;
        char *eq = strchr(p, '=');
        if (!eq) {
            sl_errf(err, "%s: '%s' is not KEY=VALUE", rule_names[k], p);
            rc = -1;
            break;
        }
        *eq = 0;
        rc = set_param(x, p, eq + 1, err);
        p = e ? e + 1 : p + strlen(p);
    }
    free(s);
    return rc;
}

int sl_rules_ready(sl_rules *r, sl_err *err)
{
    if (!r->tok && !(r->tok = sl_wordtok_new("en", err)))
        return -1;
    return 0;
}

size_t sl_rules_count(const sl_rules *r)
{
    return r->n;
}

const char *sl_rules_name(const sl_rules *r, size_t i)
{
    return rule_names[r->r[i].kind];
}

static void put_thr(sl_buf *b, double v)
{
    if (isnan(v))
        sl_buf_puts(b, "null");
    else
        sl_json_put_num(b, v);
}

void sl_rules_params_json(const sl_rules *r, size_t i, sl_buf *b)
{
    const rule *x = &r->r[i];
    sl_buf_putc(b, '{');
    for (size_t k = 0; k < rule_ndefs[x->kind]; k++) {
        const pdef *d = &rule_defs[x->kind][k];
        sl_buf_printf(b, "%s\"%s\":", k ? "," : "", d->key);
        if (d->kind == P_BOOL)
            sl_buf_puts(b, x->p[k] != 0 ? "true" : "false");
        else
            put_thr(b, x->p[k]);
    }
    if (x->kind == SL_RULE_GOPHER_QUALITY) {
        sl_buf_puts(b, ",\"stop_words\":[");
        for (size_t k = 0; k < x->n_stop; k++) {
            if (k)
                sl_buf_putc(b, ',');
            sl_json_put_cstr(b, x->stop_words[k]);
        }
        sl_buf_putc(b, ']');
    }
    if (x->kind == SL_RULE_GOPHER_REPETITION)
        for (int t = 0; t < 2; t++) {
            sl_buf_puts(b, t ? ",\"dup_n_grams\":[" : ",\"top_n_grams\":[");
            const ngram_thr *g = t ? x->dup : x->top;
            int ng = t ? x->n_dup : x->n_top, first = 1;
            for (int k = 0; k < ng; k++)
                if (!isnan(g[k].frac)) {
                    sl_buf_printf(b, "%s[%d,", first ? "" : ",", g[k].n);
                    sl_json_put_num(b, g[k].frac);
                    sl_buf_putc(b, ']');
                    first = 0;
                }
            sl_buf_putc(b, ']');
        }
    if (x->kind == SL_RULE_FINEWEB && x->stop_chars) {
        sl_buf b2 = {0};
        for (size_t k = 0; k < x->n_stop_chars; k++)
            sl_utf8_put(&b2, x->stop_chars[k]);
        sl_buf_puts(b, ",\"stop_chars\":");
        sl_json_put_str(b, b2.data ? b2.data : "", b2.len);
        sl_buf_free(&b2);
    }
    sl_buf_putc(b, '}');
}

/* --- Python's str, on UTF-8 ------------------------------------------------- */

typedef struct {
    uint32_t off, len;
} span;

static size_t cp_len(const char *s, size_t n)
{
    size_t c = 0;
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n; i++)
        c += (p[i] & 0xC0) != 0x80;
    return c;
}

static uint32_t cp_at(const char *s, size_t n, size_t *k)
{
    uint32_t c = 0;
    *k = sl_utf8_seq((const uint8_t *)s, n, &c);
    if (!*k)
        *k = 1, c = (uint8_t)*s;
    return c;
}

/* The start of the code point that ends at s + n. */
static size_t last_cp_start(const char *s, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && ((uint8_t)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

static int is_space(uint32_t c)
{
    return c < 0x80 ? (c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F)) : sl_tn_isspace(c);
}

static size_t lstrip(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k;
        if (!is_space(cp_at(s + i, n - i, &k)))
            break;
        i += k;
    }
    return i;
}

/* The end of s[0..n) without trailing whitespace. */
static size_t rstrip(const char *s, size_t n)
{
    while (n) {
        size_t st = last_cp_start(s, n), k;
        if (!is_space(cp_at(s + st, n - st, &k)))
            break;
        n = st;
    }
    return n;
}

static int in_sorted(const uint32_t *v, size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m] < c)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && v[lo] == c;
}

static int is_alpha(uint32_t c)
{
    if (c < 0x80)
        return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return sl_cp_in_ranges(rt_alpha, NELEM(rt_alpha), c);
}

static int is_decimal(uint32_t c)
{
    if (c < 0x80)
        return c >= '0' && c <= '9';
    return sl_cp_in_ranges(rt_decimal, NELEM(rt_decimal), c);
}

static uint8_t punct_ascii[128];
static int punct_ascii_ready;

static int in_punct_set(uint32_t c)
{
    if (c < 0x80)
        return punct_ascii[c];
    return in_sorted(rt_punctuation_set, NELEM(rt_punctuation_set), c);
}

static int is_line_break(uint32_t c)
{
    return (c >= 0x0A && c <= 0x0D) || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static void spans_push(span **v, size_t *n, size_t *cap, size_t off, size_t len)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *v = sl_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = (span){(uint32_t)off, (uint32_t)len};
}

/* --- per-thread work --------------------------------------------------------- */

typedef struct {
    uint64_t h;
    uint32_t a; /* element index */
    uint32_t n; /* count; 0: empty slot */
} slot;

/* Not base/hashtab: sized for each text up front and cleared in place
 * (the allocation is kept from text to text, never grown while filled), and
 * top_duplicate records slot positions in `order`. */
typedef struct {
    slot *s;
    size_t mask, cap;
} table;

static void table_reset(table *t, size_t n)
{
    size_t want = 16;
    while (want < 2 * n)
        want *= 2;
    if (want > t->cap) {
        free(t->s);
        t->s = sl_xmalloc(want * sizeof *t->s);
        t->cap = want;
    }
    t->mask = want - 1;
    memset(t->s, 0, want * sizeof *t->s);
}

struct sl_rules_work {
    sl_wordtok_work *wt;
    /* the words of the current text */
    const char *wtext; /* the text they are of (NULL: none yet) */
    size_t wtext_len;
    const sl_word *words;
    const char *wbase;
    size_t nwords;
    uint32_t *ids, *wb, *wc; /* per word: interned id; prefix sums of bytes, of code points */
    size_t wcap;
    uint64_t *hw;   /* per distinct word: polynomial hash of its bytes */
    uint64_t *ph;   /* per word boundary: the hash of the words before it, joined */
    uint64_t *pows; /* B^k for k < npows (grown as n-grams need, up to POWS_MAX) */
    size_t npows;
    uint64_t *hg; /* all_duplicate: each n-gram's hash */
    size_t hgcap;
    uint32_t *first; /* per distinct word: a word with it */
    size_t ncap, ndistinct;
    table t, t2;
    uint32_t *order; /* n-gram entries in order of first appearance */
    size_t ocap;
    span *lines, *paras;
    size_t nlines, lcap, nparas, pcap;
    sl_sents sents;
    sl_buf out, line, low;
    char reason[48];
};

sl_rules_work *sl_rules_work_new(const sl_rules *r)
{
    (void)r;
    if (!punct_ascii_ready) { /* the same values each time: a benign race */
        for (size_t i = 0; i < NELEM(rt_punctuation_set) && rt_punctuation_set[i] < 0x80; i++)
            punct_ascii[rt_punctuation_set[i]] = 1;
        punct_ascii_ready = 1;
    }
    sl_rules_work *w = sl_xcalloc(1, sizeof *w);
    w->wt = sl_wordtok_work_new(r->tok);
    return w;
}

void sl_rules_work_free(sl_rules_work *w)
{
    if (!w)
        return;
    sl_wordtok_work_free(w->wt);
    free(w->ids);
    free(w->wb);
    free(w->wc);
    free(w->hw);
    free(w->ph);
    free(w->pows);
    free(w->hg);
    free(w->first);
    free(w->t.s);
    free(w->t2.s);
    free(w->order);
    free(w->lines);
    free(w->paras);
    sl_sents_free(&w->sents);
    sl_buf_free(&w->out);
    sl_buf_free(&w->line);
    sl_buf_free(&w->low);
    free(w);
}

/* polynomial hashes mod 2^61 - 1, for n-grams compared as concatenations */
#define MP ((uint64_t)0x1FFFFFFFFFFFFFFF)
#define PB ((uint64_t)0x5BD1E9955BD1E995 % MP)

static uint64_t mulmod(uint64_t a, uint64_t b)
{
    __uint128_t x = (__uint128_t)a * b;
    uint64_t lo = (uint64_t)(x & MP), hi = (uint64_t)(x >> 61);
    uint64_t s = lo + hi;
    return s >= MP ? s - MP : s;
}

static uint64_t addmod(uint64_t a, uint64_t b)
{
    uint64_t s = a + b;
    return s >= MP ? s - MP : s;
}

/* The words of text (datatrove's split_into_words), computed once per text. */
static void get_words(const sl_rules *r, sl_rules_work *w, const char *text, size_t n)
{
    if (w->wtext == text && w->wtext_len == n)
        return;
    w->nwords = sl_wordtok_words(r->tok, w->wt, text, n, &w->words, &w->wbase);
    w->wtext = text;
    w->wtext_len = n;
    w->ndistinct = (size_t)-1; /* not interned yet */
}

/* B^k: from the table, grown to k + 1 entries while k is below POWS_MAX
 * (bytes in an n-gram), else by squaring */
#define POWS_MAX ((size_t)1 << 16)
static uint64_t pb_pow(sl_rules_work *w, size_t k)
{
    if (k < w->npows)
        return w->pows[k];
    if (k >= POWS_MAX) {
        uint64_t r = 1, b = PB;
        for (; k; k >>= 1, b = mulmod(b, b))
            if (k & 1)
                r = mulmod(r, b);
        return r;
    }
    size_t cap = w->npows ? w->npows : 256;
    while (cap <= k)
        cap *= 2;
    w->pows = sl_xrealloc(w->pows, cap * sizeof *w->pows);
    if (!w->npows)
        w->pows[w->npows++] = 1;
    for (; w->npows < cap; w->npows++)
        w->pows[w->npows] = mulmod(w->pows[w->npows - 1], PB);
    return w->pows[k];
}

/* Interned ids, byte and code point prefix sums, per-word hashes. */
static void intern_words(sl_rules_work *w)
{
    if (w->ndistinct != (size_t)-1)
        return;
    size_t nw = w->nwords;
    if (w->wcap < nw + 1) {
        w->wcap = nw + 1;
        w->ids = sl_xrealloc(w->ids, w->wcap * sizeof *w->ids);
        w->wb = sl_xrealloc(w->wb, w->wcap * sizeof *w->wb);
        w->wc = sl_xrealloc(w->wc, w->wcap * sizeof *w->wc);
        w->ph = sl_xrealloc(w->ph, w->wcap * sizeof *w->ph);
    }
    table_reset(&w->t, nw);
    w->ndistinct = 0;
    w->wb[0] = w->wc[0] = 0;
    for (size_t i = 0; i < nw; i++) {
        const char *s = w->wbase + w->words[i].off;
        uint32_t len = w->words[i].len;
        w->wb[i + 1] = w->wb[i] + len;
        w->wc[i + 1] = w->wc[i] + (uint32_t)cp_len(s, len);
        uint64_t h = XXH3_64bits(s, len);
        size_t j = h & w->t.mask;
        for (; w->t.s[j].n; j = (j + 1) & w->t.mask) {
            const sl_word *o = &w->words[w->first[w->t.s[j].a]];
            if (w->t.s[j].h == h && o->len == len && !memcmp(w->wbase + o->off, s, len))
                break;
        }
        if (!w->t.s[j].n) {
            size_t id = w->ndistinct++;
            if (w->ncap < w->ndistinct) {
                w->ncap = w->ncap ? 2 * w->ncap : 1024;
                if (w->ncap < w->ndistinct)
                    w->ncap = w->ndistinct;
                w->hw = sl_xrealloc(w->hw, w->ncap * sizeof *w->hw);
                w->first = sl_xrealloc(w->first, w->ncap * sizeof *w->first);
            }
            uint64_t ph = 0;
            for (uint32_t k = 0; k < len; k++)
                ph = addmod(mulmod(ph, PB), (uint8_t)s[k] + 1);
            w->hw[id] = ph;
            w->first[id] = (uint32_t)i;
            w->t.s[j] = (slot){h, (uint32_t)id, 1};
        }
        w->ids[i] = w->t.s[j].a;
    }
    w->ph[0] = 0;
    for (size_t i = 0; i < nw; i++)
        w->ph[i + 1] = addmod(mulmod(w->ph[i], pb_pow(w, w->words[i].len)), w->hw[w->ids[i]]);
}

/* find_duplicates over spans of base: (duplicate elements, their code points) */
static void find_duplicates(sl_rules_work *w, const char *base, const span *v, size_t n, uint64_t *dup,
                            uint64_t *dup_chars)
{
    table_reset(&w->t2, n);
    *dup = *dup_chars = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = base + v[i].off;
        uint64_t h = XXH3_64bits(s, v[i].len);
        size_t j = h & w->t2.mask;
        for (; w->t2.s[j].n; j = (j + 1) & w->t2.mask) {
            const span *o = &v[w->t2.s[j].a];
            if (w->t2.s[j].h == h && o->len == v[i].len && !memcmp(base + o->off, s, v[i].len))
                break;
        }
        if (w->t2.s[j].n) {
            (*dup)++;
            *dup_chars += cp_len(s, v[i].len);
        } else {
            w->t2.s[j] = (slot){h, (uint32_t)i, 1};
        }
    }
}

/* Counter(" ".join n-grams).most_common(1): the count and code point
 * length of the most common one, the first seen among equals. */
static uint64_t top_duplicate(sl_rules_work *w, size_t n)
{
    size_t ng = w->nwords - n + 1;
    table_reset(&w->t2, ng);
    if (w->ocap < ng) {
        w->ocap = ng;
        w->order = sl_xrealloc(w->order, ng * sizeof *w->order);
    }
    size_t no = 0;
    for (size_t i = 0; i < ng; i++) {
        uint64_t h = 0x9E3779B97F4A7C15ull * (n + 1);
        for (size_t k = 0; k < n; k++)
            h = (h ^ w->ids[i + k]) * 0xBF58476D1CE4E5B9ull + k;
        h ^= h >> 31;
        size_t j = h & w->t2.mask;
        for (; w->t2.s[j].n; j = (j + 1) & w->t2.mask)
            if (w->t2.s[j].h == h && !memcmp(w->ids + w->t2.s[j].a, w->ids + i, n * sizeof *w->ids))
                break;
        if (w->t2.s[j].n) {
            w->t2.s[j].n++;
        } else {
            w->t2.s[j] = (slot){h, (uint32_t)i, 1};
            w->order[no++] = (uint32_t)j;
        }
    }
    uint32_t best = 0;
    size_t at = 0;
    for (size_t k = 0; k < no; k++)
        if (w->t2.s[w->order[k]].n > best)
            best = w->t2.s[w->order[k]].n, at = w->t2.s[w->order[k]].a;
    uint64_t len = w->wc[at + n] - w->wc[at] + (n - 1);
    return len * best;
}

/* "".join(words[i:i+n]) == "".join(words[j:j+n]) */
static int concat_eq(const sl_rules_work *w, size_t i, size_t j, size_t n)
{
    if (w->wb[i + n] - w->wb[i] != w->wb[j + n] - w->wb[j])
        return 0;
    if (!memcmp(w->ids + i, w->ids + j, n * sizeof *w->ids))
        return 1;
    size_t left = w->wb[i + n] - w->wb[i], ka = i, kb = j, oa = 0, ob = 0;
    while (left) {
        const sl_word *a = &w->words[ka], *b = &w->words[kb];
        size_t m = a->len - oa < b->len - ob ? a->len - oa : b->len - ob;
        if (m && memcmp(w->wbase + a->off + oa, w->wbase + b->off + ob, m))
            return 0;
        oa += m, ob += m, left -= m;
        if (oa == a->len)
            ka++, oa = 0;
        if (ob == b->len)
            kb++, ob = 0;
    }
    return 1;
}

/* find_all_duplicate: code points of the n-grams (joined without spaces)
 * seen before, skipping n words after each. */
static uint64_t all_duplicate(sl_rules_work *w, size_t n)
{
    size_t nw = w->nwords;
    if (nw < n)
        return 0;
    table_reset(&w->t2, nw - n + 1);
    uint64_t rep = 0;
    size_t idx = 0, ng = nw - n + 1;
    /* the n words' hash at each start, joined: the same as hashing them one
     * by one (h = h B^len + hash(word)), from the prefix hashes in one step;
     * all of them first, so that the probes below do not wait on them */
    if (w->hgcap < ng) {
        w->hgcap = ng;
        w->hg = sl_xrealloc(w->hg, ng * sizeof *w->hg);
    }
    for (size_t i = 0; i < ng; i++)
        w->hg[i] = addmod(w->ph[i + n], MP - mulmod(w->ph[i], pb_pow(w, w->wb[i + n] - w->wb[i])));
    while (idx < ng) {
        uint64_t h = w->hg[idx];
        size_t j = h & w->t2.mask;
        for (; w->t2.s[j].n; j = (j + 1) & w->t2.mask)
            if (w->t2.s[j].h == h && concat_eq(w, w->t2.s[j].a, idx, n))
                break;
        if (w->t2.s[j].n) {
            rep += w->wc[idx + n] - w->wc[idx];
            idx += n;
        } else {
            w->t2.s[j] = (slot){h, (uint32_t)idx, 1};
            idx++;
        }
    }
    return rep;
}

/* --- signals ------------------------------------------------------------------ */

/* ,"name": (a signal's key; printf's was a tenth of an --annotate run) */
static void sig_key(sl_buf *b, const char *name)
{
    sl_buf_puts(b, ",\"");
    sl_buf_puts(b, name);
    sl_buf_puts(b, "\":");
}

static void sig_num(sl_buf *b, const char *name, double v)
{
    sig_key(b, name);
    put_thr(b, v);
}

static void sig_int(sl_buf *b, const char *name, int64_t v)
{
    sig_key(b, name);
    sl_json_put_int(b, v);
}

static void sig_reason(sl_buf *b, const char *name, const char *reason)
{
    sig_key(b, name);
    if (reason && *reason)
        sl_json_put_cstr(b, reason);
    else
        sl_buf_puts(b, "null");
}

/* python truthiness of a P_GUARD value */
static int on(double v)
{
    return !isnan(v) && v != 0;
}

#define FAIL(name)                                                                                                     \
    do {                                                                                                               \
        if (!*reason)                                                                                                  \
            snprintf(reason, 48, "%s", name);                                                                          \
        if (!full)                                                                                                     \
            goto done;                                                                                                 \
    } while (0)

/* str.splitlines() */
static void split_lines(sl_rules_work *w, const char *s, size_t n)
{
    w->nlines = 0;
    size_t start = 0, i = 0;
    while (i < n) {
        size_t k;
        uint32_t c = (uint8_t)s[i] < 0x80 ? (k = 1, (uint8_t)s[i]) : cp_at(s + i, n - i, &k);
        if (is_line_break(c)) {
            spans_push(&w->lines, &w->nlines, &w->lcap, start, i - start);
            i += k;
            if (c == '\r' && i < n && s[i] == '\n')
                i++;
            start = i;
        } else {
            i += k;
        }
    }
    if (start < n)
        spans_push(&w->lines, &w->nlines, &w->lcap, start, n - start);
}

static size_t count_sub(const char *s, size_t n, const char *sub, size_t m)
{
    size_t c = 0;
    const char *e = s + n;
    while (s < e) {
        const char *q = memmem(s, (size_t)(e - s), sub, m);
        if (!q)
            break;
        c++;
        s = q + m;
    }
    return c;
}

static int starts_with(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && !memcmp(s, p, m);
}

static int ends_with(const char *s, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && !memcmp(s + n - m, p, m);
}

static void gopher_quality(const sl_rules *r, const rule *x, sl_rules_work *w, const char *text, size_t n, int full,
                           sl_buf *sig, char *reason)
{
    const double *p = x->p;
    get_words(r, w, text, n);
    size_t nw = w->nwords;
    uint64_t non_symbol = 0, non_symbol_chars = 0, alpha = 0;
    for (size_t i = 0; i < nw; i++) {
        const char *s = w->wbase + w->words[i].off;
        size_t len = w->words[i].len, j = 0, cps = 0;
        int ns = 0, al = 0;
        while (j < len) {
            size_t k;
            uint32_t c = (uint8_t)s[j] < 0x80 ? (k = 1, (uint8_t)s[j]) : cp_at(s + j, len - j, &k);
            ns |= !in_punct_set(c);
            al |= is_alpha(c);
            cps++;
            j += k;
        }
        if (ns)
            non_symbol++, non_symbol_chars += cps;
        alpha += al;
    }
    double mean = non_symbol ? (double)non_symbol_chars / (double)non_symbol : NAN; /* np.mean([]): nan */
    double hash_ratio = NAN, ell_ratio = NAN, bullet = NAN, end_ell = NAN, alpha_ratio = NAN;
    int64_t stop = -1;
    if (on(p[GQ_MIN_WORDS]) && (double)non_symbol < p[GQ_MIN_WORDS])
        FAIL("gopher_short_doc");
    if (on(p[GQ_MAX_WORDS]) && (double)non_symbol > p[GQ_MAX_WORDS])
        FAIL("gopher_long_doc");
    if (on(p[GQ_MIN_AVG]) && mean < p[GQ_MIN_AVG])
        FAIL("gopher_below_avg_threshold");
    if (on(p[GQ_MAX_AVG]) && mean > p[GQ_MAX_AVG])
        FAIL("gopher_above_avg_threshold");
    /* with no words datatrove divides by zero (it raises): no ratio, no check */
    if (nw) {
        hash_ratio = (double)count_sub(text, n, "#", 1) / (double)nw;
        ell_ratio = (double)(count_sub(text, n, "...", 3) + count_sub(text, n, "\xE2\x80\xA6", 3)) / (double)nw;
    }
    if (on(p[GQ_SYMBOL]) && hash_ratio > p[GQ_SYMBOL])
        FAIL("gopher_too_many_hashes");
    if (on(p[GQ_SYMBOL]) && ell_ratio > p[GQ_SYMBOL])
        FAIL("gopher_too_many_ellipsis");
    split_lines(w, text, n);
    if (w->nlines) {
        size_t nb = 0, ne = 0;
        for (size_t i = 0; i < w->nlines; i++) {
            const char *s = text + w->lines[i].off;
            size_t len = w->lines[i].len, a = lstrip(s, len), e = rstrip(s, len);
            nb += starts_with(s + a, len - a, "\xE2\x80\xA2") || starts_with(s + a, len - a, "-");
            ne += ends_with(s, e, "...") || ends_with(s, e, "\xE2\x80\xA6");
        }
        bullet = (double)nb / (double)w->nlines;
        end_ell = (double)ne / (double)w->nlines;
    }
    if (on(p[GQ_BULLET]) && bullet > p[GQ_BULLET])
        FAIL("gopher_too_many_bullets");
    if (on(p[GQ_ELLIPSIS]) && end_ell > p[GQ_ELLIPSIS])
        FAIL("gopher_too_many_end_ellipsis");
    if (nw)
        alpha_ratio = (double)alpha / (double)nw;
    if (on(p[GQ_ALPHA]) && alpha_ratio < p[GQ_ALPHA])
        FAIL("gopher_below_alpha_threshold");
    /* set(words) & stop_words, case-sensitive */
    stop = 0;
    for (size_t k = 0; k < x->n_stop; k++) {
        const char *sw = x->stop_words[k];
        size_t sl = strlen(sw);
        int dupe = 0;
        for (size_t q = 0; q < k && !dupe; q++)
            dupe = !strcmp(x->stop_words[q], sw);
        if (dupe)
            continue;
        for (size_t i = 0; i < nw; i++)
            if (w->words[i].len == sl && !memcmp(w->wbase + w->words[i].off, sw, sl)) {
                stop++;
                break;
            }
    }
    if (on(p[GQ_STOP]) && (double)stop < p[GQ_STOP])
        FAIL("gopher_enough_stop_words");
done:
    if (!sig)
        return;
    sig_int(sig, "gopher_words", (int64_t)nw);
    sig_int(sig, "gopher_non_symbol_words", (int64_t)non_symbol);
    sig_num(sig, "gopher_mean_word_length", mean);
    sig_num(sig, "gopher_hash_ratio", hash_ratio);
    sig_num(sig, "gopher_ellipsis_ratio", ell_ratio);
    sig_num(sig, "gopher_bullet_lines_ratio", bullet);
    sig_num(sig, "gopher_end_ellipsis_lines_ratio", end_ell);
    sig_num(sig, "gopher_alpha_words_ratio", alpha_ratio);
    sig_int(sig, "gopher_stop_words", stop);
    sig_reason(sig, "gopher_quality_reason", reason);
}

static void gopher_repetition(const sl_rules *r, const rule *x, sl_rules_work *w, const char *text, size_t n, int full,
                              sl_buf *sig, char *reason)
{
    const double *p = x->p;
    double para = NAN, para_char = NAN, line = NAN, line_char = NAN, top[MAX_NGRAMS], dup[MAX_NGRAMS];
    for (int i = 0; i < MAX_NGRAMS; i++)
        top[i] = dup[i] = NAN;
    if (!n) {
        FAIL("empty");
        goto done;
    }
    double len = (double)cp_len(text, n);
    /* paragraphs: re.split(r"\n{2,}", text.strip()) */
    size_t a = lstrip(text, n), e = rstrip(text, n);
    if (e < a)
        e = a;
    w->nparas = 0;
    size_t start = a;
    for (size_t i = a; i < e;) {
        if (text[i] == '\n' && i + 1 < e && text[i + 1] == '\n') {
            size_t j = i;
            while (j < e && text[j] == '\n')
                j++;
            spans_push(&w->paras, &w->nparas, &w->pcap, start, i - start);
            start = i = j;
        } else {
            i++;
        }
    }
    spans_push(&w->paras, &w->nparas, &w->pcap, start, e - start);
    uint64_t d, dc;
    find_duplicates(w, text, w->paras, w->nparas, &d, &dc);
    para = (double)d / (double)w->nparas;
    para_char = (double)dc / len;
    if (on(p[GR_PARA]) && para > p[GR_PARA])
        FAIL("dup_para_frac");
    if (on(p[GR_PARA_CHAR]) && para_char > p[GR_PARA_CHAR])
        FAIL("dup_para_char_frac");
    /* lines: re.split("\n+", text) */
    w->nlines = 0;
    start = 0;
    for (size_t i = 0; i < n;) {
        if (text[i] == '\n') {
            size_t j = i;
            while (j < n && text[j] == '\n')
                j++;
            spans_push(&w->lines, &w->nlines, &w->lcap, start, i - start);
            start = i = j;
        } else {
            i++;
        }
    }
    spans_push(&w->lines, &w->nlines, &w->lcap, start, n - start);
    find_duplicates(w, text, w->lines, w->nlines, &d, &dc);
    line = (double)d / (double)w->nlines;
    line_char = (double)dc / len;
    if (on(p[GR_LINE]) && line > p[GR_LINE])
        FAIL("dup_line_frac");
    if (on(p[GR_LINE_CHAR]) && line_char > p[GR_LINE_CHAR])
        FAIL("dup_line_char_frac");
    get_words(r, w, text, n);
    intern_words(w);
    for (int i = 0; i < x->n_top; i++) {
        if (isnan(x->top[i].frac) || w->nwords < (size_t)x->top[i].n)
            continue;
        top[i] = (double)top_duplicate(w, (size_t)x->top[i].n) / len;
        if (top[i] > x->top[i].frac) {
            char nm[40];
            snprintf(nm, sizeof nm, "top_%d_gram", x->top[i].n);
            FAIL(nm);
        }
    }
    for (int i = 0; i < x->n_dup; i++) {
        if (isnan(x->dup[i].frac))
            continue;
        dup[i] = (double)all_duplicate(w, (size_t)x->dup[i].n) / len;
        if (dup[i] > x->dup[i].frac) {
            char nm[40];
            snprintf(nm, sizeof nm, "duplicated_%d_n_grams", x->dup[i].n);
            FAIL(nm);
        }
    }
done:
    if (!sig)
        return;
    sig_num(sig, "gopher_dup_para_frac", para);
    sig_num(sig, "gopher_dup_para_char_frac", para_char);
    sig_num(sig, "gopher_dup_line_frac", line);
    sig_num(sig, "gopher_dup_line_char_frac", line_char);
    for (int i = 0; i < x->n_top; i++)
        if (!isnan(x->top[i].frac))
            sig_num(sig, x->top[i].sig, top[i]);
    for (int i = 0; i < x->n_dup; i++)
        if (!isnan(x->dup[i].frac))
            sig_num(sig, x->dup[i].sig, dup[i]);
    sig_reason(sig, "gopher_repetition_reason", reason);
}

/* line.lower() as far as ASCII phrases can match it: ASCII lowercased,
 * U+212A (KELVIN SIGN) -> k, U+0130 -> i + a non-ASCII mark, any other
 * code point -> a non-ASCII byte (its lowercase has no ASCII character:
 * text/gen_rules_tables.py checks). */
static void lower_for_search(sl_buf *out, const char *s, size_t n)
{
    sl_buf_clear(out);
    sl_buf_reserve(out, n + 1);
    for (size_t i = 0; i < n;) {
        uint8_t b = (uint8_t)s[i];
        if (b < 0x80) {
            out->data[out->len++] = (char)(b >= 'A' && b <= 'Z' ? b + 32 : b);
            i++;
            continue;
        }
        size_t k;
        uint32_t c = cp_at(s + i, n - i, &k);
        i += k;
        if (c == 0x212A) {
            out->data[out->len++] = 'k';
        } else if (c == 0x130) {
            sl_buf_reserve(out, 2);
            out->data[out->len++] = 'i';
            out->data[out->len++] = (char)0x80;
        } else {
            out->data[out->len++] = (char)0x80;
        }
        sl_buf_reserve(out, 2);
    }
}

static int has(const sl_buf *b, const char *needle)
{
    return b->len && memmem(b->data, b->len, needle, strlen(needle)) != NULL;
}

/* CITATION_REGEX.sub("", s): \[\d*]|\[edit]|\[citation needed] */
static void remove_citations(sl_buf *out, const char *s, size_t n)
{
    sl_buf_clear(out);
    size_t i = 0, from = 0;
    while (i < n) {
        const char *q = memchr(s + i, '[', n - i);
        if (!q)
            break;
        i = (size_t)(q - s);
        size_t j = i + 1, end = 0;
        for (;;) {
            if (j < n && s[j] == ']') {
                end = j + 1;
                break;
            }
            size_t k;
            if (j >= n || !is_decimal(cp_at(s + j, n - j, &k)))
                break;
            j += k;
        }
        if (!end && starts_with(s + i, n - i, "[edit]"))
            end = i + 6;
        if (!end && starts_with(s + i, n - i, "[citation needed]"))
            end = i + 17;
        if (end) {
            sl_buf_append(out, s + from, i - from);
            i = from = end;
        } else {
            i++;
        }
    }
    sl_buf_append(out, s + from, n - from);
}

static const char *const policy[] = {"terms of use", "privacy policy", "cookie policy",
                                     "uses cookies", "use of cookies", "use cookies"};

enum { C4L_LONG_WORD, C4L_NO_PUNCT, C4L_FEW_WORDS, C4L_JS, C4L_POLICY, C4L_N };

static void c4(const sl_rules *r, const rule *x, sl_rules_work *w, const char *text, size_t n, int full, sl_buf *sig,
               char *reason, sl_buf *out)
{
    const double *p = x->p;
    int split_paragraph = p[C4_SPLIT_PARAGRAPH] != 0;
    size_t nl;
    span *lines;
    if (split_paragraph) {
        split_lines(w, text, n);
        nl = w->nlines;
        lines = w->lines;
    } else { /* split_into_sentences(doc.text): pieces of the text */
        sl_sentsplit_pieces(r->tok, w->wt, text, n, &w->sents);
        w->nlines = 0;
        for (size_t i = 0; i < w->sents.n; i++)
            spans_push(&w->lines, &w->nlines, &w->lcap, w->sents.v[i].off, w->sents.v[i].len);
        nl = w->nlines;
        lines = w->lines;
    }
    w->wtext = NULL; /* the word tokenizer's buffers are used below */
    int64_t num_sentences = 0, kept = 0, dropped[C4L_N] = {0};
    int lorem = 0, curly = 0;
    if (out)
        sl_buf_clear(out);
    for (size_t li = 0; li < nl; li++) {
        const char *s = text + lines[li].off;
        size_t len = lines[li].len, a = lstrip(s, len), e = rstrip(s, len);
        if (e < a)
            e = a;
        s += a, len = e - a;
        /* words = line.split() */
        size_t nwords = 0, longest = 0;
        for (size_t i = 0; i < len;) {
            size_t k;
            while (i < len && is_space(cp_at(s + i, len - i, &k)))
                i += k;
            if (i >= len)
                break;
            size_t cps = 0;
            while (i < len && !is_space(cp_at(s + i, len - i, &k)))
                i += k, cps++;
            nwords++;
            if (cps > longest)
                longest = cps;
        }
        if (p[C4_MAX_WORD_LEN] != -1 && nwords && (double)longest > p[C4_MAX_WORD_LEN]) {
            dropped[C4L_LONG_WORD]++;
            continue;
        }
        if (p[C4_CITATIONS] != 0) {
            remove_citations(&w->line, s, len);
            s = w->line.data ? w->line.data : "";
            len = w->line.len;
        }
        /* (memchr, not strchr: a NUL byte is no terminal punctuation) */
        if (p[C4_TERMINAL] != 0 && (!(len && memchr(".?!\"'", s[len - 1], 5)) || ends_with(s, len, "..."))) {
            dropped[C4L_NO_PUNCT]++;
            continue;
        }
        if ((double)nwords < p[C4_MIN_WORDS]) {
            dropped[C4L_FEW_WORDS]++;
            continue;
        }
        lower_for_search(&w->low, s, len);
        if (p[C4_LOREM] != 0 && has(&w->low, "lorem ipsum")) {
            lorem = 1;
            FAIL("lorem_ipsum");
            continue;
        }
        if (p[C4_JS] != 0 && has(&w->low, "javascript")) {
            dropped[C4L_JS]++;
            continue;
        }
        if (p[C4_CURLY] != 0 && memchr(s, '{', len)) {
            curly = 1;
            FAIL("curly_bracket");
            continue;
        }
        int pol = 0;
        for (size_t k = 0; p[C4_POLICY] != 0 && k < NELEM(policy) && !pol; k++)
            pol = has(&w->low, policy[k]);
        if (pol) {
            dropped[C4L_POLICY]++;
            continue;
        }
        if (p[C4_MIN_SENTENCES] != -1) {
            if (split_paragraph) {
                const char *base;
                size_t k = sl_sentsplit_spans(r->tok, w->wt, s, len, &w->sents, &base);
                num_sentences += k ? (int64_t)k : 1; /* datatrove's pieces: one when spaCy gives none */
            } else {
                num_sentences++;
            }
        }
        if (out) {
            if (kept)
                sl_buf_putc(out, split_paragraph ? '\n' : ' ');
            sl_buf_append(out, s, len);
        }
        kept++;
    }
    if ((double)num_sentences < p[C4_MIN_SENTENCES])
        FAIL("too_few_sentences");
done:
    if (sig) {
        sig_int(sig, "c4_lines", (int64_t)nl);
        sig_int(sig, "c4_lines_kept", kept);
        sig_int(sig, "c4_sentences", num_sentences);
        sig_int(sig, "c4_lines_too_long_word", dropped[C4L_LONG_WORD]);
        sig_int(sig, "c4_lines_no_terminal_punct", dropped[C4L_NO_PUNCT]);
        sig_int(sig, "c4_lines_too_few_words", dropped[C4L_FEW_WORDS]);
        sig_int(sig, "c4_lines_javascript", dropped[C4L_JS]);
        sig_int(sig, "c4_lines_policy", dropped[C4L_POLICY]);
        sl_buf_printf(sig, ",\"c4_lorem_ipsum\":%s,\"c4_curly_bracket\":%s", lorem ? "true" : "false",
                      curly ? "true" : "false");
        sig_reason(sig, "c4_reason", reason);
    }
    if (out && !*reason) { /* "\n".join(kept_lines).strip() */
        size_t a = lstrip(out->data ? out->data : "", out->len), e = rstrip(out->data ? out->data : "", out->len);
        if (e < a)
            e = a;
        if (a)
            memmove(out->data, out->data + a, e - a);
        out->len = e - a;
    }
}

static void fineweb(const sl_rules *r, const rule *x, sl_rules_work *w, const char *text, size_t n, int full,
                    sl_buf *sig, char *reason)
{
    const double *p = x->p;
    double punct = NAN, shrt = NAN, dupr = NAN, list = NAN;
    /* lines = text.split("\n"), those with something but whitespace */
    w->nlines = 0;
    size_t newlines = 0;
    for (size_t start = 0;;) {
        const char *q = memchr(text + start, '\n', n - start);
        size_t e = q ? (size_t)(q - text) : n;
        if (lstrip(text + start, e - start) < e - start)
            spans_push(&w->lines, &w->nlines, &w->lcap, start, e - start);
        if (!q)
            break;
        newlines++;
        start = e + 1;
    }
    if (!w->nlines) {
        FAIL("empty");
        goto done;
    }
    size_t np = 0, ns = 0;
    for (size_t i = 0; i < w->nlines; i++) {
        const char *s = text + w->lines[i].off;
        size_t len = w->lines[i].len, st = last_cp_start(s, len), k;
        uint32_t c = cp_at(s + st, len - st, &k);
        np += x->stop_chars ? in_sorted(x->stop_chars, x->n_stop_chars, c)
                            : in_sorted(rt_terminal_punctuation, NELEM(rt_terminal_punctuation), c);
        ns += (double)cp_len(s, len) <= p[FW_SHORT_LEN];
    }
    punct = (double)np / (double)w->nlines;
    if (punct < p[FW_PUNCT] && !(punct == 0 && p[FW_EXCL_ZERO] != 0))
        FAIL("line_punct_ratio");
    shrt = (double)ns / (double)w->nlines;
    if (shrt > p[FW_SHORT_THR])
        FAIL("short_line_ratio");
    uint64_t d, dc;
    find_duplicates(w, text, w->lines, w->nlines, &d, &dc);
    dupr = (double)dc / (double)(cp_len(text, n) - newlines);
    if (dupr > p[FW_CHAR_DUP])
        FAIL("char_dup_ratio");
    get_words(r, w, text, n);
    if (w->nwords) /* (always: a line with something but whitespace has a word) */
        list = (double)newlines / (double)w->nwords;
    if (list > p[FW_NEW_LINE])
        FAIL("list_ratio");
done:
    if (!sig)
        return;
    sig_num(sig, "fineweb_line_punct_ratio", punct);
    sig_num(sig, "fineweb_short_line_ratio", shrt);
    sig_num(sig, "fineweb_char_dup_ratio", dupr);
    sig_num(sig, "fineweb_list_ratio", list);
    sig_reason(sig, "fineweb_reason", reason);
}

/* Buffers that grew for a large document are given back before the next
 * one (memory follows the documents in flight, not the largest ever). */
static void trim(sl_rules_work *w)
{
    enum { BIG = 1 << 20 };
    if (w->wcap > BIG) {
        free(w->ids), free(w->wb), free(w->wc), free(w->ph), free(w->hg);
        w->ids = w->wb = w->wc = NULL, w->ph = w->hg = NULL, w->wcap = w->hgcap = 0;
    }
    if (w->ncap > BIG) {
        free(w->hw), free(w->first);
        w->hw = NULL, w->first = NULL, w->ncap = 0;
    }
    if (w->t.cap > 2 * BIG)
        free(w->t.s), w->t = (table){0};
    if (w->t2.cap > 2 * BIG)
        free(w->t2.s), w->t2 = (table){0};
    if (w->ocap > BIG)
        free(w->order), w->order = NULL, w->ocap = 0;
    if (w->lcap > BIG)
        free(w->lines), w->lines = NULL, w->lcap = 0;
    if (w->pcap > BIG)
        free(w->paras), w->paras = NULL, w->pcap = 0;
    if (w->sents.cap > BIG)
        sl_sents_free(&w->sents);
    sl_buf *bufs[] = {&w->out, &w->line, &w->low};
    for (size_t i = 0; i < NELEM(bufs); i++)
        if (bufs[i]->cap > 16 * (size_t)BIG)
            sl_buf_free(bufs[i]);
}

void sl_rules_apply(const sl_rules *r, sl_rules_work *w, const char *text, size_t n, int annotate, sl_buf *signals,
                    sl_rules_verdict *v)
{
    trim(w);
    v->rule = -1;
    v->reason[0] = 0;
    v->text = text;
    v->text_len = n;
    v->rewritten = 0;
    w->wtext = NULL;
    const char *cur = text;
    size_t cn = n;
    for (size_t i = 0; i < r->n; i++) {
        const rule *x = &r->r[i];
        char *reason = w->reason;
        reason[0] = 0;
        sl_buf *sig = annotate ? signals : NULL;
        int full = annotate;
        switch (x->kind) {
        case SL_RULE_GOPHER_QUALITY: gopher_quality(r, x, w, cur, cn, full, sig, reason); break;
        case SL_RULE_GOPHER_REPETITION: gopher_repetition(r, x, w, cur, cn, full, sig, reason); break;
        case SL_RULE_C4: c4(r, x, w, cur, cn, full, sig, reason, annotate ? NULL : &w->out); break;
        default: fineweb(r, x, w, cur, cn, full, sig, reason); break;
        }
        if (*reason && v->rule < 0) {
            v->rule = (int)i;
            snprintf(v->reason, sizeof v->reason, "%s", reason);
            if (!annotate)
                return;
        }
        if (!annotate && x->kind == SL_RULE_C4) {
            cur = w->out.data ? w->out.data : "";
            cn = w->out.len;
            v->text = cur;
            v->text_len = cn;
            v->rewritten = cn != n || memcmp(cur, text, n) != 0;
            w->wtext = NULL;
        }
    }
}

void sl_rules_signal_names(const sl_rules *r, void (*fn)(void *ctx, const char *name), void *ctx)
{
    static const char *const gq[] = {"gopher_words",
                                     "gopher_non_symbol_words",
                                     "gopher_mean_word_length",
                                     "gopher_hash_ratio",
                                     "gopher_ellipsis_ratio",
                                     "gopher_bullet_lines_ratio",
                                     "gopher_end_ellipsis_lines_ratio",
                                     "gopher_alpha_words_ratio",
                                     "gopher_stop_words",
                                     "gopher_quality_reason"};
    static const char *const gr[] = {"gopher_dup_para_frac", "gopher_dup_para_char_frac", "gopher_dup_line_frac",
                                     "gopher_dup_line_char_frac", "gopher_repetition_reason"};
    static const char *const c4n[] = {"c4_lines",
                                      "c4_lines_kept",
                                      "c4_sentences",
                                      "c4_lines_too_long_word",
                                      "c4_lines_no_terminal_punct",
                                      "c4_lines_too_few_words",
                                      "c4_lines_javascript",
                                      "c4_lines_policy",
                                      "c4_lorem_ipsum",
                                      "c4_curly_bracket",
                                      "c4_reason"};
    static const char *const fw[] = {"fineweb_line_punct_ratio", "fineweb_short_line_ratio", "fineweb_char_dup_ratio",
                                     "fineweb_list_ratio", "fineweb_reason"};
    for (size_t i = 0; i < r->n; i++) {
        const rule *x = &r->r[i];
        switch (x->kind) {
        case SL_RULE_GOPHER_QUALITY:
            for (size_t k = 0; k < NELEM(gq); k++)
                fn(ctx, gq[k]);
            break;
        case SL_RULE_GOPHER_REPETITION: {
            for (size_t k = 0; k < NELEM(gr); k++)
                fn(ctx, gr[k]);
            for (int k = 0; k < x->n_top; k++)
                fn(ctx, x->top[k].sig);
            for (int k = 0; k < x->n_dup; k++)
                fn(ctx, x->dup[k].sig);
            break;
        }
        case SL_RULE_C4:
            for (size_t k = 0; k < NELEM(c4n); k++)
                fn(ctx, c4n[k]);
            break;
        default:
            for (size_t k = 0; k < NELEM(fw); k++)
                fn(ctx, fw[k]);
        }
    }
}
