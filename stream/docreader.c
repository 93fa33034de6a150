/* Text documents from sources (see docreader.h).
 *
 * Each source is read through one buffer that never holds more than one
 * line (or, for whole-file plain text, one document) plus a read chunk, and
 * JSON Lines are parsed in batches of at most a quarter of mem_budget plus
 * one line. Buffers that grew for a large document are shrunk or released
 * after it (sl_buf_fit), so memory stays bounded by the budget plus a few
 * times the largest document, whatever the input's length and however the
 * documents' lengths are distributed. The format of a
 * source is decided by its first non-whitespace byte (after an optional
 * UTF-8 byte order mark): '{' means JSON Lines, anything else plain text.
 *
 * Plain text containing a NUL byte is rejected as binary data: no text file
 * has one, while nearly every binary file does, and without this check a
 * mistaken input (an image, an unsupported archive) would silently become a
 * document made of U+FFFD. */
#include "stream/docreader.h"
#include "stream/progress.h"

#include <omp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "stream/arrow_ipc.h"
#include "stream/io.h"
#include "base/json.h"
#include "base/log.h"
#include "stream/parquet.h"
#include "stream/source.h"

#define DEFAULT_MAX_DOC ((size_t)64 << 20)
#define CHUNK ((size_t)1 << 20)
#define MAX_WARNINGS 10

#define BATCH_LINES 4096
#define MIN_BATCH_BYTES ((size_t)64 << 10)

enum { M_DETECT, M_JSONL, M_TEXT, M_LINES, M_PARQUET, M_ARROW, M_DONE };

/* Largest Parquet or Arrow source held in memory (one that cannot be read by name:
 * standard input, a compressed file, an archive member). */
#define MAX_PARQUET_MEM ((size_t)2 << 30)

typedef struct jslot jslot;

/* JSON Lines lines gathered for parsing in parallel (see batch_fill). */
typedef struct {
    sl_buf data;         /* the lines' bytes */
    size_t *off, *len;   /* line i is data[off[i], off[i] + len[i]) */
    jslot *slots;        /* parse results */
    size_t n, next, cap; /* n lines, next to hand out, capacity */
    sl_err pending;      /* a read error met after line n */
    int has_pending;
} sl_batch;

struct sl_docreader {
    sl_docreader_opts o;
    sl_sources *src;
    sl_input *in; /* current source (owned by src), NULL between sources */
    char *name;   /* its name */
    int mode;
    char *buf;                    /* buf[start, end) is read but not consumed */
    size_t cap, start, end, scan; /* no '\n' in buf[start, scan) */
    int eof;
    uint64_t line;  /* lines consumed in this source */
    uint64_t ndoc;  /* documents produced from this source */
    int ws_dropped; /* blank lines before the first non-blank byte were dropped (detect) */
    /* A JSON array of objects read as JSON Lines (jarr_scan): its bytes are
     * rewritten in place as they are read, one for one, so that each
     * element is a line. jarr: 0 off, else the state below; jdepth: depth
     * inside the element; jpos: bytes of the source seen (for messages). */
    int jarr, jstr, jesc, jcat;   /* jcat: JSON values one after another (pretty-printed), not an array */
    uint64_t jdepth, jpos, jbase; /* jbase: st.bytes when the source started */
    sl_docreader_stats st;
    unsigned warnings;
    sl_batch batch;
    size_t batch_bytes; /* a JSON Lines batch is full at this many bytes */
    size_t ramp_bytes;  /* ...or at this many, which doubles from batch to batch up to batch_bytes */
    sl_pq *pq;          /* the current source is Parquet */
    sl_arrow *ar;       /* the current source is Arrow IPC */
    int pq_fd;          /* either read by name through this descriptor, or */
    sl_pq_mem pq_mem;   /* held in memory (pq_membuf) */
    char *pq_membuf;
};

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* ---- buffered reading of the current source ---------------------------- */

/* ---- a JSON array of objects as JSON Lines ----------------------------- */

/* A source whose first bytes are '[' and then '{' (whitespace between) is a
 * JSON array of documents, as Hugging Face datasets' json loader reads one.
 * Its bytes are rewritten in place, one for one, as they arrive: the
 * opening '[' and the closing ']' become spaces, each ',' between elements
 * a '\n', and a line end inside an element a space (JSON allows one only
 * as whitespace there). So each element is a line of JSON Lines, read by
 * the JSON Lines path with its checks, and an element's number is its
 * line's. What is not an array (a missing ',', one too many, bytes after
 * the ']', no ']') is an error naming the byte. */
enum { JA_OFF, JA_VALUE, JA_FIRST, JA_IN, JA_AFTER, JA_END, JC_AFTER, JC_BETWEEN };

/* The bytes of p[0..n) before the first '"' or '\\' (n when none): most
 * of a JSON array of documents is its texts' strings. */
