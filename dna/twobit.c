/* UCSC .2bit reader: see twobit.h. */
#include "dna/twobit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/byteorder.h"

#define TWOBIT_MAGIC 0x1A412743u

/* Sequence sizes are u32 in every .2bit version and blocks are checked to lie
 * inside the sequence, so u32 coordinates suffice (hg38 has ~5.6 M mask blocks:
 * 12 bytes each here). */
typedef struct block {
    uint32_t start, end;
} block;

typedef struct blocks {
    block *b;
    uint32_t *maxend; /* maxend[i] = max(b[0..i].end): monotonic, so searchable */
    size_t n;
} blocks;

typedef struct seqrec {
    char *name;
    uint64_t size;   /* bases */
    uint64_t packed; /* file offset of the packed bases */
    blocks nblk, mblk;
} seqrec;

struct dna_2bit {
    char *src;
    int fd;
    const unsigned char *mem;
    uint64_t fsize;
    int swap;
    seqrec *seq;
    size_t n;
    uint64_t total_blocks;
};

int dna_2bit_sniff(const void *p, size_t n)
{
    if (n < 4)
        return 0;
    const unsigned char *b = p;
    return sl_get_le32(b) == TWOBIT_MAGIC || sl_get_be32(b) == TWOBIT_MAGIC;
}

