/* JSON parser (DOM, arena-allocated) and writer helpers. See json.h. */
#include "base/json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

struct sl_json_doc {
    arena_block *blocks;
    sl_json *root;
};

static void *arena_alloc(sl_json_doc *d, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    arena_block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        arena_block *nb = sl_xmalloc(sizeof *nb + cap);
        nb->cap = cap;
        nb->used = 0;
        nb->next = b;
        d->blocks = nb;
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* ---- parser --------------------------------------------------------- */

typedef struct parser {
    const char *s;
    size_t n, i;
    sl_json_doc *doc;
    sl_json_opts *opts;
    sl_err *err;
    sl_buf tmp;
    int depth;
} parser;

static int perr(parser *p, const char *what)
{
    return sl_err_set(p->err, SL_E_FORMAT, NULL, "offset %zu: %s", p->i, what);
}

static void skip_ws(parser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->i++;
        else
            break;
    }
}

static sl_json *node(parser *p, sl_json_type t)
{
    sl_json *v = arena_alloc(p->doc, sizeof *v);
    memset(v, 0, sizeof *v);
    v->type = t;
    v->offset = p->i;
    return v;
}

static int hex4(parser *p, unsigned *out)
{
    if (p->n - p->i < 4)
        return perr(p, "truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i + k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return perr(p, "bad hex digit in \\u escape");
    }
    p->i += 4;
    *out = v;
    return 0;
}

/* The bytes of x (little-endian) that end a run of a string's plain bytes
 * ('"', '\\', below 0x20) have their top bit set in the result; bytes
 * after the first such byte may be set too (a borrow), the first is exact. */
static inline uint64_t string_end8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & tops;
}

/* Parses a string at p->i (which is at '"'). */
static sl_json *parse_string(parser *p)
{
    sl_json *v = node(p, SL_JSON_STRING);
    p->i++;
    sl_buf *b = &p->tmp;
    sl_buf_clear(b);
    /* The decoded string is no longer than the rest of the input (an
     * escape never grows), except where invalid UTF-8 is repaired (that
     * path reserves for itself): runs and escapes are written in place. */
    sl_buf_reserve(b, p->n - p->i);
    for (;;) {
        /* copy a run of plain bytes */
        size_t start = p->i;
        uint64_t high = 0; /* the bytes of the run or-ed together */
        int end = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (p->n - p->i >= 8) { /* 8 bytes at a time */
            uint64_t x, m;
            memcpy(&x, p->s + p->i, 8);
            if ((m = string_end8(x))) {
                unsigned k = (unsigned)__builtin_ctzll(m) >> 3; /* the first such byte */
                high |= k ? x & (~(uint64_t)0 >> (64 - 8 * k)) : 0;
                p->i += k;
                end = 1;
                break;
            }
            high |= x;
            p->i += 8;
        }
#endif
        while (!end && p->i < p->n) {
            unsigned char c = (unsigned char)p->s[p->i];
            if (c == '"' || c == '\\' || c < 0x20)
                break;
            high |= c;
            p->i++;
        }
        if (p->i > start) {
            const char *run = p->s + start;
            size_t rn = p->i - start;
            size_t bad = !(high & 0x8080808080808080u) ? rn : sl_utf8_check(run, rn);
            if (bad == rn) {
                memcpy(b->data + b->len, run, rn);
                b->len += rn;
            } else {
                int mode = p->opts ? p->opts->invalid_utf8 : SL_UTF8_REPLACE;
                if (mode == SL_UTF8_ERROR) {
                    p->i = start + bad;
                    perr(p, "invalid UTF-8 in string");
                    return NULL;
                }
                size_t c = sl_utf8_repair(b, run, rn, mode);
                if (p->opts)
                    p->opts->invalid_count += c;
                sl_buf_reserve(b, p->n - p->i); /* a repair can grow the text */
            }
        }
        if (p->i >= p->n) {
            perr(p, "unterminated string");
            return NULL;
        }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20) {
            perr(p, "control character in string");
            return NULL;
        }
        /* escape */
        p->i++;
        if (p->i >= p->n) {
            perr(p, "unterminated string");
            return NULL;
        }
        char e = p->s[p->i++];
        switch (e) { /* (the room is there: the escape took two bytes of input) */
        case '"': b->data[b->len++] = '"'; break;
        case '\\': b->data[b->len++] = '\\'; break;
        case '/': b->data[b->len++] = '/'; break;
        case 'b': b->data[b->len++] = '\b'; break;
        case 'f': b->data[b->len++] = '\f'; break;
        case 'n': b->data[b->len++] = '\n'; break;
        case 'r': b->data[b->len++] = '\r'; break;
        case 't': b->data[b->len++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (hex4(p, &cp))
                return NULL;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* high surrogate: needs a following \uDC00-DFFF */
                if (p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
                    size_t save = p->i;
                    p->i += 2;
                    unsigned lo;
                    if (hex4(p, &lo))
                        return NULL;
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else {
                        p->i = save;
                        cp = 0xFFFD;
                    }
                } else {
                    cp = 0xFFFD;
                }
                if (cp == 0xFFFD && p->opts)
                    p->opts->invalid_count++;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
                if (p->opts)
                    p->opts->invalid_count++;
            }
            sl_utf8_put(b, cp);
            break;
        }
        default:
            p->i--;
            perr(p, "bad escape in string");
            return NULL;
        }
    }
    char *s = arena_alloc(p->doc, b->len + 1);
    memcpy(s, b->data ? b->data : "", b->len);
    s[b->len] = 0;
    v->str = s;
    v->str_len = b->len;
    return v;
}