static size_t str_run(const char *p, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
#endif
    while (i < n && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

/* The offset in the source of buf[at] (for messages). */
static uint64_t src_offset(const sl_docreader *r, size_t at)
{
    return r->st.bytes - r->jbase - (r->end - at);
}

static int jarr_scan(sl_docreader *r, size_t from, sl_err *err)
{
    char *p = r->buf;
    for (size_t i = from; i < r->end; i++, r->jpos++) {
        char c = p[i];
        if (r->jarr == JA_IN) {
            if (r->jstr) {
                if (r->jesc)
                    r->jesc = 0;
                else if (c == '\\')
                    r->jesc = 1;
                else if (c == '"')
                    r->jstr = 0;
                else { /* inside a string nothing changes until a quote or a backslash: skip to it */
                    size_t k = str_run(p + i + 1, r->end - i - 1);
                    i += k;
                    r->jpos += k;
                }
                continue;
            }
            if (c == '"')
                r->jstr = 1;
            else if (c == '{' || c == '[')
                r->jdepth++;
            else if ((c == '}' || c == ']') && r->jdepth > 0 && --r->jdepth == 0)
                r->jarr = r->jcat ? JC_AFTER : JA_AFTER;
            else if (r->jdepth == 0 && (is_ws(c) || (!r->jcat && (c == ',' || c == ']')))) {
                r->jarr = r->jcat ? JC_AFTER : JA_AFTER; /* the end of a scalar: read again as after one */
                i--, r->jpos--;
            } else if (c == '\n' || c == '\r')
                p[i] = ' ';
            continue;
        }
        if (r->jcat) { /* values one after another: the first white space after one ends its line */
            if (is_ws(c)) {
                p[i] = r->jarr == JC_AFTER ? '\n' : ' ';
                r->jarr = JC_BETWEEN;
            } else { /* the next value (right after the last: one line, which JSON Lines refuses) */
                r->jarr = JA_IN;
                r->jdepth = 0;
                i--, r->jpos--;
            }
            continue;
        }
        if (is_ws(c)) {
            p[i] = ' ';
            continue;
        }
        switch (r->jarr) {
        case JA_FIRST: /* after '[' */
        case JA_VALUE: /* after ',' */
            if (c == ']' && r->jarr == JA_FIRST) {
                p[i] = ' ';
                r->jarr = JA_END;
                continue;
            }
            if (c == ',' || c == ']')
                return sl_errf(err, "%s: byte %llu: '%c' where a JSON array's element should be", r->name,
                               (unsigned long long)r->jpos, c);
            r->jarr = JA_IN;
            r->jdepth = 0;
            i--, r->jpos--; /* the element's first byte, read in JA_IN */
            continue;
        case JA_AFTER:
            if (c == ',') {
                p[i] = '\n';
                r->jarr = JA_VALUE;
            } else if (c == ']') {
                p[i] = ' ';
                r->jarr = JA_END;
            } else
                return sl_errf(err, "%s: byte %llu: ',' or ']' expected after a JSON array's element", r->name,
                               (unsigned long long)r->jpos);
            continue;
        default: /* JA_END */
            return sl_errf(err, "%s: byte %llu: bytes after the end of the JSON array", r->name,
                           (unsigned long long)r->jpos);
        }
    }
    if (r->eof && r->jarr != JA_END && !r->jcat) /* (an unfinished value is a bad line of JSON Lines) */
        return sl_errf(err, "%s: byte %llu: the JSON array is not closed (no ']')", r->name,
                       (unsigned long long)r->jpos);
    return 0;
}

/* Reads the next chunk into the buffer, first dropping consumed bytes. The
 * buffer grows only while an unfinished line/document needs it. */
static int fill(sl_docreader *r, sl_err *err)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scan -= r->start;
        r->start = 0;
    }
    if (r->cap > 4 * CHUNK && r->end + CHUNK < r->cap / 4) {
        /* it grew for a long line that is now consumed */
        r->cap = r->end + CHUNK < 2 * CHUNK ? 2 * CHUNK : r->end + CHUNK;
        r->buf = sl_xrealloc(r->buf, r->cap);
    }
    if (r->cap - r->end < CHUNK) {
        r->cap = r->cap < CHUNK ? 2 * CHUNK : r->cap * 2;
        if (r->cap < r->end + CHUNK)
            r->cap = r->end + CHUNK;
        r->buf = sl_xrealloc(r->buf, r->cap);
    }
    long got = sl_input_read(r->in, r->buf + r->end, r->cap - r->end, err);
    if (got < 0)
        return -1;
    if (got == 0)
        r->eof = 1;
    r->end += (size_t)got;
    r->st.bytes += (uint64_t)got;
    return r->jarr ? jarr_scan(r, r->end - (size_t)got, err) : 0;
}

/* Next line without its '\n' (a '\r' before it is removed too). Returns 1
 * with (*p, *n) valid until the next call, 0 at end of source, -1 on error. */
static int get_line(sl_docreader *r, const char **p, size_t *n, sl_err *err)
{
    for (;;) {
        char *nl = memchr(r->buf + r->scan, '\n', r->end - r->scan);
        size_t len;
        if (nl) {
            len = (size_t)(nl - (r->buf + r->start));
            r->scan = (size_t)(nl - r->buf) + 1;
        } else {
            r->scan = r->end;
            len = r->end - r->start;
            if (len > r->o.max_doc_bytes)
                return sl_err_set(err, SL_E_LIMIT, "max_doc_bytes",
                                  "%s:%llu: line longer than `max_doc_bytes` (%zu bytes)", r->name,
                                  (unsigned long long)r->line + 1, r->o.max_doc_bytes);
            if (!r->eof) {
                if (fill(r, err) < 0)
                    return -1;
                continue;
            }
            if (len == 0)
                return 0;
        }
        if (len > r->o.max_doc_bytes)
            return sl_err_set(err, SL_E_LIMIT, "max_doc_bytes", "%s:%llu: line longer than `max_doc_bytes` (%zu bytes)",
                              r->name, (unsigned long long)r->line + 1, r->o.max_doc_bytes);
        *p = r->buf + r->start;
        r->start = r->scan;
        r->line++;
        if (len && (*p)[len - 1] == '\r')
            len--;
        *n = len;
        return 1;
    }
}

/* 1-based line number of byte `off` of the unconsumed buffer. */
static uint64_t line_at(const sl_docreader *r, size_t off)
{
    uint64_t line = r->line + 1;
    for (size_t i = r->start; i < r->start + off; i++)
        line += r->buf[i] == '\n';
    return line;
}

/* ---- documents ---------------------------------------------------------- */

static void warn(sl_docreader *r, const sl_err *e)
{
    if (r->o.quiet)
        return;
    if (r->warnings < MAX_WARNINGS)
        sl_log(SL_LOG_WARNING, NULL, "%s (line skipped)", e->msg);
    else if (r->warnings == MAX_WARNINGS)
        sl_log(SL_LOG_WARNING, NULL, "more lines skipped; further warnings suppressed");
    r->warnings++;
}

static void gen_id(sl_docreader *r, sl_textdoc *d)
{
    sl_buf_printf(&d->id, "%s:%llu", r->name, (unsigned long long)r->ndoc);
    d->id_is_string = 1;
}

/* Appends text s[0, n) to d->text as valid UTF-8 per the invalid-UTF-8 mode.
 * `line` positions the error. NUL bytes mean binary data. */
