/* A tokenizer's vocabulary object and merges array as lists (bpe_load.h):
 * from a parsed tree, or read in one pass from the file's text without one;
 * and a Unigram model's vocabulary list in one pass (vlist.h).
 *
 * The one-pass reader takes the common case only: an object of plain keys
 * and non-negative integer ids, an array of "a b" strings or ["a", "b"]
 * pairs, valid UTF-8, strings with the escapes JSON allows. It says 0 on
 * anything else (a float id, a control character, bad UTF-8, a merge
 * without exactly one space, ...), and the caller parses the whole file,
 * whose tree reports it with the parser's message and offset. So what the
 * reader accepts gives the lists the tree would give, and what it refuses
 * the message the tree gives. */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/utf8.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/models/vlist.h"

int sl_bpe_vocab_list(const sl_bpe *b, const sl_json *vocab, sl_bpe_lists *L, sl_err *err)
{
    if (!vocab || vocab->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: the vocab is missing or not a JSON object", b->name);
    L->v = sl_xmalloc((vocab->n ? vocab->n : 1) * sizeof *L->v);
    L->nv = vocab->n;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        if (!sl_json_is_int(vocab->kids[i], &id) || id < 0 || id >= (int64_t)1 << 31)
            return sl_errf(err, "%s: offset %zu: vocab entry '%.60s' has no valid integer id", b->name,
                           vocab->kids[i]->offset, vocab->keys[i]->str);
        const sl_json *k = vocab->keys[i];
        L->v[i] = (sl_bpe_vent){k->str, k->str_len, k->offset, (uint32_t)id};
    }
    return 0;
}

int sl_bpe_merge_of(const sl_bpe *b, const sl_json *m, sl_bpe_ment *out, sl_err *err)
{
    if (m->type == SL_JSON_STRING) {
        const char *sp = memchr(m->str, ' ', m->str_len);
        if (!sp || memchr(sp + 1, ' ', m->str_len - (size_t)(sp + 1 - m->str)))
            return sl_errf(err, "%s: offset %zu: merge '%.60s' is not two tokens separated by one space", b->name,
                           m->offset, m->str);
        *out = (sl_bpe_ment){m->str, sp + 1, (size_t)(sp - m->str), m->str_len - (size_t)(sp + 1 - m->str)};
        return 0;
    }
    if (m->type == SL_JSON_ARRAY && m->n == 2 && m->kids[0]->type == SL_JSON_STRING &&
        m->kids[1]->type == SL_JSON_STRING) {
        *out = (sl_bpe_ment){m->kids[0]->str, m->kids[1]->str, m->kids[0]->str_len, m->kids[1]->str_len};
        return 0;
    }
    return sl_errf(err, "%s: offset %zu: a merge must be \"a b\" or [\"a\", \"b\"]", b->name, m->offset);
}

void sl_bpe_lists_free(sl_bpe_lists *L)
{
    free(L->v);
    free(L->m);
    free(L->vpool);
    free(L->mpool);
    *L = (sl_bpe_lists){0};
}

/* --- the one pass ---------------------------------------------------------- */

typedef struct {
    const char *s;
    size_t n; /* the end of the value read (s[n] is past it) */
    size_t i;
    sl_buf pool; /* escaped strings decoded; reserved once, never moved */
} reader;

static void ws(reader *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\n' || r->s[r->i] == '\r' || r->s[r->i] == '\t'))
        r->i++;
}

static int eat(reader *r, char c)
{
    ws(r);
    if (r->i >= r->n || r->s[r->i] != c)
        return 0;
    r->i++;
    return 1;
}

/* The string at r->i ('"'): its decoded bytes in *p, *len (in the text
 * when it has no escape, else in the pool, NUL after). The text was
 * checked to be valid UTF-8 as a whole. */