static sl_json *parse_number(parser *p)
{
    sl_json *v = node(p, SL_JSON_NUMBER);
    size_t st = p->i;
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i >= p->n) {
        perr(p, "bad number");
        return NULL;
    }
    size_t d0 = p->i;
    uint64_t acc = 0; /* the integer part's value while it has at most 15 digits */
    if (p->s[p->i] == '0') {
        p->i++;
    } else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            acc = acc * 10 + (uint64_t)(p->s[p->i++] - '0');
    } else {
        perr(p, "bad number");
        return NULL;
    }
    int plain = p->i - d0 <= 15; /* an integer below 2^53: exact in a double without strtod */
    if (p->i < p->n && p->s[p->i] == '.') {
        plain = 0;
        p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d) {
            perr(p, "bad number: digit expected after '.'");
            return NULL;
        }
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        plain = 0;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d) {
            perr(p, "bad number: digit expected in exponent");
            return NULL;
        }
    }
    size_t len = p->i - st;
    char *s = arena_alloc(p->doc, len + 1);
    memcpy(s, p->s + st, len);
    s[len] = 0;
    v->str = s;
    v->str_len = len;
    v->num = !plain ? strtod(s, NULL) : s[0] == '-' ? -(double)acc : (double)acc;
    return v;
}

static sl_json *parse_value(parser *p);
static void tagged_float(sl_json *v);

/* Children are collected on a temporary growable array, then copied into
 * the arena (arrays of pointers). */
typedef struct kidvec {
    sl_json **v;
    size_t n, cap;
} kidvec;

static void kid_push(kidvec *k, sl_json *j)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 8;
        k->v = sl_xrealloc(k->v, k->cap * sizeof *k->v);
    }
    k->v[k->n++] = j;
}

static sl_json **kid_commit(parser *p, kidvec *k)
{
    sl_json **a = arena_alloc(p->doc, (k->n ? k->n : 1) * sizeof *a);
    if (k->n)
        memcpy(a, k->v, k->n * sizeof *a);
    free(k->v);
    return a;
}

static sl_json *parse_container(parser *p, int obj)
{
    if (++p->depth > SL_JSON_MAX_DEPTH) {
        perr(p, "nesting too deep");
        return NULL;
    }
    sl_json *v = node(p, obj ? SL_JSON_OBJECT : SL_JSON_ARRAY);
    p->i++;
    kidvec kids = {0}, keys = {0};
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
        p->i++;
        goto done;
    }
    for (;;) {
        skip_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') {
                perr(p, p->i >= p->n ? "unexpected end of input in object" : "object key (string) expected");
                goto fail;
            }
            sl_json *k = parse_string(p);
            if (!k)
                goto fail;
            kid_push(&keys, k);
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                perr(p, "':' expected after object key");
                goto fail;
            }
            p->i++;
        }
        sl_json *c = parse_value(p);
        if (!c)
            goto fail;
        kid_push(&kids, c);
        skip_ws(p);
        if (p->i >= p->n) {
            perr(p, obj ? "unexpected end of input in object" : "unexpected end of input in array");
            goto fail;
        }
        char ch = p->s[p->i];
        if (ch == ',') {
            p->i++;
            continue;
        }
        if (ch == (obj ? '}' : ']')) {
            p->i++;
            break;
        }
        perr(p, obj ? "',' or '}' expected in object" : "',' or ']' expected in array");
        goto fail;
    }
done:
    v->n = kids.n;
    v->kids = kid_commit(p, &kids);
    if (obj)
        v->keys = kid_commit(p, &keys);
    else
        free(keys.v);
    p->depth--;
    if (obj && p->opts && p->opts->nonfinite)
        tagged_float(v);
    return v;
