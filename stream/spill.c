/* Spill: sorted runs on disk, merged within a memory budget (see spill.h).
 *
 * Appending fills an arena of record bytes and an index of (offset,
 * length) entries. When the two (with the sort's scratch index) reach half
 * the budget, the index is sorted (a stable merge sort: equal records stay
 * in the order appended) and the records are written in that order as one
 * run at the end of the spill file. sl_spill_sort sorts the last records;
 * without runs they are given back from memory, else the runs are merged
 * with a binary heap of cursors, ties going to the earlier run, which keeps
 * the whole sort stable. Too many runs for one buffer each are first merged
 * in groups of consecutive runs into a second file (again stable), pass
 * after pass. */
#include "stream/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/byteorder.h"

#define SL_SPILL_READ ((size_t)256 << 10) /* read buffer per run, when the budget allows */

typedef struct { /* 8 bytes: the arena is below 4 GiB (the budget is capped) */
    uint32_t off;
    uint32_t len;
} ent;

typedef struct {
    uint64_t off, end; /* bytes of the run in the file */
} run;

/* A run being read: a window of it in buf. */
typedef struct {
    uint64_t off, end; /* what is left in the file */
    unsigned char *buf;
    size_t cap, pos, len;
    const unsigned char *rec; /* the current record */
    size_t rec_len;
    size_t idx; /* run number: ties go to the lower */
} cursor;

struct sl_spill {
    sl_spill_opts o;
    char *dir;
    const char *purpose;
    size_t hold; /* arena + index bytes before a run is written */
    unsigned char *arena;
    size_t alen, acap;
    ent *ents, *scratch;
    size_t n, ecap;
    uint64_t count;
    int fd;
    uint64_t fend, disk;
    run *runs;
    size_t nruns, rcap;
    size_t cut; /* runs written while appending */
    int sorted;
    size_t mi;         /* next record given back from memory */
    cursor *cur;       /* merge: one cursor per run */
    size_t *heap, nh;  /* indexes into cur, a binary min-heap */
    int advance;       /* the top cursor's record was given out: advance it first */
    unsigned char *wb; /* write buffer */
    size_t wlen, wcap;
};

int sl_tmpfile(const char *dir, sl_err *err)
{
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT)
        return sl_errf(err, "%s: cannot create a temporary file: %s", dir, strerror(errno));
#endif
    size_t n = strlen(dir) + 32;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/sluice-spill-XXXXXX", dir);
    int k = mkostemp(p, O_CLOEXEC);
    if (k < 0) {
        sl_errf(err, "%s: cannot create a temporary file: %s", dir, strerror(errno));
        free(p);
        return -1;
    }
    unlink(p); /* nameless from now on: gone with the last descriptor */
    free(p);
    return k;
}

sl_spill *sl_spill_new(const sl_spill_opts *o, sl_err *err)
{
    sl_spill *s = sl_xcalloc(1, sizeof *s);
    s->o = *o;
    if (!s->o.budget)
        s->o.budget = (size_t)64 << 20;
    if (s->o.budget < 4 * (size_t)SL_SPILL_MIN_READ)
        s->o.budget = 4 * (size_t)SL_SPILL_MIN_READ;
    if (s->o.budget > ((size_t)4 << 30))
        s->o.budget = (size_t)4 << 30;
    s->purpose = o->purpose ? o->purpose : "records";
    s->dir = sl_xstrdup(o->tmpdir && *o->tmpdir                 ? o->tmpdir
                        : getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
                                                                : "/tmp");
    s->hold = s->o.budget / 2;
    s->fd = -1;
    (void)err;
    return s;
}

/* ---- writing runs ------------------------------------------------------- */

static int pwrite_all(sl_spill *s, int fd, const void *p, size_t n, uint64_t at, sl_err *err)
{
    const unsigned char *c = p;
    while (n) {
        ssize_t k = pwrite(fd, c, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "%s: cannot write the %s spilled to disk: %s", s->dir, s->purpose,
                           k < 0 ? strerror(errno) : "no space");
        c += k;
        n -= (size_t)k;
        at += (uint64_t)k;
    }
    return 0;
}

static int wb_flush(sl_spill *s, int fd, uint64_t *end, sl_err *err)
{
    if (s->wlen && pwrite_all(s, fd, s->wb, s->wlen, *end, err))
        return -1;
    *end += s->wlen;
    s->disk += s->wlen;
    s->wlen = 0;
    return 0;
}

