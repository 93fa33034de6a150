/* The token stream format (docs/formats.md). */
#include "stream/tokstream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/byteorder.h"
#include "base/json.h"
#include "stream/parts.h"

#define TS_END_MAGIC "SLTSEND\n"
#define REC_HDR 25 /* tag + id_len + meta_len + src_bytes + n_tokens */
#define TOK_CHUNK (1u << 18)

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the token stream fast paths assume a little-endian host"
#endif

static const char *const mod_names[] = {"unknown", "text", "dna", "audio", "ids"};

const char *sl_modality_name(int m)
{
    return m >= 0 && m <= 4 ? mod_names[m] : "unknown";
}

int sl_modality_parse(const char *s)
{
    for (int i = 0; i <= 4; i++)
        if (!strcmp(s, mod_names[i]))
            return i;
    return -1;
}

uint8_t sl_ts_width_for_vocab(uint64_t v)
{
    return v <= 256 ? 1 : v <= 65536 ? 2 : 4;
}

void sl_ts_header_init(sl_ts_header *h, int modality, uint32_t vocab_size)
{
    memset(h, 0, sizeof *h);
    h->version = SL_TS_VERSION;
    h->modality = (uint8_t)modality;
    h->vocab_size = vocab_size;
    h->width = sl_ts_width_for_vocab(vocab_size);
    h->eos = h->bos = h->pad = h->unk = h->doc_eos = SL_TS_NO_ID;
}

void sl_ts_header_free(sl_ts_header *h)
{
    free(h->extra_json);
    h->extra_json = NULL;
}

void sl_ts_header_copy(sl_ts_header *dst, const sl_ts_header *src)
{
    *dst = *src;
    dst->extra_json = src->extra_json ? sl_xstrdup(src->extra_json) : NULL;
}

void sl_ts_header_set_extra(sl_ts_header *h, const char *json)
{
    free(h->extra_json);
    h->extra_json = json && *json ? sl_xstrdup(json) : NULL;
}

/* ---- sl_doc ------------------------------------------------------------ */

void sl_doc_set_id(sl_doc *d, const char *id, size_t n)
{
    if (n + 1 > d->cap_id) {
        d->cap_id = n + 1 < 32 ? 32 : n + 1;
        d->id = sl_xrealloc(d->id, d->cap_id);
    }
    memcpy(d->id, id, n);
    d->id[n] = 0;
    d->id_len = n;
}

void sl_doc_set_meta(sl_doc *d, const char *json, size_t n)
{
    if (n + 1 > d->cap_meta) {
        d->cap_meta = n + 1 < 32 ? 32 : n + 1;
        d->meta = sl_xrealloc(d->meta, d->cap_meta);
    }
    if (n)
        memcpy(d->meta, json, n);
    d->meta[n] = 0;
    d->meta_len = n;
}

void sl_doc_reserve(sl_doc *d, size_t n)
{
    if (n <= d->cap_tokens)
        return;
    size_t c = d->cap_tokens ? d->cap_tokens : 256;
    while (c < n)
        c *= 2;
    d->tokens = sl_xrealloc(d->tokens, c * sizeof *d->tokens);
    d->cap_tokens = c;
}

void sl_doc_push(sl_doc *d, uint32_t t)
{
    if (d->n_tokens == d->cap_tokens)
        sl_doc_reserve(d, d->n_tokens + 1);
    d->tokens[d->n_tokens++] = t;
}

void sl_doc_clear(sl_doc *d)
{
    d->n_tokens = 0;
    d->id_len = 0;
    if (d->id)
        d->id[0] = 0;
    d->meta_len = 0;
    if (d->meta)
        d->meta[0] = 0;
    d->src_bytes = 0;
}

void sl_doc_free(sl_doc *d)
{
    free(d->id);
    free(d->tokens);
    free(d->meta);
    memset(d, 0, sizeof *d);
}

/* 1 when some t[i] >= v. Compares with the sign bit flipped so the unsigned
 * test becomes a signed one, which plain SSE2 does in one instruction
 * (there is no unsigned max before SSE4.1). */
static int any_ge(const uint32_t *t, size_t n, uint32_t v)
{
    const int32_t vb = (int32_t)(v ^ 0x80000000u);
    uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
    for (size_t i = 0; i < n; i++)
        bad |= (uint32_t)((int32_t)(t[i] ^ 0x80000000u) >= vb);
    return bad != 0;
}

/* Narrows t[0, k) to `width` bytes each into p, and returns 1 when some
 * t[i] >= v (any_ge's test, in the same pass). */
