/* The decoder chain of HF tokenizer.json files (decoders.h). Each step is
 * written from HF's documented behaviour of its decode_chain:
 *  - Replace: every non-overlapping occurrence of the pattern in a token,
 *    left to right, becomes the content;
 *  - ByteFallback: runs of tokens "<0xXX>" become the string of those bytes
 *    when it is valid UTF-8, else one U+FFFD per byte;
 *  - Fuse: all tokens become one;
 *  - Strip: up to `start` leading and `stop` trailing copies of a character
 *    are removed from each token;
 *  - Metaspace: the replacement character becomes a space, except in the
 *    first token where it is dropped unless prepend_scheme is "never";
 *  - WordPiece: every token but the first loses its continuing-subword
 *    prefix, or gets a space before it when it has none; then, with
 *    cleanup, the spaces before . ? ! , and some English contractions go
 *    (HF's wordpiece::cleanup, applied to each token);
 *  - BPEDecoder: the end-of-word suffix becomes a space, or nothing in the
 *    last token;
 *  - ByteLevel: each token becomes the bytes its characters stand for in
 *    GPT-2's byte alphabet (a token with a character outside it stays as it
 *    is); all of them joined make one token, ill-formed UTF-8 replaced by
 *    U+FFFD (Rust's from_utf8_lossy). */
#include "tokenize/decoders/decoders.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

void sl_toklist_push(sl_toklist *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->off = sl_xrealloc(l->off, l->cap * sizeof *l->off);
        l->len = sl_xrealloc(l->len, l->cap * sizeof *l->len);
    }
    l->off[l->n] = l->data.len;
    l->len[l->n] = n;
    l->n++;
    if (n)
        sl_buf_append(&l->data, s, n);
}

/* Makes the bytes written at data[at..len) the next token. */
static void register_last(sl_toklist *l, size_t at)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->off = sl_xrealloc(l->off, l->cap * sizeof *l->off);
        l->len = sl_xrealloc(l->len, l->cap * sizeof *l->len);
    }
    l->off[l->n] = at;
    l->len[l->n] = l->data.len - at;
    l->n++;
}

void sl_toklist_clear(sl_toklist *l)
{
    l->n = 0;
    sl_buf_clear(&l->data);
}

void sl_toklist_free(sl_toklist *l)
{
    sl_buf_free(&l->data);
    free(l->off);
    free(l->len);
    memset(l, 0, sizeof *l);
}

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static int one_char(const char *s, size_t n)
{
    uint32_t cp;
    return n > 0 && sl_utf8_seq((const uint8_t *)s, n, &cp) == n;
}

int sl_prepend_scheme(const sl_json *v, const char *name, const char *what, int *scheme, sl_err *err)
{
    const char *ps = sl_json_get_str(v, "prepend_scheme");
    int aps;
    if (ps) {
        if (!strcmp(ps, "always"))
            *scheme = SL_PREPEND_ALWAYS;
        else if (!strcmp(ps, "first"))
            *scheme = SL_PREPEND_FIRST;
        else if (!strcmp(ps, "never"))
            *scheme = SL_PREPEND_NEVER;
        else
            return sl_errf(err, "%s: %s Metaspace: prepend_scheme '%s' is not one of always, first, never", name, what,
                           ps);
    } else if (sl_json_get_bool(v, "add_prefix_space", &aps) == 0) { /* files of tokenizers < 0.19 */
        *scheme = aps ? SL_PREPEND_ALWAYS : SL_PREPEND_NEVER;
    } else {
        *scheme = SL_PREPEND_ALWAYS;
    }
    return 0;
}

