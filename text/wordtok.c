/* spaCy's rule-based tokenizer for English (text/wordtok.h). Names follow
 * spacy/tokenizer.pyx: _tokenize_affixes (whitespace spans), _split_affixes,
 * _attach_tokens, _apply_special_cases. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/wordtok.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashtab.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "text/textnorm.h"
#include "text/wordtok_en_tables.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *s; /* NUL-terminated */
    uint32_t len;
    uint32_t ntok;
    const uint32_t *toklen; /* the lengths of its tokens */
} special;

typedef struct {
    uint32_t n;       /* pattern tokens */
    const char **tok; /* their texts */
    uint32_t *len;
} mpattern;

struct sl_wordtok {
    pcre2_code *prefix, *suffix, *infix, *url;
    special *sp;
    size_t nsp;
    sl_htab sp_tab; /* by the exception's text: index + 1 (uint32_t) */
    uint32_t *toklens;
    mpattern *mp;
    size_t nmp;
    sl_htab mp_tab; /* by the first two tokens' texts: pattern index + 1 (chains follow in mp_next) */
    int mp_single;  /* some pattern is of one token */
    uint32_t *mp_next;
    char *mp_text;
    uint8_t asp[128];  /* sl_tn_isspace of the ASCII code points */
    uint64_t mpf[64];  /* mp_filter_bit of each pattern's first token */
    uint64_t mpf2[64]; /* ... and of the second, of patterns of two tokens or more */
};

struct sl_wordtok_work {
    pcre2_match_data *md;
    sl_word *tok, *out;
    size_t ntok, cap, outcap;
    sl_word *pre, *suf; /* _split_affixes' prefixes and suffixes */
    size_t npre, nsuf, precap, sufcap;
    struct match {
        uint32_t start, end, pat;
    } * m, *kept;
    size_t nm, mcap, keptcap;
    uint8_t *seen;
    size_t seencap;
    struct cslot {
        uint64_t h;
        uint32_t off;
        uint16_t len, ntok;
    } * slots;
    char *arena;
    size_t used, nslots;
    sl_buf alt; /* the text without "IS_ALPHA" (sl_wordtok_doc) */
};

static inline uint64_t load64(const char *s)
{
    uint64_t v;
    memcpy(&v, s, 8);
    return v;
}

static inline uint64_t load32(const char *s)
{
    uint32_t v;
    memcpy(&v, s, 4);
    return v;
}

/* A hash for the tables below (spans and tokens, mostly short): 8 bytes at
 * a time, the tail in two overlapping loads, mixed as splitmix64 mixes. */
static inline uint64_t hash(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        h = (h ^ load64(s)) * UINT64_C(0xBF58476D1CE4E5B9);
        h ^= h >> 31;
    }
    if (n) {
        const uint8_t *u = (const uint8_t *)s;
        uint64_t v = n >= 4 ? load32(s) | load32(s + n - 4) << 32
                            : (uint64_t)u[0] | (uint64_t)u[n / 2] << 8 | (uint64_t)u[n - 1] << 16;
        h = (h ^ v) * UINT64_C(0x94D049BB133111EB);
    }
    h ^= h >> 32;
    h *= UINT64_C(0xD6E8FEB86659FD93);
    return h ^ (h >> 32);
}

/* Filters of the matcher patterns' first and second tokens by length,
 * first and last byte (an empty token: bit 0): most tokens start none, and
 * are rejected without a hash. */
static inline size_t mp_filter_bit(const char *s, size_t n)
{
    return n ? (n * 131 + (uint8_t)s[0] * 31 + (uint8_t)s[n - 1]) & 4095 : 0;
}

static inline void mp_filter_set(uint64_t *f, const char *s, size_t n)
{
    size_t b = mp_filter_bit(s, n);
    f[b / 64] |= UINT64_C(1) << (b % 64);
}

static inline int mp_filter_may(const uint64_t *f, const char *s, size_t n)
{
    size_t b = mp_filter_bit(s, n);
    return (int)(f[b / 64] >> (b % 64) & 1);
}