static int narrow(unsigned char *p, const uint32_t *t, size_t k, size_t width, uint32_t v)
{
    const int32_t vb = (int32_t)(v ^ 0x80000000u);
    uint32_t bad = 0;
    /* little-endian host assumed by the fast paths (checked at compile time) */
    if (width == 1) {
#pragma omp simd reduction(| : bad)
        for (size_t j = 0; j < k; j++) {
            p[j] = (unsigned char)t[j];
            bad |= (uint32_t)((int32_t)(t[j] ^ 0x80000000u) >= vb);
        }
    } else if (width == 2) {
        uint16_t *q = (uint16_t *)(void *)p;
#pragma omp simd reduction(| : bad)
        for (size_t j = 0; j < k; j++) {
            q[j] = (uint16_t)t[j];
            bad |= (uint32_t)((int32_t)(t[j] ^ 0x80000000u) >= vb);
        }
    } else {
        uint32_t *q = (uint32_t *)(void *)p;
#pragma omp simd reduction(| : bad)
        for (size_t j = 0; j < k; j++) {
            q[j] = t[j];
            bad |= (uint32_t)((int32_t)(t[j] ^ 0x80000000u) >= vb);
        }
    }
    return bad != 0;
}

/* ---- writer ------------------------------------------------------------- */

struct sl_ts_writer {
    sl_output *out;
    sl_ts_header h;
    XXH64_state_t *xx;
    uint64_t count, tokens;
    unsigned char *tmp;
    size_t tmp_cap;
    int open;                   /* a record begun by sl_ts_write_doc_begin still wants tokens */
    uint64_t pending;           /* how many */
    char open_id[SL_QUOTE_MAX]; /* its id, quoted, for messages */
};

static int unfinished(const sl_ts_writer *w, sl_err *err)
{
    return sl_errf(err, "document '%s': record unfinished (%llu of its tokens not written)", w->open_id,
                   (unsigned long long)w->pending);
}

static void put_special(sl_buf *b, const char *name, int64_t v, int *first)
{
    if (v == SL_TS_NO_ID)
        return;
    sl_buf_printf(b, "%s\"%s\":%" PRId64, *first ? "" : ",", name, v);
    *first = 0;
}

static void header_json(sl_buf *b, const sl_ts_header *h)
{
    int first = 1;
    sl_buf_putc(b, '{');
    put_special(b, "eos", h->eos, &first);
    put_special(b, "bos", h->bos, &first);
    put_special(b, "pad", h->pad, &first);
    put_special(b, "unk", h->unk, &first);
    put_special(b, "doc_eos", h->doc_eos, &first);
    if (h->fingerprint[0]) {
        sl_buf_puts(b, first ? "\"fingerprint\":" : ",\"fingerprint\":");
        sl_json_put_cstr(b, h->fingerprint);
        first = 0;
    }
    if (h->tokenizer[0]) {
        sl_buf_puts(b, first ? "\"tokenizer\":" : ",\"tokenizer\":");
        sl_json_put_cstr(b, h->tokenizer);
        first = 0;
    }
    if (h->extra_json && h->extra_json[0]) {
        sl_buf_puts(b, first ? "\"extra\":" : ",\"extra\":");
        sl_buf_puts(b, h->extra_json);
    }
    sl_buf_putc(b, '}');
}

sl_ts_writer *sl_ts_writer_open(sl_output *out, const sl_ts_header *h, sl_err *err)
{
    if (h->vocab_size == 0) {
        sl_errf(err, "%s: token stream needs a vocab size > 0", sl_output_name(out));
        return NULL;
    }
    sl_ts_writer *w = sl_xcalloc(1, sizeof *w);
    w->out = out;
    sl_ts_header_copy(&w->h, h);
    w->h.version = SL_TS_VERSION;
    w->h.width = sl_ts_width_for_vocab(h->vocab_size);
    sl_buf hdr = {0}, js = {0};
    header_json(&js, &w->h);
    unsigned char fixed[24];
    memcpy(fixed, SL_TS_MAGIC, 8);
    sl_put_le32(fixed + 8, SL_TS_VERSION);
    fixed[12] = w->h.width;
    fixed[13] = w->h.modality;
    fixed[14] = fixed[15] = 0;
    sl_put_le32(fixed + 16, w->h.vocab_size);
    sl_put_le32(fixed + 20, (uint32_t)js.len);
    sl_buf_append(&hdr, fixed, 24);
    sl_buf_append(&hdr, js.data, js.len);
    unsigned char sum[8];
    sl_put_le64(sum, XXH64(hdr.data, hdr.len, 0));
    sl_buf_append(&hdr, sum, 8);
    int rc = sl_output_write(out, hdr.data, hdr.len, err);
    sl_buf_free(&hdr);
    sl_buf_free(&js);
    if (rc) {
        sl_ts_header_free(&w->h);
        free(w);
        return NULL;
    }
    w->xx = XXH64_createState();
    XXH64_reset(w->xx, 0);
    return w;
}

