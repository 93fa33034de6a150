/* See hf_regex.h. */
#define PCRE2_CODE_UNIT_WIDTH 8
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#include "tokenize/pre_tokenizers/hf_regex.h"

#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"

struct sl_hf_regex {
    pcre2_code *code;
};

/* Oniguruma's Unicode classes as HF's build has them (hf_gc_table.h,
 * measured on HF: Unicode 16), spelled out as ranges for PCRE2, whose
 * tables are older and whose \s also takes U+180E and \w all numbers but
 * not all of Alphabetic; \b and \B are rewritten with that \w. */
#include "tokenize/tables/hf_gc_table.h"

#define N_GC (sizeof hf_gc_index / sizeof *hf_gc_index)

typedef struct {
    uint32_t (*r)[2];
    size_t n, cap;
} rangeset;

static void rs_add(rangeset *rs, uint32_t a, uint32_t b)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 256;
        rs->r = sl_xrealloc(rs->r, rs->cap * sizeof *rs->r);
    }
    rs->r[rs->n][0] = a, rs->r[rs->n][1] = b;
    rs->n++;
}

/* Adds the categories a property name stands for: a two-letter category,
 * or a one-letter group (L M N P S Z; not C, which takes unassigned code
 * points). 0 when the name is none of these (left to PCRE2). */
static int rs_add_name(rangeset *rs, const char *name, size_t len)
{
    int found = 0;
    if (len == 1 && name[0] == 'C')
        return 0;
    for (size_t k = 0; k < N_GC; k++) {
        const char *g = hf_gc_index[k].name;
        if ((len == 2 && g[0] == name[0] && g[1] == name[1]) || (len == 1 && g[0] == name[0])) {
            for (uint32_t i = 0; i < hf_gc_index[k].n; i++)
                rs_add(rs, hf_gc_ranges[hf_gc_index[k].first + i][0], hf_gc_ranges[hf_gc_index[k].first + i][1]);
            found = 1;
        }
    }
    return found;
}

static int cmp_range(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The ranges, sorted and merged, as class items. */
static void rs_emit(rangeset *rs, sl_buf *out)
{
    qsort(rs->r, rs->n, sizeof *rs->r, cmp_range);
    for (size_t i = 0; i < rs->n;) {
        uint32_t a = rs->r[i][0], b = rs->r[i][1];
        for (i++; i < rs->n && rs->r[i][0] <= b + 1; i++)
            if (rs->r[i][1] > b)
                b = rs->r[i][1];
        if (a == b)
            sl_buf_printf(out, "\\x{%X}", a);
        else
            sl_buf_printf(out, "\\x{%X}-\\x{%X}", a, b);
    }
    rs->n = 0;
}

/* The class an escape at p[0..n) (p[0] == '\\') stands for, into rs;
 * returns its length and sets *neg, or 0 when it is not one of \s \S \w \W
 * \d \D \p{..} \P{..} with a category name. */
static size_t class_escape(const char *p, size_t n, rangeset *rs, int *neg)
{
    if (n < 2)
        return 0;
    char d = p[1];
    *neg = d == 'S' || d == 'W' || d == 'D' || d == 'P';
    if (d == 's' || d == 'S' || d == 'w' || d == 'W' || d == 'd' || d == 'D') {
        char lower = (char)(d | 0x20);
        rs_add_name(rs, &lower, 1);
        return 2;
    }
    if ((d == 'p' || d == 'P') && n > 3 && p[2] == '{') {
        const char *end = memchr(p + 3, '}', n - 3);
        if (!end)
            return 0;
        const char *name = p + 3;
        if (*name == '^')
            *neg = !*neg, name++;
        size_t len = (size_t)(end - name);
        if ((len == 1 || len == 2) && rs_add_name(rs, name, len))
            return (size_t)(end - p) + 1;
        rs->n = 0;
    }
    return 0;
}

/* The pattern with its Unicode classes spelled out (see above); a negated
 * class inside a bracket class is left to PCRE2. Returns 0, or the offset
 * + 1 of a class intersection, or -(offset + 1) of a nested or POSIX class
 * (Oniguruma's mean what PCRE2 cannot say). */
static int translate(const char *p, size_t n, sl_buf *out)
{
    rangeset rs = {0};
    int depth = 0; /* bracket class nesting */
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < n && (p[i + 1] == 'b' || p[i + 1] == 'B') && depth == 0) {
            rs_add_name(&rs, "w", 1);
            sl_buf w = {0};
            sl_buf_putc(&w, '[');
            rs_emit(&rs, &w);
            sl_buf_putc(&w, ']');
            const char *x = w.data;
            if (p[i + 1] == 'b')
                sl_buf_printf(out, "(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))", x, x, x, x);
            else
                sl_buf_printf(out, "(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))", x, x, x, x);
            sl_buf_free(&w);
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < n) {
            int neg;
            size_t k = class_escape(p + i, n - i, &rs, &neg);
            if (k && depth == 0) {
                sl_buf_puts(out, neg ? "[^" : "[");
                rs_emit(&rs, out);
                sl_buf_putc(out, ']');
                i += k - 1;
                continue;
            }
            if (k && !neg) {
                rs_emit(&rs, out);
                i += k - 1;
                continue;
            }
            rs.n = 0;
            sl_buf_putc(out, c);
            sl_buf_putc(out, p[i + 1]);
            i++;
            continue;
        }
        if (c == '[') {
            if (depth > 0) { /* a nested class or a POSIX class: Oniguruma's differ from PCRE2's */
                free(rs.r);
                return -(int)i - 1;
            }
            sl_buf_putc(out, c);
            /* a ']' right after '[' or '[^' is a literal */
            size_t j = i + 1;
            if (j < n && p[j] == '^')
                sl_buf_putc(out, p[j++]);
            if (j < n && p[j] == ']')
                sl_buf_putc(out, p[j++]);
            i = j - 1;
            depth++;
            continue;
        }
        if (c == ']' && depth > 0)
            depth--;
        if (c == '&' && depth > 0 && i + 1 < n && p[i + 1] == '&') {
            free(rs.r);
            return (int)i + 1; /* Oniguruma's class intersection: PCRE2 has none */
        }
        sl_buf_putc(out, c);
    }
    free(rs.r);
    return 0;
}

