/* External sort of fixed-size records (dedup/xsort.h). */
#include "dedup/xsort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dedup/spool.h"

#define MIN_READ ((size_t)64 << 10)

typedef struct {
    uint64_t off, n; /* first byte in the file, records */
} xrun;

typedef struct {
    uint64_t *buf;
    size_t cap, nbuf, pos; /* records */
    uint64_t off, left;    /* next byte to read, records not yet read */
} xreader;

struct sl_xsort {
    int w;         /* words per record */
    size_t rb;     /* bytes per record */
    size_t budget; /* bytes */
    const char *what;
    uint64_t *mem; /* records held */
    size_t n, cap;
    uint64_t count;
    int fd;
    uint64_t end; /* bytes written to the file */
    xrun *runs;
    size_t nruns, runs_cap, nwritten;
    /* reading */
    int done;
    size_t pos;       /* in memory */
    xreader *rd;      /* merge */
    size_t *heap, nh; /* reader indices, smallest head first */
    uint64_t *outbuf; /* a merge pass's output */
};

sl_xsort *sl_xsort_new(int words, size_t budget, const char *what)
{
    sl_xsort *s = sl_xcalloc(1, sizeof *s);
    s->w = words;
    s->rb = (size_t)words * 8;
    s->budget = budget < 16 * s->rb ? 16 * s->rb : budget;
    s->what = what ? what : "records";
    s->fd = -1;
    return s;
}

static int cmp_rec(const void *x, const void *y, void *ctx)
{
    return sl_words_cmp(x, y, *(const int *)ctx);
}