static int wr(sl_ts_writer *w, const void *p, size_t n, sl_err *err)
{
    XXH64_update(w->xx, p, n);
    return sl_output_write(w->out, p, n, err);
}

/* The record header, id and metadata of a document with n tokens. */
static int write_rec_head(sl_ts_writer *w, const sl_doc *d, size_t ml, uint64_t n, sl_err *err)
{
    unsigned char rh[REC_HDR];
    rh[0] = 'D';
    sl_put_le32(rh + 1, (uint32_t)d->id_len);
    sl_put_le32(rh + 5, (uint32_t)ml);
    sl_put_le64(rh + 9, d->src_bytes);
    sl_put_le64(rh + 17, n);
    if (wr(w, rh, REC_HDR, err) || wr(w, d->id ? d->id : "", d->id_len, err) || wr(w, d->meta ? d->meta : "", ml, err))
        return -1;
    return 0;
}

int sl_ts_write_doc(sl_ts_writer *w, const sl_doc *d, sl_err *err)
{
    if (w->open)
        return unfinished(w, err);
    if (d->id_len >= SL_TS_MAX_ID_LEN)
        return sl_errf(err, "document id of %zu bytes is too long (max %u)", d->id_len, SL_TS_MAX_ID_LEN - 1);
    size_t ml = d->meta ? d->meta_len : 0;
    char q[SL_QUOTE_MAX];
    if (ml >= SL_TS_MAX_META_LEN)
        return sl_errf(err, "document '%s': metadata of %zu bytes is too long",
                       sl_err_quote(d->id, d->id_len, q, sizeof q), ml);
    size_t width = w->h.width, n = d->n_tokens;
    if (w->tmp_cap < TOK_CHUNK * 4) {
        w->tmp_cap = TOK_CHUNK * 4;
        w->tmp = sl_xrealloc(w->tmp, w->tmp_cap);
    }
    /* Range check without branches (vectorizes), before anything is written:
     * on the first chunk as it is narrowed, on the rest (a document of more
     * than TOK_CHUNK ids) by itself; find the culprit only on failure. */
    const uint32_t *tk = d->tokens;
    size_t k0 = n < TOK_CHUNK ? n : TOK_CHUNK;
    if (narrow(w->tmp, tk, k0, width, w->h.vocab_size) || (n > k0 && any_ge(tk + k0, n - k0, w->h.vocab_size)))
        for (size_t i = 0; i < n; i++)
            if (tk[i] >= w->h.vocab_size)
                return sl_errf(err, "document '%s' token %zu: id %u is not below the vocab size %u",
                               sl_err_quote(d->id, d->id_len, q, sizeof q), i, tk[i], w->h.vocab_size);
    if (write_rec_head(w, d, ml, n, err))
        return -1;
    for (size_t i = 0; i < n; i += TOK_CHUNK) {
        size_t k = n - i < TOK_CHUNK ? n - i : TOK_CHUNK;
        if (i)
            narrow(w->tmp, tk + i, k, width, w->h.vocab_size);
        if (wr(w, w->tmp, k * width, err))
            return -1;
    }
    w->count++;
    w->tokens += d->n_tokens;
    return 0;
}

int sl_ts_write_doc_raw(sl_ts_writer *w, const sl_doc *d, const void *tokens, size_t n, uint32_t max_token, sl_err *err)
{
    if (n && !tokens)
        return sl_errf(err, "document: no tokens given");
    if (sl_ts_write_doc_begin(w, d, n, max_token, err) < 0)
        return -1;
    return n ? sl_ts_write_doc_part(w, tokens, n, err) : 0;
}