static int put_text(sl_docreader *r, sl_textdoc *d, const char *s, size_t n, uint64_t line, sl_err *err)
{
    const char *nul = memchr(s, 0, n);
    if (nul)
        return sl_err_set(err, SL_E_FORMAT, NULL,
                          "%s:%llu: binary data (NUL byte at offset %zu); not text, JSON Lines or a known archive",
                          r->name, (unsigned long long)(line ? line : line_at(r, (size_t)(nul - s))),
                          (size_t)(nul - s));
    size_t bad = sl_utf8_check(s, n);
    if (bad == n) {
        sl_buf_append(&d->text, s, n);
        return 0;
    }
    if (r->o.invalid_utf8 == SL_UTF8_ERROR)
        return sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: invalid UTF-8 (byte %zu of the %s)", r->name,
                          (unsigned long long)(line ? line : line_at(r, bad)), bad, line ? "line" : "file");
    r->st.invalid_utf8 += sl_utf8_repair(&d->text, s, n, r->o.invalid_utf8);
    return 0;
}

/* One JSON Lines line, parsed into a batch slot. Runs on worker threads, so
 * it only reads r and writes the slot. */
struct jslot {
    sl_textdoc d;
    int status;     /* 0 ok; -1 bad line (skippable); -2 fatal (invalid UTF-8 under --invalid=error) */
    int gen_id;     /* no usable "id": generated when handed out, in order */
    size_t invalid; /* invalid UTF-8 sequences repaired */
    uint64_t line;
    sl_err err;
    sl_buf tmp; /* scratch of fast_json_line */
};

/* The one-pass reading of a JSON Lines object: the text field's string is
 * decoded straight into d->text, "id" into d->id, the other fields written
 * compactly into d->meta as they are met, with no tree and no allocation
 * beyond the document's buffers. Returns 1 when the line is read; 0 when it
 * is left to the tree (parse_json_line's way, which then reads it again):
 * malformed JSON (so that every error is the tree's, word for word), a
 * missing or non-string text field, an "id" that is neither a string, a
 * number nor null, the text field or "id" given twice, nesting deeper than
 * 64, and the text field named "id". */
static int fast_json_line(const sl_docreader *r, jslot *s, const char *p, size_t n)
{
    sl_textdoc *d = &s->d;
    sl_buf *tmp = &s->tmp;
    const char *field = r->o.field;
    size_t flen = strlen(field), invalid = 0;
    int mode = r->o.invalid_utf8, has_text = 0, has_id = 0, first = 1;
    if (flen == 2 && !memcmp(field, "id", 2))
        return 0;
    size_t i = 0;
    while (i < n && is_ws(p[i]))
        i++;
    if (i >= n || p[i] != '{')
        return 0;
    sl_buf_putc(&d->meta, '{');
    for (i++;;) {
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n || p[i] != '"')
            return 0; /* (an empty object has no text field) */
        int changed;
        sl_buf_clear(tmp);
        i++;
        if (sl_json_str_decode(p, n, &i, tmp, mode, &invalid, &changed))
            return 0;
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n || p[i] != ':')
            return 0;
        i++;
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n)
            return 0;
        if (tmp->len == flen && !memcmp(tmp->data, field, flen)) {
            if (has_text || p[i] != '"')
                return 0;
            has_text = 1;
            /* the text is at most the rest of the line: no growing */
            sl_buf_reserve(&d->text, n - i + 16);
            i++;
            if (sl_json_str_decode(p, n, &i, &d->text, mode, &invalid, NULL))
                return 0;
        } else if (tmp->len == 2 && !memcmp(tmp->data, "id", 2)) {
            if (has_id)
                return 0;
            has_id = 1;
            char c = p[i];
            if (c == '"') {
                i++;
                if (sl_json_str_decode(p, n, &i, &d->id, mode, &invalid, NULL))
                    return 0;
                d->id_is_string = 1;
            } else if (c == 'n') {
                if (n - i < 4 || memcmp(p + i, "null", 4))
                    return 0;
                i += 4;
                s->gen_id = 1;
            } else if (c == '-' || c == 'I' || c == 'N' || (c >= '0' && c <= '9')) {
                if (sl_json_put_canon(&d->id, p, n, &i, tmp, mode, &invalid))
                    return 0;
                d->id_is_string = 0;
            } else {
                return 0;
            }
        } else {
            if (!first)
                sl_buf_putc(&d->meta, ',');
            first = 0;
            if (changed) {
                sl_json_put_str(&d->meta, tmp->data, tmp->len);
            } else {
                sl_buf_putc(&d->meta, '"');
                sl_buf_append(&d->meta, tmp->data, tmp->len);
                sl_buf_putc(&d->meta, '"');
            }
            sl_buf_putc(&d->meta, ':');
            if (sl_json_put_canon(&d->meta, p, n, &i, tmp, mode, &invalid))
                return 0;
        }
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n)
            return 0;
        if (p[i] == ',') {
            i++;
            continue;
        }
        if (p[i] != '}')
            return 0;
        i++;
        break;
    }
    while (i < n && is_ws(p[i]))
        i++;
    if (i != n || !has_text)
        return 0;
    sl_buf_putc(&d->meta, '}');
    if (!has_id)
        s->gen_id = 1;
    s->invalid = invalid;
    s->status = 0;
    return 1;
}

/* "a, b, c" for a message: an object's first keys, control bytes as '?'
 * (a message is one line), each cut at 32 bytes, at most 8 of them */
static void key_list(const sl_json *o, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = 0; i < o->n && i < 8; i++) {
        const sl_json *key = o->keys[i];
        size_t len = key->str_len < 32 ? key->str_len : 32;
        while (len < key->str_len && len > 0 && ((unsigned char)key->str[len] & 0xC0) == 0x80)
            len--; /* (not inside a character) */
        if (k + len + 8 >= cap)
            break;
        if (i)
            k += (size_t)snprintf(out + k, cap - k, ", ");
        for (size_t j = 0; j < len; j++)
            out[k++] = (unsigned char)key->str[j] < 0x20 || key->str[j] == 0x7f ? '?' : key->str[j];
        out[k] = 0;
    }
    if (o->n > 8 && k + 5 < cap)
        snprintf(out + k, cap - k, ", ...");
}

/* --field a.b.c where the line has no key of that name: the text in
 * nested objects, as a dotted path reaches into a Parquet struct. chain[i]
 * is the value at segment i (the last, the text); NULL when a segment is
 * missing or its parent is no object. */