static char *expand_classes(const char *p)
{
    sl_buf b = {0};
    for (; *p; p++) {
        if (*p == '\001') {
            p++;
            sl_buf_puts(&b, *p == 'w' ? wt_class_w : *p == 'd' ? wt_class_d : wt_class_s);
        } else {
            sl_buf_putc(&b, *p);
        }
    }
    return b.data;
}

static pcre2_code *compile(const char *pat, const char *name, sl_err *err)
{
    char *p = expand_classes(pat);
    int ec;
    PCRE2_SIZE off;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &off, NULL);
    free(p);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        sl_errf(err, "word tokenizer: %s pattern, offset %zu: %s", name, (size_t)off, (char *)msg);
        return NULL;
    }
    pcre2_jit_compile(c, PCRE2_JIT_COMPLETE); /* without JIT (unsupported CPU) the interpreter runs */
    return c;
}

/* The exception and matcher tables: a key is a text; an entry, the index + 1
 * of an exception or of the first pattern whose first token is that text. */
typedef struct {
    const char *s;
    size_t n;
} tkey;

static uint64_t tkey_hash(const void *key, const void *ctx)
{
    (void)ctx;
    const tkey *k = key;
    return hash(k->s, k->n);
}

static uint64_t sp_hash(const void *entry, const void *ctx)
{
    const special *sp = &((const sl_wordtok *)ctx)->sp[*(const uint32_t *)entry - 1];
    return hash(sp->s, sp->len);
}

static int sp_eq(const void *key, const void *entry, const void *ctx)
{
    const tkey *k = key;
    const special *sp = &((const sl_wordtok *)ctx)->sp[*(const uint32_t *)entry - 1];
    return sp->len == k->n && !memcmp(sp->s, k->s, k->n);
}

static const sl_htab_type sp_type = {.entry_size = sizeof(uint32_t),
                                     .key_size = sizeof(uint32_t),
                                     .hash = tkey_hash,
                                     .entry_hash = sp_hash,
                                     .eq = sp_eq,
                                     .max_load = 50,
                                     .min_cap = 4096};

/* The matcher table's key: a pattern's first two tokens (s1 NULL: a
 * pattern of one token). */
typedef struct {
    const char *s0, *s1;
    size_t n0, n1;
} tkey2;

static inline uint64_t hash2(const char *s0, size_t n0, const char *s1, size_t n1)
{
    return hash(s0, n0) ^ (s1 ? hash(s1, n1) * UINT64_C(0x9E3779B97F4A7C15) : 0);
}

static uint64_t tkey2_hash(const void *key, const void *ctx)
{
    (void)ctx;
    const tkey2 *k = key;
    return hash2(k->s0, k->n0, k->s1, k->n1);
}

static uint64_t mp_hash(const void *entry, const void *ctx)
{
    const mpattern *mp = &((const sl_wordtok *)ctx)->mp[*(const uint32_t *)entry - 1];
    return hash2(mp->tok[0], mp->len[0], mp->n > 1 ? mp->tok[1] : NULL, mp->n > 1 ? mp->len[1] : 0);
}

static int mp_eq(const void *key, const void *entry, const void *ctx)
{
    const tkey2 *k = key;
    const mpattern *mp = &((const sl_wordtok *)ctx)->mp[*(const uint32_t *)entry - 1];
    if (mp->len[0] != k->n0 || memcmp(mp->tok[0], k->s0, k->n0))
        return 0;
    if (!k->s1)
        return mp->n == 1;
    return mp->n > 1 && mp->len[1] == k->n1 && !memcmp(mp->tok[1], k->s1, k->n1);
}

static const sl_htab_type mp_type = {.entry_size = sizeof(uint32_t),
                                     .key_size = sizeof(uint32_t),
                                     .hash = tkey2_hash,
                                     .entry_hash = mp_hash,
                                     .eq = mp_eq,
                                     .max_load = 50,
                                     .min_cap = 1024};

static long find_special(const sl_wordtok *t, const char *s, size_t n)
{
    const uint32_t *e = sl_htab_find(&t->sp_tab, &sp_type, &(tkey){s, n});
    return e ? (long)*e - 1 : -1;
}