int sl_ts_write_doc_begin(sl_ts_writer *w, const sl_doc *d, uint64_t n, uint32_t max_token, sl_err *err)
{
    char q[SL_QUOTE_MAX];
    if (w->open)
        return unfinished(w, err);
    if (d->id_len >= SL_TS_MAX_ID_LEN)
        return sl_errf(err, "document id of %zu bytes is too long (max %u)", d->id_len, SL_TS_MAX_ID_LEN - 1);
    size_t ml = d->meta ? d->meta_len : 0;
    if (ml >= SL_TS_MAX_META_LEN)
        return sl_errf(err, "document '%s': metadata of %zu bytes is too long",
                       sl_err_quote(d->id, d->id_len, q, sizeof q), ml);
    /* The caller vouches for the ids (its encoder cannot exceed max_token), so
     * the range check is one compare instead of a pass over the tokens. */
    if (n && max_token >= w->h.vocab_size)
        return sl_errf(err, "document '%s': ids up to %u are not all below the vocab size %u",
                       sl_err_quote(d->id, d->id_len, q, sizeof q), max_token, w->h.vocab_size);
    if (write_rec_head(w, d, ml, n, err))
        return -1;
    if (n == 0) {
        w->count++;
        return 0;
    }
    w->open = 1;
    w->pending = n;
    sl_err_quote(d->id, d->id_len, w->open_id, sizeof w->open_id);
    return 0;
}

int sl_ts_write_doc_part(sl_ts_writer *w, const void *tokens, size_t n, sl_err *err)
{
    if (!w->open || n > w->pending)
        return sl_errf(err, "document '%s': %zu tokens more than its record's count", w->open ? w->open_id : "",
                       w->open ? n - (size_t)w->pending : n);
    if (n && wr(w, tokens, n * w->h.width, err))
        return -1;
    w->tokens += n;
    w->pending -= n;
    if (!w->pending) {
        w->open = 0;
        w->count++;
    }
    return 0;
}

uint8_t sl_ts_writer_width(const sl_ts_writer *w)
{
    return w->h.width;
}

uint64_t sl_ts_writer_count(const sl_ts_writer *w)
{
    return w->count;
}

static void writer_free(sl_ts_writer *w)
{
    XXH64_freeState(w->xx);
    sl_ts_header_free(&w->h);
    free(w->tmp);
    free(w);
}

int sl_ts_writer_finish(sl_ts_writer *w, sl_err *err)
{
    if (w->open) {
        int rc = unfinished(w, err);
        writer_free(w);
        return rc;
    }
    unsigned char t[33];
    t[0] = 'E';
    sl_put_le64(t + 1, w->count);
    sl_put_le64(t + 9, w->tokens);
    sl_put_le64(t + 17, XXH64_digest(w->xx));
    memcpy(t + 25, TS_END_MAGIC, 8);
    int rc = sl_output_write(w->out, t, sizeof t, err);
    writer_free(w);
    return rc;
}

void sl_ts_writer_abort(sl_ts_writer *w)
{
    if (w)
        writer_free(w);
}

/* ---- reader ------------------------------------------------------------- */

/* A reader goes through one or more inputs (files given in order, or the
 * part files of a directory), and each input through one or more streams
 * (concatenated `.tok` files). Every stream after the first must have the
 * first one's header; the documents of all of them come out as one stream. */
struct sl_ts_reader {
    sl_input *in;           /* the input being read */
    sl_ts_header h;         /* the first stream's header */
    XXH64_state_t *xx;      /* checksum of the current stream's records */
    uint64_t count, tokens; /* documents and tokens of the current stream */
    uint64_t total;         /* documents of every stream so far */
    uint64_t streams;       /* streams begun so far */
    int done;
    unsigned char *tmp;
    /* inputs the reader opened itself (sl_ts_reader_open_paths) */
    char **paths;
    size_t n_paths, next_path;
    char *first_name; /* the input the first header came from */
    int own_in;
};

int sl_ts_sniff(const void *p, size_t n)
{
    return n >= 8 && !memcmp(p, SL_TS_MAGIC, 8);
}

static int rd(sl_ts_reader *r, void *p, size_t n, const char *what, sl_err *err)
{
    uint64_t at = sl_input_offset(r->in);
    int rc = sl_input_read_full(r->in, p, n, err);
    if (rc == 1)
        return sl_errf(err, "%s: offset %llu: stream is truncated (end of input in %s)", sl_input_name(r->in),
                       (unsigned long long)at, what);
    if (rc < 0) {
        if (strstr(err->msg, "unexpected end of input"))
            sl_errf(err, "%s: offset %llu: stream is truncated (end of input in %s)", sl_input_name(r->in),
                    (unsigned long long)at, what);
        return -1;
    }
    return 0;
}

static int parse_special(const sl_json *o, const char *name, int64_t *out, const char *src, sl_err *err)
{
    sl_json *v = sl_json_get(o, name);
    *out = SL_TS_NO_ID;
    if (!v || v->type == SL_JSON_NULL)
        return 0;
    int64_t x;
    if (!sl_json_is_int(v, &x) || x < 0 || x > UINT32_MAX)
        return sl_errf(err, "%s: header: '%s' is not a token id", src, name);
    *out = x;
    return 0;
}

