/* Partitions of a stage's input (stream/partition.h). */
#include "stream/partition.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 20)

void sl_part_range(const sl_part *p, uint64_t n, uint64_t *first, uint64_t *end)
{
    __extension__ typedef unsigned __int128 u128;
    *first = (uint64_t)((u128)n * p->r / p->n);
    *end = (uint64_t)((u128)n * (p->r + 1) / p->n);
}

static long pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (long)got;
}

/* The first line start at or after x in a file of size bytes: 0, or the
 * byte after a '\n', or size. */
static int line_start(int fd, const char *path, uint64_t size, uint64_t x, char *buf, uint64_t *out, sl_err *err)
{
    if (x == 0 || x >= size) {
        *out = x >= size ? size : 0;
        return 0;
    }
    uint64_t at = x - 1; /* the line starts at x when byte x-1 is '\n' */
    size_t step = 4096;  /* most lines are short: read more only when needed */
    while (at < size) {
        size_t want = size - at < step ? (size_t)(size - at) : step;
        step = step < CHUNK ? step * 4 : CHUNK;
        long k = pread_full(fd, buf, want, at);
        if (k <= 0)
            return sl_errf(err, "%s: cannot read at byte %llu: %s", path, (unsigned long long)at,
                           k < 0 ? strerror(errno) : "the file became shorter");
        const char *nl = memchr(buf, '\n', (size_t)k);
        if (nl) {
            *out = at + (uint64_t)(nl - buf) + 1;
            return 0;
        }
        at += (uint64_t)k;
    }
    *out = size;
    return 0;
}

/* Byte off of the file (0 when it cannot be read: callers compare with
 * printable characters). */
static char byte_at(int fd, uint64_t off)
{
    char c = 0;
    return pread_full(fd, &c, 1, off) == 1 ? c : 0;
}

/* Length of the line [start, end) without its '\n' and '\r'. */
static uint64_t line_len(int fd, uint64_t start, uint64_t end)
{
    if (end > start && byte_at(fd, end - 1) == '\n')
        end--;
    if (end > start && byte_at(fd, end - 1) == '\r')
        end--;
    return end - start;
}

/* 1 when a 4-line FASTQ record starts at the line start p: '@' header, a
 * sequence line, a '+' line, a quality line as long as the sequence. */
static int fastq_record_at(int fd, const char *path, uint64_t size, uint64_t p, char *buf, int *is, sl_err *err)
{
    uint64_t l[5] = {p};
    *is = 0;
    if (byte_at(fd, p) != '@')
        return 0;
    for (int i = 1; i < 5; i++)
        if (line_start(fd, path, size, l[i - 1] + 1 <= size ? l[i - 1] + 1 : size, buf, &l[i], err) < 0)
            return -1;
    if (l[2] >= size || byte_at(fd, l[2]) != '+' || l[3] >= size)
        return 0;
    *is = line_len(fd, l[1], l[2]) == line_len(fd, l[3], l[4]);
    return 0;
}

/* The first FASTQ record start at or after x (size when none): the first
 * line start from which a 4-line record follows. A quality line may begin
 * with '@', but two lines below it is the next record's sequence, never a
 * '+' line, so it is not taken for a header. */
static int fastq_start(int fd, const char *path, uint64_t size, uint64_t x, char *buf, uint64_t *out, sl_err *err)
{
    uint64_t p;
    if (line_start(fd, path, size, x, buf, &p, err) < 0)
        return -1;
    while (p < size) {
        int is;
        if (fastq_record_at(fd, path, size, p, buf, &is, err) < 0)
            return -1;
        if (is) {
            *out = p;
            return 0;
        }
        if (line_start(fd, path, size, p + 1, buf, &p, err) < 0)
            return -1;
    }
    *out = size;
    return 0;
}

/* The first FASTA record start at or after x (size when none): a line
 * that begins with '>'. Sequence lines never do, so the search is for
 * "\n>" through the file in large reads (a chromosome is hundreds of MB). */