sl_wordtok *sl_wordtok_new(const char *lang, sl_err *err)
{
    if (strcmp(lang, "en")) {
        sl_err_set(err, SL_E_OPTION, "language", "`language` %s: no word tokenizer for it (there is: en)", lang);
        return NULL;
    }
    sl_wordtok *t = sl_xcalloc(1, sizeof *t);
    for (uint32_t c = 0; c < 128; c++)
        t->asp[c] = (uint8_t)sl_tn_isspace(c);
    if (!(t->prefix = compile(wt_en_prefix, "prefix", err)) ||
        !(t->suffix = compile(wt_en_suffix_rest, "suffix", err)) || !(t->infix = compile(wt_en_infix, "infix", err)) ||
        !(t->url = compile(wt_en_url, "url", err))) {
        sl_wordtok_free(t);
        return NULL;
    }
    /* exceptions */
    t->nsp = NELEM(wt_en_special);
    t->sp = sl_xcalloc(t->nsp, sizeof *t->sp);
    size_t ntl = 0;
    for (size_t i = 0; i < t->nsp; i++)
        for (const char *q = wt_en_special[i][1]; *q; q++)
            ntl += *q == '\037';
    t->toklens = sl_xcalloc(ntl + 1, sizeof *t->toklens);
    size_t k = 0;
    sl_htab_init(&t->sp_tab, t);
    sl_htab_reserve(&t->sp_tab, &sp_type, t->nsp);
    for (size_t i = 0; i < t->nsp; i++) {
        special *sp = &t->sp[i];
        sp->s = wt_en_special[i][0];
        sp->len = (uint32_t)strlen(sp->s);
        sp->toklen = t->toklens + k;
        uint32_t len = 0;
        for (const char *q = wt_en_special[i][1]; *q; q++) {
            if (*q == '\037') {
                t->toklens[k++] = len;
                sp->ntok++;
                len = 0;
            } else {
                len++;
            }
        }
        int fresh;
        uint32_t *e = sl_htab_put(&t->sp_tab, &sp_type, &(tkey){sp->s, sp->len}, &fresh);
        if (fresh) /* an exception twice: the first is found */
            *e = (uint32_t)i + 1;
    }
    /* the PhraseMatcher step's patterns (only the pattern side: the
     * replacement is the exception found by the matched text) */
    t->nmp = NELEM(wt_en_matcher);
    t->mp = sl_xcalloc(t->nmp, sizeof *t->mp);
    size_t tl = 0;
    for (size_t i = 0; i < t->nmp; i++)
        tl += strlen(wt_en_matcher[i][0]) + 1;
    t->mp_text = sl_xmalloc(tl);
    char *w = t->mp_text;
    sl_htab_init(&t->mp_tab, t);
    t->mp_next = sl_xcalloc(t->nmp, sizeof *t->mp_next);
    for (size_t i = 0; i < t->nmp; i++) {
        mpattern *mp = &t->mp[i];
        const char *q = wt_en_matcher[i][0];
        for (const char *r = q; *r; r++)
            mp->n += *r == '\037';
        mp->tok = sl_xcalloc(mp->n, sizeof *mp->tok);
        mp->len = sl_xcalloc(mp->n, sizeof *mp->len);
        for (uint32_t j = 0; j < mp->n; j++) {
            const char *e = strchr(q, '\037');
            mp->tok[j] = w;
            mp->len[j] = (uint32_t)(e - q);
            memcpy(w, q, (size_t)(e - q));
            w += e - q;
            *w++ = 0;
            q = e + 1;
        }
        /* A match of one token is replaced by the exception of its text
         * (or left as it is without one): a no-op unless that exception
         * has more tokens, and as the shortest of matches it drops no
         * other. Such patterns (English has four: " ", "'", U+2014 and
         * U+2019) matched 200,000 of a 15 MB corpus's 3 M tokens, each
         * sorted and rebuilt for nothing. */
        if (mp->n == 1) {
            long sp = find_special(t, mp->tok[0], mp->len[0]);
            if (sp < 0 || t->sp[sp].ntok == 1)
                continue;
        }
        mp_filter_set(t->mpf, mp->tok[0], mp->len[0]);
        if (mp->n > 1)
            mp_filter_set(t->mpf2, mp->tok[1], mp->len[1]);
        /* chain patterns of the same first two tokens: the entry keeps the
         * last, mp_next the ones before (by the first token alone, ":" led
         * a chain of 53 patterns, walked at every ":") */
        int fresh;
        t->mp_single |= mp->n == 1;
        uint32_t *e = sl_htab_put(
            &t->mp_tab, &mp_type,
            &(tkey2){mp->tok[0], mp->n > 1 ? mp->tok[1] : NULL, mp->len[0], mp->n > 1 ? mp->len[1] : 0}, &fresh);
        t->mp_next[i] = fresh ? 0 : *e;
        *e = (uint32_t)i + 1;
    }
    return t;
}

