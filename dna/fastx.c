/* Streaming FASTA / FASTQ parser: see fastx.h. */
#include "dna/fastx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "stream/tokstream.h"

enum { ST_START, ST_SEQ, ST_NEXT, ST_END };

/* What a byte inside a sequence line is. Graphic ASCII is sequence (anything
 * that is not A/C/G/T/N becomes [UNK] later); CR, space and tab are dropped;
 * control bytes and bytes >= 0x80 mean the file is not FASTA. */
enum { C_SEQ = 0, C_CR = 1, C_BLANK = 2, C_BAD = 3 };
static inline unsigned char byte_class(unsigned char c)
{
    if (c >= 0x21 && c <= 0x7e)
        return C_SEQ;
    return c == '\r' ? C_CR : (c == ' ' || c == '\t') ? C_BLANK : C_BAD;
}

struct dna_fx {
    dna_read_fn rd;
    void *ctx;
    char *src; /* name for messages */
    /* input window */
    char *buf;
    size_t pos, len, cap;
    int eof;
    const char *mem; /* memory source, when rd == NULL */
    size_t mem_len;
    uint64_t base_off; /* stream offset of buf[0] */
    uint64_t line;     /* 1-based line number of the byte at pos */
    int at_bol;
    int state, fmt;
    sl_buf hdr, name, desc, scratch;
    /* current record */
    uint64_t seq_len;
    /* faidx measurement */
    dna_fx_fai fai;
    uint64_t cur_bases, cur_bytes, nlines, first_bases, first_bytes;
    int prev_short, blank_seen;
};

dna_fx *dna_fx_open(dna_read_fn fn, void *ctx, const char *name)
{
    dna_fx *r = sl_xcalloc(1, sizeof *r);
    r->rd = fn;
    r->ctx = ctx;
    r->src = sl_xstrdup(name ? name : "-");
    r->cap = 1u << 18;
    r->buf = sl_xmalloc(r->cap);
    r->line = 1;
    r->at_bol = 1;
    r->state = ST_START;
    return r;
}

dna_fx *dna_fx_open_mem(const void *data, size_t len, const char *name)
{
    dna_fx *r = dna_fx_open(NULL, NULL, name);
    r->mem = data;
    r->mem_len = len;
    return r;
}

void dna_fx_close(dna_fx *r)
{
    if (!r)
        return;
    free(r->src);
    free(r->buf);
    sl_buf_free(&r->hdr);
    sl_buf_free(&r->name);
    sl_buf_free(&r->desc);
    sl_buf_free(&r->scratch);
    free(r);
}

const char *dna_fx_name(const dna_fx *r)
{
    return r->name.data ? r->name.data : "";
}
size_t dna_fx_name_len(const dna_fx *r)
{
    return r->name.len;
}
const char *dna_fx_desc(const dna_fx *r)
{
    return r->desc.data ? r->desc.data : "";
}
int dna_fx_format(const dna_fx *r)
{
    return r->fmt;
}
const char *dna_fx_source(const dna_fx *r)
{
    return r->src;
}
const dna_fx_fai *dna_fx_fai_info(const dna_fx *r)
{
    return &r->fai;
}

/* Makes at least one unread byte available: 1, 0 at end of input, -1 error. */
static int fill(dna_fx *r, sl_err *err)
{
    if (r->pos < r->len)
        return 1;
    if (r->eof)
        return 0;
    r->base_off += r->len;
    r->pos = r->len = 0;
    if (!r->rd) {
        /* memory source: expose it in windows of cap bytes (no copy needed,
         * but copying keeps one code path; the cost is negligible). */
        uint64_t done = r->base_off;
        size_t n = r->mem_len - (size_t)done < r->cap ? r->mem_len - (size_t)done : r->cap;
        if (n == 0) {
            r->eof = 1;
            return 0;
        }
        memcpy(r->buf, r->mem + done, n);
        r->len = n;
        return 1;
    }
    long n = r->rd(r->ctx, r->buf, r->cap, err);
    if (n < 0)
        return -1;
    if (n == 0) {
        r->eof = 1;
        return 0;
    }
    r->len = (size_t)n;
    return 1;
}

/* Reads one line into dst (cleared first; '\n' removed, a final '\r'
 * removed). 1: a line, 0: end of input before any byte, -1: error. */
static int read_line(dna_fx *r, sl_buf *dst, size_t max, const char *what, sl_err *err)
{
    sl_buf_clear(dst);
    int any = 0;
    for (;;) {
        int rc = fill(r, err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        any = 1;
        char *p = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        if (dst->len + take > max)
            return sl_errf(err, "%s:%llu: %s line longer than %zu bytes (not a FASTA/FASTQ file?)", r->src,
                           (unsigned long long)r->line, what, max);
        sl_buf_append(dst, p, take);
        r->pos += take;
        if (nl) {
            r->pos++;
            r->line++;
            break;
        }
    }
    if (!any)
        return 0;
    if (dst->len && dst->data[dst->len - 1] == '\r')
        dst->data[--dst->len] = 0;
    r->at_bol = 1;
    return 1;
}

static int is_blank_line(const sl_buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] != ' ' && b->data[i] != '\t' && b->data[i] != '\r')
            return 0;
    return 1;
}