/* Reads a header whose 8 magic bytes were already read and checked; the
 * stream starts at input offset `base` (offsets in messages are absolute). */
static int read_header(sl_ts_reader *r, sl_ts_header *h, uint64_t base, sl_err *err)
{
    const char *name = sl_input_name(r->in);
    unsigned char fixed[24];
    memcpy(fixed, SL_TS_MAGIC, 8);
    memset(h, 0, sizeof *h);
    if (rd(r, fixed + 8, 16, "header", err))
        return -1;
    h->version = sl_get_le32(fixed + 8);
    h->width = fixed[12];
    h->modality = fixed[13];
    h->vocab_size = sl_get_le32(fixed + 16);
    uint32_t jl = sl_get_le32(fixed + 20);
    if (h->version != SL_TS_VERSION)
        return sl_errf(err, "%s: offset %llu: unsupported token stream version %u (this sluice reads %d)", name,
                       (unsigned long long)(base + 8), h->version, SL_TS_VERSION);
    if (jl > SL_TS_MAX_HEADER_JSON)
        return sl_errf(err, "%s: offset %llu: header JSON length %u is too large", name,
                       (unsigned long long)(base + 20), jl);
    unsigned char *hb = sl_xmalloc(24 + jl + 8);
    memcpy(hb, fixed, 24);
    if (rd(r, hb + 24, jl + 8, "header", err)) {
        free(hb);
        return -1;
    }
    if (XXH64(hb, 24 + jl, 0) != sl_get_le64(hb + 24 + jl)) {
        free(hb);
        return sl_errf(err, "%s: offset %llu: header checksum mismatch (corrupt stream)", name,
                       (unsigned long long)(base + 24 + jl));
    }
    if (h->vocab_size == 0 || h->width != sl_ts_width_for_vocab(h->vocab_size) || h->modality > 4) {
        free(hb);
        return sl_errf(err, "%s: offset %llu: inconsistent header (width %u, vocab size %u, modality %u)", name,
                       (unsigned long long)(base + 12), h->width, h->vocab_size, h->modality);
    }
    sl_json_doc *jd = sl_json_parse((const char *)hb + 24, jl, NULL, err);
    free(hb);
    if (!jd) {
        sl_err_prefix(err, "%s: header JSON", name);
        return -1;
    }
    sl_json *o = sl_json_root(jd);
    int bad = o->type != SL_JSON_OBJECT;
    if (bad)
        sl_errf(err, "%s: header JSON is not an object", name);
    bad = bad || parse_special(o, "eos", &h->eos, name, err) || parse_special(o, "bos", &h->bos, name, err) ||
          parse_special(o, "pad", &h->pad, name, err) || parse_special(o, "unk", &h->unk, name, err) ||
          parse_special(o, "doc_eos", &h->doc_eos, name, err);
    if (!bad) {
        const char *fp = sl_json_get_str(o, "fingerprint"), *tk = sl_json_get_str(o, "tokenizer");
        if (fp)
            snprintf(h->fingerprint, sizeof h->fingerprint, "%s", fp);
        if (tk)
            snprintf(h->tokenizer, sizeof h->tokenizer, "%s", tk);
        sl_json *ex = sl_json_get(o, "extra");
        if (ex) {
            sl_buf b = {0};
            sl_json_put_value(&b, ex);
            h->extra_json = b.data;
        }
    }
    sl_json_free(jd);
    if (bad) {
        sl_ts_header_free(h);
        return -1;
    }
    return 0;
}

static const char *or_none(const char *s)
{
    return s && *s ? s : "(none)";
}

static void special_str(char *out, size_t n, int64_t v)
{
    if (v == SL_TS_NO_ID)
        snprintf(out, n, "none");
    else
        snprintf(out, n, "%" PRId64, v);
}

/* Names the first field in which b differs from a, or returns 0 when the
 * streams can be read as one. The human-readable tokenizer name only counts
 * when neither header has a fingerprint (it may be a path, spelled
 * differently on each machine, for the same tokenizer). */