static int fasta_start(int fd, const char *path, uint64_t size, uint64_t x, char *buf, uint64_t *out, sl_err *err)
{
    uint64_t p;
    if (line_start(fd, path, size, x, buf, &p, err) < 0)
        return -1;
    if (p >= size || byte_at(fd, p) == '>') {
        *out = p < size ? p : size;
        return 0;
    }
    for (uint64_t at = p; at < size;) {
        size_t want = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
        long k = pread_full(fd, buf, want, at);
        if (k <= 0)
            return sl_errf(err, "%s: cannot read at byte %llu: %s", path, (unsigned long long)at,
                           k < 0 ? strerror(errno) : "the file became shorter");
        for (const char *q = buf, *e = buf + k; (q = memchr(q, '\n', (size_t)(e - q))) != NULL; q++) {
            uint64_t next = at + (uint64_t)(q - buf) + 1;
            if (next >= size)
                break;
            if ((q + 1 < e ? q[1] : byte_at(fd, next)) == '>') {
                *out = next;
                return 0;
            }
        }
        at += (uint64_t)k;
    }
    *out = size;
    return 0;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* '\n' bytes and non-blank lines in the bytes [0, end) of the file, end
 * being a line start. */
/* Counts '\n' bytes and non-blank lines in buf[0, n) (the bytes at offset
 * at of the file), carrying whether the current line has a non-blank byte. */
static void count_in(const char *buf, size_t n, uint64_t at, uint64_t *nl, uint64_t *nd, int *nonblank)
{
    size_t i = 0;
    if (at == 0 && n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
        i = 3; /* a byte order mark is not text */
    while (i < n) {
        if (!*nonblank) {
            while (i < n && is_ws(buf[i]) && buf[i] != '\n')
                i++;
            if (i == n)
                break;
            if (buf[i] != '\n')
                *nonblank = 1;
        }
        const char *p = memchr(buf + i, '\n', n - i);
        if (!p)
            break;
        (*nl)++;
        *nd += (uint64_t)*nonblank;
        *nonblank = 0;
        i = (size_t)(p - buf) + 1;
    }
}

/* '\n' bytes and non-blank lines in the bytes [0, end) of the file, end
 * being a line start. The bytes are mapped, not copied (the pass reads up
 * to a whole file); pread where mapping fails. */
static int count_lines(int fd, const char *path, uint64_t end, char *buf, uint64_t *lines, uint64_t *docs, sl_err *err)
{
    enum { WINDOW = 64 << 20 }; /* a multiple of any page size */
    uint64_t nl = 0, nd = 0, at = 0;
    int nonblank = 0;
    while (at < end) {
        size_t want = end - at < WINDOW ? (size_t)(end - at) : WINDOW;
        void *m = mmap(NULL, want, PROT_READ, MAP_PRIVATE, fd, (off_t)at);
        if (m != MAP_FAILED) {
            madvise(m, want, MADV_SEQUENTIAL);
            count_in(m, want, at, &nl, &nd, &nonblank);
            munmap(m, want);
            at += want;
            continue;
        }
        want = want < CHUNK ? want : CHUNK;
        long k = pread_full(fd, buf, want, at);
        if (k <= 0)
            return sl_errf(err, "%s: cannot read at byte %llu: %s", path, (unsigned long long)at,
                           k < 0 ? strerror(errno) : "the file became shorter");
        count_in(buf, (size_t)k, at, &nl, &nd, &nonblank);
        at += (uint64_t)k;
    }
    *lines = nl;
    *docs = nd;
    return 0;
}

void sl_slices_free(sl_slice *pieces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(pieces[i].path);
    free(pieces);
}

/* The sizes of the files (regular files only) and their sum. */
static int file_sizes(const sl_part *p, const char *const *paths, size_t n, uint64_t **sizes, uint64_t *sum,
                      sl_err *err)
{
    *sizes = NULL;
    if (!p || p->n == 0 || p->r >= p->n)
        return sl_errf(err, "part %llu of %llu: needs 0 <= R < N", p ? (unsigned long long)p->r : 0ULL,
                       p ? (unsigned long long)p->n : 0ULL);
    uint64_t *size = sl_xcalloc(n ? n : 1, sizeof *size);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!strcmp(paths[i], "-")) {
            free(size);
            return sl_errf(err, "standard input cannot be cut into parts: give the input as files");
        }
        if (stat(paths[i], &st) != 0) {
            sl_errf(err, "%s: %s", paths[i], strerror(errno));
            free(size);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            sl_errf(err, "%s: not a regular file: a part must find its share of the input by its size", paths[i]);
            free(size);
            return -1;
        }
        size[i] = (uint64_t)st.st_size;
        total += size[i];
    }
    *sizes = size;
    *sum = total;
    return 0;
}