/* samtools naming: skip blanks after the marker, name = first word, desc =
 * the rest after the separating blanks. */
static void parse_header(dna_fx *r)
{
    const char *s = r->hdr.data + 1, *e = r->hdr.data + r->hdr.len;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    const char *w = s;
    while (w < e && *w != ' ' && *w != '\t')
        w++;
    sl_buf_clear(&r->name);
    sl_buf_append(&r->name, s, (size_t)(w - s));
    while (w < e && (*w == ' ' || *w == '\t'))
        w++;
    sl_buf_clear(&r->desc);
    sl_buf_append(&r->desc, w, (size_t)(e - w));
}

static void fai_begin(dna_fx *r)
{
    memset(&r->fai, 0, sizeof r->fai);
    r->fai.ok = r->fmt == DNA_FMT_FASTA;
    r->fai.offset = r->base_off + r->pos;
    r->cur_bases = r->cur_bytes = r->nlines = r->first_bases = r->first_bytes = 0;
    r->prev_short = r->blank_seen = 0;
    r->seq_len = 0;
}

/* A sequence line ended (with_nl: it had a '\n'). Applies the faidx rule:
 * every line but the last has the same number of bases and bytes, no line is
 * longer than the first, and no sequence line follows a blank line. */
static void fai_line(dna_fx *r, int with_nl)
{
    uint64_t b = r->cur_bases, w = r->cur_bytes + (with_nl ? 1 : 0);
    r->cur_bases = r->cur_bytes = 0;
    if (b == 0) {
        if (w)
            r->blank_seen = 1;
        return;
    }
    if (r->blank_seen || r->prev_short)
        r->fai.ok = 0;
    if (r->nlines == 0) {
        r->first_bases = b;
        r->first_bytes = w;
    } else if (b > r->first_bases) {
        r->fai.ok = 0;
    } else if (b < r->first_bases) {
        r->prev_short = 1;
    }
    if (with_nl && r->nlines > 0 && w - b != r->first_bytes - r->first_bases)
        r->fai.ok = 0;
    r->nlines++;
}

static void fai_end(dna_fx *r)
{
    r->fai.length = r->seq_len;
    r->fai.linebases = r->first_bases;
    r->fai.linewidth = r->first_bytes;
}

/* FASTQ: after the sequence, the '+' line and quality characters until they
 * number as many as the bases. */