#define FIELD_DEPTH 16
static const sl_json *dotted_field(const sl_json *root, const char *field, const sl_json **chain, size_t *depth)
{
    const sl_json *o = root;
    char seg[256];
    *depth = 0;
    for (const char *f = field;;) {
        size_t k = strcspn(f, ".");
        if (k >= sizeof seg || *depth == FIELD_DEPTH || o->type != SL_JSON_OBJECT)
            return NULL;
        memcpy(seg, f, k);
        seg[k] = 0;
        o = sl_json_get(o, seg);
        if (!o)
            return NULL;
        chain[(*depth)++] = o;
        if (!f[k])
            return o;
        f += k + 1;
    }
}

/* obj written without the text at the end of chain[level..depth) */
static void put_without(sl_buf *b, const sl_json *obj, const sl_json *const *chain, size_t level, size_t depth)
{
    sl_buf_putc(b, '{');
    int first = 1;
    for (size_t i = 0; i < obj->n; i++) {
        if (obj->kids[i] == chain[level] && level + 1 == depth)
            continue;
        if (!first)
            sl_buf_putc(b, ',');
        first = 0;
        sl_json_put_str(b, obj->keys[i]->str, obj->keys[i]->str_len);
        sl_buf_putc(b, ':');
        if (obj->kids[i] == chain[level])
            put_without(b, obj->kids[i], chain, level + 1, depth);
        else
            sl_json_put_value(b, obj->kids[i]);
    }
    sl_buf_putc(b, '}');
}

static void parse_json_line(const sl_docreader *r, jslot *s, const char *p, size_t n, int dom)
{
    sl_textdoc *d = &s->d;
    sl_err *err = &s->err;
    unsigned long long line = s->line;
    /* the slot's buffers are the consumer's from an earlier document: a
     * field of the line is at most about as long as the line */
    sl_buf_fit(&d->id, n);
    sl_buf_fit(&d->text, n);
    sl_buf_fit(&d->meta, n);
    sl_buf_fit(&s->tmp, n);
    d->id_is_string = 1;
    s->gen_id = 0;
    s->invalid = 0;
    s->status = -1;
    if (r->o.invalid_utf8 == SL_UTF8_ERROR) {
        size_t bad = sl_utf8_check(p, n);
        if (bad != n) {
            sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: invalid UTF-8 (byte %zu of the line)", r->name, line, bad);
            s->status = -2;
            return;
        }
    }
    if (!dom && fast_json_line(r, s, p, n))
        return;
    sl_buf_clear(&d->id);
    sl_buf_clear(&d->text);
    sl_buf_clear(&d->meta);
    d->id_is_string = 1;
    s->gen_id = 0;
    /* NaN, Infinity and -Infinity are numbers, as Python's json reads and writes
     * them (sluice read writes them for Parquet and Arrow floats); an object
     * {"__float__": "NaN"} stays an object, as json.loads gives it */
    sl_json_opts jo = {.invalid_utf8 = r->o.invalid_utf8 | (dom ? SL_JSTR_CAREFUL : 0),
                       .nonfinite = SL_JSON_NONFINITE_WORDS};
    sl_json_doc *jd = sl_json_parse(p, n, &jo, err);
    if (!jd) {
        sl_err_prefix(err, "%s:%llu", r->name, line);
        return;
    }
    const sl_json *root = sl_json_root(jd);
    const sl_json *text = root->type == SL_JSON_OBJECT ? sl_json_get(root, r->o.field) : NULL;
    const sl_json *id = root->type == SL_JSON_OBJECT ? sl_json_get(root, "id") : NULL;
    const sl_json *chain[FIELD_DEPTH];
    size_t depth = 0; /* > 1: the text is nested (dotted_field) */
    if (!text && root->type == SL_JSON_OBJECT && strchr(r->o.field, '.'))
        text = dotted_field(root, r->o.field, chain, &depth);
    if (root->type != SL_JSON_OBJECT)
        sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: not a JSON object", r->name, line);
    else if (!text) {
        char keys[400];
        key_list(root, keys, sizeof keys);
        sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: no \"%s\" field (%s%s)%s", r->name, line, r->o.field,
                   root->n ? "fields: " : "an empty object", keys, root->n ? "; --field names the text's" : "");
    } else if (text->type != SL_JSON_STRING)
        sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: field \"%s\" is not a string", r->name, line, r->o.field);
    else if (id && id->type != SL_JSON_STRING && id->type != SL_JSON_NUMBER && id->type != SL_JSON_NULL)
        sl_err_set(err, SL_E_FORMAT, NULL, "%s:%llu: field \"id\" is not a string or a number", r->name, line);
    else
        s->status = 0;
    if (s->status == 0) {
        s->invalid = jo.invalid_count;
        sl_buf_append(&d->text, text->str, text->str_len);
        if (id && id->type != SL_JSON_NULL) {
            sl_buf_append(&d->id, id->str, id->str_len);
            d->id_is_string = id->type == SL_JSON_STRING;
        } else {
            s->gen_id = 1;
        }
        size_t flen = strlen(r->o.field);
        sl_buf_putc(&d->meta, '{');
        int first = 1;
        for (size_t i = 0; i < root->n; i++) {
            const sl_json *k = root->keys[i];
            if ((k->str_len == 2 && !memcmp(k->str, "id", 2)) ||
                (depth < 2 && k->str_len == flen && !memcmp(k->str, r->o.field, flen)))
                continue;
            if (!first)
                sl_buf_putc(&d->meta, ',');
            first = 0;
            sl_json_put_str(&d->meta, k->str, k->str_len);
            sl_buf_putc(&d->meta, ':');
            if (depth > 1 && root->kids[i] == chain[0])
                put_without(&d->meta, root->kids[i], chain, 1, depth);
            else
                sl_json_put_value(&d->meta, root->kids[i]);
        }
        sl_buf_putc(&d->meta, '}');
    }
    sl_json_free(jd);
}

int sl_docreader_json_line(const sl_docreader_opts *o, const char *line, size_t n, int dom, sl_textdoc *d, int *gen_id,
                           size_t *invalid, sl_err *err)
{
    sl_docreader r = {.o = *o, .name = "line"};
    if (!r.o.field || !r.o.field[0])
        r.o.field = "text";
    jslot s = {.line = 1};
    sl_textdoc_swap(&s.d, d);
    parse_json_line(&r, &s, line, n, dom);
    sl_textdoc_swap(&s.d, d);
    d->id_is_string = s.d.id_is_string;
    sl_buf_free(&s.tmp);
    *gen_id = s.gen_id;
    *invalid = s.invalid;
    if (s.status)
        *err = s.err;
    return s.status ? -1 : 0;
}

