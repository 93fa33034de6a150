/* Metadata field selection and the document id set (see meta.h). */
#include "shard/meta.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/hashtab.h"

#include "shard/pack.h"
#include "base/byteorder.h"
#include "base/json.h"
#include "stream/spill.h"
#include "base/utf8.h"

int sl_meta_sel_parse(sl_meta_sel *sel, int mode, const char *list, sl_err *err)
{
    sl_meta_sel_free(sel);
    sel->mode = mode;
    sel->n = sl_list_split(list, 1, &sel->names);
    for (size_t i = 0; i < sel->n; i++)
        if (!sel->names[i][0]) {
            sl_meta_sel_free(sel);
            return sl_errf(err, "field list '%s': empty field name", list);
        }
    return 0;
}

void sl_meta_sel_free(sl_meta_sel *sel)
{
    for (size_t i = 0; i < sel->n; i++)
        free(sel->names[i]);
    free(sel->names);
    sel->names = NULL;
    sel->n = 0;
    sel->mode = SL_META_ALL;
}

static int listed(const sl_meta_sel *sel, const sl_json *key)
{
    for (size_t i = 0; i < sel->n; i++)
        if (strlen(sel->names[i]) == key->str_len && !memcmp(sel->names[i], key->str, key->str_len))
            return 1;
    return 0;
}

/* --- fast path: a metadata text that is already one compact JSON object ---
 * (what sluice's own stages write) is copied as it is. The check is strict
 * RFC 8259 with no insignificant whitespace, well-formed UTF-8 and no
 * surrogate \u escapes (those the parser turns into U+FFFD); anything else,
 * valid or not, goes through the parser. */
typedef struct {
    const unsigned char *p, *e;
    int depth;
} scan;

static int is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(unsigned c)
{
    return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int scan_string(scan *v)
{
    v->p++;
    while (v->p < v->e) {
        unsigned c = *v->p;
        if (c == '"') {
            v->p++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (v->e - v->p < 2)
                return 0;
            c = v->p[1];
            if (c == 'u') {
                if (v->e - v->p < 6 || !is_hex(v->p[2]) || !is_hex(v->p[3]) || !is_hex(v->p[4]) || !is_hex(v->p[5]))
                    return 0;
                unsigned h = v->p[3] | 0x20;
                if ((v->p[2] | 0x20) == 'd' && (h == '8' || h == '9' || (h >= 'a' && h <= 'f')))
                    return 0; /* \uD800-\uDFFF: a surrogate */
                v->p += 6;
                continue;
            }
            if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't')
                return 0;
            v->p += 2;
            continue;
        }
        if (c < 0x80) {
            v->p++;
            continue;
        }
        uint32_t cp;
        size_t k = sl_utf8_seq(v->p, (size_t)(v->e - v->p), &cp);
        if (!k)
            return 0;
        v->p += k;
    }
    return 0;
}

static int scan_number(scan *v)
{
    const unsigned char *p = v->p, *e = v->e;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return 0;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < e && is_digit(*p))
            p++;
    else
        return 0;
    if (p < e && *p == '.') {
        if (++p >= e || !is_digit(*p))
            return 0;
        while (p < e && is_digit(*p))
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        if (++p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || !is_digit(*p))
            return 0;
        while (p < e && is_digit(*p))
            p++;
    }
    v->p = p;
    return 1;
}

static int scan_word(scan *v, const char *w, size_t n)
{
    if ((size_t)(v->e - v->p) < n || memcmp(v->p, w, n))
        return 0;
    v->p += n;
    return 1;
}