int sl_pcre2_jit_wanted(void)
{
#ifdef RUNNING_ON_VALGRIND
    return !RUNNING_ON_VALGRIND;
#else
    return 1;
#endif
}

sl_hf_regex *sl_hf_regex_new(const char *pat, size_t len, const char *what, sl_err *err)
{
    int ec;
    PCRE2_SIZE eo;
    sl_buf t = {0};
    int at = translate(pat, len, &t);
    if (at) {
        sl_buf_free(&t);
        sl_errf(err, "%s: regex at offset %d: %s is not supported", what, at > 0 ? at - 1 : -at - 1,
                at > 0 ? "class intersection (&&)" : "a nested or POSIX ([:alpha:]) character class");
        return NULL;
    }
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)(t.data ? t.data : ""), t.len, PCRE2_UTF | PCRE2_UCP, &ec, &eo, NULL);
    sl_buf_free(&t);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        sl_errf(err, "%s: invalid regex at offset %zu: %s", what, (size_t)eo, (char *)msg);
        return NULL;
    }
    if (sl_pcre2_jit_wanted())
        pcre2_jit_compile(c, PCRE2_JIT_COMPLETE); /* without JIT it still matches */
    sl_hf_regex *re = sl_xcalloc(1, sizeof *re);
    re->code = c;
    return re;
}

void sl_hf_regex_free(sl_hf_regex *re)
{
    if (!re)
        return;
    pcre2_code_free(re->code);
    free(re);
}

void sl_hf_match_free(sl_hf_match *m)
{
    pcre2_match_data_free(m->md);
    m->md = NULL;
}

int sl_hf_regex_each(const sl_hf_regex *re, sl_hf_match *m, const char *s, size_t n, sl_hf_match_fn fn, void *ctx,
                     sl_err *err)
{
    if (!m->md)
        m->md = pcre2_match_data_create(1, NULL);
    pcre2_match_data *md = m->md;
    if (n == 0)
        return 0; /* HF: an empty text has no matches */
    /* rust-onig's FindMatches: an empty match where the last match ended
     * is skipped, and the search goes on one character further */
    size_t pos = 0, last_end = SIZE_MAX;
    while (pos <= n) {
        int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return sl_errf(err, "regex matching failed at byte %zu: %s", pos, (char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t a = ov[0], b = ov[1];
        if (b < a) /* \K in a lookahead: not a match HF could report */
            b = a;
        if (a == b && b == last_end) {
            if (pos >= n)
                break;
            uint32_t cp;
            size_t k = sl_utf8_seq((const uint8_t *)s + pos, n - pos, &cp);
            pos += k ? k : 1;
            continue;
        }
        fn(ctx, a, b);
        pos = last_end = b;
    }
    return 0;
}