void sl_wordtok_free(sl_wordtok *t)
{
    if (!t)
        return;
    pcre2_code_free(t->prefix);
    pcre2_code_free(t->suffix);
    pcre2_code_free(t->infix);
    pcre2_code_free(t->url);
    free(t->sp);
    sl_htab_free(&t->sp_tab);
    free(t->toklens);
    for (size_t i = 0; i < t->nmp; i++) {
        free(t->mp[i].tok);
        free(t->mp[i].len);
    }
    free(t->mp);
    sl_htab_free(&t->mp_tab);
    free(t->mp_next);
    free(t->mp_text);
    free(t);
}

sl_wordtok_work *sl_wordtok_work_new(const sl_wordtok *t)
{
    (void)t;
    sl_wordtok_work *w = sl_xcalloc(1, sizeof *w);
    w->md = pcre2_match_data_create(4, NULL);
    return w;
}

void sl_wordtok_work_free(sl_wordtok_work *w)
{
    if (!w)
        return;
    pcre2_match_data_free(w->md);
    free(w->tok);
    free(w->out);
    free(w->pre);
    free(w->suf);
    free(w->m);
    free(w->kept);
    free(w->seen);
    free(w->slots);
    free(w->arena);
    sl_buf_free(&w->alt);
    free(w);
}

/* Room for k more tokens in w->tok */
static void tok_room(sl_wordtok_work *w, size_t k)
{
    if (w->cap - w->ntok >= k)
        return;
    while (w->cap - w->ntok < k)
        w->cap = w->cap ? 2 * w->cap : 256;
    w->tok = sl_xrealloc(w->tok, w->cap * sizeof *w->tok);
}

static void push(sl_wordtok_work *w, uint32_t off, uint32_t len)
{
    tok_room(w, 1);
    w->tok[w->ntok++] = (sl_word){off, len};
}

static void push_special(sl_wordtok_work *w, const special *sp, uint32_t off)
{
    for (uint32_t i = 0; i < sp->ntok; i++) {
        push(w, off, sp->toklen[i]);
        off += sp->toklen[i];
    }
}

/* Length of the first match of code in s[0..n), searched (Python
 * re.search) or anchored (re.match); 0 when none. *start: where it starts. */
static int search(const pcre2_code *code, sl_wordtok_work *w, const char *s, size_t n, size_t from, uint32_t flags,
                  size_t *start, size_t *end)
{
    int rc = pcre2_match(code, (PCRE2_SPTR)s, n, from, flags | PCRE2_NO_UTF_CHECK, w->md, NULL);
    if (rc < 0)
        return 0;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(w->md);
    *start = ov[0];
    *end = ov[1];
    return 1;
}

static size_t find_prefix(const sl_wordtok *t, sl_wordtok_work *w, const char *s, size_t n)
{
    size_t a, b;
    return search(t->prefix, w, s, n, 0, 0, &a, &b) ? b - a : 0;
}

/* spaCy's suffix_search: every entry ends at the end of the span, so the
 * match is the one with the leftmost start, whichever entry it is. Entries
 * of one character (70 of 82, the icons' large class among them) can only
 * start at the last character: a table says whether they do. The search
 * runs the others (wt_en_suffix_rest) where the span holds a byte they
 * need; the leftmost start of the two wins
 * (gen_wordtok_en.py, split_suffix, checks this against Python's search of
 * the whole pattern). */
