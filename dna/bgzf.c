/* BGZF random access through a .gzi index: see bgzf.h. */
#include "dna/bgzf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/byteorder.h"
#include "stream/io.h"

#define BGZF_MAX_BLOCK 65536

typedef struct entry {
    uint64_t coff, uoff;
} entry;

struct dna_bgzf {
    char *path;
    int fd;
    uint64_t fsize;
    entry *e; /* e[0] = (0, 0), then the .gzi pairs */
    size_t n;
};

static int pread_full(const dna_bgzf *z, uint64_t off, void *buf, size_t n, sl_err *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(z->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return sl_errf(err, "%s: offset %llu: %s", z->path, (unsigned long long)(off + done),
                           r < 0 ? strerror(errno) : "unexpected end of file (truncated BGZF?)");
        done += (size_t)r;
    }
    return 0;
}

/* Reads and inflates the block at coff into out (>= 64 KiB); sets *ulen and
 * *next (the following block's offset). */
static int read_block(const dna_bgzf *z, uint64_t coff, unsigned char *out, size_t *ulen, uint64_t *next, sl_err *err)
{
    unsigned char h[18];
    if (coff >= z->fsize)
        return sl_errf(err, "%s: offset %llu: past the end of the file (the .gzi index does not match?)", z->path,
                       (unsigned long long)coff);
    if (pread_full(z, coff, h, sizeof h, err) < 0)
        return -1;
    /* gzip magic, deflate, FEXTRA; XLEN 6 with the 'BC' subfield first (as bgzip writes) */
    if (h[0] != 31 || h[1] != 139 || h[2] != 8 || !(h[3] & 4) || h[12] != 'B' || h[13] != 'C' || h[14] != 2 ||
        h[15] != 0)
        return sl_errf(err, "%s: offset %llu: not a BGZF block", z->path, (unsigned long long)coff);
    size_t xlen = sl_get_le16(h + 10);
    size_t bsize = (size_t)sl_get_le16(h + 16) + 1;
    if (bsize < 12 + xlen + 8 + 2 || coff + bsize > z->fsize)
        return sl_errf(err, "%s: offset %llu: BGZF block size %zu is inconsistent or runs past the end", z->path,
                       (unsigned long long)coff, bsize);
    unsigned char blk[BGZF_MAX_BLOCK + 1];
    if (bsize > sizeof blk)
        return sl_errf(err, "%s: offset %llu: BGZF block too large", z->path, (unsigned long long)coff);
    if (pread_full(z, coff, blk, bsize, err) < 0)
        return -1;
    const unsigned char *tr = blk + bsize - 8;
    uint32_t crc = sl_get_le32(tr), isize = sl_get_le32(tr + 4);
    if (isize > BGZF_MAX_BLOCK)
        return sl_errf(err, "%s: offset %llu: BGZF block claims %u bytes", z->path, (unsigned long long)coff, isize);
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -15) != Z_OK)
        return sl_errf(err, "%s: zlib initialisation failed", z->path);
    s.next_in = blk + 12 + xlen;
    s.avail_in = (uInt)(bsize - 12 - xlen - 8);
    s.next_out = out;
    s.avail_out = BGZF_MAX_BLOCK;
    int zr = inflate(&s, Z_FINISH);
    size_t got = BGZF_MAX_BLOCK - s.avail_out;
    inflateEnd(&s);
    if (zr != Z_STREAM_END || got != isize || crc32(0, out, (uInt)got) != crc)
        return sl_errf(err, "%s: offset %llu: corrupt BGZF block (inflate, size or CRC mismatch)", z->path,
                       (unsigned long long)coff);
    *ulen = got;
    *next = coff + bsize;
    return 0;
}