int sl_ts_header_diff(const sl_ts_header *a, const sl_ts_header *b, char *what, size_t n)
{
    char x[32], y[32];
    if (a->modality != b->modality) {
        snprintf(what, n, "modality %s vs %s", sl_modality_name(a->modality), sl_modality_name(b->modality));
        return 1;
    }
    if (a->vocab_size != b->vocab_size) {
        snprintf(what, n, "vocab size %u vs %u", a->vocab_size, b->vocab_size);
        return 1;
    }
    if (a->width != b->width) {
        snprintf(what, n, "token width %u vs %u", a->width, b->width);
        return 1;
    }
    const int64_t sa[5] = {a->eos, a->bos, a->pad, a->unk, a->doc_eos},
                  sb[5] = {b->eos, b->bos, b->pad, b->unk, b->doc_eos};
    static const char *const sn[5] = {"eos", "bos", "pad", "unk", "doc_eos"};
    for (int i = 0; i < 5; i++)
        if (sa[i] != sb[i]) {
            special_str(x, sizeof x, sa[i]);
            special_str(y, sizeof y, sb[i]);
            if (i == 4)
                snprintf(what, n, "documents end in %s vs %s (header \"doc_eos\")", x, y);
            else
                snprintf(what, n, "%s id %s vs %s", sn[i], x, y);
            return 1;
        }
    if (strcmp(a->fingerprint, b->fingerprint)) {
        snprintf(what, n, "tokenizer fingerprint %s vs %s", or_none(a->fingerprint), or_none(b->fingerprint));
        return 1;
    }
    if (!a->fingerprint[0] && strcmp(a->tokenizer, b->tokenizer)) {
        snprintf(what, n, "tokenizer '%s' vs '%s' (no fingerprint)", a->tokenizer, b->tokenizer);
        return 1;
    }
    const char *ea = a->extra_json ? a->extra_json : "", *eb = b->extra_json ? b->extra_json : "";
    if (strcmp(ea, eb)) {
        snprintf(what, n, "extra header fields %.200s vs %.200s", or_none(ea), or_none(eb));
        return 1;
    }
    return 0;
}

/* Starts the next stream of the current input at offset base (its magic is
 * already read): its header must match the first one. */
static int next_stream(sl_ts_reader *r, uint64_t base, sl_err *err)
{
    sl_ts_header h2;
    if (read_header(r, &h2, base, err))
        return -1;
    char what[512];
    int d = sl_ts_header_diff(&r->h, &h2, what, sizeof what);
    sl_ts_header_free(&h2);
    if (d) {
        const char *name = sl_input_name(r->in);
        if (base == 0)
            return sl_errf(err, "%s: its header differs from that of %s (%s): these streams cannot be read as one",
                           name, r->first_name, what);
        return sl_errf(err,
                       "%s: offset %llu: the stream concatenated here has a different header (%s) than the "
                       "first one: these streams cannot be read as one",
                       name, (unsigned long long)base, what);
    }
    r->count = r->tokens = 0;
    r->streams++;
    XXH64_reset(r->xx, 0);
    return 0;
}

/* Reads the magic of a stream at the start of the current input. */
static int read_magic(sl_ts_reader *r, sl_err *err)
{
    const char *name = sl_input_name(r->in);
    unsigned char m[8];
    int rc = sl_input_read_full(r->in, m, 8, err);
    if (rc == 1)
        return sl_errf(err, "%s: empty input, not a token stream", name);
    if (rc < 0) {
        if (strstr(err->msg, "unexpected end"))
            sl_errf(err, "%s: offset 0: not a token stream (too short)", name);
        return -1;
    }
    if (memcmp(m, SL_TS_MAGIC, 8))
        return sl_errf(err, "%s: offset 0: not a token stream (bad magic; expected '%s')", name, SL_TS_MAGIC);
    return 0;
}

static sl_ts_reader *reader_new(void)
{
    sl_ts_reader *r = sl_xcalloc(1, sizeof *r);
    r->xx = XXH64_createState();
    XXH64_reset(r->xx, 0);
    r->tmp = sl_xmalloc(TOK_CHUNK * 4);
    return r;
}

sl_ts_reader *sl_ts_reader_open(sl_input *in, sl_err *err)
{
    sl_ts_reader *r = reader_new();
    r->in = in;
    if (read_magic(r, err) || read_header(r, &r->h, 0, err)) {
        sl_ts_reader_close(r);
        return NULL;
    }
    r->first_name = sl_xstrdup(sl_input_name(in));
    return r;
}

/* Opens the next of the reader's own inputs; 1 when there is none left. */
static int open_next_path(sl_ts_reader *r, sl_err *err)
{
    if (r->next_path >= r->n_paths)
        return 1;
    if (r->own_in)
        sl_input_close(r->in);
    r->in = NULL;
    r->own_in = 0;
    if (!(r->in = sl_input_open(r->paths[r->next_path++], err)))
        return -1;
    r->own_in = 1;
    return 0;
}