static size_t find_suffix(const sl_wordtok *t, sl_wordtok_work *w, const char *s, size_t n)
{
    size_t start = n, end = n, a, b;
    if (n) {
        size_t k = n - 1;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        uint32_t c = 0;
        if (sl_utf8_seq((const uint8_t *)s + k, n - k, &c) == n - k &&
            sl_cp_in_ranges(wt_en_suffix_one, NELEM(wt_en_suffix_one), c))
            start = k;
    }
    /* the others all need one of a few ASCII bytes ('.', '\'', a digit, ...):
     * a span of other ASCII bytes (a word with a comma after it) has no
     * match of theirs */
    int may = 0;
    for (size_t i = 0; i < n && !may; i++) {
        unsigned char c = (unsigned char)s[i];
        may = c >= 0x80 || (wt_en_suffix_rest_needs[c >> 6] >> (c & 63) & 1);
    }
    if (may && search(t->suffix, w, s, n, 0, 0, &a, &b) && a < start)
        start = a, end = b; /* b: n, or before a final newline ($), as before */
    return end - start;
}

static void affix_push(sl_word **v, size_t *n, size_t *cap, uint32_t off, uint32_t len)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *v = sl_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = (sl_word){off, len};
}

/* One span text[a..b) without whitespace (or all whitespace). */
static void split_span(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t a, size_t b)
{
    long sp = find_special(t, text + a, b - a);
    if (sp >= 0) {
        push_special(w, &t->sp[sp], (uint32_t)a);
        return;
    }
    /* _split_affixes */
    w->npre = w->nsuf = 0;
    size_t last = 0;
    while (b > a && b - a != last) {
        if (find_special(t, text + a, b - a) >= 0)
            break;
        last = b - a;
        size_t pre = find_prefix(t, w, text + a, b - a);
        if (pre && b - a > pre && find_special(t, text + a + pre, b - a - pre) >= 0) {
            affix_push(&w->pre, &w->npre, &w->precap, (uint32_t)a, (uint32_t)pre);
            a += pre;
            break;
        }
        size_t suf = find_suffix(t, w, text + a + pre, b - a - pre);
        if (suf && b - a > suf && find_special(t, text + a, b - a - suf) >= 0) {
            affix_push(&w->suf, &w->nsuf, &w->sufcap, (uint32_t)(b - suf), (uint32_t)suf);
            b -= suf;
            break;
        }
        if (pre && suf && pre + suf <= b - a) {
            affix_push(&w->pre, &w->npre, &w->precap, (uint32_t)a, (uint32_t)pre);
            affix_push(&w->suf, &w->nsuf, &w->sufcap, (uint32_t)(b - suf), (uint32_t)suf);
            a += pre;
            b -= suf;
        } else if (pre) {
            affix_push(&w->pre, &w->npre, &w->precap, (uint32_t)a, (uint32_t)pre);
            a += pre;
        } else if (suf) {
            affix_push(&w->suf, &w->nsuf, &w->sufcap, (uint32_t)(b - suf), (uint32_t)suf);
            b -= suf;
        }
    }
    /* _attach_tokens */
    for (size_t i = 0; i < w->npre; i++)
        push(w, w->pre[i].off, w->pre[i].len);
    if (b > a) {
        size_t ms, me;
        if ((sp = find_special(t, text + a, b - a)) >= 0) {
            push_special(w, &t->sp[sp], (uint32_t)a);
        } else if (search(t->url, w, text + a, b - a, 0, PCRE2_ANCHORED, &ms, &me)) {
            push(w, (uint32_t)a, (uint32_t)(b - a));
        } else {
            /* infixes: Python's finditer (an empty match is followed by a
             * search that may not be empty at the same place) */
            const char *s = text + a;
            size_t n = b - a, pos = 0, start = 0;
            int any = 0;
            uint32_t flags = 0;
            while (pos <= n && search(t->infix, w, s, n, pos, flags, &ms, &me)) {
                any = 1;
                if (ms != 0) { /* infix_start == start_before_infixes (0): skipped */
                    if (ms != start)
                        push(w, (uint32_t)(a + start), (uint32_t)(ms - start));
                    if (ms != me)
                        push(w, (uint32_t)(a + ms), (uint32_t)(me - ms));
                    start = me;
                }
                if (me == ms) {
                    flags = PCRE2_NOTEMPTY_ATSTART;
                    pos = me;
                } else {
                    flags = 0;
                    pos = me;
                }
            }
            if (!any)
                push(w, (uint32_t)a, (uint32_t)n);
            else if (start < n)
                push(w, (uint32_t)(a + start), (uint32_t)(n - start));
        }
    }
    for (size_t i = w->nsuf; i-- > 0;)
        push(w, w->suf[i].off, w->suf[i].len);
}