static int wb_put(sl_spill *s, int fd, uint64_t *end, const void *p, size_t n, sl_err *err)
{
    if (!s->wb) {
        s->wcap = s->o.budget / 16;
        s->wb = sl_xmalloc(s->wcap);
    }
    if (s->wlen + n > s->wcap && wb_flush(s, fd, end, err))
        return -1;
    if (n > s->wcap) { /* a record longer than the buffer goes straight out */
        if (pwrite_all(s, fd, p, n, *end, err))
            return -1;
        *end += n;
        s->disk += n;
        return 0;
    }
    memcpy(s->wb + s->wlen, p, n);
    s->wlen += n;
    return 0;
}

static int put_rec(sl_spill *s, int fd, uint64_t *end, const void *p, size_t n, sl_err *err)
{
    if (!s->o.rec_size) {
        unsigned char l[4];
        sl_put_le32(l, (uint32_t)n);
        if (wb_put(s, fd, end, l, 4, err))
            return -1;
    }
    return wb_put(s, fd, end, p, n, err);
}

static int ent_cmp(const sl_spill *s, const ent *a, const ent *b)
{
    return s->o.cmp(s->arena + a->off, a->len, s->arena + b->off, b->len, s->o.ctx);
}

/* Stable bottom-up merge sort of s->ents[0..n). */
static void sort_ents(sl_spill *s)
{
    if (!s->o.cmp || s->n < 2)
        return;
    ent *a = s->ents, *b = s->scratch;
    for (size_t w = 1; w < s->n; w *= 2) {
        for (size_t lo = 0; lo < s->n; lo += 2 * w) {
            size_t mid = lo + w < s->n ? lo + w : s->n, hi = lo + 2 * w < s->n ? lo + 2 * w : s->n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = ent_cmp(s, &a[j], &a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
        }
        ent *t = a;
        a = b;
        b = t;
    }
    if (a != s->ents)
        memcpy(s->ents, a, s->n * sizeof *a);
}

static void add_run(sl_spill *s, uint64_t off, uint64_t end)
{
    if (s->nruns == s->rcap) {
        s->rcap = s->rcap ? 2 * s->rcap : 16;
        s->runs = sl_xrealloc(s->runs, s->rcap * sizeof *s->runs);
    }
    s->runs[s->nruns++] = (run){off, end};
}

/* Sorts the records held and writes them as one run. */
static int write_run(sl_spill *s, sl_err *err)
{
    if (!s->n)
        return 0;
    if (s->fd < 0 && (s->fd = sl_tmpfile(s->dir, err)) < 0)
        return -1;
    sort_ents(s);
    uint64_t start = s->fend;
    for (size_t i = 0; i < s->n; i++)
        if (put_rec(s, s->fd, &s->fend, s->arena + s->ents[i].off, s->ents[i].len, err))
            return -1;
    if (wb_flush(s, s->fd, &s->fend, err))
        return -1;
    add_run(s, start, s->fend);
    s->cut++;
    s->n = 0;
    s->alen = 0;
    return 0;
}

int sl_spill_add(sl_spill *s, const void *rec, size_t len, sl_err *err)
{
    if (s->sorted)
        return sl_errf(err, "%s: records added after the sort", s->purpose);
    if (s->o.rec_size && len != s->o.rec_size)
        return sl_errf(err, "%s: a record of %zu bytes (all have %zu)", s->purpose, len, s->o.rec_size);
    if (len > s->o.budget / 4 || len > UINT32_MAX)
        return sl_err_set(err, SL_E_LIMIT, "mem_budget",
                          "%s: a record of %zu bytes is larger than a quarter of the memory budget (%zu bytes)",
                          s->purpose, len, s->o.budget);
    if (s->alen + len + (s->n + 1) * 2 * sizeof(ent) > s->hold && write_run(s, err))
        return -1;
    if (s->alen + len > s->acap) {
        size_t c = s->acap ? s->acap : 4096;
        while (c < s->alen + len)
            c *= 2;
        s->arena = sl_xrealloc(s->arena, c);
        s->acap = c;
    }
    if (s->n == s->ecap) {
        s->ecap = s->ecap ? 2 * s->ecap : 256;
        s->ents = sl_xrealloc(s->ents, s->ecap * sizeof *s->ents);
        if (s->o.cmp)
            s->scratch = sl_xrealloc(s->scratch, s->ecap * sizeof *s->scratch);
    }
    memcpy(s->arena + s->alen, rec, len);
    s->ents[s->n++] = (ent){(uint32_t)s->alen, (uint32_t)len};
    s->alen += len;
    s->count++;
    return 0;
}

/* ---- reading runs ------------------------------------------------------- */

static int cur_fill(sl_spill *s, int fd, cursor *c, size_t need, sl_err *err)
{
    if (c->len - c->pos >= need)
        return 0;
    if (c->pos) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    if (need > c->cap) {
        c->buf = sl_xrealloc(c->buf, need);
        c->cap = need;
    }
    while (c->len < need || (c->len < c->cap && c->off < c->end)) {
        size_t want = c->cap - c->len;
        if (want > c->end - c->off)
            want = (size_t)(c->end - c->off);
        if (!want)
            break;
        ssize_t k = pread(fd, c->buf + c->len, want, (off_t)c->off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "%s: cannot read the %s spilled to disk: %s", s->dir, s->purpose,
                           k < 0 ? strerror(errno) : "file shorter than written");
        c->len += (size_t)k;
        c->off += (uint64_t)k;
    }
    if (c->len < need)
        return sl_errf(err, "%s: the %s spilled to disk end inside a record", s->dir, s->purpose);
    return 0;
}

/* Loads the cursor's next record: 1, 0 at the end of its run, -1 error. */
static int cur_next(sl_spill *s, int fd, cursor *c, sl_err *err)
{
    if (c->pos == c->len && c->off == c->end)
        return 0;
    size_t n = s->o.rec_size;
    if (!n) {
        if (cur_fill(s, fd, c, 4, err))
            return -1;
        n = sl_get_le32(c->buf + c->pos);
        c->pos += 4;
    }
    if (cur_fill(s, fd, c, n, err))
        return -1;
    c->rec = c->buf + c->pos;
    c->rec_len = n;
    c->pos += n;
    return 1;
}

static int cur_less(const sl_spill *s, const cursor *a, const cursor *b)
{
    int k = s->o.cmp ? s->o.cmp(a->rec, a->rec_len, b->rec, b->rec_len, s->o.ctx) : 0;
    return k < 0 || (k == 0 && a->idx < b->idx);
}

static void heap_down(sl_spill *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nh && cur_less(s, &s->cur[s->heap[l]], &s->cur[s->heap[m]]))
            m = l;
        if (r < s->nh && cur_less(s, &s->cur[s->heap[r]], &s->cur[s->heap[m]]))
            m = r;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

static void cursors_free(sl_spill *s, size_t n)
{
    for (size_t i = 0; s->cur && i < n; i++)
        free(s->cur[i].buf);
    free(s->cur);
    free(s->heap);
    s->cur = NULL;
    s->heap = NULL;
    s->nh = 0;
}

/* Opens cursors on runs [a, b) of fd with `each` bytes of buffer, loads their
 * first records and builds the heap. */
static int merge_open(sl_spill *s, int fd, size_t a, size_t b, size_t each, sl_err *err)
{
    size_t k = b - a;
    s->cur = sl_xcalloc(k, sizeof *s->cur);
    s->heap = sl_xcalloc(k, sizeof *s->heap);
    s->nh = 0;
    for (size_t i = 0; i < k; i++) {
        cursor *c = &s->cur[i];
        c->off = s->runs[a + i].off;
        c->end = s->runs[a + i].end;
        c->cap = each;
        c->buf = sl_xmalloc(each);
        c->idx = i;
        int r = cur_next(s, fd, c, err);
        if (r < 0) {
            cursors_free(s, k);
            return -1;
        }
        if (r)
            s->heap[s->nh++] = i;
    }
    for (size_t i = s->nh / 2; i-- > 0;)
        heap_down(s, i);
    return 0;
}

/* Pops the smallest record of the open merge: 1 (in *c), 0 when empty. The
 * record stays valid until merge_advance. */
static int merge_top(sl_spill *s, cursor **c)
{
    if (!s->nh)
        return 0;
    *c = &s->cur[s->heap[0]];
    return 1;
}

static int merge_advance(sl_spill *s, int fd, sl_err *err)
{
    cursor *c = &s->cur[s->heap[0]];
    int r = cur_next(s, fd, c, err);
    if (r < 0)
        return -1;
    if (!r)
        s->heap[0] = s->heap[--s->nh];
    if (s->nh)
        heap_down(s, 0);
    return 0;
}

/* How many runs one merge may read at once: a buffer of at least
 * SL_SPILL_MIN_READ each, and a write buffer, within the budget. */
static size_t fan_in(const sl_spill *s)
{
    size_t f = s->o.budget / SL_SPILL_MIN_READ;
    f = f > 3 ? f - 2 : 2;
    return f > 1024 ? 1024 : f;
}

/* Merges groups of consecutive runs into longer runs in a new file until one
 * merge can read all of them. */
static int merge_passes(sl_spill *s, sl_err *err)
{
    size_t f = fan_in(s);
    while (s->nruns > f) {
        int nfd = sl_tmpfile(s->dir, err);
        if (nfd < 0)
            return -1;
        uint64_t nend = 0;
        run *nr = NULL;
        size_t nn = 0;
        size_t each = (s->o.budget - s->o.budget / 16) / f;
        if (each > SL_SPILL_READ)
            each = SL_SPILL_READ;
        for (size_t a = 0; a < s->nruns; a += f) {
            size_t b = a + f < s->nruns ? a + f : s->nruns;
            uint64_t start = nend;
            if (merge_open(s, s->fd, a, b, each, err))
                goto fail;
            cursor *c;
            while (merge_top(s, &c)) {
                if (put_rec(s, nfd, &nend, c->rec, c->rec_len, err) || merge_advance(s, s->fd, err)) {
                    cursors_free(s, b - a);
                    goto fail;
                }
            }
            cursors_free(s, b - a);
            if (wb_flush(s, nfd, &nend, err))
                goto fail;
            nr = sl_xrealloc(nr, (nn + 1) * sizeof *nr);
            nr[nn++] = (run){start, nend};
        }
        close(s->fd);
        s->fd = nfd;
        s->fend = nend;
        free(s->runs);
        s->runs = nr;
        s->nruns = s->rcap = nn;
        continue;
    fail:
        close(nfd);
        free(nr);
        return -1;
    }
    return 0;
}

int sl_spill_sort(sl_spill *s, sl_err *err)
{
    if (s->sorted)
        return 0;
    s->sorted = 1;
    if (!s->nruns) { /* all in memory */
        sort_ents(s);
        free(s->scratch);
        s->scratch = NULL;
        return 0;
    }
    if (write_run(s, err))
        return -1;
    free(s->arena);
    free(s->ents);
    free(s->scratch);
    s->arena = NULL;
    s->ents = s->scratch = NULL;
    s->acap = s->ecap = 0;
    if (merge_passes(s, err))
        return -1;
    free(s->wb); /* reading only from here */
    s->wb = NULL;
    s->wcap = 0;
    /* 256 KiB per run reads well and keeps the merge far below the budget
     * until there are hundreds of runs */
    size_t each = s->o.budget / (s->nruns + 1);
    if (each > SL_SPILL_READ)
        each = SL_SPILL_READ;
    return merge_open(s, s->fd, 0, s->nruns, each, err);
}

int sl_spill_next(sl_spill *s, const void **rec, size_t *len, sl_err *err)
{
    if (!s->sorted)
        return sl_errf(err, "%s: read before the sort", s->purpose);
    if (!s->nruns) {
        if (s->mi == s->n)
            return 0;
        const ent *e = &s->ents[s->mi++];
        *rec = s->arena + e->off;
        *len = e->len;
        return 1;
    }
    if (s->advance && merge_advance(s, s->fd, err))
        return -1;
    s->advance = 0;
    cursor *c;
    if (!merge_top(s, &c))
        return 0;
    *rec = c->rec;
    *len = c->rec_len;
    s->advance = 1;
    return 1;
}

int sl_spill_rewind(sl_spill *s, sl_err *err)
{
    if (!s->sorted)
        return sl_errf(err, "%s: rewound before the sort", s->purpose);
    s->mi = 0;
    if (!s->nruns)
        return 0;
    size_t each = s->cur ? s->cur[0].cap : SL_SPILL_MIN_READ;
    cursors_free(s, s->nruns);
    s->advance = 0;
    return merge_open(s, s->fd, 0, s->nruns, each, err);
}

uint64_t sl_spill_count(const sl_spill *s)
{
    return s->count;
}

size_t sl_spill_runs(const sl_spill *s)
{
    return s->cut;
}

uint64_t sl_spill_disk_bytes(const sl_spill *s)
{
    return s->disk;
}

void sl_spill_free(sl_spill *s)
{
    if (!s)
        return;
    cursors_free(s, s->sorted && s->nruns ? s->nruns : 0);
    if (s->fd >= 0)
        close(s->fd);
    free(s->arena);
    free(s->ents);
    free(s->scratch);
    free(s->runs);
    free(s->wb);
    free(s->dir);
    free(s);
}