static int add_step(sl_decoder *d, const sl_json *v, const char *name, int depth, sl_err *err)
{
    const char *t = type_of(v);
    if (!strcmp(t, "Sequence") && depth < 8) {
        const sl_json *list = sl_json_get(v, "decoders");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: decoder Sequence has no 'decoders' list", name);
        for (size_t i = 0; i < list->n; i++)
            if (add_step(d, list->kids[i], name, depth + 1, err))
                return -1;
        return 0;
    }
    sl_dec_step s = {0};
    if (!strcmp(t, "ByteFallback")) {
        s.kind = SL_DEC_BYTE_FALLBACK;
    } else if (!strcmp(t, "Fuse")) {
        s.kind = SL_DEC_FUSE;
    } else if (!strcmp(t, "Replace")) {
        const sl_json *pat = sl_json_get(v, "pattern"), *c = sl_json_get(v, "content");
        const sl_json *str = pat && pat->type == SL_JSON_OBJECT ? sl_json_get(pat, "String") : NULL;
        if (!str || str->type != SL_JSON_STRING || !c || c->type != SL_JSON_STRING)
            return sl_errf(err, "%s: decoder Replace: only a String pattern and a string content are supported", name);
        if (str->str_len == 0)
            return sl_errf(err, "%s: decoder Replace: the pattern is empty", name);
        s.kind = SL_DEC_REPLACE;
        s.a = sl_xstrndup(str->str, str->str_len), s.a_len = str->str_len;
        s.b = sl_xstrndup(c->str, c->str_len), s.b_len = c->str_len;
    } else if (!strcmp(t, "Strip")) {
        const sl_json *c = sl_json_get(v, "content");
        int64_t a, b;
        if (!c || c->type != SL_JSON_STRING || !one_char(c->str, c->str_len) || sl_json_get_int(v, "start", &a) ||
            sl_json_get_int(v, "stop", &b) || a < 0 || b < 0)
            return sl_errf(err, "%s: decoder Strip needs a one-character 'content' and integers 'start', 'stop'", name);
        s.kind = SL_DEC_STRIP;
        s.a = sl_xstrndup(c->str, c->str_len), s.a_len = c->str_len;
        s.start = (size_t)a, s.stop = (size_t)b;
    } else if (!strcmp(t, "Metaspace")) {
        const sl_json *r = sl_json_get(v, "replacement");
        if (!r || r->type != SL_JSON_STRING || !one_char(r->str, r->str_len))
            return sl_errf(err, "%s: decoder Metaspace needs a one-character 'replacement'", name);
        s.kind = SL_DEC_METASPACE;
        s.a = sl_xstrndup(r->str, r->str_len), s.a_len = r->str_len;
        if (sl_prepend_scheme(v, name, "decoder", &s.scheme, err)) {
            free(s.a);
            return -1;
        }
    } else if (!strcmp(t, "WordPiece")) {
        const sl_json *p = sl_json_get(v, "prefix");
        if (p && p->type != SL_JSON_STRING)
            return sl_errf(err, "%s: decoder WordPiece: prefix is not a string", name);
        int c = 1;
        if (sl_json_get(v, "cleanup") && sl_json_get_bool(v, "cleanup", &c))
            return sl_errf(err, "%s: decoder WordPiece: cleanup is not a boolean", name);
        s.kind = SL_DEC_WORDPIECE;
        s.a = p ? sl_xstrndup(p->str, p->str_len) : sl_xstrdup("##");
        s.a_len = p ? p->str_len : 2;
        s.scheme = c;
    } else if (!strcmp(t, "ByteLevel")) {
        s.kind = SL_DEC_BYTE_LEVEL;
    } else if (!strcmp(t, "BPEDecoder")) {
        const sl_json *p = sl_json_get(v, "suffix");
        if (p && (p->type != SL_JSON_STRING || p->str_len == 0))
            return sl_errf(err, "%s: decoder BPEDecoder: suffix is not a non-empty string", name);
        s.kind = SL_DEC_BPE;
        s.a = p ? sl_xstrndup(p->str, p->str_len) : sl_xstrdup("</w>");
        s.a_len = p ? p->str_len : 4;
    } else {
        return sl_errf(err,
                       "%s: decoder '%s' is not supported here (only Replace, ByteFallback, Fuse, Strip, Metaspace, "
                       "WordPiece, BPEDecoder, ByteLevel, Sequence)",
                       name, t);
    }
    d->step = sl_xrealloc(d->step, (d->n + 1) * sizeof *d->step);
    d->step[d->n++] = s;
    return 0;
}