/* Whether a file read whole, starting at byte o of total, is part p's. */
static int owns(const sl_part *p, uint64_t lo, uint64_t hi, uint64_t o, uint64_t total)
{
    return (o >= lo && o < hi) || (o >= total && p->r + 1 == p->n);
}

int sl_partition_whole(const sl_part *p, const char *const *paths, size_t n, unsigned char **mine, sl_err *err)
{
    uint64_t *size, total, lo, hi, o = 0;
    *mine = NULL;
    if (file_sizes(p, paths, n, &size, &total, err) < 0)
        return -1;
    sl_part_range(p, total, &lo, &hi);
    *mine = sl_xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; o += size[i], i++)
        (*mine)[i] = (unsigned char)owns(p, lo, hi, o, total);
    free(size);
    return 0;
}

int sl_partition(const sl_part *p, const char *const *paths, size_t n, sl_cut_fn cut, void *ctx, sl_slice **out,
                 size_t *nout, sl_err *err)
{
    *out = NULL;
    *nout = 0;
    uint64_t *size, total;
    if (file_sizes(p, paths, n, &size, &total, err) < 0)
        return -1;
    uint64_t lo, hi;
    sl_part_range(p, total, &lo, &hi);
    sl_slice *pc = NULL;
    size_t np = 0;
    char *buf = NULL;
    int rc = 0;
    uint64_t o = 0;
    for (size_t i = 0; i < n && !rc; o += size[i], i++) {
        int kind = 0, how = SL_CUT_WHOLE;
        if (cut && size[i] > 0 && o + size[i] > lo && o < hi) { /* the part touches the file */
            how = cut(ctx, paths[i], &kind, err);
            if (how < 0) {
                rc = -1;
                break;
            }
        }
        sl_slice piece = {0};
        if (how == SL_CUT_WHOLE) {
            /* read whole by the part that owns its first byte */
            if (!owns(p, lo, hi, o, total))
                continue;
            piece.whole = 1;
        } else {
            if (!buf)
                buf = sl_xmalloc(CHUNK);
            int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                rc = sl_errf(err, "%s: cannot open: %s", paths[i], strerror(errno));
                break;
            }
            uint64_t a = lo > o ? lo - o : 0, b = hi - o < size[i] ? hi - o : size[i];
            if (how == SL_CUT_BYTES) {
                piece.begin = a;
                piece.end = b;
            } else if (how == SL_CUT_FASTQ) {
                if ((a > 0 && fastq_start(fd, paths[i], size[i], a, buf, &piece.begin, err) < 0) ||
                    fastq_start(fd, paths[i], size[i], b, buf, &piece.end, err) < 0)
                    rc = -1;
            } else if (how == SL_CUT_FASTA) {
                if ((a > 0 && fasta_start(fd, paths[i], size[i], a, buf, &piece.begin, err) < 0) ||
                    fasta_start(fd, paths[i], size[i], b, buf, &piece.end, err) < 0)
                    rc = -1;
            } else if (line_start(fd, paths[i], size[i], a, buf, &piece.begin, err) < 0 ||
                       line_start(fd, paths[i], size[i], b, buf, &piece.end, err) < 0 ||
                       (piece.begin < piece.end && piece.begin > 0 &&
                        count_lines(fd, paths[i], piece.begin, buf, &piece.line, &piece.ndoc, err) < 0))
                rc = -1;
            close(fd);
            if (rc || piece.begin >= piece.end)
                continue;
            piece.whole = piece.begin == 0 && piece.end == size[i];
            if (piece.whole)
                piece.begin = piece.end = 0;
        }
        piece.path = sl_xstrdup(paths[i]);
        piece.kind = kind;
        pc = sl_xrealloc(pc, (np + 1) * sizeof *pc);
        pc[np++] = piece;
    }
    free(buf);
    free(size);
    if (rc) {
        sl_slices_free(pc, np);
        return -1;
    }
    *out = pc;
    *nout = np;
    return 0;
}