/* ---- JSON Lines in parallel batches --------------------------------------
 * Parsing dominates the cost of reading JSON Lines, so lines are gathered in
 * batches (copied out of the read buffer, which moves) and parsed by OpenMP
 * threads into slots (by one thread: each line as it is read, where it
 * lies); the slots are then handed out strictly in line order,
 * and ids, counts, warnings and errors are settled at that point, so the
 * result is the same for any number of threads. A read error met while
 * gathering (a line too long, corrupt input) is held back until the lines
 * before it have been handed out. */

static int batch_fill(sl_docreader *r)
{
    sl_batch *b = &r->batch;
    b->n = b->next = 0;
    const char *p;
    size_t n, bytes = 0;
    /* A batch is as large as a parse in parallel wants it, its lines copied
     * out of the read buffer (which moves) for the team. When the parse gets
     * no more than one thread (one thread, or the reader runs inside a team,
     * as in the tokenize pipeline), each line is parsed where it lies as it
     * is read, and a batch is MIN_BATCH_BYTES, so that a document's text is
     * still in cache when it is used. */
    int team = omp_get_max_threads() > 1 && omp_get_active_level() < omp_get_max_active_levels();
    size_t want = MIN_BATCH_BYTES;
    if (team) {
        want = r->ramp_bytes;
        r->ramp_bytes = want < r->batch_bytes / 2 ? 2 * want : r->batch_bytes;
    }
    sl_buf_fit(&b->data, team ? r->batch_bytes : 0);
    while (b->n < BATCH_LINES && bytes < want) {
        int rc = get_line(r, &p, &n, &b->pending);
        if (rc < 0) {
            b->has_pending = 1;
            break;
        }
        if (rc == 0)
            break;
        size_t i = 0;
        while (i < n && is_ws(p[i]))
            i++;
        if (i == n)
            continue; /* blank line */
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 64;
            b->slots = sl_xrealloc(b->slots, b->cap * sizeof *b->slots);
            b->off = sl_xrealloc(b->off, b->cap * sizeof *b->off);
            b->len = sl_xrealloc(b->len, b->cap * sizeof *b->len);
            memset(b->slots + b->n, 0, (b->cap - b->n) * sizeof *b->slots);
        }
        b->slots[b->n].line = r->line;
        if (team) {
            b->off[b->n] = b->data.len;
            b->len[b->n] = n;
            sl_buf_append(&b->data, p, n);
        } else {
            parse_json_line(r, &b->slots[b->n], p, n, 0);
        }
        bytes += n;
        b->n++;
    }
    const sl_docreader *cr = r;
    size_t count = team ? b->n : 0;
    /* (not entered at all for none: a region, even one not run in
     * parallel, costs libgomp a futex call, once per 64 KiB batch) */
    if (count)
#pragma omp parallel for schedule(dynamic, 8) if (count > 16)
        for (size_t i = 0; i < count; i++)
            parse_json_line(cr, &b->slots[i], b->data.data + b->off[i], b->len[i], 0);
    /* slots this batch does not use keep no large buffer */
    for (size_t i = b->n; i < b->cap; i++) {
        sl_buf_fit(&b->slots[i].d.id, 0);
        sl_buf_fit(&b->slots[i].d.text, 0);
        sl_buf_fit(&b->slots[i].d.meta, 0);
        sl_buf_fit(&b->slots[i].tmp, 0);
    }
    return b->n > 0 || b->has_pending;
}

/* The next document of the batch: 1, 0 when the batch is used up, -1 error. */
static int batch_next(sl_docreader *r, sl_textdoc *d, sl_err *err)
{
    sl_batch *b = &r->batch;
    while (b->next < b->n) {
        jslot *s = &b->slots[b->next++];
        if (s->status == 0) {
            sl_textdoc_swap(d, &s->d);
            d->id_is_string = s->d.id_is_string;
            d->source = r->name;
            d->line = s->line;
            r->st.invalid_utf8 += s->invalid;
            r->ndoc++;
            if (s->gen_id) {
                sl_buf_clear(&d->id);
                gen_id(r, d);
            }
            return 1;
        }
        if (s->status == -2 || !r->o.skip_bad_json) {
            *err = s->err;
            b->n = b->next = 0; /* the source is abandoned */
            return -1;
        }
        r->st.skipped_lines++;
        warn(r, &s->err);
    }
    if (b->has_pending) {
        *err = b->pending;
        b->has_pending = 0;
        return -1;
    }
    return 0;
}

static void doc_reset(sl_docreader *r, sl_textdoc *d)
{
    sl_buf_clear(&d->id);
    sl_buf_clear(&d->text);
    sl_buf_clear(&d->meta);
    d->id_is_string = 1;
    d->source = r->name;
    d->line = 0;
}

/* 1 when the first n bytes could start a Parquet or Arrow file or stream but
 * are too few to tell (an Arrow stream's schema message needs up to 64). */
static int sniff_needs_more(const char *p, size_t n)
{
    if (n < 4)
        return 1;
    if (!memcmp(p, "\xFF\xFF\xFF\xFF", 4))
        return n < 64;
    return !memcmp(p, "ARRO", 4) && n < 6;
}

/* 1 when p[0..n) starts with a line that is "{" alone (white space
 * around it), as every pretty-printer (jq ., json.dumps(indent=...),
 * JSON.stringify(v, null, 2)) opens an object: objects one after another,
 * not JSON Lines. (A line of JSON Lines cut after its '{' or a comma is
 * not taken for it: that stays one bad line.) */
static int first_line_open(const char *p, size_t n)
{
    if (n == 0 || p[0] != '{')
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (p[i] == '\n')
            return 1;
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    }
    return 0;
}

/* 1 when the source's second line, in the bytes read so far, is a JSON
 * object to the eye ('{' ... '}'): a JSON Lines file whose first line was
 * cut (split -b) would else become plain text without a word. */
static int json_after_first_line(const sl_docreader *r)
{
    const char *b = r->buf + r->start, *e = r->buf + r->end;
    const char *nl = memchr(b, '\n', (size_t)(e - b));
    if (!nl)
        return 0;
    const char *q = nl + 1, *end = memchr(q, '\n', (size_t)(e - q));
    if (!end)
        end = r->eof ? e : NULL;
    if (!end)
        return 0;
    while (q < end && is_ws(*q))
        q++;
    while (end > q && is_ws(end[-1]))
        end--;
    return end - q >= 2 && *q == '{' && end[-1] == '}';
}