sl_ts_reader *sl_ts_reader_open_paths(char *const *paths, size_t n, sl_err *err)
{
    sl_ts_reader *r = reader_new();
    static char dash[] = "-";
    char *const stdin_path[1] = {dash};
    if (n == 0) {
        paths = stdin_path;
        n = 1;
    }
    for (size_t i = 0; i < n; i++) {
        char **parts = NULL;
        size_t np = 0;
        int isdir = sl_parts_list(paths[i], &parts, &np, err);
        if (isdir < 0) {
            sl_ts_reader_close(r);
            return NULL;
        }
        if (!isdir) {
            r->paths = sl_xrealloc(r->paths, (r->n_paths + 1) * sizeof *r->paths);
            r->paths[r->n_paths++] = sl_xstrdup(paths[i]);
            continue;
        }
        r->paths = sl_xrealloc(r->paths, (r->n_paths + np) * sizeof *r->paths);
        for (size_t k = 0; k < np; k++)
            r->paths[r->n_paths++] = parts[k];
        free(parts);
    }
    if (open_next_path(r, err) || read_magic(r, err) || read_header(r, &r->h, 0, err)) {
        sl_ts_reader_close(r);
        return NULL;
    }
    r->first_name = sl_xstrdup(sl_input_name(r->in));
    return r;
}

const sl_ts_header *sl_ts_reader_header(const sl_ts_reader *r)
{
    return &r->h;
}
uint64_t sl_ts_reader_count(const sl_ts_reader *r)
{
    return r->total;
}
const sl_input *sl_ts_reader_input(const sl_ts_reader *r)
{
    return r->in;
}
size_t sl_ts_reader_n_inputs(const sl_ts_reader *r)
{
    return r->n_paths ? r->n_paths : 1;
}
uint64_t sl_ts_reader_streams(const sl_ts_reader *r)
{
    return r->streams + 1;
}

/* After a verified trailer: the end of the input, or the start of another
 * stream (concatenated, or in the next input). 1 = a stream follows, 0 = the
 * end, -1 = error. */
static int after_trailer(sl_ts_reader *r, sl_err *err)
{
    for (;;) {
        unsigned char m[8];
        uint64_t at = sl_input_offset(r->in);
        long k = sl_input_read(r->in, m, 1, err);
        if (k < 0)
            return -1;
        if (k == 0) {
            int o = open_next_path(r, err);
            if (o)
                return o > 0 ? 0 : -1;
            if (read_magic(r, err) || next_stream(r, 0, err))
                return -1;
            return 1;
        }
        int rc = m[0] == SL_TS_MAGIC[0] ? sl_input_read_full(r->in, m + 1, 7, err) : 0;
        if (rc < 0 && !strstr(err->msg, "unexpected end"))
            return -1;
        if (m[0] != SL_TS_MAGIC[0] || rc || memcmp(m, SL_TS_MAGIC, 8))
            return sl_errf(err,
                           "%s: offset %llu: unexpected data after the end of the stream (neither the end of "
                           "the input nor another token stream)",
                           sl_input_name(r->in), (unsigned long long)at);
        return next_stream(r, at, err) ? -1 : 1;
    }
}

static int read_trailer(sl_ts_reader *r, uint64_t at, sl_err *err)
{
    const char *name = sl_input_name(r->in);
    unsigned char t[32];
    if (rd(r, t, 32, "trailer", err))
        return -1;
    if (memcmp(t + 24, TS_END_MAGIC, 8))
        return sl_errf(err, "%s: offset %llu: bad trailer (corrupt stream)", name, (unsigned long long)at);
    if (sl_get_le64(t) != r->count || sl_get_le64(t + 8) != r->tokens)
        return sl_errf(err, "%s: offset %llu: trailer says %llu documents / %llu tokens, stream has %llu / %llu", name,
                       (unsigned long long)at, (unsigned long long)sl_get_le64(t),
                       (unsigned long long)sl_get_le64(t + 8), (unsigned long long)r->count,
                       (unsigned long long)r->tokens);
    if (sl_get_le64(t + 16) != XXH64_digest(r->xx))
        return sl_errf(err, "%s: offset %llu: checksum mismatch (corrupt stream)", name, (unsigned long long)at);
    int k = after_trailer(r, err);
    if (k == 0)
        r->done = 1;
    return k;
}