static int scan_value(scan *v)
{
    if (v->p >= v->e)
        return 0;
    switch (*v->p) {
    case '"': return scan_string(v);
    case 't': return scan_word(v, "true", 4);
    case 'f': return scan_word(v, "false", 5);
    case 'n': return scan_word(v, "null", 4);
    case '{':
    case '[': {
        /* well below SL_JSON_MAX_DEPTH, which also bounds the line around it */
        if (++v->depth > 64)
            return 0;
        int obj = *v->p == '{';
        unsigned char close = obj ? '}' : ']';
        if (++v->p < v->e && *v->p == close) {
            v->p++;
            v->depth--;
            return 1;
        }
        for (;;) {
            if (obj && (v->p >= v->e || *v->p != '"' || !scan_string(v) || v->p >= v->e || *v->p++ != ':'))
                return 0;
            if (!scan_value(v) || v->p >= v->e)
                return 0;
            unsigned char c = *v->p++;
            if (c == close) {
                v->depth--;
                return 1;
            }
            if (c != ',')
                return 0;
        }
    }
    default: return scan_number(v);
    }
}

static int compact_object(const char *s, size_t n)
{
    scan v = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
    return n >= 2 && s[0] == '{' && scan_value(&v) && v.p == v.e;
}

int sl_meta_compact_object(const char *s, size_t n)
{
    return compact_object(s, n);
}

int sl_meta_select(const sl_meta_sel *sel, const char *meta, size_t len, sl_buf *out, sl_err *err)
{
    if (!meta || !len)
        return 0;
    if (sel->mode == SL_META_ALL && compact_object(meta, len)) {
        if (len > 2) /* "{}": nothing */
            sl_buf_append(out, meta, len);
        return 0;
    }
    sl_json_doc *jd = sl_json_parse(meta, len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "metadata");
    const sl_json *o = sl_json_root(jd);
    if (o->type != SL_JSON_OBJECT) {
        sl_json_free(jd);
        return sl_errf(err, "metadata is not a JSON object");
    }
    size_t kept = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (sel->mode == SL_META_KEEP && !listed(sel, o->keys[i]))
            continue;
        if (sel->mode == SL_META_DROP && listed(sel, o->keys[i]))
            continue;
        sl_buf_putc(out, kept++ ? ',' : '{');
        sl_json_put_str(out, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(out, ':');
        sl_json_put_value(out, o->kids[i]);
    }
    if (kept)
        sl_buf_putc(out, '}');
    sl_json_free(jd);
    return 0;
}

void sl_meta_doc_line(sl_buf *b, uint64_t ordinal, const char *id, size_t id_len, const char *split, int long_status,
                      const char *meta, size_t meta_len)
{
    /* no printf: one line per document, in shard and merge alike */
    char num[24];
    size_t k = sizeof num;
    do
        num[--k] = (char)('0' + ordinal % 10);
    while (ordinal /= 10);
    sl_buf_puts(b, "{\"doc\":");
    sl_buf_append(b, num + k, sizeof num - k);
    sl_buf_puts(b, ",\"id\":");
    sl_json_put_str(b, id ? id : "", id ? id_len : 0);
    sl_buf_puts(b, ",\"split\":\"");
    sl_buf_puts(b, split);
    sl_buf_putc(b, '"');
    if (long_status == SL_DOC_TRUNCATED)
        sl_buf_puts(b, ",\"long\":\"truncated\"");
    else if (long_status == SL_DOC_DROPPED)
        sl_buf_puts(b, ",\"long\":\"dropped\"");
    if (meta && meta_len) {
        sl_buf_puts(b, ",\"meta\":");
        sl_buf_append(b, meta, meta_len);
    }
    sl_buf_puts(b, "}\n");
}

/* --- id set: 128-bit hashes of the ids (0 marks an empty slot) ------------- */
struct sl_idset {
    sl_htab t;
};

/* the key is a hash already */
static uint64_t id_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return ((const XXH128_hash_t *)key)->low64;
}

static const sl_htab_type idset_type = {
    .entry_size = sizeof(XXH128_hash_t), .key_size = sizeof(XXH128_hash_t), .hash = id_hash, .min_cap = 1024};

sl_idset *sl_idset_new(void)
{
    sl_idset *s = sl_xcalloc(1, sizeof *s);
    sl_htab_init(&s->t, NULL);
    return s;
}

int sl_idset_add(sl_idset *s, const char *id, size_t len)
{
    XXH128_hash_t h = XXH3_128bits(id, len);
    if (!h.low64 && !h.high64)
        h.low64 = 1; /* keep 0 for empty slots */
    int fresh;
    sl_htab_put(&s->t, &idset_type, &h, &fresh);
    return !fresh;
}