fail:
    free(kids.v);
    free(keys.v);
    return NULL;
}

static int lit(parser *p, const char *w)
{
    size_t n = strlen(w);
    if (p->n - p->i >= n && !memcmp(p->s + p->i, w, n)) {
        p->i += n;
        return 1;
    }
    return 0;
}

/* The words of Python json's non-finite floats and their values. */
static const char *const nonfinite_words[] = {"Infinity", "-Infinity", "NaN"};

/* v becomes the NUMBER nonfinite_words[k]. */
static void set_nonfinite(sl_json *v, int k)
{
    v->type = SL_JSON_NUMBER;
    v->str = nonfinite_words[k];
    v->str_len = strlen(nonfinite_words[k]);
    v->num = k == 0 ? INFINITY : k == 1 ? -INFINITY : NAN;
}

/* Python json's Infinity, -Infinity and NaN (opts->nonfinite): a NUMBER with
 * that source text; NULL when none is here. */
static sl_json *parse_nonfinite(parser *p)
{
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(nonfinite_words[k]);
        if (p->n - p->i >= n && !memcmp(p->s + p->i, nonfinite_words[k], n)) {
            sl_json *v = node(p, SL_JSON_NUMBER);
            p->i += n;
            set_nonfinite(v, k);
            return v;
        }
    }
    return NULL;
}

/* transformers 5's spelling of a non-finite float (opts->nonfinite), as its
 * PreTrainedConfig._decode_special_floats reads it: an object whose only key
 * is "__float__" (given once or more: the last one counts, as in a Python
 * dict) with the string "Infinity", "-Infinity" or "NaN". Such an object
 * becomes that NUMBER, in place; any other object stays as it is. */
static void tagged_float(sl_json *v)
{
    if (v->n == 0)
        return;
    for (size_t i = 0; i < v->n; i++)
        if (v->keys[i]->str_len != 9 || memcmp(v->keys[i]->str, "__float__", 9))
            return;
    const sl_json *s = v->kids[v->n - 1];
    if (s->type != SL_JSON_STRING)
        return;
    for (int k = 0; k < 3; k++)
        if (s->str_len == strlen(nonfinite_words[k]) && !memcmp(s->str, nonfinite_words[k], s->str_len)) {
            set_nonfinite(v, k);
            v->n = 0;
            v->kids = v->keys = NULL;
            return;
        }
}

static sl_json *parse_value(parser *p)
{
    skip_ws(p);
    if (p->i >= p->n) {
        perr(p, "unexpected end of input, value expected");
        return NULL;
    }
    char c = p->s[p->i];
    switch (c) {
    case '{': return parse_container(p, 1);
    case '[': return parse_container(p, 0);
    case '"': return parse_string(p);
    case 't': {
        sl_json *v = node(p, SL_JSON_TRUE);
        if (lit(p, "true"))
            return v;
        break;
    }
    case 'f': {
        sl_json *v = node(p, SL_JSON_FALSE);
        if (lit(p, "false"))
            return v;
        break;
    }
    case 'n': {
        sl_json *v = node(p, SL_JSON_NULL);
        if (lit(p, "null"))
            return v;
        break;
    }
    default: {
        sl_json *v = p->opts && p->opts->nonfinite ? parse_nonfinite(p) : NULL;
        if (v)
            return v;
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(p);
    }
    }
    perr(p, "invalid JSON value");
    return NULL;
}

sl_json_doc *sl_json_parse(const char *text, size_t len, sl_json_opts *opts, sl_err *err)
{
    sl_json_doc *d = sl_xcalloc(1, sizeof *d);
    parser p = {.s = text, .n = len, .doc = d, .opts = opts, .err = err};
    sl_json *v = parse_value(&p);
    if (v) {
        skip_ws(&p);
        if (p.i != p.n) {
            perr(&p, "unexpected data after JSON value");
            v = NULL;
        }
    }
    sl_buf_free(&p.tmp);
    if (!v) {
        sl_json_free(d);
        return NULL;
    }
    d->root = v;
    return d;
}

sl_json *sl_json_root(sl_json_doc *doc)
{
    return doc ? doc->root : NULL;
}

void sl_json_free(sl_json_doc *doc)
{
    if (!doc)
        return;
    arena_block *b = doc->blocks;
    while (b) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(doc);
}

/* ---- lookup --------------------------------------------------------- */

sl_json *sl_json_get(const sl_json *obj, const char *key)
{
    if (!obj || obj->type != SL_JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = obj->n; i-- > 0;) /* last duplicate wins */
        if (obj->keys[i]->str_len == kl && !memcmp(obj->keys[i]->str, key, kl))
            return obj->kids[i];
    return NULL;
}