int sl_decoder_load(sl_decoder *d, const sl_json *v, const char *name, sl_err *err)
{
    memset(d, 0, sizeof *d);
    if (!v || v->type == SL_JSON_NULL)
        return 0;
    d->present = 1;
    return add_step(d, v, name, 0, err);
}

void sl_decoder_free(sl_decoder *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->step[i].a);
        free(d->step[i].b);
    }
    free(d->step);
    memset(d, 0, sizeof *d);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* "<0xXX>" -> the byte, else -1. The two characters are parsed as Rust's
 * u8::from_str_radix(_, 16) does, which also takes "+X". */
static int byte_token(const char *s, size_t n)
{
    if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>')
        return -1;
    if (s[3] == '+')
        return hexval((uint8_t)s[4]);
    int h = hexval((uint8_t)s[3]), l = hexval((uint8_t)s[4]);
    return h < 0 || l < 0 ? -1 : h * 16 + l;
}

static void flush_bytes(sl_toklist *out, sl_buf *bytes)
{
    if (!bytes->len)
        return;
    if (sl_utf8_check(bytes->data, bytes->len) == bytes->len) {
        sl_toklist_push(out, bytes->data, bytes->len);
    } else {
        for (size_t i = 0; i < bytes->len; i++)
            sl_toklist_push(out, "\xEF\xBF\xBD", 3);
    }
    sl_buf_clear(bytes);
}

/* s[0..n) with every occurrence of a replaced by b, appended to out. */
static void replace_into(const char *s, size_t n, const char *a, size_t an, const char *b, size_t bn, sl_buf *out)
{
    for (size_t k = 0; k < n;) {
        if (k + an <= n && !memcmp(s + k, a, an)) {
            sl_buf_append(out, b, bn);
            k += an;
        } else {
            sl_buf_putc(out, s[k++]);
        }
    }
}