static int string(reader *r, const char **p, size_t *len)
{
    ws(r);
    if (r->i >= r->n || r->s[r->i] != '"')
        return 0;
    size_t j = r->i + 1;
#ifdef __SSE2__
    const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\'), vc = _mm_set1_epi8(0x1F);
    for (; j + 16 <= r->n; j += 16) { /* 16 bytes at a time to the quote, a backslash or a control byte */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(r->s + j));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, vq), _mm_cmpeq_epi8(x, vb)), _mm_cmpeq_epi8(_mm_min_epu8(x, vc), x)));
        if (m) {
            j += (unsigned)__builtin_ctz(m);
            goto stop;
        }
    }
#endif
    while (j < r->n) {
        unsigned char c = (unsigned char)r->s[j];
        if (c == '"' || c == '\\' || c < 0x20)
            break;
        j++;
    }
#ifdef __SSE2__
stop:
#endif
    if (j >= r->n || (unsigned char)r->s[j] < 0x20)
        return 0;
    if (r->s[j] == '"') {
        *p = r->s + r->i + 1;
        *len = j - r->i - 1;
        r->i = j + 1;
        return 1;
    }
    size_t at = r->pool.len, pos = r->i + 1, invalid = 0;
    char *base = r->pool.data;
    if (sl_json_str_decode(r->s, r->n, &pos, &r->pool, SL_UTF8_ERROR, &invalid, NULL) || invalid ||
        r->pool.data != base)
        return 0; /* (a lone surrogate, or the pool would move: the tree's way) */
    sl_buf_putc(&r->pool, 0);
    if (r->pool.data != base)
        return 0;
    *p = r->pool.data + at;
    *len = r->pool.len - 1 - at;
    r->i = pos;
    return 1;
}

/* A non-negative integer below 2^31 written plainly (no sign, fraction,
 * exponent or leading zero). */
static int id_value(reader *r, uint32_t *id)
{
    ws(r);
    size_t j = r->i;
    uint64_t x = 0;
    while (j < r->n && r->s[j] >= '0' && r->s[j] <= '9' && j - r->i < 10)
        x = x * 10 + (uint64_t)(r->s[j++] - '0');
    if (j == r->i || (j - r->i > 1 && r->s[r->i] == '0') || x >= (uint64_t)1 << 31)
        return 0;
    if (j < r->n && ((r->s[j] >= '0' && r->s[j] <= '9') || r->s[j] == '.' || r->s[j] == 'e' || r->s[j] == 'E'))
        return 0;
    r->i = j;
    *id = (uint32_t)x;
    return 1;
}

/* Starts a reader on text[at, at + len) (a value and nothing else), with
 * room in the pool for every string in it decoded. */
static int reader_open(reader *r, const char *text, size_t at, size_t len, char open)
{
    *r = (reader){text, at + len, at, {0}};
    if (sl_utf8_check(text + at, len) != len || !eat(r, open))
        return 0;
    sl_buf_reserve(&r->pool, len + 8192); /* decoding never lengthens a string (the decoder reserves 4 KiB ahead) */
    return 1;
}

/* After the closing bracket: nothing but blanks up to the end. */
static int reader_done(reader *r)
{
    ws(r);
    return r->i == r->n;
}

/* One vocabulary entry: "key": id. */
static int vocab_entry(reader *r, void *out)
{
    const char *k;
    size_t kn;
    uint32_t id;
    ws(r);
    size_t off = r->i;
    if (!string(r, &k, &kn) || !eat(r, ':') || !id_value(r, &id))
        return 0;
    *(sl_bpe_vent *)out = (sl_bpe_vent){k, kn, off, id};
    return 1;
}

/* One merge: "a b" (exactly one space) or ["a", "b"]. */
static int merge(reader *r, void *out)
{
    ws(r);
    const char *a, *b;
    size_t an, bn;
    if (r->i < r->n && r->s[r->i] == '[') {
        r->i++;
        if (!string(r, &a, &an) || !eat(r, ',') || !string(r, &b, &bn) || !eat(r, ']'))
            return 0;
    } else {
        const char *s;
        size_t sn;
        if (!string(r, &s, &sn))
            return 0;
        const char *sp = memchr(s, ' ', sn);
        if (!sp || memchr(sp + 1, ' ', sn - (size_t)(sp + 1 - s)))
            return 0;
        a = s, an = (size_t)(sp - s);
        b = sp + 1, bn = sn - an - 1;
    }
    *(sl_bpe_ment *)out = (sl_bpe_ment){a, b, an, bn};
    return 1;
}