/* Decides the format of a new source from its first non-whitespace byte. */
static int detect(sl_docreader *r, sl_err *err)
{
    size_t i = 0; /* bytes of leading whitespace seen, from r->start */
    int bom_checked = 0;
    for (;;) {
        /* an empty source may have no buffer yet: no arithmetic on NULL */
        const char *head = r->buf ? r->buf + r->start : "";
        if (r->o.format == SL_DOCS_AUTO && (r->eof || !sniff_needs_more(head, r->end - r->start))) {
            if (sl_pq_sniff(head, r->end - r->start)) {
                r->mode = M_PARQUET;
                return 0;
            }
            if (sl_arrow_sniff(head, r->end - r->start)) {
                r->mode = M_ARROW;
                return 0;
            }
        } else if (r->o.format == SL_DOCS_AUTO && !r->eof) {
            if (fill(r, err) < 0)
                return -1;
            continue;
        }
        if (!bom_checked && (r->end - r->start >= 3 || r->eof)) {
            if (r->end - r->start >= 3 && !memcmp(r->buf + r->start, "\xEF\xBB\xBF", 3))
                r->start = r->scan = r->start + 3; /* UTF-8 byte order mark */
            bom_checked = 1;
        }
        while (bom_checked && r->start + i < r->end && is_ws(r->buf[r->start + i]))
            i++;
        int arr = bom_checked && r->start + i < r->end && r->o.format == SL_DOCS_AUTO
                      ? sl_sources_json_array(r->buf + r->start + i, r->end - r->start - i)
                      : 0;
        if (arr < 0 && !r->eof) { /* '[' and white space so far: a JSON array of objects, or a text? */
            if (fill(r, err) < 0)
                return -1;
            continue;
        }
        if (arr == 2) { /* "[]" and nothing else: an empty array */
            size_t k = (size_t)((char *)memchr(r->buf + r->start + i, ']', r->end - r->start - i) - r->buf) + 1;
            while (k < r->end && is_ws(r->buf[k]))
                k++;
            if (k == r->end) {
                if (!r->eof) {
                    if (fill(r, err) < 0)
                        return -1;
                    continue;
                }
                if (!r->o.quiet)
                    sl_log(SL_LOG_WARNING, NULL, "%s: an empty JSON array, no documents", r->name);
                r->mode = M_DONE;
                return 0;
            }
        }
        if (arr == 1) {
            r->jarr = JA_FIRST;
            r->jpos = src_offset(r, r->start + i) + 1; /* past the '[' */
            r->buf[r->start + i] = ' ';
            if (jarr_scan(r, r->start + i + 1, err) < 0)
                return -1;
            r->mode = M_JSONL;
            return 0;
        }
        if (bom_checked && r->start + i < r->end) {
            int jsonl = r->o.format == SL_DOCS_JSONL || (r->o.format == SL_DOCS_AUTO && r->buf[r->start + i] == '{');
            r->mode = jsonl ? M_JSONL : r->o.lines ? M_LINES : M_TEXT;
            if (r->o.format == SL_DOCS_AUTO && r->buf[r->start + i] == '{' &&
                first_line_open(r->buf + r->start + i, r->end - r->start - i)) {
                /* pretty-printed objects one after another (jq without -c): each rewritten onto a line */
                r->jcat = 1;
                r->jarr = JA_IN;
                r->jdepth = 0;
                r->jpos = src_offset(r, r->start + i);
                if (jarr_scan(r, r->start + i, err) < 0)
                    return -1;
            }
            if (!jsonl && r->o.format == SL_DOCS_AUTO && !r->o.quiet && json_after_first_line(r))
                sl_log(SL_LOG_WARNING, NULL,
                       "%s: read as plain text, but the lines after its first are JSON objects (JSON Lines cut "
                       "inside a line?); --format jsonl reads it as JSON Lines",
                       r->name);
            return 0;
        }
        /* Only whitespace so far: kept (it belongs to a whole-file plain-text
         * document), but never more than one document's worth. Past that,
         * the whole blank lines are dropped: in JSON Lines and --lines they
         * are skipped lines, and a whole-file document is already too long
         * (ws_dropped; M_TEXT says so). Each line is bounded as get_line
         * bounds it, so that the limit is the same whatever the reads. */
        if (i > r->o.max_doc_bytes) {
            const char *ws = r->buf + r->start;
            size_t at = 0; /* start of the line being checked */
            for (;;) {
                const char *nl = memchr(ws + at, '\n', i - at);
                size_t len = nl ? (size_t)(nl - ws) - at : i - at;
                if (len > r->o.max_doc_bytes)
                    return sl_err_set(err, SL_E_LIMIT, "max_doc_bytes",
                                      "%s:%llu: line longer than `max_doc_bytes` (%zu bytes)", r->name,
                                      (unsigned long long)line_at(r, at), r->o.max_doc_bytes);
                if (!nl)
                    break;
                at = (size_t)(nl - ws) + 1;
            }
            if (at > 0) {
                r->line = line_at(r, at) - 1;
                r->start = r->scan = r->start + at;
                i -= at;
                r->ws_dropped = 1;
            }
        }
        if (r->eof) {
            if (!r->o.quiet)
                sl_log(SL_LOG_WARNING, NULL, "%s: empty, no documents", r->name);
            r->mode = M_DONE;
            return 0;
        }
        if (fill(r, err) < 0)
            return -1;
    }
}

static void pq_end(sl_docreader *r)
{
    if (r->pq) {
        r->st.invalid_utf8 += sl_pq_invalid_utf8(r->pq);
        r->st.skipped_lines += sl_pq_skipped(r->pq);
        sl_pq_close(r->pq);
        r->pq = NULL;
    }
    if (r->ar) {
        r->st.invalid_utf8 += sl_arrow_invalid_utf8(r->ar);
        r->st.skipped_lines += sl_arrow_skipped(r->ar);
        sl_arrow_close(r->ar);
        r->ar = NULL;
    }
    if (r->pq_fd >= 0)
        close(r->pq_fd);
    r->pq_fd = -1;
    free(r->pq_membuf);
    r->pq_membuf = NULL;
}

/* Opens the Parquet or Arrow IPC file (r->mode) that the current source is:
 * by name when it is a plain regular file (read with pread, page by page or
 * batch by batch), else held in memory. */