const char *sl_json_get_str(const sl_json *obj, const char *key)
{
    sl_json *v = sl_json_get(obj, key);
    return v && v->type == SL_JSON_STRING ? v->str : NULL;
}

int sl_json_is_int(const sl_json *v, int64_t *out)
{
    if (!v || v->type != SL_JSON_NUMBER)
        return 0;
    /* an optional '-' and at most 18 digits: no overflow */
    size_t i = v->str_len && v->str[0] == '-', n = v->str_len - i;
    if (n && n <= 18) {
        int64_t x = 0;
        while (i < v->str_len && v->str[i] >= '0' && v->str[i] <= '9')
            x = x * 10 + (v->str[i++] - '0');
        if (i == v->str_len) {
            if (out)
                *out = v->str[0] == '-' ? -x : x;
            return 1;
        }
    }
    /* integers only: no fraction or exponent, within int64 */
    for (size_t i = 0; i < v->str_len; i++)
        if (v->str[i] == '.' || v->str[i] == 'e' || v->str[i] == 'E')
            return 0;
    char *end;

    long long x = strtoll(v->str, &end, 10);
    if (*end)
        return 0;
    if ((x == LLONG_MAX || x == LLONG_MIN) && v->str_len > 18) {
        /* possible overflow: compare text */
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", x);
        if (strcmp(buf, v->str))
            return 0;
    }
    if (out)
        *out = x;
    return 1;
}

int sl_json_get_int(const sl_json *obj, const char *key, int64_t *out)
{
    return sl_json_is_int(sl_json_get(obj, key), out) ? 0 : -1;
}

int sl_json_get_num(const sl_json *obj, const char *key, double *out)
{
    sl_json *v = sl_json_get(obj, key);
    if (!v || v->type != SL_JSON_NUMBER)
        return -1;
    *out = v->num;
    return 0;
}

int sl_json_get_bool(const sl_json *obj, const char *key, int *out)
{
    sl_json *v = sl_json_get(obj, key);
    if (!v || (v->type != SL_JSON_TRUE && v->type != SL_JSON_FALSE))
        return -1;
    *out = v->type == SL_JSON_TRUE;
    return 0;
}

/* ---- writer --------------------------------------------------------- */

void sl_json_put_str(sl_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sl_buf_reserve(b, n + 2);
    sl_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        sl_buf_append(b, s + i - run, run);
        run = 0;
        switch (c) {
        case '"': sl_buf_append(b, "\\\"", 2); break;
        case '\\': sl_buf_append(b, "\\\\", 2); break;
        case '\n': sl_buf_append(b, "\\n", 2); break;
        case '\r': sl_buf_append(b, "\\r", 2); break;
        case '\t': sl_buf_append(b, "\\t", 2); break;
        case '\b': sl_buf_append(b, "\\b", 2); break;
        case '\f': sl_buf_append(b, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sl_buf_append(b, u, 6);
        }
        }
    }
    sl_buf_append(b, s + n - run, run);
    sl_buf_putc(b, '"');
}

void sl_json_put_cstr(sl_buf *b, const char *s)
{
    sl_json_put_str(b, s, strlen(s));
}

void sl_json_put_num(sl_buf *b, double v)
{
    if (!isfinite(v)) {
        sl_buf_puts(b, "null");
        return;
    }
    if (v == (double)(int64_t)v && fabs(v) < 9.007199254740992e15) {
        sl_buf_printf(b, "%lld", (long long)v);
        return;
    }
    /* shortest representation that round-trips */
    char tmp[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    sl_buf_puts(b, tmp);
}

void sl_json_put_int(sl_buf *b, int64_t v)
{
    sl_buf_printf(b, "%lld", (long long)v);
}

void sl_json_put_value(sl_buf *b, const sl_json *v)
{
    switch (v->type) {
    case SL_JSON_NULL: sl_buf_puts(b, "null"); break;
    case SL_JSON_TRUE: sl_buf_puts(b, "true"); break;
    case SL_JSON_FALSE: sl_buf_puts(b, "false"); break;
    case SL_JSON_NUMBER: sl_buf_append(b, v->str, v->str_len); break;
    case SL_JSON_STRING: sl_json_put_str(b, v->str, v->str_len); break;
    case SL_JSON_ARRAY:
        sl_buf_putc(b, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_value(b, v->kids[i]);
        }
        sl_buf_putc(b, ']');
        break;
    case SL_JSON_OBJECT:
        sl_buf_putc(b, '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_str(b, v->keys[i]->str, v->keys[i]->str_len);
            sl_buf_putc(b, ':');
            sl_json_put_value(b, v->kids[i]);
        }
        sl_buf_putc(b, '}');
        break;
    }
}