dna_bgzf *dna_bgzf_open(const char *path, const char *gzi_path, sl_err *err)
{
    dna_bgzf *z = sl_xcalloc(1, sizeof *z);
    z->path = sl_xstrdup(path);
    z->fd = open(path, O_RDONLY);
    struct stat st;
    char *gzi = NULL;
    size_t glen = 0;
    if (z->fd < 0 || fstat(z->fd, &st) < 0) {
        sl_errf(err, "%s: %s", path, strerror(errno));
        goto fail;
    }
    z->fsize = (uint64_t)st.st_size;
    {
        int gfd = open(gzi_path, O_RDONLY);
        struct stat gs;
        if (gfd < 0 || fstat(gfd, &gs) < 0) {
            sl_errf(err, "%s: %s", gzi_path, strerror(errno));
            if (gfd >= 0)
                close(gfd);
            goto fail;
        }
        glen = (size_t)gs.st_size;
        gzi = sl_xmalloc(glen + 1);
        size_t done = 0;
        while (done < glen) {
            ssize_t r = read(gfd, gzi + done, glen - done);
            if (r <= 0)
                break;
            done += (size_t)r;
        }
        close(gfd);
        if (done != glen) {
            sl_errf(err, "%s: read error", gzi_path);
            goto fail;
        }
    }
    if (glen < 8) {
        sl_errf(err, "%s: offset 0: too short for a .gzi index", gzi_path);
        goto fail;
    }
    uint64_t count = sl_get_le64((const unsigned char *)gzi);
    if (count > (glen - 8) / 16 || 8 + count * 16 != glen) {
        sl_errf(err, "%s: offset 0: %llu entries do not match the file size (%zu bytes)", gzi_path,
                (unsigned long long)count, glen);
        goto fail;
    }
    z->n = (size_t)count + 1;
    z->e = sl_xmalloc(z->n * sizeof *z->e);
    z->e[0] = (entry){0, 0};
    for (size_t i = 1; i < z->n; i++) {
        const unsigned char *p = (const unsigned char *)gzi + 8 + 16 * (i - 1);
        z->e[i].coff = sl_get_le64(p);
        z->e[i].uoff = sl_get_le64(p + 8);
        if (z->e[i].coff <= z->e[i - 1].coff || z->e[i].uoff < z->e[i - 1].uoff || z->e[i].coff >= z->fsize ||
            z->e[i].uoff - z->e[i - 1].uoff > BGZF_MAX_BLOCK * (z->e[i].coff - z->e[i - 1].coff)) {
            sl_errf(err, "%s: offset %zu: entry %zu (%llu, %llu) is out of order or outside %s", gzi_path,
                    8 + 16 * (i - 1), i - 1, (unsigned long long)z->e[i].coff, (unsigned long long)z->e[i].uoff, path);
            goto fail;
        }
    }
    free(gzi);
    gzi = NULL;
    {
        unsigned char *tmp = sl_xmalloc(BGZF_MAX_BLOCK);
        size_t ul;
        uint64_t nx;
        int rc = read_block(z, 0, tmp, &ul, &nx, err);
        free(tmp);
        if (rc < 0)
            goto fail;
    }
    return z;
fail:
    free(gzi);
    dna_bgzf_close(z);
    return NULL;
}

int dna_bgzf_read_at(const dna_bgzf *z, uint64_t uoff, void *buf, size_t n, sl_err *err)
{
    /* the last index entry at or before uoff */
    size_t lo = 0, hi = z->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->e[mid].uoff <= uoff)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t coff = z->e[lo].coff, bstart = z->e[lo].uoff;
    unsigned char *blk = sl_xmalloc(BGZF_MAX_BLOCK);
    size_t done = 0;
    int rc = 0;
    while (done < n) {
        size_t ulen;
        uint64_t next;
        if (coff >= z->fsize) {
            rc = sl_errf(err, "%s: uncompressed offset %llu: past the end of the data", z->path,
                         (unsigned long long)(uoff + done));
            break;
        }
        if (read_block(z, coff, blk, &ulen, &next, err) < 0) {
            rc = -1;
            break;
        }
        uint64_t want = uoff + done;
        if (want < bstart + ulen) {
            size_t from = (size_t)(want - bstart), k = ulen - from;
            if (k > n - done)
                k = n - done;
            memcpy((char *)buf + done, blk + from, k);
            done += k;
        }
        if (ulen == 0 && done < n && next >= z->fsize) {
            rc = sl_errf(err, "%s: uncompressed offset %llu: past the end of the data", z->path,
                         (unsigned long long)want);
            break;
        }
        bstart += ulen;
        coff = next;
    }
    free(blk);
    return rc;
}

void dna_bgzf_close(dna_bgzf *z)
{
    if (!z)
        return;
    if (z->fd >= 0)
        close(z->fd);
    free(z->e);
    free(z->path);
    free(z);
}