static int pq_start(sl_docreader *r, sl_err *err)
{
    sl_pq_opts po = {.field = r->o.field,
                     .invalid_utf8 = r->o.invalid_utf8,
                     .skip_bad = r->o.skip_bad_json,
                     .mem_budget = r->o.mem_budget};
    const char *path = sl_sources_plain_path(r->src);
    const sl_slice *pc = sl_sources_slice(r->src);
    if (pc && (pc->kind == SL_DOCS_PARQUET || pc->kind == SL_DOCS_ARROW)) { /* a part's share of the file (--part) */
        path = pc->path;
        po.byte_begin = pc->begin;
        po.byte_end = pc->end;
    }
    uint64_t size;
    if (path) {
        r->pq_fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (r->pq_fd < 0 || fstat(r->pq_fd, &st) != 0)
            return sl_err_set(err, SL_E_IO, NULL, "%s: %s", r->name, strerror(errno));
        size = (uint64_t)st.st_size;
        if (r->mode == M_ARROW)
            r->ar = sl_arrow_open(r->name, sl_pq_pread_fd, &r->pq_fd, size, &po, err);
        else
            r->pq = sl_pq_open(r->name, sl_pq_pread_fd, &r->pq_fd, size, &po, err);
    } else {
        while (!r->eof) {
            if (r->end - r->start > MAX_PARQUET_MEM)
                return sl_err_set(err, SL_E_LIMIT, NULL,
                                  "%s: a%s file over %zu bytes must be read by name (not from a pipe, a "
                                  "compressed file or an archive)",
                                  r->name, r->mode == M_ARROW ? "n Arrow" : " Parquet", MAX_PARQUET_MEM);
            if (fill(r, err) < 0)
                return -1;
        }
        size = r->end - r->start;
        r->pq_membuf = sl_xmalloc(size ? size : 1);
        memcpy(r->pq_membuf, r->buf + r->start, size);
        r->start = r->scan = r->end;
        r->pq_mem.data = (const uint8_t *)r->pq_membuf;
        r->pq_mem.len = size;
        if (r->mode == M_ARROW)
            r->ar = sl_arrow_open(r->name, sl_pq_pread_mem, &r->pq_mem, size, &po, err);
        else
            r->pq = sl_pq_open(r->name, sl_pq_pread_mem, &r->pq_mem, size, &po, err);
    }
    return r->pq || r->ar ? 0 : -1;
}

/* The next document of the current source: 1, 0 at its end, -1 error. */
static int source_next(sl_docreader *r, sl_textdoc *d, sl_err *err)
{
    if (r->mode == M_DETECT) {
        if (detect(r, err) < 0)
            return -1;
        if ((r->mode == M_PARQUET || r->mode == M_ARROW) && pq_start(r, err) < 0) {
            r->mode = M_DONE;
            pq_end(r);
            return -1;
        }
    }
    const char *p;
    size_t n;
    int rc;
    switch (r->mode) {
    case M_PARQUET:
        rc = sl_pq_next(r->pq, d, err);
        if (rc == 1)
            r->ndoc++;
        else
            pq_end(r);
        return rc;
    case M_ARROW:
        rc = sl_arrow_next(r->ar, d, err);
        if (rc == 1)
            r->ndoc++;
        else
            pq_end(r);
        return rc;
    case M_JSONL:
        for (;;) {
            rc = batch_next(r, d, err);
            if (rc != 0)
                return rc;
            if (!batch_fill(r))
                return 0;
        }
    case M_LINES:
        while ((rc = get_line(r, &p, &n, err)) == 1) {
            size_t i = 0;
            while (i < n && is_ws(p[i]))
                i++;
            if (i == n)
                continue; /* blank line: no document */
            doc_reset(r, d);
            d->line = r->line;
            if (put_text(r, d, p, n, r->line, err) < 0)
                return -1;
            r->ndoc++;
            gen_id(r, d);
            sl_buf_puts(&d->meta, "{}");
            return 1;
        }
        return rc;
    case M_TEXT:
        while (!r->ws_dropped && !r->eof) {
            if (r->end - r->start > r->o.max_doc_bytes)
                break;
            if (fill(r, err) < 0)
                return -1;
        }
        if (r->ws_dropped || r->end - r->start > r->o.max_doc_bytes)
            return sl_err_set(err, SL_E_LIMIT, "max_doc_bytes",
                              "%s: document longer than `max_doc_bytes` (%zu bytes); `lines` splits it", r->name,
                              r->o.max_doc_bytes);
        doc_reset(r, d);
        if (put_text(r, d, r->buf + r->start, r->end - r->start, 0, err) < 0)
            return -1;
        r->start = r->scan = r->end;
        r->mode = M_DONE;
        r->ndoc++;
        gen_id(r, d);
        sl_buf_puts(&d->meta, "{}");
        return 1;
    default: return 0;
    }
}

/* ---- public API ---------------------------------------------------------- */

size_t sl_docs_batch_cap(size_t want, int threads)
{
    size_t cap = ((size_t)2 << 20) * (size_t)(threads > 0 ? threads : omp_get_max_threads());
    return want < cap ? want : cap;
}

sl_mem_split sl_mem_budget_split(size_t budget)
{
    sl_mem_split m;
    m.budget = budget ? budget : SL_DOCS_DEFAULT_MEM_BUDGET;
    m.read_batch = m.budget / 4;
    m.work_batch = m.budget / 8;
    return m;
}

sl_docreader *sl_docreader_open(const char *const *paths, size_t n, const sl_docreader_opts *o, sl_err *err)
{
    sl_docreader *r = sl_xcalloc(1, sizeof *r);
    if (o)
        r->o = *o;
    if (!r->o.field || !r->o.field[0])
        r->o.field = "text";
    if (!r->o.max_doc_bytes)
        r->o.max_doc_bytes = DEFAULT_MAX_DOC;
    if (!r->o.mem_budget)
        r->o.mem_budget = SL_DOCS_DEFAULT_MEM_BUDGET;
    r->batch_bytes = sl_docs_batch_cap(sl_mem_budget_split(r->o.mem_budget).read_batch, 0);
    if (r->batch_bytes < MIN_BATCH_BYTES)
        r->batch_bytes = MIN_BATCH_BYTES;
    r->ramp_bytes = r->batch_bytes / 16 > MIN_BATCH_BYTES ? r->batch_bytes / 16 : MIN_BATCH_BYTES;
    r->pq_fd = -1;
    r->src = sl_sources_open(paths, n, err);
    if (!r->src) {
        free(r);
        return NULL;
    }
    return r;
}

