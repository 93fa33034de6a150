/* BED intervals: see bed.h. */
#include "dna/bed.h"

#include <stdlib.h>
#include <string.h>

#include "stream/io.h"

void dna_bed_free(dna_bed *bed)
{
    for (size_t i = 0; i < bed->n; i++) {
        free(bed->rec[i].chrom);
        free(bed->rec[i].name);
        free(bed->rec[i].split);
    }
    free(bed->rec);
    memset(bed, 0, sizeof *bed);
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Splits a line into fields at tabs, or at runs of blanks when it has no tab. */
static size_t split_fields(const char *s, const char *e, const char **fs, size_t *fl, size_t max)
{
    int tabs = memchr(s, '\t', (size_t)(e - s)) != NULL;
    size_t n = 0;
    const char *p = s;
    while (p <= e && n < max) {
        if (!tabs)
            while (p < e && *p == ' ')
                p++;
        if (!tabs && p == e)
            break;
        const char *q = p;
        while (q < e && *q != (tabs ? '\t' : ' '))
            q++;
        fs[n] = p;
        fl[n] = (size_t)(q - p);
        n++;
        if (q == e)
            break;
        p = q + 1;
    }
    return n;
}

int dna_bed_parse(const char *text, size_t len, const char *src, int split_col, dna_bed *bed, sl_err *err)
{
    const char *p = text, *end = text + len;
    uint64_t line = 0;
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r')
            le--;
        const char *s = p;
        p = next;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        if (s == le || *s == '#' || (le - s >= 5 && !memcmp(s, "track", 5)) ||
            (le - s >= 7 && !memcmp(s, "browser", 7)))
            continue;
        const char *fs[16];
        size_t fl[16];
        size_t nf = split_fields(s, le, fs, fl, 16);
        if (nf < 3) {
            dna_bed_free(bed);
            return sl_errf(err, "%s:%llu: a BED line needs at least 3 fields (chrom start end), found %zu", src,
                           (unsigned long long)line, nf);
        }
        uint64_t a, b;
        if (parse_u64(fs[1], fl[1], &a) < 0 || parse_u64(fs[2], fl[2], &b) < 0) {
            dna_bed_free(bed);
            return sl_errf(err, "%s:%llu: BED start and end must be non-negative integers", src,
                           (unsigned long long)line);
        }
        if (a > b) {
            dna_bed_free(bed);
            return sl_errf(err, "%s:%llu: BED start %llu is after end %llu", src, (unsigned long long)line,
                           (unsigned long long)a, (unsigned long long)b);
        }
        if (split_col && nf < (size_t)split_col) {
            dna_bed_free(bed);
            return sl_errf(err, "%s:%llu: no split in column %d (the line has %zu fields)", src,
                           (unsigned long long)line, split_col, nf);
        }
        if (bed->n == bed->cap) {
            bed->cap = bed->cap ? bed->cap * 2 : 64;
            bed->rec = sl_xrealloc(bed->rec, bed->cap * sizeof *bed->rec);
        }
        dna_bed_rec *r = &bed->rec[bed->n++];
        memset(r, 0, sizeof *r);
        r->chrom = sl_xstrndup(fs[0], fl[0]);
        r->start = a;
        r->end = b;
        r->line = line;
        r->strand = '.';
        if (nf >= 4 && split_col != 4)
            r->name = sl_xstrndup(fs[3], fl[3]);
        if (split_col)
            r->split = sl_xstrndup(fs[split_col - 1], fl[split_col - 1]);
        if (nf >= 6 && split_col != 6 && fl[5] == 1 && (fs[5][0] == '+' || fs[5][0] == '-'))
            r->strand = fs[5][0];
    }
    return 0;
}

int dna_bed_load(const char *path, int split_col, dna_bed *bed, sl_err *err)
{
    char *data;
    size_t len;
    if (sl_read_file(path, &data, &len, err) < 0)
        return -1;
    int rc = dna_bed_parse(data, len, path, split_col, bed, err);
    free(data);
    return rc;
}

int dna_split_map_load(const char *path, dna_split_map *m, sl_err *err)
{
    char *data;
    size_t len;
    if (sl_read_file(path, &data, &len, err) < 0)
        return -1;
    const char *p = data, *end = data + len;
    uint64_t line = 0;
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        const char *s = p;
        p = nl ? nl + 1 : end;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        if (s == le || *s == '#')
            continue;
        /* normalise tabs to blanks for the field splitter */
        const char *fs[4];
        size_t fl[4], nf = 0;
        const char *q = s;
        while (q < le && nf < 4) {
            const char *w = q;
            while (q < le && *q != ' ' && *q != '\t')
                q++;
            fs[nf] = w;
            fl[nf++] = (size_t)(q - w);
            while (q < le && (*q == ' ' || *q == '\t'))
                q++;
        }
        if (nf != 2) {
            free(data);
            dna_split_map_free(m);
            return sl_errf(err, "%s:%llu: expected two fields 'chrom split', found %zu", path, (unsigned long long)line,
                           nf);
        }
        m->chrom = sl_xrealloc(m->chrom, (m->n + 1) * sizeof *m->chrom);
        m->split = sl_xrealloc(m->split, (m->n + 1) * sizeof *m->split);
        m->chrom[m->n] = sl_xstrndup(fs[0], fl[0]);
        m->split[m->n] = sl_xstrndup(fs[1], fl[1]);
        m->n++;
    }
    free(data);
    return 0;
}

const char *dna_split_map_get(const dna_split_map *m, const char *chrom)
{
    for (size_t i = m->n; i-- > 0;)
        if (!strcmp(m->chrom[i], chrom))
            return m->split[i];
    return NULL;
}

void dna_split_map_free(dna_split_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->chrom[i]);
        free(m->split[i]);
    }
    free(m->chrom);
    free(m->split);
    memset(m, 0, sizeof *m);
}
