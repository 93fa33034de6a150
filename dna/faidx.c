/* FASTA index: see faidx.h. */
#include "dna/faidx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static dna_fai_rec *push(dna_fai *fai)
{
    if (fai->n == fai->cap) {
        fai->cap = fai->cap ? fai->cap * 2 : 16;
        fai->rec = sl_xrealloc(fai->rec, fai->cap * sizeof *fai->rec);
    }
    dna_fai_rec *r = &fai->rec[fai->n++];
    memset(r, 0, sizeof *r);
    return r;
}

void dna_fai_free(dna_fai *fai)
{
    for (size_t i = 0; i < fai->n; i++)
        free(fai->rec[i].name);
    free(fai->rec);
    memset(fai, 0, sizeof *fai);
}

static int parse_u64(const char *s, const char *e, uint64_t *out)
{
    if (s == e)
        return -1;
    uint64_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int dna_fai_parse(const char *text, size_t len, const char *src, dna_fai *fai, sl_err *err)
{
    const char *p = text, *end = text + len;
    uint64_t line = 0;
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        if (le == p) {
            p = nl ? nl + 1 : end;
            continue;
        }
        const char *f[7];
        size_t nf = 0;
        f[nf++] = p;
        for (const char *q = p; q < le && nf < 7; q++)
            if (*q == '\t')
                f[nf++] = q + 1;
        if (nf != 5 && nf != 6) {
            dna_fai_free(fai);
            return sl_errf(err, "%s:%llu: a .fai line needs 5 or 6 tab-separated fields, found %zu", src,
                           (unsigned long long)line, nf);
        }
        dna_fai_rec *r = push(fai);
        r->name = sl_xstrndup(f[0], (size_t)(f[1] - 1 - f[0]));
        uint64_t *vals[5] = {&r->length, &r->offset, &r->linebases, &r->linewidth, &r->qualoffset};
        for (size_t k = 1; k < nf; k++) {
            const char *fe = k + 1 < nf ? f[k + 1] - 1 : le;
            if (parse_u64(f[k], fe, vals[k - 1]) < 0) {
                dna_fai_free(fai);
                return sl_errf(err, "%s:%llu: field %zu is not a non-negative integer", src, (unsigned long long)line,
                               k + 1);
            }
        }
        if (r->length && (r->linebases == 0 || r->linewidth < r->linebases)) {
            dna_fai_free(fai);
            return sl_errf(err, "%s:%llu: inconsistent line lengths (LINEBASES %llu, LINEWIDTH %llu)", src,
                           (unsigned long long)line, (unsigned long long)r->linebases,
                           (unsigned long long)r->linewidth);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int dna_fai_build(dna_fx *r, dna_fai *fai, sl_err *err)
{
    int rc;
    while ((rc = dna_fx_next(r, err)) == 1) {
        if (dna_fx_format(r) != DNA_FMT_FASTA) {
            dna_fai_free(fai);
            return sl_errf(err, "%s: only FASTA files are indexed", dna_fx_source(r));
        }
        dna_fai_rec *x = push(fai);
        x->name = sl_xstrdup(dna_fx_name(r));
        char skip[1 << 14];
        long n;
        while ((n = dna_fx_read(r, skip, sizeof skip, err)) > 0)
            ;
        if (n < 0) {
            dna_fai_free(fai);
            return -1;
        }
        const dna_fx_fai *f = dna_fx_fai_info(r);
        if (!f->ok) {
            sl_errf(err, "%s: record '%s' cannot be indexed: its sequence lines differ in length", dna_fx_source(r),
                    x->name);
            dna_fai_free(fai);
            return -1;
        }
        x->length = f->length;
        x->offset = f->offset;
        x->linebases = f->linebases;
        x->linewidth = f->linewidth;
    }
    if (rc < 0) {
        dna_fai_free(fai);
        return -1;
    }
    return 0;
}

void dna_fai_format(const dna_fai *fai, sl_buf *out)
{
    for (size_t i = 0; i < fai->n; i++) {
        const dna_fai_rec *r = &fai->rec[i];
        sl_buf_printf(out, "%s\t%llu\t%llu\t%llu\t%llu", r->name, (unsigned long long)r->length,
                      (unsigned long long)r->offset, (unsigned long long)r->linebases,
                      (unsigned long long)r->linewidth);
        if (r->qualoffset)
            sl_buf_printf(out, "\t%llu", (unsigned long long)r->qualoffset);
        sl_buf_putc(out, '\n');
    }
}

long dna_fai_find(const dna_fai *fai, const char *name)
{
    for (size_t i = 0; i < fai->n; i++)
        if (!strcmp(fai->rec[i].name, name))
            return (long)i;
    return -1;
}

static int fd_read_at(const void *ctx, uint64_t off, void *buf, size_t n, sl_err *err)
{
    int fd = *(const int *)ctx;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return sl_errf(err, "offset %llu: %s (the .fai index does not match the file?)",
                           (unsigned long long)(off + done), r < 0 ? strerror(errno) : "unexpected end of file");
        done += (size_t)r;
    }
    return 0;
}

int dna_fai_fetch(int fd, const char *path, const dna_fai_rec *rec, uint64_t start, uint64_t end, char *out,
                  sl_err *err)
{
    if (dna_fai_fetch_with(fd_read_at, &fd, path, rec, start, end, out, err) < 0) {
        if (!strncmp(err->msg, "offset ", 7))
            sl_err_prefix(err, "%s", path);
        return -1;
    }
    return 0;
}

int dna_fai_fetch_with(dna_read_at_fn read_at, const void *ctx, const char *path, const dna_fai_rec *rec,
                       uint64_t start, uint64_t end, char *out, sl_err *err)
{
    if (start > end || end > rec->length)
        return sl_errf(err, "%s: %s:%llu-%llu is outside the sequence (%llu bases)", path, rec->name,
                       (unsigned long long)start, (unsigned long long)end, (unsigned long long)rec->length);
    if (start == end)
        return 0;
    uint64_t lb = rec->linebases, lw = rec->linewidth;
    uint64_t a = rec->offset + (start / lb) * lw + start % lb;
    uint64_t b = rec->offset + ((end - 1) / lb) * lw + (end - 1) % lb + 1;
    size_t span = (size_t)(b - a);
    char *raw = sl_xmalloc(span);
    if (read_at(ctx, a, raw, span, err) < 0) {
        free(raw);
        return -1;
    }
    /* The index says where every base and every line terminator is: check
     * each byte against it, so a stale index is reported, not used. */
    size_t o = 0, want = (size_t)(end - start);
    for (size_t i = 0; i < span; i++) {
        unsigned char c = (unsigned char)raw[i];
        uint64_t col = (a + i - rec->offset) % lw;
        int ok = col < lb ? (c >= 0x21 && c <= 0x7e && c != '>') : (c == '\n' || c == '\r');
        if (!ok || (col < lb && o == want)) {
            free(raw);
            return sl_errf(err,
                           "%s: offset %llu: unexpected byte 0x%02x in %s:%llu-%llu: the .fai index does not "
                           "match the file",
                           path, (unsigned long long)(a + i), c, rec->name, (unsigned long long)start,
                           (unsigned long long)end);
        }
        if (col < lb)
            out[o++] = (char)c;
    }
    free(raw);
    if (o != want)
        return sl_errf(err, "%s: %s:%llu-%llu: read %zu bases instead of %zu: the .fai index does not match the file",
                       path, rec->name, (unsigned long long)start, (unsigned long long)end, o, want);
    return 0;
}