int sl_ts_read_doc(sl_ts_reader *r, sl_doc *d, sl_err *err)
{
    const char *name;
    uint64_t at;
    unsigned char rh[REC_HDR];
    for (;;) {
        if (r->done)
            return 0;
        name = sl_input_name(r->in);
        at = sl_input_offset(r->in);
        int rc = sl_input_read_full(r->in, rh, 1, err);
        if (rc == 1)
            return sl_errf(err, "%s: offset %llu: stream is truncated (no trailer after %llu documents)", name,
                           (unsigned long long)at, (unsigned long long)r->count);
        if (rc < 0)
            return -1;
        if (rh[0] != 'E')
            break;
        int t = read_trailer(r, at, err);
        if (t < 0)
            return -1;
    }
    if (rh[0] != 'D')
        return sl_errf(err, "%s: offset %llu: bad record tag 0x%02x (corrupt stream)", name, (unsigned long long)at,
                       rh[0]);
    if (rd(r, rh + 1, REC_HDR - 1, "record header", err))
        return -1;
    uint32_t il = sl_get_le32(rh + 1), ml = sl_get_le32(rh + 5);
    uint64_t n = sl_get_le64(rh + 17);
    if (il >= SL_TS_MAX_ID_LEN || ml >= SL_TS_MAX_META_LEN)
        return sl_errf(err, "%s: offset %llu: record lengths out of range (corrupt stream)", name,
                       (unsigned long long)at);
    if (n > (UINT64_MAX >> 3))
        return sl_errf(err, "%s: offset %llu: token count %llu out of range (corrupt stream)", name,
                       (unsigned long long)at, (unsigned long long)n);
    XXH64_update(r->xx, rh, REC_HDR);
    sl_doc_clear(d);
    d->src_bytes = sl_get_le64(rh + 9);
    sl_doc_set_id(d, "", 0);
    if (d->cap_id < il + 1) {
        d->cap_id = il + 1;
        d->id = sl_xrealloc(d->id, d->cap_id);
    }
    if (rd(r, d->id, il, "record id", err))
        return -1;
    d->id[il] = 0;
    d->id_len = il;
    XXH64_update(r->xx, d->id, il);
    sl_doc_set_meta(d, "", 0);
    if (ml) {
        /* grow as data arrives so a lying length cannot force a huge allocation */
        size_t got = 0;
        while (got < ml) {
            size_t k = ml - got < (1u << 20) ? ml - got : (1u << 20);
            if (d->cap_meta < got + k + 1) {
                d->cap_meta = got + k + 1;
                d->meta = sl_xrealloc(d->meta, d->cap_meta);
            }
            if (rd(r, d->meta + got, k, "record metadata", err))
                return -1;
            got += k;
        }
        d->meta[ml] = 0;
        d->meta_len = ml;
        XXH64_update(r->xx, d->meta, ml);
    }
    size_t width = r->h.width;
    uint32_t vocab = r->h.vocab_size;
    char q[SL_QUOTE_MAX];
    for (uint64_t i = 0; i < n; i += TOK_CHUNK) {
        size_t k = n - i < TOK_CHUNK ? (size_t)(n - i) : TOK_CHUNK;
        if (rd(r, r->tmp, k * width, "record tokens", err))
            return -1;
        XXH64_update(r->xx, r->tmp, k * width);
        sl_doc_reserve(d, (size_t)i + k);
        uint32_t *t = d->tokens + i;
        const unsigned char *p = r->tmp;
        if (width == 1) {
#pragma omp simd
            for (size_t j = 0; j < k; j++)
                t[j] = p[j];
        } else if (width == 2) {
            const uint16_t *q = (const uint16_t *)(const void *)p;
#pragma omp simd
            for (size_t j = 0; j < k; j++)
                t[j] = q[j];
        } else {
            memcpy(t, p, k * 4);
        }
        if (any_ge(t, k, vocab))
            for (size_t j = 0; j < k; j++)
                if (t[j] >= vocab)
                    return sl_errf(err, "%s: document '%s' token %llu: id %u is not below the vocab size %u", name,
                                   sl_err_quote(d->id, d->id_len, q, sizeof q), (unsigned long long)(i + j), t[j],
                                   vocab);
    }
    d->n_tokens = (size_t)n;
    r->count++;
    r->total++;
    r->tokens += n;
    return 1;
}

void sl_ts_reader_close(sl_ts_reader *r)
{
    if (!r)
        return;
    if (r->xx)
        XXH64_freeState(r->xx);
    sl_ts_header_free(&r->h);
    free(r->tmp);
    if (r->own_in)
        sl_input_close(r->in);
    for (size_t i = 0; i < r->n_paths; i++)
        free(r->paths[i]);
    free(r->paths);
    free(r->first_name);
    free(r);
}