/* The tokens of a span depend on the span alone: they are kept in a cache
 * (as spaCy keeps them), spans of up to 64 bytes, cleared when full. Not
 * base/hashtab: a bounded cache over an arena, emptied in place when full
 * rather than grown, on the per-word path of dedup's signatures. */
enum { CACHE_SLOTS = 1 << 15, CACHE_ARENA = 4 << 20, CACHE_SPAN = 64 };

/* x[0..n) == y[0..n), short spans by overlapping loads within them (a
 * call of memcmp was a fifth of a cache hit's time) */
static inline int span_eq(const char *x, const char *y, size_t n)
{
    if (n >= 8 && n <= 16)
        return load64(x) == load64(y) && load64(x + n - 8) == load64(y + n - 8);
    if (n >= 4 && n < 8)
        return load32(x) == load32(y) && load32(x + n - 4) == load32(y + n - 4);
    if (n < 4)
        return !n || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
    return !memcmp(x, y, n);
}

static void tokenize_span(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t a, size_t b)
{
    size_t n = b - a;
    if (n > CACHE_SPAN) {
        split_span(t, w, text, a, b);
        return;
    }
    if (!w->slots) {
        w->slots = sl_xcalloc(CACHE_SLOTS, sizeof *w->slots);
        w->arena = sl_xmalloc(CACHE_ARENA);
    }
    uint64_t h = hash(text + a, n);
    size_t i = h & (CACHE_SLOTS - 1);
    for (; w->slots[i].ntok; i = (i + 1) & (CACHE_SLOTS - 1)) {
        struct cslot *c = &w->slots[i];
        if (c->h == h && c->len == n && span_eq(w->arena + c->off, text + a, n)) {
            const uint8_t *tl = (const uint8_t *)w->arena + c->off + n;
            tok_room(w, c->ntok);
            sl_word *out = w->tok + w->ntok;
            for (uint32_t k = 0, o = (uint32_t)a; k < c->ntok; k++)
                out[k] = (sl_word){o + tl[2 * k], tl[2 * k + 1]};
            w->ntok += c->ntok;
            return;
        }
    }
    size_t first = w->ntok;
    split_span(t, w, text, a, b);
    size_t nt = w->ntok - first;
    if (nt == 0 || nt > 255)
        return;
    if (w->used + n + 2 * nt > CACHE_ARENA || 2 * (w->nslots + 1) > CACHE_SLOTS) {
        memset(w->slots, 0, CACHE_SLOTS * sizeof *w->slots);
        w->used = w->nslots = 0;
        i = h & (CACHE_SLOTS - 1);
    }
    struct cslot *c = &w->slots[i];
    c->h = h;
    c->off = (uint32_t)w->used;
    c->len = (uint16_t)n;
    c->ntok = (uint16_t)nt;
    memcpy(w->arena + w->used, text + a, n);
    uint8_t *tl = (uint8_t *)w->arena + w->used + n;
    for (size_t k = 0; k < nt; k++) {
        tl[2 * k] = (uint8_t)(w->tok[first + k].off - a);
        tl[2 * k + 1] = (uint8_t)w->tok[first + k].len;
    }
    w->used += n + 2 * nt;
    w->nslots++;
}

static int is_ws_token(const sl_wordtok *tk, const char *text, sl_word t)
{
    const uint8_t *p = (const uint8_t *)text + t.off;
    size_t n = t.len;
    if (n && p[0] < 0x80 && !tk->asp[p[0]])
        return 0;
    while (n) {
        uint32_t cp = 0;
        size_t k = sl_utf8_seq(p, n, &cp);
        if (!k || !sl_tn_isspace(cp))
            return 0;
        p += k, n -= k;
    }
    return 1;
}