/* The object or array at text[at, at + len) (open '{' or '['), each of its
 * members read by item into an array of size-byte elements: that array
 * (its count in *n, the decoded strings' pool in *pool), or NULL. */
static void *read_all(const char *text, size_t at, size_t len, char open, int (*item)(reader *, void *), size_t size,
                      size_t *n, char **pool)
{
    reader r;
    size_t cap = len / 8 + 16, k = 0;
    char *v = NULL;
    if (!reader_open(&r, text, at, len, open))
        goto fail;
    v = sl_xmalloc(cap * size);
    if (!eat(&r, open == '{' ? '}' : ']'))
        for (;;) {
            if (k == cap) {
                cap *= 2;
                v = sl_xrealloc(v, cap * size);
            }
            if (!item(&r, v + k * size))
                goto fail;
            k++;
            if (eat(&r, ','))
                continue;
            if (eat(&r, open == '{' ? '}' : ']'))
                break;
            goto fail;
        }
    if (!reader_done(&r))
        goto fail;
    *n = k;
    *pool = r.pool.data;
    return v;
fail:
    free(v);
    sl_buf_free(&r.pool);
    return NULL;
}

int sl_bpe_vocab_read(const char *text, size_t at, size_t len, sl_bpe_lists *L)
{
    L->v = read_all(text, at, len, '{', vocab_entry, sizeof *L->v, &L->nv, &L->vpool);
    return L->v != NULL;
}

int sl_bpe_merges_read(const char *text, size_t at, size_t len, sl_bpe_lists *L)
{
    L->m = read_all(text, at, len, '[', merge, sizeof *L->m, &L->nm, &L->mpool);
    return L->m != NULL;
}

/* A number in JSON's syntax: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?;
 * its start in *at. */
static int number(reader *r, size_t *at)
{
    ws(r);
    size_t j = r->i;
#define DIGITS(j) ((j) < r->n && r->s[j] >= '0' && r->s[j] <= '9')
    if (j < r->n && r->s[j] == '-')
        j++;
    if (!DIGITS(j))
        return 0;
    if (r->s[j++] != '0')
        while (DIGITS(j))
            j++;
    if (j < r->n && r->s[j] == '.') {
        if (!DIGITS(j + 1))
            return 0;
        for (j++; DIGITS(j);)
            j++;
    }
    if (j < r->n && (r->s[j] == 'e' || r->s[j] == 'E')) {
        j++;
        if (j < r->n && (r->s[j] == '+' || r->s[j] == '-'))
            j++;
        if (!DIGITS(j))
            return 0;
        while (DIGITS(j))
            j++;
    }
#undef DIGITS
    *at = r->i;
    r->i = j;
    return 1;
}

/* One Unigram vocabulary entry: [piece, score]. */
static int uni_entry(reader *r, void *out)
{
    const char *s;
    size_t sn, num;
    ws(r);
    size_t off = r->i;
    if (!eat(r, '[') || !string(r, &s, &sn) || !eat(r, ',') || !number(r, &num) || !eat(r, ']'))
        return 0;
    *(sl_uni_vent *)out = (sl_uni_vent){s, sn, off, num};
    return 1;
}

int sl_uni_vocab_read(const char *text, size_t at, size_t len, sl_uni_vlist *L)
{
    *L = (sl_uni_vlist){0};
    L->v = read_all(text, at, len, '[', uni_entry, sizeof *L->v, &L->n, &L->pool);
    if (L->v && !L->n)
        sl_uni_vlist_free(L); /* an empty list: the tree's message */
    return L->v != NULL;
}

void sl_uni_vlist_free(sl_uni_vlist *L)
{
    free(L->v);
    free(L->pool);
    *L = (sl_uni_vlist){0};
}