static int pwrite_all(sl_xsort *s, const void *p, size_t n, uint64_t off, sl_err *err)
{
    const char *c = p;
    while (n) {
        ssize_t k = pwrite(s->fd, c, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "temporary file of the %s: write error: %s (is $TMPDIR full?)", s->what,
                           k < 0 ? strerror(errno) : "no progress");
        c += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

static int pread_all(sl_xsort *s, void *p, size_t n, uint64_t off, sl_err *err)
{
    char *c = p;
    while (n) {
        ssize_t k = pread(s->fd, c, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "temporary file of the %s: read error: %s", s->what,
                           k < 0 ? strerror(errno) : "truncated");
        c += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

static void add_run(sl_xsort *s, uint64_t off, uint64_t n)
{
    if (s->nruns == s->runs_cap) {
        s->runs_cap = s->runs_cap ? 2 * s->runs_cap : 16;
        s->runs = sl_xrealloc(s->runs, s->runs_cap * sizeof *s->runs);
    }
    s->runs[s->nruns++] = (xrun){off, n};
}

static int spill(sl_xsort *s, sl_err *err)
{
    if (!s->n)
        return 0;
    if (s->fd < 0 && (s->fd = sl_spool_fd(s->what, err)) < 0)
        return -1;
    qsort_r(s->mem, s->n, s->rb, cmp_rec, &s->w);
    if (pwrite_all(s, s->mem, s->n * s->rb, s->end, err) < 0)
        return -1;
    add_run(s, s->end, s->n);
    s->end += (uint64_t)s->n * s->rb;
    s->nwritten++;
    s->n = 0;
    return 0;
}

int sl_xsort_add(sl_xsort *s, const uint64_t *rec, sl_err *err)
{
    if (s->n == s->cap) {
        size_t maxrec = s->budget / s->rb;
        if (s->cap >= maxrec) {
            if (spill(s, err) < 0)
                return -1;
        } else {
            size_t cap = s->cap ? 2 * s->cap : 1024;
            cap = cap > maxrec ? maxrec : cap;
            s->mem = sl_xrealloc(s->mem, cap * s->rb);
            s->cap = cap;
        }
    }
    memcpy(s->mem + s->n * (size_t)s->w, rec, s->rb);
    s->n++;
    s->count++;
    return 0;
}

static const uint64_t *head(sl_xsort *s, size_t i)
{
    return s->rd[i].buf + s->rd[i].pos * (size_t)s->w;
}

static int less(sl_xsort *s, size_t a, size_t b)
{
    int c = sl_words_cmp(head(s, a), head(s, b), s->w);
    return c < 0 || (c == 0 && a < b);
}

static void sift_down(sl_xsort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nh && less(s, s->heap[l], s->heap[m]))
            m = l;
        if (l + 1 < s->nh && less(s, s->heap[l + 1], s->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m], s->heap[m] = t;
        i = m;
    }
}

static int fill(sl_xsort *s, xreader *r, sl_err *err)
{
    size_t want = r->left < r->cap ? (size_t)r->left : r->cap;
    if (pread_all(s, r->buf, want * s->rb, r->off, err) < 0)
        return -1;
    r->nbuf = want, r->pos = 0;
    r->off += (uint64_t)want * s->rb;
    r->left -= want;
    return 0;
}

/* Sets up a merge of runs[first .. first+k) with buffers of `bytes` each. */
static int merge_open(sl_xsort *s, size_t first, size_t k, size_t bytes, sl_err *err)
{
    s->rd = sl_xcalloc(k, sizeof *s->rd);
    s->heap = sl_xmalloc(k * sizeof *s->heap);
    s->nh = 0;
    size_t cap = bytes / s->rb;
    cap = cap ? cap : 1;
    for (size_t i = 0; i < k; i++) {
        xreader *r = &s->rd[i];
        r->cap = cap;
        r->buf = sl_xmalloc(cap * s->rb);
        r->off = s->runs[first + i].off;
        r->left = s->runs[first + i].n;
        if (r->left) {
            if (fill(s, r, err) < 0)
                return -1;
            s->heap[s->nh++] = i;
        }
    }
    for (size_t i = s->nh; i-- > 0;)
        sift_down(s, i);
    return 0;
}

static void merge_close(sl_xsort *s, size_t k)
{
    for (size_t i = 0; s->rd && i < k; i++)
        free(s->rd[i].buf);
    free(s->rd);
    free(s->heap);
    s->rd = NULL, s->heap = NULL, s->nh = 0;
}

/* The smallest head, advancing its reader: 1, or 0 when all are done. */
static int merge_next(sl_xsort *s, const uint64_t **rec, uint64_t *tmp, sl_err *err)
{
    if (!s->nh)
        return 0;
    size_t i = s->heap[0];
    xreader *r = &s->rd[i];
    memcpy(tmp, head(s, i), s->rb);
    *rec = tmp;
    if (++r->pos == r->nbuf) {
        if (r->left) {
            if (fill(s, r, err) < 0)
                return -1;
        } else {
            s->heap[0] = s->heap[--s->nh];
        }
    }
    if (s->nh)
        sift_down(s, 0);
    return 1;
}

int sl_xsort_done(sl_xsort *s, sl_err *err)
{
    s->done = 1;
    if (!s->nruns) {
        if (s->n)
            qsort_r(s->mem, s->n, s->rb, cmp_rec, &s->w);
        return 0;
    }
    if (spill(s, err) < 0)
        return -1;
    free(s->mem);
    s->mem = NULL, s->cap = 0;
    size_t fan = s->budget / 2 / MIN_READ;
    fan = fan < 2 ? 2 : fan;
    uint64_t *tmp = sl_xmalloc(s->rb);
    /* passes: merge the first `fan` runs into one appended at the end */
    size_t first = 0;
    while (s->nruns - first > fan) {
        size_t ob = s->budget / 2 / s->rb;
        ob = ob ? ob : 1;
        s->outbuf = sl_xmalloc(ob * s->rb);
        if (merge_open(s, first, fan, s->budget / 2 / fan, err) < 0) {
            free(tmp);
            return -1;
        }
        uint64_t start = s->end, n = 0;
        size_t no = 0;
        const uint64_t *r;
        int rc;
        while ((rc = merge_next(s, &r, tmp, err)) == 1) {
            memcpy(s->outbuf + no * (size_t)s->w, r, s->rb);
            n++;
            if (++no == ob) {
                if (pwrite_all(s, s->outbuf, no * s->rb, s->end, err) < 0) {
                    rc = -1;
                    break;
                }
                s->end += (uint64_t)no * s->rb, no = 0;
            }
        }
        if (rc == 0 && no && pwrite_all(s, s->outbuf, no * s->rb, s->end, err) < 0)
            rc = -1;
        s->end += (uint64_t)no * s->rb;
        merge_close(s, fan);
        free(s->outbuf);
        s->outbuf = NULL;
        if (rc < 0) {
            free(tmp);
            return -1;
        }
        add_run(s, start, n);
        first += fan;
    }
    free(tmp);
    memmove(s->runs, s->runs + first, (s->nruns - first) * sizeof *s->runs);
    s->nruns -= first;
    s->outbuf = sl_xmalloc(s->rb); /* the record handed out */
    return merge_open(s, 0, s->nruns, s->budget / s->nruns, err);
}

int sl_xsort_next(sl_xsort *s, const uint64_t **rec, sl_err *err)
{
    if (!s->rd) {
        if (s->pos == s->n)
            return 0;
        *rec = s->mem + s->pos++ * (size_t)s->w;
        return 1;
    }
    return merge_next(s, rec, s->outbuf, err);
}

uint64_t sl_xsort_count(const sl_xsort *s)
{
    return s->count;
}

size_t sl_xsort_runs(const sl_xsort *s)
{
    return s->nwritten;
}

void sl_xsort_free(sl_xsort *s)
{
    if (!s)
        return;
    merge_close(s, s->nruns);
    free(s->mem);
    free(s->runs);
    free(s->outbuf);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}