static int tok_eq(const char *text, sl_word t, const char *s, uint32_t len)
{
    return t.len == len && !memcmp(text + t.off, s, len);
}

static int cmp_len_start(const void *x, const void *y)
{
    const struct match *a = x, *b = y;
    uint32_t la = a->end - a->start, lb = b->end - b->start;
    if (la != lb)
        return la < lb ? -1 : 1;
    return a->start > b->start ? -1 : a->start < b->start; /* start descending */
}

static int cmp_start(const void *x, const void *y)
{
    const struct match *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* _apply_special_cases: the exceptions that the affix rules split (their
 * split form is a matcher pattern) matched over the tokens; the longest
 * first, then the leftmost, one that shares its first or last token with a
 * span seen before is dropped (every matched span marks its tokens seen);
 * a kept span whose text is an exception (its tokens touch) is replaced by
 * the exception's tokens. */
static void apply_special_cases(const sl_wordtok *t, sl_wordtok_work *w, const char *text)
{
    w->nm = 0;
    for (size_t i = 0; i < w->ntok; i++) {
        sl_word first = w->tok[i];
        if (!mp_filter_may(t->mpf, text + first.off, first.len))
            continue;
        for (int two = !t->mp_single; two < 2; two++) {
            if (two && i + 1 == w->ntok)
                break;
            sl_word second = two ? w->tok[i + 1] : (sl_word){0, 0};
            if (two && !mp_filter_may(t->mpf2, text + second.off, second.len))
                break;
            const uint32_t *e =
                sl_htab_find(&t->mp_tab, &mp_type,
                             &(tkey2){text + first.off, two ? text + second.off : NULL, first.len, second.len});
            for (uint32_t pi = e ? *e : 0; pi; pi = t->mp_next[pi - 1]) {
                const mpattern *p = &t->mp[pi - 1];
                if (i + p->n > w->ntok)
                    continue;
                uint32_t j = two ? 2 : 1;
                while (j < p->n && tok_eq(text, w->tok[i + j], p->tok[j], p->len[j]))
                    j++;
                if (j < p->n)
                    continue;
                if (w->nm == w->mcap) {
                    w->mcap = w->mcap ? 2 * w->mcap : 16;
                    w->m = sl_xrealloc(w->m, w->mcap * sizeof *w->m);
                }
                w->m[w->nm++] = (struct match){(uint32_t)i, (uint32_t)(i + p->n), pi - 1};
            }
        }
    }
    if (!w->nm)
        return;
    qsort(w->m, w->nm, sizeof *w->m, cmp_len_start);
    if (w->seencap < w->ntok) {
        free(w->seen);
        w->seencap = w->ntok;
        w->seen = sl_xmalloc(w->seencap);
    }
    memset(w->seen, 0, w->ntok);
    if (w->keptcap < w->nm) {
        free(w->kept);
        w->keptcap = w->nm;
        w->kept = sl_xmalloc(w->keptcap * sizeof *w->kept);
    }
    size_t kept = 0;
    for (size_t k = w->nm; k-- > 0;) {
        struct match m = w->m[k];
        if (!w->seen[m.start] && !w->seen[m.end - 1])
            w->kept[kept++] = m;
        for (uint32_t s = m.start; s < m.end; s++)
            w->seen[s] = 1;
    }
    qsort(w->kept, kept, sizeof *w->kept, cmp_start);
    /* rebuild the token list */
    size_t mi = 0;
    sl_word *old = w->tok;
    size_t nold = w->ntok;
    w->tok = NULL;
    w->ntok = 0;
    w->cap = 0;
    for (size_t i = 0; i < nold;) {
        if (mi < kept && w->kept[mi].start == i) {
            struct match m = w->kept[mi++];
            int touch = 1;
            for (uint32_t s = m.start; s + 1 < m.end; s++)
                if (old[s].off + old[s].len != old[s + 1].off)
                    touch = 0;
            uint32_t off = old[m.start].off, end = old[m.end - 1].off + old[m.end - 1].len;
            long sp = touch ? find_special(t, text + off, end - off) : -1;
            if (sp >= 0)
                push_special(w, &t->sp[sp], off);
            else
                for (uint32_t s = m.start; s < m.end; s++)
                    push(w, old[s].off, old[s].len);
            i = m.end;
        } else {
            push(w, old[i].off, old[i].len);
            i++;
        }
    }
    free(old);
}

/* spaCy's tokens of text[0..n) into w->tok, the exceptions matched again
 * over them unless the affix rules made a token "IS_ALPHA" (*is_alpha set:
 * see sl_wordtok_doc). */
static void tokenize_all(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, int *is_alpha)
{
    w->ntok = 0;
    /* _tokenize_affixes: spans of whitespace and of the rest; a single ' '
     * after a word is its trailing space, not a token */
    const uint8_t *p = (const uint8_t *)text;
    size_t start = 0, i = 0;
    int in_ws = -1;
    while (i < n) {
        if (in_ws == 0 && i + 8 <= n) {
            /* inside a word: skip 8 bytes at a time while none is below
             * 0x21 or above 0x7f (no ASCII space is among them); the lowest
             * flagged byte is a true one (a borrow only flags those above) */
            uint64_t x;
            memcpy(&x, p + i, 8);
            uint64_t fl = (((x - UINT64_C(0x2121212121212121)) & ~x) | x) & UINT64_C(0x8080808080808080);
            if (!fl) {
                i += 8;
                continue;
            }
            i += (size_t)__builtin_ctzll(fl) / 8;
        }
        uint32_t cp = p[i];
        size_t k = 1;
        int ws;
        if (cp < 0x80) {
            ws = t->asp[cp];
        } else {
            if (!(k = sl_utf8_seq(p + i, n - i, &cp)))
                k = 1, cp = 0;
            ws = sl_tn_isspace(cp);
        }
        if (in_ws < 0)
            in_ws = ws;
        if (ws != in_ws) {
            if (start < i)
                tokenize_span(t, w, text, start, i);
            start = cp == ' ' ? i + 1 : i;
            in_ws = !in_ws;
        }
        i += k;
    }
    if (start < n)
        tokenize_span(t, w, text, start, n);
    if (is_alpha) {
        *is_alpha = 0;
        for (size_t j = 0; j < w->ntok && !*is_alpha; j++)
            *is_alpha = tok_eq(text, w->tok[j], "IS_ALPHA", 8);
        if (*is_alpha)
            return;
    }
    apply_special_cases(t, w, text);
}

/* datatrove's strip_strings: whitespace tokens dropped */
static size_t strip_ws(const sl_wordtok *t, sl_wordtok_work *w, const char *text, const sl_word **words)
{
    if (w->outcap < w->ntok) {
        free(w->out);
        w->outcap = w->ntok;
        w->out = sl_xmalloc(w->outcap * sizeof *w->out);
    }
    size_t m = 0;
    for (size_t j = 0; j < w->ntok; j++)
        if (!is_ws_token(t, text, w->tok[j]))
            w->out[m++] = w->tok[j];
    *words = w->out;
    return m;
}

size_t sl_wordtok_run(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **words)
{
    tokenize_all(t, w, text, n, NULL);
    return strip_ws(t, w, text, words);
}

size_t sl_wordtok_doc(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **toks,
                      const char **base)
{
    int is_alpha;
    *base = text;
    tokenize_all(t, w, text, n, &is_alpha);
    if (is_alpha) { /* datatrove: the text again without "IS_ALPHA" */
        sl_buf_clear(&w->alt);
        for (const char *p = text, *e = text + n; p < e;) {
            const char *q = memmem(p, (size_t)(e - p), "IS_ALPHA", 8);
            sl_buf_append(&w->alt, p, (size_t)((q ? q : e) - p));
            p = q ? q + 8 : e;
        }
        *base = w->alt.data ? w->alt.data : "";
        tokenize_all(t, w, *base, w->alt.len, &is_alpha);
        if (is_alpha) /* datatrove fails here (an AssertionError); the tokens as they are */
            apply_special_cases(t, w, *base);
    }
    *toks = w->tok;
    return w->ntok;
}

size_t sl_wordtok_words(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **words,
                        const char **base)
{
    const sl_word *toks;
    sl_wordtok_doc(t, w, text, n, &toks, base);
    return strip_ws(t, w, *base, words);
}