static int read_at(const dna_2bit *t, uint64_t off, void *buf, size_t n, const char *what, sl_err *err)
{
    if (off > t->fsize || n > t->fsize - off)
        return sl_errf(err,
                       "%s: offset %llu: %s runs past the end of the file (%llu bytes): truncated or corrupt .2bit",
                       t->src, (unsigned long long)off, what, (unsigned long long)t->fsize);
    if (t->mem) {
        memcpy(buf, t->mem + off, n);
        return 0;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(t->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return sl_errf(err, "%s: offset %llu: read error: %s", t->src, (unsigned long long)(off + done),
                           strerror(errno));
        if (r == 0)
            return sl_errf(err, "%s: offset %llu: unexpected end of file", t->src, (unsigned long long)(off + done));
        done += (size_t)r;
    }
    return 0;
}

/* Integers in the file's byte order (a .2bit file is written in its
 * writer's native order; the magic tells which). */
static uint32_t u32(const dna_2bit *t, const unsigned char *b)
{
    return t->swap ? sl_get_be32(b) : sl_get_le32(b);
}

static uint64_t u64(const dna_2bit *t, const unsigned char *b)
{
    return t->swap ? sl_get_be64(b) : sl_get_le64(b);
}

static int cmp_block(const void *a, const void *b)
{
    const block *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Reads count, starts[], sizes[] at *off; checks every block against the
 * sequence size. */
static int read_blocks(dna_2bit *t, seqrec *s, size_t idx, uint64_t *off, blocks *bl, const char *kind, sl_err *err)
{
    unsigned char b4[4];
    if (read_at(t, *off, b4, 4, kind, err) < 0)
        return -1;
    uint64_t count = u32(t, b4);
    *off += 4;
    /* Blocks of different records occupy different bytes in a valid file, so
     * their total is bounded by the file size too (this keeps a hostile file
     * whose records all point at one huge block list from costing
     * records x blocks memory). */
    t->total_blocks += count;
    if (*off > t->fsize || count * 8 > t->fsize - *off || t->total_blocks * 8 > t->fsize)
        return sl_errf(err,
                       "%s: offset %llu: sequence '%s' (#%zu) claims %llu %s blocks, more than the file holds "
                       "(%llu bytes)",
                       t->src, (unsigned long long)(*off - 4), s->name, idx, (unsigned long long)count, kind,
                       (unsigned long long)t->fsize);
    bl->n = (size_t)count;
    bl->b = sl_xmalloc((count ? count : 1) * sizeof *bl->b);
    bl->maxend = sl_xmalloc((count ? count : 1) * sizeof *bl->maxend);
    unsigned char *raw = sl_xmalloc(count * 8 + 1);
    if (read_at(t, *off, raw, (size_t)count * 8, kind, err) < 0) {
        free(raw);
        return -1;
    }
    int sorted = 1;
    for (size_t i = 0; i < count; i++) {
        uint64_t st = u32(t, raw + 4 * i), sz = u32(t, raw + 4 * (count + i));
        if (st + sz > s->size) {
            free(raw);
            return sl_errf(err,
                           "%s: offset %llu: sequence '%s' (#%zu): %s block %zu [%llu, %llu) is outside the "
                           "sequence (%llu bases)",
                           t->src, (unsigned long long)(*off + 4 * i), s->name, idx, kind, i, (unsigned long long)st,
                           (unsigned long long)(st + sz), (unsigned long long)s->size);
        }
        bl->b[i].start = (uint32_t)st;
        bl->b[i].end = (uint32_t)(st + sz);
        if (i && st < bl->b[i - 1].start)
            sorted = 0;
    }
    free(raw);
    if (!sorted)
        qsort(bl->b, bl->n, sizeof *bl->b, cmp_block);
    uint32_t m = 0;
    for (size_t i = 0; i < bl->n; i++) {
        if (bl->b[i].end > m)
            m = bl->b[i].end;
        bl->maxend[i] = m;
    }
    *off += count * 8;
    return 0;
}

static dna_2bit *open_common(dna_2bit *t, sl_err *err)
{
    unsigned char h[16];
    if (t->fsize < 16) {
        sl_errf(err, "%s: offset 0: file too short for a .2bit header (%llu bytes)", t->src,
                (unsigned long long)t->fsize);
        goto fail;
    }
    if (read_at(t, 0, h, 16, "header", err) < 0)
        goto fail;
    if (!dna_2bit_sniff(h, 4)) {
        sl_errf(err, "%s: offset 0: not a .2bit file (bad magic)", t->src);
        goto fail;
    }
    t->swap = sl_get_le32(h) != TWOBIT_MAGIC;
    uint32_t version = u32(t, h + 4), count = u32(t, h + 8);
    if (version > 1) {
        sl_errf(err, "%s: offset 4: unsupported .2bit version %u (0 and 1 are known)", t->src, version);
        goto fail;
    }
    size_t offw = version == 1 ? 8 : 4;
    /* Each index entry takes at least 1 + offw bytes: bound the count by the
     * file size before allocating. */
    if ((uint64_t)count * (1 + offw) > t->fsize - 16) {
        sl_errf(err, "%s: offset 8: header claims %u sequences, more than the file can hold (%llu bytes)", t->src,
                count, (unsigned long long)t->fsize);
        goto fail;
    }
    t->seq = sl_xcalloc(count ? count : 1, sizeof *t->seq);
    t->n = count;
    uint64_t off = 16;
    for (size_t i = 0; i < count; i++) {
        unsigned char len, name[256], ob[8];
        if (read_at(t, off, &len, 1, "index entry", err) < 0 ||
            read_at(t, off + 1, name, len, "index entry name", err) < 0 ||
            read_at(t, off + 1 + len, ob, offw, "index entry offset", err) < 0)
            goto fail;
        t->seq[i].name = sl_xstrndup((const char *)name, len);
        uint64_t roff = offw == 8 ? u64(t, ob) : u32(t, ob);
        uint64_t entry = off;
        off += 1 + len + offw;
        seqrec *s = &t->seq[i];
        unsigned char b4[4];
        if (roff < 16 || roff > t->fsize || t->fsize - roff < 4) {
            sl_errf(err, "%s: offset %llu: sequence '%s' (#%zu) has record offset %llu outside the file (%llu bytes)",
                    t->src, (unsigned long long)(entry + 1 + len), s->name, i, (unsigned long long)roff,
                    (unsigned long long)t->fsize);
            goto fail;
        }
        if (read_at(t, roff, b4, 4, "record", err) < 0)
            goto fail;
        s->size = u32(t, b4);
        uint64_t p = roff + 4;
        if (read_blocks(t, s, i, &p, &s->nblk, "N", err) < 0 || read_blocks(t, s, i, &p, &s->mblk, "mask", err) < 0)
            goto fail;
        p += 4; /* reserved */
        uint64_t nbytes = (s->size + 3) / 4;
        if (p > t->fsize || nbytes > t->fsize - p) {
            sl_errf(err,
                    "%s: offset %llu: sequence '%s' (#%zu) of %llu bases needs %llu packed bytes, past the end of "
                    "the file (%llu bytes)",
                    t->src, (unsigned long long)p, s->name, i, (unsigned long long)s->size, (unsigned long long)nbytes,
                    (unsigned long long)t->fsize);
            goto fail;
        }
        s->packed = p;
    }
    return t;
fail:
    dna_2bit_close(t);
    return NULL;
}

dna_2bit *dna_2bit_open_fd(int fd, const char *name, sl_err *err)
{
    dna_2bit *t = sl_xcalloc(1, sizeof *t);
    t->src = sl_xstrdup(name);
    t->fd = fd;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        sl_errf(err, "%s: %s", name, strerror(errno));
        dna_2bit_close(t);
        return NULL;
    }
    t->fsize = (uint64_t)st.st_size;
    return open_common(t, err);
}

dna_2bit *dna_2bit_open_mem(const void *data, size_t len, const char *name, sl_err *err)
{
    dna_2bit *t = sl_xcalloc(1, sizeof *t);
    t->src = sl_xstrdup(name);
    t->fd = -1;
    t->mem = data ? data : (const unsigned char *)"";
    t->fsize = len;
    return open_common(t, err);
}

void dna_2bit_close(dna_2bit *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->seq[i].name);
        free(t->seq[i].nblk.b);
        free(t->seq[i].nblk.maxend);
        free(t->seq[i].mblk.b);
        free(t->seq[i].mblk.maxend);
    }
    free(t->seq);
    if (t->fd >= 0)
        close(t->fd);
    free(t->src);
    free(t);
}