static int read_quality(dna_fx *r, sl_err *err)
{
    int rc = read_line(r, &r->scratch, DNA_FX_MAX_HEADER, "FASTQ '+'", err);
    if (rc < 0)
        return -1;
    r->fai.qualoffset = r->base_off + r->pos;
    uint64_t q = 0;
    while (q < r->seq_len) {
        uint64_t line = r->line;
        rc = read_line(r, &r->scratch, SIZE_MAX / 2, "quality", err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return sl_errf(err, "%s:%llu: truncated FASTQ record '%s': %llu quality characters for %llu bases", r->src,
                           (unsigned long long)line, dna_fx_name(r), (unsigned long long)q,
                           (unsigned long long)r->seq_len);
        for (size_t i = 0; i < r->scratch.len; i++) {
            unsigned char c = (unsigned char)r->scratch.data[i];
            if (c < 0x21 || c > 0x7e)
                return sl_errf(err, "%s:%llu: invalid quality byte 0x%02x in FASTQ record '%s'", r->src,
                               (unsigned long long)line, c, dna_fx_name(r));
        }
        q += r->scratch.len;
    }
    if (q > r->seq_len)
        return sl_errf(err, "%s:%llu: FASTQ record '%s' has %llu quality characters for %llu bases", r->src,
                       (unsigned long long)(r->line - 1), dna_fx_name(r), (unsigned long long)q,
                       (unsigned long long)r->seq_len);
    return 0;
}

static int end_record(dna_fx *r, sl_err *err)
{
    fai_end(r);
    if (r->fmt == DNA_FMT_FASTQ) {
        if (r->state == ST_END)
            return sl_errf(err, "%s:%llu: truncated FASTQ record '%s': no '+' line", r->src,
                           (unsigned long long)r->line, dna_fx_name(r));
        if (read_quality(r, err) < 0)
            return -1;
    }
    return 0;
}

long dna_fx_read(dna_fx *r, char *out, size_t n, sl_err *err)
{
    if (r->state != ST_SEQ)
        return 0;
    size_t o = 0;
    while (o < n) {
        int rc = fill(r, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (r->cur_bytes || r->cur_bases)
                fai_line(r, 0);
            r->state = ST_END;
            if (end_record(r, err) < 0)
                return -1;
            break;
        }
        if (r->at_bol) {
            char c = r->buf[r->pos];
            if ((r->fmt == DNA_FMT_FASTA && c == '>') || (r->fmt == DNA_FMT_FASTQ && c == '+')) {
                r->state = ST_NEXT;
                if (end_record(r, err) < 0)
                    return -1;
                break;
            }
            r->at_bol = 0;
        }
        const unsigned char *p = (const unsigned char *)r->buf + r->pos;
        size_t k = r->len - r->pos;
        if (k > n - o)
            k = n - o;
        const unsigned char *nl = memchr(p, '\n', k);
        size_t seg = nl ? (size_t)(nl - p) : k;
        char *dst = out + o;
        size_t d = 0;
        /* Fast path: a line piece of plain graphic bytes is copied whole. The
         * check is branch-free so the compiler vectorizes it. */
        unsigned special = 0;
#pragma omp simd reduction(| : special)
        for (size_t i = 0; i < seg; i++)
            special |= (unsigned char)(p[i] - 0x21) > 0x5d;
        if (!special) {
            memcpy(dst, p, seg);
            d = seg;
        }
        for (size_t i = d; i < seg; i++) {
            unsigned char c = p[i];
            unsigned char cls = byte_class(c);
            if (cls == C_SEQ) {
                dst[d++] = (char)c;
                continue;
            }
            if (cls == C_BAD)
                return sl_errf(err, "%s:%llu: invalid byte 0x%02x in the sequence of record '%s'", r->src,
                               (unsigned long long)r->line, c, dna_fx_name(r));
            if (cls == C_BLANK)
                r->fai.ok = 0;
        }
        o += d;
        r->seq_len += d;
        r->cur_bases += d;
        r->cur_bytes += seg;
        r->pos += seg;
        if (nl) {
            r->pos++;
            r->line++;
            r->at_bol = 1;
            fai_line(r, 1);
        }
    }
    return (long)o;
}

int dna_fx_read_all(dna_fx *r, sl_buf *seq, sl_err *err)
{
    for (;;) {
        sl_buf_reserve(seq, 1u << 16);
        long n = dna_fx_read(r, seq->data + seq->len, seq->cap - seq->len - 1, err);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        seq->len += (size_t)n;
        seq->data[seq->len] = 0;
    }
}

int dna_fx_next(dna_fx *r, sl_err *err)
{
    char skip[1 << 14];
    while (r->state == ST_SEQ) {
        long n = dna_fx_read(r, skip, sizeof skip, err);
        if (n < 0)
            return -1;
    }
    if (r->state == ST_END)
        return 0;
    for (;;) {
        uint64_t line = r->line;
        int rc = read_line(r, &r->hdr, DNA_FX_MAX_HEADER, "header", err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            r->state = ST_END;
            return 0;
        }
        if (is_blank_line(&r->hdr))
            continue;
        char c = r->hdr.data[0];
        if (r->fmt == DNA_FMT_UNKNOWN && (c == '>' || c == '@'))
            r->fmt = c == '>' ? DNA_FMT_FASTA : DNA_FMT_FASTQ;
        if (r->fmt == DNA_FMT_UNKNOWN)
            return sl_errf(err, "%s:%llu: no FASTA/FASTQ header: expected '>' or '@' at the start of a record", r->src,
                           (unsigned long long)line);
        if (r->fmt == DNA_FMT_FASTQ && c != '@')
            return sl_errf(err, "%s:%llu: expected '@' at the start of a FASTQ record", r->src,
                           (unsigned long long)line);
        /* (FASTA: the sequence reader stops only at '>', so c == '>' here.)
         * Names become document ids (UTF-8 strings): no control bytes, valid UTF-8. */
        for (size_t i = 0; i < r->hdr.len; i++) {
            unsigned char b = (unsigned char)r->hdr.data[i];
            if ((b < 0x20 && b != '\t') || b == 0x7f)
                return sl_errf(err, "%s:%llu: invalid byte 0x%02x in a header line", r->src, (unsigned long long)line,
                               b);
        }
        size_t bad = sl_utf8_check(r->hdr.data, r->hdr.len);
        if (bad < r->hdr.len)
            return sl_errf(err, "%s:%llu: header line is not valid UTF-8 (byte %zu)", r->src, (unsigned long long)line,
                           bad + 1);
        parse_header(r);
        /* the name becomes a document id (a description fits in metadata:
         * DNA_FX_MAX_HEADER is far below SL_TS_MAX_META_LEN) */
        if (r->name.len >= SL_TS_MAX_ID_LEN)
            return sl_errf(err, "%s:%llu: record name of %zu bytes is too long for a document id (max %u)", r->src,
                           (unsigned long long)line, r->name.len, SL_TS_MAX_ID_LEN - 1);
        fai_begin(r);
        r->state = ST_SEQ;
        r->at_bol = 1;
        return 1;
    }
}