/* ---- a range of a file as an input ---------------------------------------- */

struct sl_range {
    char *name;
    int fd;
    uint64_t at, end;
    sl_input *in;
};

static long range_read(void *ctx, void *buf, size_t n, sl_err *err)
{
    sl_range *r = ctx;
    if (r->at >= r->end)
        return 0;
    if (n > r->end - r->at)
        n = (size_t)(r->end - r->at);
    long k = pread_full(r->fd, buf, n, r->at);
    if (k < 0)
        return sl_errf(err, "%s: cannot read at byte %llu: %s", r->name, (unsigned long long)r->at, strerror(errno));
    if (k == 0)
        return sl_errf(err, "%s: the file became shorter while read (expected bytes up to %llu)", r->name,
                       (unsigned long long)r->end);
    r->at += (uint64_t)k;
    return k;
}

sl_range *sl_range_open(const char *path, uint64_t begin, uint64_t end, sl_err *err)
{
    sl_range *r = sl_xcalloc(1, sizeof *r);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        sl_errf(err, "%s: cannot open: %s", path, strerror(errno));
        free(r);
        return NULL;
    }
    r->name = sl_xstrdup(path);
    r->at = begin;
    r->end = end;
    r->in = sl_input_callbacks_plain(range_read, r, path, err);
    if (!r->in) {
        close(r->fd);
        free(r->name);
        free(r);
        return NULL;
    }
    return r;
}

sl_input *sl_range_input(sl_range *r)
{
    return r->in;
}

void sl_range_close(sl_range *r)
{
    if (!r)
        return;
    sl_input_close(r->in);
    close(r->fd);
    free(r->name);
    free(r);
}

int sl_plain_file_head(const char *path, unsigned char *head, size_t cap, size_t *n, sl_err *err)
{
    *n = 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return sl_errf(err, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_errf(err, "%s: cannot open: %s", path, strerror(errno));
    long k = pread_full(fd, head, cap, 0); /* only these bytes: no decoding, no read-ahead */
    close(fd);
    if (k < 0)
        return sl_errf(err, "%s: cannot read: %s", path, strerror(errno));
    *n = (size_t)k;
    return sl_compression_sniff(head, *n) == SL_COMP_NONE;
}

int sl_lines_cut(void *ctx, const char *path, int *kind, sl_err *err)
{
    (void)ctx;
    (void)kind;
    unsigned char head[8];
    size_t n;
    int plain = sl_plain_file_head(path, head, sizeof head, &n, err);
    return plain < 0 ? -1 : plain ? SL_CUT_LINES : SL_CUT_WHOLE;
}

int sl_fastq_cut(void *ctx, const char *path, int *kind, sl_err *err)
{
    (void)ctx;
    (void)kind;
    unsigned char head[4096];
    size_t n;
    int plain = sl_plain_file_head(path, head, sizeof head, &n, err);
    if (plain <= 0)
        return plain;
    size_t i = 0;
    while (i < n && is_ws((char)head[i]))
        i++;
    if (i < n && head[i] == '>' && (i == 0 || head[i - 1] == '\n'))
        return SL_CUT_FASTA; /* cut before '>' header lines */
    if (i == n || head[i] != '@' || (i > 0 && head[i - 1] != '\n'))
        return SL_CUT_WHOLE; /* 2bit, anything else: whole */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_errf(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    char *buf = sl_xmalloc(CHUNK);
    int is = 0, rc = fstat(fd, &st) == 0 ? fastq_record_at(fd, path, (uint64_t)st.st_size, i, buf, &is, err) : -1;
    free(buf);
    close(fd);
    if (rc < 0)
        return -1;
    return is ? SL_CUT_FASTQ : SL_CUT_WHOLE; /* multi-line FASTQ: whole */
}