uint64_t sl_idset_count(const sl_idset *s)
{
    return sl_htab_count(&s->t);
}

void sl_idset_free(sl_idset *s)
{
    if (!s)
        return;
    sl_htab_free(&s->t);
    free(s);
}

int sl_docmeta_select(sl_docmeta *m, const char *meta, size_t len, const char *src, const char *id, size_t id_len,
                      sl_err *err)
{
    sl_buf_clear(&m->buf);
    if (sl_meta_select(&m->sel, meta, len, &m->buf, err)) {
        char q[96];
        return sl_err_prefix(err, "%s: document '%s'", src, sl_err_quote(id, id_len, q, sizeof q));
    }
    return 0;
}

/* A record: the id's XXH3-128 (big-endian: memcmp orders it), the ordinal
 * (big-endian), the id. Sorted by hash only; the spill's stable sort keeps
 * the ordinals of one hash in the order appended, which is ascending. */
static int id_cmp(const void *a, size_t al, const void *b, size_t bl, void *ctx)
{
    (void)al, (void)bl, (void)ctx;
    return memcmp(a, b, 16);
}

int sl_docmeta_id(sl_docmeta *m, const char *id, size_t len, uint64_t ordinal, const char *src, sl_err *err)
{
    if (!m->ids) {
        sl_spill_opts o = {.budget = SL_DOCMETA_BUDGET, .cmp = id_cmp, .purpose = "document ids"};
        if (!(m->ids = sl_spill_new(&o, err)))
            return -1;
    }
    if (!m->src)
        m->src = sl_xstrdup(src);
    unsigned char head[24 + 100];
    XXH128_hash_t h = XXH3_128bits(id, len);
    sl_put_be64(head, h.high64);
    sl_put_be64(head + 8, h.low64);
    sl_put_be64(head + 16, ordinal);
    /* the id itself only for messages: its first 100 bytes are enough (sl_err_quote cuts before) */
    size_t keep = len < 100 ? len : 100;
    memcpy(head + 24, id, keep);
    return sl_spill_add(m->ids, head, 24 + keep, err);
}

int sl_docmeta_finish(sl_docmeta *m, sl_err *err)
{
    if (!m->ids)
        return 0;
    if (sl_spill_sort(m->ids, err))
        return -1;
    const void *r;
    size_t n;
    unsigned char prev[16];
    int have = 0, k;
    const unsigned char *best = NULL;
    size_t best_len = 0;
    unsigned char *keep = NULL;
    while ((k = sl_spill_next(m->ids, &r, &n, err)) == 1) {
        const unsigned char *p = r;
        if (have && !memcmp(p, prev, 16)) {
            uint64_t ord = sl_get_be64(p + 16);
            if (!m->dups++ || ord < m->first_dup_doc) {
                m->first_dup_doc = ord;
                keep = sl_xrealloc(keep, n - 24 + 1);
                memcpy(keep, p + 24, n - 24);
                best = keep;
                best_len = n - 24;
            }
        }
        memcpy(prev, p, 16);
        have = 1;
    }
    if (k < 0) {
        free(keep);
        return -1;
    }
    if (m->dups) {
        char q[96];
        sl_err_quote((const char *)best, best_len, q, sizeof q);
        free(m->first_dup);
        m->first_dup = sl_xstrdup(q);
    }
    free(keep);
    sl_spill_free(m->ids);
    m->ids = NULL;
    if (m->dups && m->unique_ids)
        return sl_errf(err, "%s: document %llu: duplicate id '%s' (`unique_ids`)", m->src ? m->src : "input",
                       (unsigned long long)m->first_dup_doc, m->first_dup);
    return 0;
}

void sl_docmeta_free(sl_docmeta *m)
{
    sl_meta_sel_free(&m->sel);
    sl_spill_free(m->ids);
    free(m->src);
    free(m->first_dup);
    sl_buf_free(&m->buf);
    memset(m, 0, sizeof *m);
}