/* HF's wordpiece::cleanup: these replacements, in this order. */
static void wp_cleanup(sl_buf *tok, sl_buf *tmp)
{
    static const char *const pairs[][2] = {
        {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},    {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        if (!tok->len || !memmem(tok->data, tok->len, pairs[i][0], strlen(pairs[i][0])))
            continue;
        sl_buf_clear(tmp);
        replace_into(tok->data, tok->len, pairs[i][0], strlen(pairs[i][0]), pairs[i][1], strlen(pairs[i][1]), tmp);
        sl_buf t = *tok;
        *tok = *tmp;
        *tmp = t;
    }
}

/* GPT-2's byte alphabet: the byte each character U+0000..U+01FF stands for, -1 for none. */
static int16_t byte_of_char[512];
static int byte_of_char_ready;

static void byte_level_init(void)
{
    if (byte_of_char_ready) /* idempotent, so a race between threads is harmless */
        return;
    int n = 0;
    for (int i = 0; i < 512; i++)
        byte_of_char[i] = -1;
    for (int b = 0; b < 256; b++) {
        int keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        byte_of_char[keep ? b : 256 + n++] = (int16_t)b;
    }
    byte_of_char_ready = 1;
}

static void byte_level_step(const sl_toklist *in, sl_toklist *out)
{
    byte_level_init();
    sl_buf bytes = {0};
    for (size_t i = 0; i < in->n; i++) {
        size_t n = in->len[i], start = bytes.len, k;
        if (!n)
            continue;
        const uint8_t *s = (const uint8_t *)in->data.data + in->off[i];
        for (size_t j = 0; j < n; j += k) {
            uint32_t cp;
            k = sl_utf8_seq(s + j, n - j, &cp);
            if (!k || cp >= 512 || byte_of_char[cp] < 0) {
                bytes.len = start;
                sl_buf_append(&bytes, s, n);
                break;
            }
            sl_buf_putc(&bytes, (char)byte_of_char[cp]);
        }
    }
    sl_buf fixed = {0};
    sl_utf8_repair(&fixed, bytes.data ? bytes.data : "", bytes.len, SL_UTF8_REPLACE);
    sl_toklist_push(out, fixed.data ? fixed.data : "", fixed.len);
    sl_buf_free(&fixed);
    sl_buf_free(&bytes);
}

static void run_step(const sl_dec_step *st, const sl_toklist *in, sl_toklist *out)
{
    sl_toklist_clear(out);
    if (st->kind == SL_DEC_BYTE_LEVEL) {
        byte_level_step(in, out);
        return;
    }
    if (st->kind == SL_DEC_FUSE) {
        sl_toklist_push(out, in->data.len ? in->data.data : "", in->data.len); /* tokens are stored back to back */
        return;
    }
    if (st->kind == SL_DEC_BYTE_FALLBACK) {
        sl_buf bytes = {0};
        for (size_t i = 0; i < in->n; i++) {
            const char *s = in->len[i] ? in->data.data + in->off[i] : "";
            int b = byte_token(s, in->len[i]);
            if (b >= 0) {
                sl_buf_putc(&bytes, (char)b);
                continue;
            }
            flush_bytes(out, &bytes);
            sl_toklist_push(out, s, in->len[i]);
        }
        flush_bytes(out, &bytes);
        sl_buf_free(&bytes);
        return;
    }
    for (size_t i = 0; i < in->n; i++) {
        const char *s = in->len[i] ? in->data.data + in->off[i] : "";
        size_t n = in->len[i];
        /* each token is rebuilt at the end of out's data */
        size_t at = out->data.len;
        if (st->kind == SL_DEC_WORDPIECE) {
            sl_buf tok = {0}, tmp = {0};
            if (i > 0 && n >= st->a_len && !memcmp(s, st->a, st->a_len)) {
                sl_buf_append(&tok, s + st->a_len, n - st->a_len);
            } else {
                if (i > 0)
                    sl_buf_putc(&tok, ' ');
                sl_buf_append(&tok, s, n);
            }
            if (st->scheme)
                wp_cleanup(&tok, &tmp);
            sl_buf_append(&out->data, tok.data ? tok.data : "", tok.len);
            sl_buf_free(&tok);
            sl_buf_free(&tmp);
        } else if (st->kind == SL_DEC_BPE) {
            replace_into(s, n, st->a, st->a_len, " ", i + 1 == in->n ? 0 : 1, &out->data);
        } else if (st->kind == SL_DEC_REPLACE || st->kind == SL_DEC_METASPACE) {
            const char *rep = st->kind == SL_DEC_REPLACE ? st->b : " ";
            size_t rep_len = st->kind == SL_DEC_REPLACE ? st->b_len : 1;
            if (st->kind == SL_DEC_METASPACE && i == 0 && st->scheme != SL_PREPEND_NEVER)
                rep_len = 0;
            for (size_t k = 0; k < n;) {
                if (k + st->a_len <= n && !memcmp(s + k, st->a, st->a_len)) {
                    sl_buf_append(&out->data, rep, rep_len);
                    k += st->a_len;
                } else {
                    sl_buf_putc(&out->data, s[k++]);
                }
            }
        } else { /* SL_DEC_STRIP: whole characters equal to the content */
            size_t b = 0, e = n;
            for (size_t k = 0; k < st->start && b + st->a_len <= e && !memcmp(s + b, st->a, st->a_len); k++)
                b += st->a_len;
            for (size_t k = 0; k < st->stop && e >= b + st->a_len && !memcmp(s + e - st->a_len, st->a, st->a_len); k++)
                e -= st->a_len;
            sl_buf_append(&out->data, s + b, e - b);
        }
        register_last(out, at);
    }
}

void sl_decoder_run(const sl_decoder *d, sl_toklist *in, sl_toklist *tmp, sl_buf *out)
{
    if (!d->present) {
        for (size_t i = 0; i < in->n; i++) {
            if (i)
                sl_buf_putc(out, ' ');
            if (in->len[i])
                sl_buf_append(out, in->data.data + in->off[i], in->len[i]);
        }
        sl_toklist_clear(in);
        return;
    }
    for (size_t k = 0; k < d->n; k++) {
        run_step(&d->step[k], in, tmp);
        sl_toklist t = *in;
        *in = *tmp;
        *tmp = t;
    }
    if (in->data.len)
        sl_buf_append(out, in->data.data, in->data.len);
    sl_toklist_clear(in);
}