sl_docreader *sl_docreader_open_slices(const sl_slice *pieces, size_t n, const sl_docreader_opts *o, sl_err *err)
{
    sl_docreader *r = sl_docreader_open(NULL, 0, o, err);
    if (!r)
        return NULL;
    sl_sources_close(r->src);
    r->src = sl_sources_open_slices(pieces, n, err);
    return r;
}

int sl_docreader_next(sl_docreader *r, sl_textdoc *doc, sl_err *err)
{
    for (;;) {
        if (!r->in) {
            int rc = sl_sources_next(r->src, &r->in, err);
            if (rc <= 0)
                return rc;
            pq_end(r);
            free(r->name);
            r->name = sl_xstrdup(sl_input_name(r->in));
            r->mode = M_DETECT;
            r->start = r->end = r->scan = 0;
            r->eof = 0;
            r->line = r->ndoc = 0;
            r->ws_dropped = 0;
            r->jarr = r->jstr = r->jesc = r->jcat = 0;
            r->jdepth = r->jpos = 0;
            r->jbase = r->st.bytes;
            const sl_slice *pc = sl_sources_slice(r->src);
            if (pc && (pc->kind == SL_DOCS_PARQUET || pc->kind == SL_DOCS_ARROW)) { /* row groups, record batches */
                r->mode = pc->kind == SL_DOCS_ARROW ? M_ARROW : M_PARQUET;
                if (pq_start(r, err) < 0) {
                    r->mode = M_DONE;
                    pq_end(r);
                    return -1;
                }
            } else if (pc && pc->begin > 0) { /* a range of a file (--part): the counts before it, its kind */
                r->line = pc->line;
                r->ndoc = pc->ndoc;
                r->mode = pc->kind == SL_DOCS_JSONL ? M_JSONL : M_LINES;
                if (fill(r, err) < 0) /* what detection would have read first */
                    return -1;
            }
            r->batch.n = r->batch.next = 0;
            r->batch.has_pending = 0;
        }
        int rc = source_next(r, doc, err);
        if (rc != 0) {
            if (rc == 1)
                r->st.docs++;
            return rc;
        }
        r->in = NULL; /* source finished; sl_sources_next closes it */
    }
}

void sl_docreader_progress(const sl_docreader *r, sl_progress *pg, uint64_t *seen)
{
    sl_progress_add(pg, 1, r->st.bytes - *seen);
    *seen = r->st.bytes;
}

int sl_docreader_position(void *reader, double *done, double *total)
{
    return sl_sources_position(((sl_docreader *)reader)->src, done, total);
}

const sl_docreader_stats *sl_docreader_stats_get(const sl_docreader *r)
{
    return &r->st;
}

void sl_docreader_close(sl_docreader *r)
{
    if (!r)
        return;
    pq_end(r);
    sl_sources_close(r->src);
    free(r->name);
    free(r->buf);
    for (size_t i = 0; i < r->batch.cap; i++) {
        sl_textdoc_free(&r->batch.slots[i].d);
        sl_buf_free(&r->batch.slots[i].tmp);
    }
    free(r->batch.slots);
    free(r->batch.off);
    free(r->batch.len);
    sl_buf_free(&r->batch.data);
    free(r);
}

static void swap_bufs(sl_buf *a, sl_buf *b)
{
    sl_buf t = *a;
    *a = *b;
    *b = t;
}

void sl_textdoc_swap(sl_textdoc *a, sl_textdoc *b)
{
    swap_bufs(&a->id, &b->id);
    swap_bufs(&a->text, &b->text);
    swap_bufs(&a->meta, &b->meta);
}

void sl_textdoc_free(sl_textdoc *d)
{
    sl_buf_free(&d->id);
    sl_buf_free(&d->text);
    sl_buf_free(&d->meta);
}

/* How a file may be cut into parts (an sl_cut_fn, ctx the options): a
 * Parquet file by row groups and an Arrow IPC file or stream by record
 * batches (each read by the part that owns its first byte), plain JSON Lines (unless bad lines are skipped: their count
 * is not known before a cut) and plain text read by lines are cut at line starts; compressed files, archives and
 * whole-file documents are read whole. */
int sl_docreader_cut(void *ctx, const char *path, int *kind, sl_err *err)
{
    const sl_docreader_opts *o = ctx;
    unsigned char head[4096];
    size_t n;
    int plain = sl_plain_file_head(path, head, sizeof head, &n, err);
    if (plain <= 0)
        return plain;
    if (sl_sources_is_archive(head, n))
        return SL_CUT_WHOLE;
    if (o->format == SL_DOCS_AUTO && sl_pq_sniff(head, n)) { /* by row groups (parquet.h) */
        *kind = SL_DOCS_PARQUET;
        return SL_CUT_BYTES;
    }
    if (o->format == SL_DOCS_AUTO && sl_arrow_sniff(head, n)) { /* by record batches (arrow_ipc.h) */
        *kind = SL_DOCS_ARROW;
        return SL_CUT_BYTES;
    }
    size_t i = n >= 3 && !memcmp(head, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (i < n && is_ws((char)head[i]))
        i++;
    if (i == n)
        return SL_CUT_WHOLE; /* only blanks in the first bytes */
    if (o->format == SL_DOCS_AUTO && sl_sources_json_array(head + i, n - i) != 0)
        return SL_CUT_WHOLE; /* a JSON array (detect), or maybe one: read whole */
    int jsonl = o->format == SL_DOCS_JSONL || (o->format == SL_DOCS_AUTO && head[i] == '{');
    if (o->format == SL_DOCS_AUTO && head[i] == '{' && first_line_open((const char *)head + i, n - i))
        return SL_CUT_WHOLE; /* pretty-printed objects (detect): read whole */
    if (jsonl && !o->skip_bad_json) {
        *kind = SL_DOCS_JSONL;
        return SL_CUT_LINES;
    }
    if (!jsonl && o->lines) {
        *kind = SL_DOCS_TEXT;
        return SL_CUT_LINES;
    }
    return SL_CUT_WHOLE;
}