size_t dna_2bit_count(const dna_2bit *t)
{
    return t->n;
}
const char *dna_2bit_name(const dna_2bit *t, size_t i)
{
    return t->seq[i].name;
}
uint64_t dna_2bit_length(const dna_2bit *t, size_t i)
{
    return t->seq[i].size;
}

/* Applies blocks overlapping [start, end): N blocks write 'N', mask blocks
 * lower-case what is there (so a masked N becomes 'n', per base). */
static void apply(const blocks *bl, uint64_t start, uint64_t end, char *out, int mask)
{
    /* first block whose running max end exceeds start */
    size_t lo = 0, hi = bl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bl->maxend[mid] > start)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t i = lo; i < bl->n && bl->b[i].start < end; i++) {
        uint64_t a = bl->b[i].start > start ? bl->b[i].start : start;
        uint64_t b = bl->b[i].end < end ? bl->b[i].end : end;
        for (uint64_t p = a; p < b; p++) {
            char *c = &out[p - start];
            *c = mask ? (char)(*c | 0x20) : 'N';
        }
    }
}

int dna_2bit_fetch(const dna_2bit *t, size_t i, uint64_t start, uint64_t end, char *out, sl_err *err)
{
    static const char base[4] = {'T', 'C', 'A', 'G'};
    if (i >= t->n)
        return sl_errf(err, "%s: no sequence #%zu", t->src, i);
    const seqrec *s = &t->seq[i];
    if (start > end || end > s->size)
        return sl_errf(err, "%s: %s:%llu-%llu is outside the sequence (%llu bases)", t->src, s->name,
                       (unsigned long long)start, (unsigned long long)end, (unsigned long long)s->size);
    if (start == end)
        return 0;
    uint64_t b0 = start / 4, b1 = (end - 1) / 4;
    size_t nb = (size_t)(b1 - b0 + 1);
    unsigned char stackbuf[4096];
    unsigned char *pk = nb <= sizeof stackbuf ? stackbuf : sl_xmalloc(nb);
    if (read_at(t, s->packed + b0, pk, nb, "packed bases", err) < 0) {
        if (pk != stackbuf)
            free(pk);
        return -1;
    }
    for (uint64_t p = start; p < end; p++) {
        unsigned char byte = pk[p / 4 - b0];
        out[p - start] = base[(byte >> (6 - 2 * (p % 4))) & 3];
    }
    if (pk != stackbuf)
        free(pk);
    apply(&s->nblk, start, end, out, 0);
    apply(&s->mblk, start, end, out, 1);
    return 0;
}
