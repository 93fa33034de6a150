/* datatrove's MinHash stages, in one process or as steps (dedup/lsh.h).
 *
 * Records are arrays of 64-bit words. A band record in memory and in the
 * external sorts is {band, v[0..R), document}; in a signature file, band b's
 * section holds {v[0..R), local document} sorted. Bands are walked in order,
 * and within a band the records in sorted order (by values, then document:
 * datatrove's order); a record equal to the one before it in its values is a
 * pair (previous, this), or with --jaccard (nearest earlier member of the
 * group whose Jaccard similarity reaches T, this). Pairs are united in that
 * order by a union-find by size (datatrove's MinhashDedupCluster). */
#include "dedup/lsh.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/hashtab.h"

#include "dedup/spool.h"
#include "dedup/xsort.h"
#include "base/byteorder.h"
#include "base/json.h"
#include "stream/parts.h"
#include "stream/batch.h"
#include "stream/progress.h"
#include "stream/read.h"

/* What the signatures depend on beyond the options: the tokenizer's rules
 * and simplify_text's tables (text/gen_*.py). Change it when they change. */
#define TOKENIZER_DESC "spacy 3.8.18 blank(en) rules; simplify_text datatrove 0.10.1, Unicode 14.0"

#define HDR_BYTES 192
#define TRL_BYTES 128
#define VERSION 1
#define RING 32 /* --jaccard: earlier members of a group tried */

static const char MAGIC_SIG[8] = {'S', 'L', 'M', 'H', 'S', 'I', 'G', '1'};
static const char MAGIC_PAIR[8] = {'S', 'L', 'M', 'H', 'P', 'A', 'I', 'R'};
static const char MAGIC_CLU[8] = {'S', 'L', 'M', 'H', 'C', 'L', 'U', '1'};
static const char MAGIC_END[8] = {'S', 'L', 'M', 'H', 'E', 'N', 'D', '1'};

/* Bulk arrays of words are stored little-endian. */
static void le_words(uint64_t *w, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < n; i++)
        w[i] = __builtin_bswap64(w[i]);
#else
    (void)w, (void)n;
#endif
}

/* --- files ---------------------------------------------------------------- */

static int pread_all(int fd, void *p, size_t n, uint64_t off, const char *name, sl_err *err)
{
    char *c = p;
    while (n) {
        ssize_t k = pread(fd, c, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "%s: offset %llu: %s", name, (unsigned long long)off,
                           k < 0 ? strerror(errno) : "truncated");
        c += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

/* A buffered writer to an sl_output or to a temporary file, hashing what it writes. */
typedef struct {
    sl_output *out;
    int fd;
    const char *name;
    uint64_t off;
    XXH64_state_t *h;
    char *buf;
    size_t n;
} wr;

#define WR_BUF ((size_t)1 << 18)

static void wr_init(wr *w, sl_output *out, int fd, const char *name, int hash)
{
    memset(w, 0, sizeof *w);
    w->out = out, w->fd = fd, w->name = name;
    w->buf = sl_xmalloc(WR_BUF);
    if (hash) {
        w->h = XXH64_createState();
        XXH64_reset(w->h, 0);
    }
}

static int wr_flush(wr *w, sl_err *err)
{
    if (!w->n)
        return 0;
    if (w->h)
        XXH64_update(w->h, w->buf, w->n);
    if (w->out) {
        if (sl_output_write(w->out, w->buf, w->n, err) < 0)
            return -1;
    } else {
        const char *c = w->buf;
        size_t n = w->n;
        uint64_t off = w->off - n;
        while (n) {
            ssize_t k = pwrite(w->fd, c, n, (off_t)off);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return sl_errf(err, "temporary file of the %s: write error: %s (is $TMPDIR full?)", w->name,
                               k < 0 ? strerror(errno) : "no progress");
            c += k, n -= (size_t)k, off += (uint64_t)k;
        }
    }
    w->n = 0;
    return 0;
}

static int wr_put(wr *w, const void *p, size_t n, sl_err *err)
{
    const char *c = p;
    while (n) {
        size_t k = WR_BUF - w->n < n ? WR_BUF - w->n : n;
        memcpy(w->buf + w->n, c, k);
        w->n += k, w->off += k, c += k, n -= k;
        if (w->n == WR_BUF && wr_flush(w, err) < 0)
            return -1;
    }
    return 0;
}

static int wr_u64(wr *w, uint64_t v, sl_err *err)
{
    unsigned char b[8];
    sl_put_le64(b, v);
    return wr_put(w, b, 8, err);
}

static void wr_free(wr *w)
{
    free(w->buf);
    if (w->h)
        XXH64_freeState(w->h);
    w->buf = NULL, w->h = NULL;
}

/* --- headers and trailers ------------------------------------------------- */

/* The header: magic, version, configuration, then three words whose meaning
 * depends on the file. */
typedef struct {
    char magic[8];
    uint32_t version;
    uint32_t ngram, buckets, rows, hash, bits;
    uint64_t seed;
    uint32_t shingles; /* sig: shingle sets stored; pairs, clusters: --jaccard on */
    uint64_t jaccard;  /* the threshold's bits (pairs, clusters) */
    char language[16];
    char tokenizer[96];
    uint64_t part, nparts; /* sig: the input part; pairs: the bucket part; clusters: 0 of N signature parts */
    uint64_t x1, x2;       /* pairs: the bands [x1, x2); pairs, clusters: x2... see below */
    uint64_t sigset;       /* pairs, clusters: fingerprint of the signature files used */
} hdr;

static void hdr_of(hdr *h, const char magic[8], const sl_dedup_opts *o, int shingles)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, magic, 8);
    h->version = VERSION;
    h->ngram = (uint32_t)o->mh.ngram;
    h->buckets = (uint32_t)o->mh.buckets;
    h->rows = (uint32_t)o->mh.rows;
    h->hash = (uint32_t)o->mh.hash;
    h->bits = (uint32_t)sl_minhash_bits(o->mh.hash);
    h->seed = o->mh.seed;
    h->shingles = (uint32_t)shingles;
    if (o->jaccard_on)
        memcpy(&h->jaccard, &o->jaccard, 8);
    snprintf(h->language, sizeof h->language, "%s", o->mh.language ? o->mh.language : "en");
    snprintf(h->tokenizer, sizeof h->tokenizer, "%s", TOKENIZER_DESC);
}

static void hdr_encode(const hdr *h, unsigned char *b)
{
    memset(b, 0, HDR_BYTES);
    memcpy(b, h->magic, 8);
    sl_put_le32(b + 8, h->version);
    sl_put_le32(b + 12, h->ngram);
    sl_put_le32(b + 16, h->buckets);
    sl_put_le32(b + 20, h->rows);
    sl_put_le32(b + 24, h->hash);
    sl_put_le32(b + 28, h->bits);
    sl_put_le64(b + 32, h->seed);
    sl_put_le32(b + 40, h->shingles);
    sl_put_le64(b + 48, h->jaccard);
    memcpy(b + 56, h->language, 16);
    memcpy(b + 72, h->tokenizer, 80); /* NUL-terminated within 80 */
    sl_put_le64(b + 152, h->part);
    sl_put_le64(b + 160, h->nparts);
    sl_put_le64(b + 168, h->x1);
    sl_put_le64(b + 176, h->x2);
    sl_put_le64(b + 184, h->sigset);
}

static void hdr_decode(hdr *h, const unsigned char *b)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, b, 8);
    h->version = sl_get_le32(b + 8);
    h->ngram = sl_get_le32(b + 12);
    h->buckets = sl_get_le32(b + 16);
    h->rows = sl_get_le32(b + 20);
    h->hash = sl_get_le32(b + 24);
    h->bits = sl_get_le32(b + 28);
    h->seed = sl_get_le64(b + 32);
    h->shingles = sl_get_le32(b + 40);
    h->jaccard = sl_get_le64(b + 48);
    memcpy(h->language, b + 56, 15);
    memcpy(h->tokenizer, b + 72, 79);
    h->part = sl_get_le64(b + 152);
    h->nparts = sl_get_le64(b + 160);
    h->x1 = sl_get_le64(b + 168);
    h->x2 = sl_get_le64(b + 176);
    h->sigset = sl_get_le64(b + 184);
}

/* Trailer words. */
enum {
    T_DOCS,
    T_EMPTY,
    T_NSIG,
    T_IDS_OFF,
    T_IDS_BYTES,
    T_SH_OFF,
    T_SHIDX_OFF,
    T_BANDS_OFF,
    T_IDS_HASH,
    T_COUNT,    /* pairs: pairs; clusters: entries */
    T_TABLE,    /* clusters: the per-part table */
    T_CLUSTERS, /* clusters: clusters */
    T_RESERVED,
    T_BODY_HASH,
    T_SIZE,
    T_WORDS /* 15, then the end magic */
};

typedef struct {
    const char *name;
    int fd;
    hdr h;
    uint64_t t[T_WORDS];
} mhfile;

static const char *kind_of(const char magic[8])
{
    if (!memcmp(magic, MAGIC_SIG, 8))
        return "signature";
    if (!memcmp(magic, MAGIC_PAIR, 8))
        return "pair";
    if (!memcmp(magic, MAGIC_CLU, 8))
        return "clusters";
    return NULL;
}

static void mh_close(mhfile *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

/* Opens and checks a file's frame: magic (want, or any of the three when
 * NULL), version, trailer, size. */
static int mh_open(mhfile *f, const char *path, const char *want, sl_err *err)
{
    memset(f, 0, sizeof *f);
    f->name = path;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return sl_errf(err, "%s: %s", path, strerror(errno));
    struct stat sb;
    unsigned char b[HDR_BYTES > TRL_BYTES ? HDR_BYTES : TRL_BYTES];
    if (fstat(f->fd, &sb) < 0) {
        mh_close(f);
        return sl_errf(err, "%s: %s", path, strerror(errno));
    }
    uint64_t size = (uint64_t)sb.st_size;
    const char *wk = want ? kind_of(want) : "MinHash dedup";
    if (size < 8 || pread_all(f->fd, b, 8, 0, path, err) < 0 ||
        (want ? memcmp(b, want, 8) != 0 : kind_of((const char *)b) == NULL)) {
        mh_close(f);
        const char *k = size >= 8 ? kind_of((const char *)b) : NULL;
        if (k)
            return sl_errf(err, "%s: a MinHash %s file, not a %s file", path, k, wk);
        return sl_errf(err, "%s: not a sluice MinHash %s file", path, wk);
    }
    if (size < HDR_BYTES + TRL_BYTES) {
        mh_close(f);
        return sl_errf(err, "%s: truncated (%llu bytes)", path, (unsigned long long)size);
    }
    if (pread_all(f->fd, b, HDR_BYTES, 0, path, err) < 0) {
        mh_close(f);
        return -1;
    }
    hdr_decode(&f->h, b);
    if (f->h.version != VERSION) {
        mh_close(f);
        return sl_errf(err, "%s: version %u of the format; this sluice reads version %d", path, f->h.version, VERSION);
    }
    if (pread_all(f->fd, b, TRL_BYTES, size - TRL_BYTES, path, err) < 0) {
        mh_close(f);
        return -1;
    }
    if (memcmp(b + TRL_BYTES - 8, MAGIC_END, 8) != 0) {
        mh_close(f);
        return sl_errf(err, "%s: truncated or damaged (no trailer at its end)", path);
    }
    for (int i = 0; i < T_WORDS; i++)
        f->t[i] = sl_get_le64(b + 8 * i);
    if (f->t[T_SIZE] != size) {
        mh_close(f);
        return sl_errf(err, "%s: %llu bytes, its trailer says %llu: truncated or damaged", path,
                       (unsigned long long)size, (unsigned long long)f->t[T_SIZE]);
    }
    return 0;
}

/* The file's configuration against the run's: an error naming the first option that differs. */
static int mh_check_config(const mhfile *f, const sl_dedup_opts *o, sl_err *err)
{
    hdr w;
    hdr_of(&w, f->h.magic, o, 0);
    const char *lang = f->h.language;
#define DIFF(field, opt, fmt, a, b)                                                                                    \
    if (f->h.field != w.field)                                                                                         \
        return sl_errf(                                                                                                \
            err, "%s: made with " opt " " fmt ", this run has " opt " " fmt " (give every step the same options)",     \
            f->name, a, b);
    DIFF(ngram, "--ngram", "%u", f->h.ngram, w.ngram)
    DIFF(buckets, "--buckets", "%u", f->h.buckets, w.buckets)
    DIFF(rows, "--rows", "%u", f->h.rows, w.rows)
    DIFF(seed, "--seed", "%llu", (unsigned long long)f->h.seed, (unsigned long long)w.seed)
    DIFF(hash, "--hash", "%s", sl_minhash_hash_name((int)f->h.hash), sl_minhash_hash_name((int)w.hash))
    DIFF(bits, "a hash width of", "%u", f->h.bits, w.bits)
#undef DIFF
    char q[SL_QUOTE_MAX];
    if (strcmp(lang, w.language) != 0)
        return sl_errf(err,
                       "%s: made with --language %s, this run has --language %s (give every step the same options)",
                       f->name, sl_err_quote(lang, strlen(lang), q, sizeof q), w.language);
    if (strcmp(f->h.tokenizer, w.tokenizer) != 0)
        return sl_errf(err, "%s: made with another tokenizer or normalization (\"%s\"; this sluice: \"%s\")", f->name,
                       sl_err_quote(f->h.tokenizer, strlen(f->h.tokenizer), q, sizeof q), w.tokenizer);
    if (memcmp(f->h.magic, MAGIC_SIG, 8) == 0) {
        if (o->jaccard_on && !f->h.shingles)
            return sl_errf(err, "%s: made without --jaccard (no shingle sets): sign again with --jaccard", f->name);
    } else if (f->h.shingles != (uint32_t)o->jaccard_on || (o->jaccard_on && f->h.jaccard != w.jaccard)) {
        double t;
        memcpy(&t, &f->h.jaccard, 8);
        char a[64], b[64];
        snprintf(a, sizeof a, f->h.shingles ? "--jaccard %g" : "no --jaccard", t);
        snprintf(b, sizeof b, o->jaccard_on ? "--jaccard %g" : "no --jaccard", o->jaccard);
        return sl_errf(err, "%s: made with %s, this run has %s (give every step the same options)", f->name, a, b);
    }
    return 0;
}

/* Writes the trailer (t[T_BODY_HASH] and t[T_SIZE] filled here). */
static int wr_trailer(wr *w, uint64_t *t, sl_err *err)
{
    if (wr_flush(w, err) < 0)
        return -1;
    t[T_BODY_HASH] = XXH64_digest(w->h);
    t[T_SIZE] = w->off + TRL_BYTES;
    unsigned char b[TRL_BYTES];
    for (int i = 0; i < T_WORDS; i++)
        sl_put_le64(b + 8 * i, t[i]);
    memcpy(b + TRL_BYTES - 8, MAGIC_END, 8);
    return wr_put(w, b, TRL_BYTES, err) < 0 || wr_flush(w, err) < 0 ? -1 : 0;
}

int sl_lsh_verify(const char *path, sl_err *err)
{
    mhfile f;
    if (mh_open(&f, path, NULL, err) < 0)
        return -1;
    XXH64_state_t *h = XXH64_createState();
    XXH64_reset(h, 0);
    size_t cap = (size_t)1 << 20;
    char *buf = sl_xmalloc(cap);
    uint64_t end = f.t[T_SIZE] - TRL_BYTES;
    int rc = 0;
    for (uint64_t off = 0; off < end && rc == 0;) {
        size_t k = end - off < cap ? (size_t)(end - off) : cap;
        rc = pread_all(f.fd, buf, k, off, path, err);
        XXH64_update(h, buf, k);
        off += k;
    }
    if (rc == 0 && XXH64_digest(h) != f.t[T_BODY_HASH])
        rc = sl_errf(err, "%s: checksum mismatch: damaged", path);
    free(buf);
    XXH64_freeState(h);
    mh_close(&f);
    return rc;
}

/* --- shingle sets (--jaccard): sorted, distinct, looked up by document ---- */

/* Per source (a signature file, or the temporary files of one process): the
 * index holds for each document the offset of its set in the data: a count
 * word, then the values. */
typedef struct {
    int fd_data, fd_idx;
    uint64_t data_off, idx_off, base, docs;
    const char *name;
    uint64_t data_len; /* bytes of the data section */
} shsrc;

typedef struct {
    shsrc *s;
    size_t n;
} shlookup;

static int sh_get(const shlookup *L, uint64_t g, uint64_t **v, size_t *n, size_t *cap, sl_err *err)
{
    size_t lo = 0, hi = L->n; /* the source with base <= g */
    while (hi - lo > 1) {
        size_t m = (lo + hi) / 2;
        if (L->s[m].base <= g)
            lo = m;
        else
            hi = m;
    }
    const shsrc *s = &L->s[lo];
    unsigned char b[8];
    if (g < s->base || g >= s->base + s->docs)
        return sl_errf(err, "%s: no document %llu", s->name, (unsigned long long)g);
    if (pread_all(s->fd_idx, b, 8, s->idx_off + (g - s->base) * 8, s->name, err) < 0)
        return -1;
    uint64_t rel = sl_get_le64(b), off = s->data_off + rel;
    if (rel > s->data_len || s->data_len - rel < 8)
        return sl_errf(err, "%s: document %llu: shingle set offset %llu beyond its section: damaged", s->name,
                       (unsigned long long)(g - s->base), (unsigned long long)rel);
    if (pread_all(s->fd_data, b, 8, off, s->name, err) < 0)
        return -1;
    uint64_t k = sl_get_le64(b);
    if (k > (s->data_len - rel - 8) / 8)
        return sl_errf(err, "%s: offset %llu: %llu shingles beyond the section: damaged", s->name,
                       (unsigned long long)off, (unsigned long long)k);
    if (*cap < k) {
        *cap = (size_t)k + (size_t)k / 2;
        free(*v);
        *v = sl_xmalloc(*cap * 8);
    }
    if (k && pread_all(s->fd_data, *v, (size_t)k * 8, off + 8, s->name, err) < 0)
        return -1;
    le_words(*v, (size_t)k);
    *n = (size_t)k;
    return 0;
}

static double jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, both = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j])
            both++, i++, j++;
        else if (a[i] < b[j])
            i++;
        else
            j++;
    }
    size_t uni = na + nb - both;
    return uni ? (double)both / (double)uni : 1.0;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* --- signing: pass 1 ------------------------------------------------------ */

typedef struct {
    sl_textdoc d;
    sl_buf line; /* one process: the output line */
    uint64_t *sig;
    int has_sig;
    uint64_t *sh; /* --jaccard: the sorted distinct shingles */
    size_t nsh, shcap;
    size_t held; /* bytes of buffers kept after its last write */
} item;

typedef struct {
    const sl_dedup_opts *o;
    sl_minhash *mh;
    int rows, buckets, jacc;
    FILE *spool; /* one process: id and line of each document */
    wr *ids;     /* signature file: u32 length + id (JSON) per document */
    wr *shd, *shi;
    sl_xsort *recs;
    uint64_t docs, empty, nsig;
    XXH64_state_t *idh;
} signer;

static int ids_hash_add(XXH64_state_t *h, const sl_buf *id)
{
    unsigned char b[4];
    sl_put_le32(b, (uint32_t)id->len);
    XXH64_update(h, b, 4);
    XXH64_update(h, id->data, id->len);
    return 0;
}

/* sign_all on the ordered-parallel batcher (stream/batch.h): a slot is an
 * item; its signature (and line, shingle set) made on the team, the rest
 * written in input order by the thread that reads. */
typedef struct {
    sl_docreader *r;
    signer *s;
    sl_minhash_work **mw; /* per team thread, made at first use */
    int nperm, R;
    uint64_t *rec;
    sl_buf idb;
    sl_progress *pg;
    uint64_t bytes_seen, shoff;
    sl_slot_keep keep; /* what the idle slots keep */
} sign_ctx;

static int sign_fill(void *ctx, void *sp, uint64_t *cost, sl_err *err)
{
    sign_ctx *c = ctx;
    item *it = sp;
    int got = sl_docreader_next(c->r, &it->d, err);
    if (got > 0)
        *cost = it->d.text.len;
    return got;
}

static void sign_encode(void *ctx, int thread, void *sp)
{
    const sign_ctx *c = ctx;
    const signer *s = c->s;
    item *it = sp;
    if (!c->mw[thread]) /* a thread number is used by one thread at a time */
        c->mw[thread] = sl_minhash_work_new(s->mh);
    if (!it->sig)
        it->sig = sl_xmalloc((size_t)c->nperm * 8);
    const char *text = it->d.text.data ? it->d.text.data : "";
    if (s->spool) {
        sl_buf_clear(&it->line);
        sl_read_put_doc(&it->line, &it->d);
    }
    const uint64_t *sh = NULL;
    size_t nsh = 0;
    it->has_sig = sl_minhash_signature(s->mh, c->mw[thread], text, it->d.text.len, it->sig, s->jacc ? &sh : NULL,
                                       s->jacc ? &nsh : NULL);
    it->nsh = 0;
    if (s->jacc && it->has_sig) {
        if (it->shcap < nsh) {
            free(it->sh);
            it->shcap = nsh;
            it->sh = sl_xmalloc(nsh * 8);
        }
        memcpy(it->sh, sh, nsh * 8);
        qsort(it->sh, nsh, 8, cmp_u64);
        size_t k = 0;
        for (size_t j = 0; j < nsh; j++)
            if (!k || it->sh[j] != it->sh[k - 1])
                it->sh[k++] = it->sh[j];
        it->nsh = k;
    }
}

static int sign_write(void *ctx, void *sp, sl_err *err)
{
    sign_ctx *c = ctx;
    signer *s = c->s;
    item *it = sp;
    int R = c->R;
    uint64_t idx = s->docs++;
    s->empty += it->d.text.len == 0;
    sl_buf_clear(&c->idb);
    sl_read_put_id(&c->idb, &it->d);
    ids_hash_add(s->idh, &c->idb);
    if (s->spool && (sl_spool_put_blob(s->spool, c->idb.data, c->idb.len, err) < 0 ||
                     sl_spool_put_blob(s->spool, it->line.data, it->line.len, err) < 0))
        return -1;
    unsigned char b4[4];
    sl_put_le32(b4, (uint32_t)c->idb.len);
    if (c->idb.len > UINT32_MAX || wr_put(s->ids, b4, 4, err) < 0 || wr_put(s->ids, c->idb.data, c->idb.len, err) < 0)
        return -1;
    if (s->jacc) {
        if (wr_u64(s->shi, c->shoff, err) < 0 || wr_u64(s->shd, it->nsh, err) < 0)
            return -1;
        le_words(it->sh, it->nsh);
        if (wr_put(s->shd, it->sh, it->nsh * 8, err) < 0)
            return -1;
        c->shoff += 8 + it->nsh * 8;
    }
    if (it->has_sig) {
        s->nsig++;
        for (int b = 0; b < s->buckets; b++) {
            c->rec[0] = (uint64_t)b;
            memcpy(c->rec + 1, it->sig + (size_t)b * R, (size_t)R * 8);
            c->rec[R + 1] = idx;
            if (sl_xsort_add(s->recs, c->rec, err) < 0)
                return -1;
        }
    }
    /* a slot keeps its buffers, within the batches' memory (sl_slot_keep_settle) */
    size_t held = it->d.text.cap + it->d.id.cap + it->d.meta.cap + it->line.cap + it->shcap * sizeof *it->sh;
    if (sl_slot_keep_settle(&c->keep, &it->held, held, it->d.text.len)) {
        sl_textdoc_free(&it->d);
        sl_buf_free(&it->line);
        free(it->sh);
        it->sh = NULL;
        it->shcap = 0;
    }
    sl_docreader_progress(c->r, c->pg, &c->bytes_seen);
    return 0;
}

static void sign_free(void *ctx, void *sp)
{
    (void)ctx;
    item *it = sp;
    sl_textdoc_free(&it->d);
    sl_buf_free(&it->line);
    free(it->sig);
    free(it->sh);
}

/* Reads every document: signatures (threads), then in order: the id, the
 * line (one process), the band records, the shingle set. */
static int sign_all(sl_docreader *r, signer *s, size_t budget, int progress, sl_err *err)
{
    int nthreads = omp_get_max_threads();
    size_t batch_limit = sl_docs_batch_cap(sl_mem_budget_split(budget).read_batch, nthreads);
    sign_ctx c = {.r = r,
                  .s = s,
                  .nperm = s->buckets * s->rows,
                  .R = s->rows,
                  .keep = {.keep = 2 * batch_limit, .big = (size_t)64 << 10, .copies = 2}};
    c.mw = sl_xcalloc((size_t)nthreads, sizeof *c.mw);
    c.rec = sl_xmalloc(((size_t)c.R + 2) * 8);
    c.pg = sl_progress_start("dedup", "docs", progress);
    sl_progress_track(c.pg, sl_docreader_position, r);
    static const sl_batch_ops ops = {sizeof(item), sign_encode, sign_write, sign_free};
    sl_batch_opts bo = {
        .max_items = 1024, .max_cost = batch_limit, .parallel_min_cost = (uint64_t)16 << 10, .threads = nthreads};
    sl_batcher *bt = sl_batcher_new(&ops, &c, &bo);
    int rc = sl_batcher_run(bt, sign_fill, err);
    sl_batcher_free(bt);
    sl_progress_done(c.pg);
    for (int t = 0; t < nthreads; t++)
        if (c.mw[t])
            sl_minhash_work_free(c.mw[t]);
    free(c.mw);
    free(c.rec);
    sl_buf_free(&c.idb);
    if (rc >= 0 && sl_xsort_done(s->recs, err) < 0)
        rc = -1;
    return rc < 0 ? -1 : 0;
}

/* --- pairs: equal neighbours in a band ------------------------------------ */

typedef int (*pair_fn)(void *ctx, uint64_t a, uint64_t b, sl_err *err);

typedef struct {
    int R;
    int jacc;
    int bits32; /* 32-bit hashes: records whose first value is 2^32-1 are passed over (below) */
    double T;
    const shlookup *sh;
    pair_fn emit;
    void *ctx;
    uint64_t *prev; /* band, values, document of the record before */
    int have;
    /* --jaccard: the group's latest members (a ring) and their sets */
    uint64_t g[RING];
    uint64_t *v[RING];
    size_t nv[RING], cap[RING];
    int ring_n, ring_at;
    uint64_t *cur;
    size_t ncur, curcap;
    uint64_t pairs, tried, rejected;
} walker;

static void walker_init(walker *w, int R, const sl_dedup_opts *o, const shlookup *sh, pair_fn emit, void *ctx)
{
    memset(w, 0, sizeof *w);
    w->R = R;
    w->jacc = o->jaccard_on;
    w->bits32 = sl_minhash_bits(o->mh.hash) == 32;
    w->T = o->jaccard;
    w->sh = sh;
    w->emit = emit;
    w->ctx = ctx;
    w->prev = sl_xmalloc(((size_t)R + 2) * 8);
}

static void walker_free(walker *w)
{
    free(w->prev);
    for (int i = 0; i < RING; i++)
        free(w->v[i]);
    free(w->cur);
}

/* Takes the set just read into cur into the ring. */
static void ring_push(walker *w, uint64_t g)
{
    int at = w->ring_at;
    uint64_t *tv = w->v[at];
    size_t tc = w->cap[at];
    w->v[at] = w->cur, w->cap[at] = w->curcap, w->nv[at] = w->ncur, w->g[at] = g;
    w->cur = tv, w->curcap = tc, w->ncur = 0;
    w->ring_at = (at + 1) % RING;
    if (w->ring_n < RING)
        w->ring_n++;
}

/* One record {band, v[0..R), g}, in order. With a 32-bit hash, a record
 * whose first value is 2^32-1 is in no pair: MinhashDedupBuckets reads a
 * band's records up to the first one whose first value reaches the hash's
 * maximum (read_sigs' max_hash, HashConfig.max = 2^32-1 for 32 bits; for 64
 * bits it is 2^61-1, which no value reaches), and these sort last. */
static int walk(walker *w, const uint64_t *rec, sl_err *err)
{
    int R = w->R;
    if (w->bits32 && rec[1] == UINT32_MAX)
        return 0;
    int same = w->have && w->prev[0] == rec[0] && !memcmp(w->prev + 1, rec + 1, (size_t)R * 8);
    uint64_t g = rec[R + 1];
    if (!w->jacc) {
        if (same) {
            w->pairs++;
            if (w->emit(w->ctx, w->prev[R + 1], g, err) < 0)
                return -1;
        }
    } else {
        if (!same)
            w->ring_n = 0, w->ring_at = 0;
        if (sh_get(w->sh, g, &w->cur, &w->ncur, &w->curcap, err) < 0)
            return -1;
        if (same) {
            int found = 0;
            for (int k = 1; k <= w->ring_n && !found; k++) { /* nearest first */
                int at = (w->ring_at - k + RING) % RING;
                w->tried++;
                if (jaccard(w->v[at], w->nv[at], w->cur, w->ncur) >= w->T) {
                    found = 1;
                    w->pairs++;
                    if (w->emit(w->ctx, w->g[at], g, err) < 0)
                        return -1;
                }
            }
            w->rejected += !found;
        }
        ring_push(w, g);
    }
    memcpy(w->prev, rec, ((size_t)R + 2) * 8);
    w->have = 1;
    return 0;
}

/* --- union-find over the documents in pairs, as MinhashDedupCluster -------- */

typedef struct {
    uint64_t g;
    uint32_t parent, size;
} ufnode;

typedef struct {
    ufnode *n;
    size_t len, cap;
    sl_htab tab; /* entries node + 1 (uint32_t) */
} suf;

static uint64_t suf_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return XXH3_64bits(key, 8);
}

static uint64_t suf_entry_hash(const void *entry, const void *ctx)
{
    const suf *u = ctx;
    return XXH3_64bits(&u->n[*(const uint32_t *)entry - 1].g, 8);
}

static int suf_eq(const void *key, const void *entry, const void *ctx)
{
    const suf *u = ctx;
    return u->n[*(const uint32_t *)entry - 1].g == *(const uint64_t *)key;
}

static const sl_htab_type suf_type = {.entry_size = sizeof(uint32_t),
                                      .key_size = sizeof(uint32_t),
                                      .hash = suf_hash,
                                      .entry_hash = suf_entry_hash,
                                      .eq = suf_eq,
                                      .max_load = 50,
                                      .min_cap = 4096};

static uint32_t suf_node(suf *u, uint64_t g)
{
    u->tab.ctx = u;
    int fresh;
    uint32_t *e = sl_htab_put(&u->tab, &suf_type, &g, &fresh);
    if (!fresh)
        return *e - 1;
    if (u->len == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 4096;
        u->n = sl_xrealloc(u->n, u->cap * sizeof *u->n);
    }
    uint32_t k = (uint32_t)u->len++;
    u->n[k] = (ufnode){g, k, 1};
    *e = k + 1;
    return k;
}

static uint32_t suf_find(suf *u, uint32_t x)
{
    uint32_t r = x;
    while (u->n[r].parent != r)
        r = u->n[r].parent;
    while (u->n[x].parent != r) {
        uint32_t nx = u->n[x].parent;
        u->n[x].parent = r;
        x = nx;
    }
    return r;
}

/* union(a, b): b's set joins a's unless b's is larger (datatrove) */
static int suf_union(void *ctx, uint64_t a, uint64_t b, sl_err *err)
{
    suf *u = ctx;
    if (u->len >= UINT32_MAX - 2)
        return sl_errf(err, "more than 4,294,967,293 documents in candidate pairs: not supported");
    uint32_t ra = suf_find(u, suf_node(u, a)), rb = suf_find(u, suf_node(u, b));
    if (ra == rb)
        return 0;
    if (u->n[ra].size < u->n[rb].size) {
        uint32_t t = ra;
        ra = rb, rb = t;
    }
    u->n[rb].parent = ra;
    u->n[ra].size += u->n[rb].size;
    return 0;
}

static void suf_free(suf *u)
{
    free(u->n);
    sl_htab_free(&u->tab);
    memset(u, 0, sizeof *u);
}

/* --- clusters: who is in which, with the kept document's id ---------------- */

/* The ids of all documents in order. */
typedef int (*ids_fn)(void *ctx, sl_buf *id, sl_err *err); /* 1, 0 at the end, -1 */

/* Entries {g, root, size, id offset, id length}, sorted by g, into *out
 * (an external sort; the kept ids in the temporary file *idfd). */
typedef struct {
    sl_xsort *x;
    int idfd;
} entries;

static void entries_free(entries *e)
{
    sl_xsort_free(e->x);
    if (e->idfd >= 0)
        close(e->idfd);
    e->x = NULL, e->idfd = -1;
}

static int make_entries(suf *u, size_t budget, ids_fn ids, void *ictx, uint64_t ndocs, entries *e, sl_dedup_stats *st,
                        sl_err *err)
{
    e->x = NULL, e->idfd = -1;
    /* by kept document */
    sl_xsort *a = sl_xsort_new(3, budget / 3, "cluster members");
    int rc = 0;
    uint64_t rec[5];
    for (size_t i = 0; i < u->len && rc == 0; i++) {
        uint32_t r = suf_find(u, (uint32_t)i);
        rec[0] = u->n[r].g, rec[1] = u->n[i].g, rec[2] = u->n[r].size;
        if (r == i) {
            st->clusters++;
            st->hist[u->n[i].size < 64 ? u->n[i].size : 64]++;
        } else {
            st->removed++;
        }
        rc = sl_xsort_add(a, rec, err);
    }
    suf_free(u);
    if (rc == 0)
        rc = sl_xsort_done(a, err);
    e->x = sl_xsort_new(5, budget / 3, "cluster entries");
    wr idw;
    if (rc == 0 && (e->idfd = sl_spool_fd("kept ids", err)) < 0)
        rc = -1;
    wr_init(&idw, NULL, e->idfd, "kept ids", 0);
    sl_buf id = {0};
    uint64_t next = 0, root = UINT64_MAX, idoff = 0, idlen = 0;
    const uint64_t *m;
    while (rc == 0 && (rc = sl_xsort_next(a, &m, err)) == 1) {
        if (m[0] != root) {
            root = m[0];
            if (root >= ndocs) {
                rc = sl_errf(err, "document %llu in a pair, of %llu documents", (unsigned long long)root,
                             (unsigned long long)ndocs);
                break;
            }
            while (next <= root) {
                int k = ids(ictx, &id, err);
                if (k <= 0) {
                    rc = k < 0 ? -1 : sl_errf(err, "fewer document ids than documents");
                    break;
                }
                next++;
            }
            if (rc < 0)
                break;
            idoff = idw.off, idlen = id.len;
            if (wr_put(&idw, id.data, id.len, err) < 0) {
                rc = -1;
                break;
            }
        }
        rec[0] = m[1], rec[1] = m[0], rec[2] = m[2], rec[3] = idoff, rec[4] = idlen;
        if (sl_xsort_add(e->x, rec, err) < 0)
            rc = -1;
        else
            rc = 0;
    }
    sl_buf_free(&id);
    if (rc == 0 && wr_flush(&idw, err) < 0)
        rc = -1;
    wr_free(&idw);
    sl_xsort_free(a);
    if (rc == 0 && sl_xsort_done(e->x, err) < 0)
        rc = -1;
    return rc < 0 ? -1 : 0;
}

/* --- filter: the documents with their entries ------------------------------ */

typedef struct {
    uint64_t g, root, size;
    sl_buf kept; /* the kept document's id (JSON) */
    int have;    /* an entry is held */
    int done;    /* no more */
} entry;

typedef int (*entry_fn)(void *ctx, entry *e, sl_err *err); /* fills e: 1, 0 at the end, -1 */

/* Appends the annotation fields to a line {...}\n. */
static void annotate_line(sl_buf *line, uint64_t cluster, uint64_t count)
{
    if (line->len >= 2 && line->data[line->len - 1] == '\n' && line->data[line->len - 2] == '}') {
        line->len -= 2;
        int empty = line->len == 1; /* "{" */
        sl_buf_printf(line, "%s\"dup_cluster\":%llu,\"dup_count\":%llu}\n", empty ? "" : ",",
                      (unsigned long long)cluster, (unsigned long long)count);
    }
}

typedef struct {
    const sl_dedup_opts *o;
    sl_output *out, *removed;
    entry_fn next;
    void *ctx;
    entry e;
    sl_buf tmp;
    sl_dedup_stats *st;
} filt;

/* Document g (its id and its output line): written, annotated or dropped. */
static int filter_doc(filt *f, uint64_t g, const sl_buf *id, sl_buf *line, sl_err *err)
{
    entry *e = &f->e;
    if (!e->have && !e->done) {
        int k = f->next(f->ctx, e, err);
        if (k < 0)
            return -1;
        e->have = k == 1, e->done = k == 0;
    }
    if (e->have && e->g < g)
        return sl_errf(err, "clusters: entry for document %llu out of order", (unsigned long long)e->g);
    uint64_t root = g, size = 1;
    int drop = 0;
    if (e->have && e->g == g) {
        root = e->root, size = e->size;
        e->have = 0;
        drop = root != g;
    }
    if (drop) {
        if (f->removed) {
            sl_buf_clear(&f->tmp);
            sl_buf_printf(&f->tmp, "{\"id\":%s,\"cluster\":%llu,\"kept\":%s}\n", id->data, (unsigned long long)root,
                          e->kept.len ? e->kept.data : "null");
            if (sl_output_write(f->removed, f->tmp.data, f->tmp.len, err) < 0)
                return -1;
        }
    } else {
        f->st->kept++;
    }
    if (drop && !f->o->annotate)
        return 0;
    if (f->o->annotate)
        annotate_line(line, root, size);
    return sl_output_write(f->out, line->data, line->len, err);
}

/* --- sequential readers of file sections ---------------------------------- */

typedef struct {
    int fd;
    const char *name;
    uint64_t off, end;
    char *buf;
    size_t cap, n, pos;
} rd;

static void rd_init(rd *r, int fd, const char *name, uint64_t off, uint64_t len, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->fd = fd, r->name = name, r->off = off, r->end = off + len;
    r->cap = cap < 64 ? 64 : cap;
    r->buf = sl_xmalloc(r->cap);
}

/* Bytes left in the section. */
static uint64_t rd_left(const rd *r)
{
    return (r->end - r->off) + (r->n - r->pos);
}

static void rd_free(rd *r)
{
    free(r->buf);
    r->buf = NULL;
}

/* n bytes: 0, 1 at the section's end (no byte), -1 (a record cut by the end, or an error) */
static int rd_get(rd *r, void *p, size_t n, sl_err *err)
{
    char *c = p;
    size_t want = n;
    while (n) {
        if (r->pos == r->n) {
            if (r->off == r->end) {
                if (n == want)
                    return 1;
                return sl_errf(err, "%s: offset %llu: a record cut short", r->name, (unsigned long long)r->off);
            }
            size_t k = r->end - r->off < r->cap ? (size_t)(r->end - r->off) : r->cap;
            if (pread_all(r->fd, r->buf, k, r->off, r->name, err) < 0)
                return -1;
            r->off += k, r->n = k, r->pos = 0;
        }
        size_t k = r->n - r->pos < n ? r->n - r->pos : n;
        memcpy(c, r->buf + r->pos, k);
        r->pos += k, c += k, n -= k;
    }
    return 0;
}

/* ids sections, one after the other: u32 length + id */
typedef struct {
    rd *r;
    size_t n, at;
} idsrc;

static int ids_next(void *ctx, sl_buf *id, sl_err *err)
{
    idsrc *s = ctx;
    while (s->at < s->n) {
        unsigned char b[4];
        int k = rd_get(&s->r[s->at], b, 4, err);
        if (k < 0)
            return -1;
        if (k == 1) {
            s->at++;
            continue;
        }
        uint32_t len = sl_get_le32(b);
        if (len > rd_left(&s->r[s->at]))
            return sl_errf(err, "%s: an id cut short", s->r[s->at].name);
        sl_buf_clear(id);
        sl_buf_reserve(id, (size_t)len + 1);
        if (rd_get(&s->r[s->at], id->data, len, err) != 0)
            return sl_errf(err, "%s: an id cut short", s->r[s->at].name);
        id->len = len;
        id->data[len] = 0;
        return 1;
    }
    return 0;
}

/* entries of an external sort, with the kept ids in a temporary file */
static int entries_next(void *ctx, entry *e, sl_err *err)
{
    entries *es = ctx;
    const uint64_t *m;
    int k = sl_xsort_next(es->x, &m, err);
    if (k <= 0)
        return k;
    e->g = m[0], e->root = m[1], e->size = m[2];
    sl_buf_clear(&e->kept);
    sl_buf_reserve(&e->kept, (size_t)m[4] + 1);
    if (m[4] && pread_all(es->idfd, e->kept.data, (size_t)m[4], m[3], "temporary file of the kept ids", err) < 0)
        return -1;
    e->kept.len = (size_t)m[4];
    e->kept.data[e->kept.len] = 0;
    return 1;
}

/* entries of a clusters file section: g, root, size, id length, id */
static int file_entries_next(void *ctx, entry *e, sl_err *err)
{
    rd *r = ctx;
    unsigned char b[32];
    int k = rd_get(r, b, 32, err);
    if (k != 0)
        return k == 1 ? 0 : -1;
    e->g = sl_get_le64(b), e->root = sl_get_le64(b + 8), e->size = sl_get_le64(b + 16);
    uint64_t len = sl_get_le64(b + 24);
    if (len > rd_left(r))
        return sl_errf(err, "%s: an id cut short", r->name);
    sl_buf_clear(&e->kept);
    sl_buf_reserve(&e->kept, (size_t)len + 1);
    if (rd_get(r, e->kept.data, (size_t)len, err) != 0)
        return sl_errf(err, "%s: an id cut short", r->name);
    e->kept.len = (size_t)len;
    e->kept.data[len] = 0;
    return 1;
}

/* --- the whole dedup in one process --------------------------------------- */

static void signer_free(signer *s);

/* Sets up everything the signing pass needs, its MinHash included; on failure
 * nothing is left to free. */
static int signer_init(signer *s, const sl_dedup_opts *o, size_t budget, sl_err *err)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    if (!(s->mh = sl_minhash_new(&o->mh, err)))
        return -1;
    s->rows = o->mh.rows;
    s->buckets = o->mh.buckets;
    s->jacc = o->jaccard_on;
    s->recs = sl_xsort_new(s->rows + 2, budget / 2, "signature buckets");
    s->idh = XXH64_createState();
    XXH64_reset(s->idh, 0);
    if (s->jacc) {
        s->shd = sl_xcalloc(1, sizeof *s->shd);
        s->shi = sl_xcalloc(1, sizeof *s->shi);
        int a = sl_spool_fd("shingle sets", err);
        int b = a < 0 ? -1 : sl_spool_fd("shingle sets", err);
        if (b < 0) {
            if (a >= 0)
                close(a);
            free(s->shd), free(s->shi);
            s->shd = s->shi = NULL;
            signer_free(s);
            return -1;
        }
        wr_init(s->shd, NULL, a, "shingle sets", 0);
        wr_init(s->shi, NULL, b, "shingle sets", 0);
    }
    return 0;
}

static void signer_free(signer *s)
{
    sl_xsort_free(s->recs);
    s->recs = NULL;
    if (s->idh)
        XXH64_freeState(s->idh);
    s->idh = NULL;
    wr *w[2] = {s->shd, s->shi};
    for (int i = 0; i < 2; i++)
        if (w[i]) {
            close(w[i]->fd);
            wr_free(w[i]);
            free(w[i]);
        }
    s->shd = s->shi = NULL;
    sl_minhash_free(s->mh);
    s->mh = NULL;
}

int sl_lsh_dedup(sl_docreader *r, const sl_dedup_opts *o, size_t budget, sl_output *out, sl_dedup_stats *st,
                 sl_err *err)
{
    signer s;
    if (signer_init(&s, o, budget, err) < 0)
        return -1;
    int R = o->mh.rows, rc = 0;
    int idfd = sl_spool_fd("document ids", err);
    wr ids;
    wr_init(&ids, NULL, idfd, "document ids", 0);
    s.ids = &ids;
    if (idfd < 0 || !(s.spool = sl_spool_new("documents", err)))
        rc = -1;
    if (rc == 0)
        rc = sign_all(r, &s, budget, o->progress, err);
    st->docs = s.docs, st->empty = s.empty, st->no_signature = s.docs - s.nsig;
    if (rc == 0 && s.jacc && (wr_flush(s.shd, err) < 0 || wr_flush(s.shi, err) < 0))
        rc = -1;
    if (rc == 0 && wr_flush(&ids, err) < 0)
        rc = -1;
    /* buckets and clusters */
    suf u = {0};
    shsrc src = {.fd_data = s.shd ? s.shd->fd : -1,
                 .fd_idx = s.shi ? s.shi->fd : -1,
                 .docs = s.docs,
                 .name = "temporary file of the shingle sets",
                 .data_len = s.shd ? s.shd->off : 0};
    shlookup L = {&src, 1};
    walker w;
    walker_init(&w, R, o, &L, suf_union, &u);
    const uint64_t *m;
    while (rc == 0 && (rc = sl_xsort_next(s.recs, &m, err)) == 1)
        rc = walk(&w, m, err);
    walker_free(&w);
    sl_xsort_free(s.recs);
    s.recs = NULL;
    entries e = {NULL, -1};
    rd idr;
    rd_init(&idr, idfd, "temporary file of the document ids", 0, ids.off, 1 << 16);
    idsrc is = {&idr, 1, 0};
    if (rc == 0)
        rc = make_entries(&u, budget, ids_next, &is, s.docs, &e, st, err);
    suf_free(&u);
    rd_free(&idr);
    /* the documents again */
    sl_output *removed = NULL;
    if (rc == 0 && o->removed && !(removed = sl_output_open(o->removed, err)))
        rc = -1;
    if (rc == 0) {
        filt f = {o, out, removed, entries_next, &e, {0}, {0}, st};
        sl_buf id = {0}, line = {0};
        rewind(s.spool);
        for (uint64_t g = 0; g < s.docs && rc == 0; g++) {
            if (sl_spool_get_blob(s.spool, &id, err) != 0 || sl_spool_get_blob(s.spool, &line, err) != 0)
                rc = -1;
            else
                rc = filter_doc(&f, g, &id, &line, err);
        }
        sl_buf_free(&id);
        sl_buf_free(&line);
        sl_buf_free(&f.tmp);
        sl_buf_free(&f.e.kept);
    }
    if (removed) {
        if (rc < 0)
            sl_output_abort(removed);
        else if (sl_output_commit(removed, err) < 0)
            rc = -1;
    }
    entries_free(&e);
    wr_free(&ids);
    if (idfd >= 0)
        close(idfd);
    sl_spool_close(s.spool);
    signer_free(&s);
    return rc < 0 ? -1 : 0;
}

/* --- the steps ------------------------------------------------------------ */

/* Copies a temporary file's bytes [0, n) into w. */
static int copy_fd(wr *w, int fd, uint64_t n, const char *name, sl_err *err)
{
    size_t cap = (size_t)1 << 20;
    char *buf = sl_xmalloc(cap);
    int rc = 0;
    for (uint64_t off = 0; off < n && rc == 0;) {
        size_t k = n - off < cap ? (size_t)(n - off) : cap;
        if (pread_all(fd, buf, k, off, name, err) < 0 || wr_put(w, buf, k, err) < 0)
            rc = -1;
        off += k;
    }
    free(buf);
    return rc;
}

static int write_header(wr *w, const hdr *h, sl_err *err)
{
    unsigned char b[HDR_BYTES];
    hdr_encode(h, b);
    return wr_put(w, b, HDR_BYTES, err);
}

int sl_lsh_signatures(sl_docreader *r, const sl_dedup_opts *o, size_t budget, uint64_t part, uint64_t nparts,
                      const char *path, sl_err *err)
{
    signer s;
    if (signer_init(&s, o, budget, err) < 0)
        return -1;
    int R = o->mh.rows, rc = 0;
    sl_output *out = sl_output_open(path, err);
    wr w;
    wr_init(&w, out, -1, path, 1);
    s.ids = &w;
    hdr h;
    hdr_of(&h, MAGIC_SIG, o, o->jaccard_on);
    h.part = part, h.nparts = nparts;
    if (!out || write_header(&w, &h, err) < 0)
        rc = -1;
    if (rc == 0)
        rc = sign_all(r, &s, budget, o->progress, err);
    uint64_t t[T_WORDS] = {0};
    t[T_DOCS] = s.docs, t[T_EMPTY] = s.empty, t[T_NSIG] = s.nsig;
    t[T_IDS_OFF] = HDR_BYTES, t[T_IDS_BYTES] = w.off - HDR_BYTES;
    if (rc == 0 && s.jacc) {
        t[T_SH_OFF] = w.off;
        if (wr_flush(s.shd, err) < 0 ||
            copy_fd(&w, s.shd->fd, s.shd->off, "temporary file of the shingle sets", err) < 0)
            rc = -1;
        t[T_SHIDX_OFF] = w.off;
        if (rc == 0 && (wr_flush(s.shi, err) < 0 ||
                        copy_fd(&w, s.shi->fd, s.shi->off, "temporary file of the shingle sets", err) < 0))
            rc = -1;
    }
    t[T_BANDS_OFF] = w.off;
    uint64_t *rec = sl_xmalloc(((size_t)R + 2) * 8), n = 0;
    const uint64_t *m;
    while (rc == 0 && (rc = sl_xsort_next(s.recs, &m, err)) == 1) {
        memcpy(rec, m + 1, ((size_t)R + 1) * 8);
        le_words(rec, (size_t)R + 1);
        rc = wr_put(&w, rec, ((size_t)R + 1) * 8, err);
        n++;
    }
    free(rec);
    if (rc == 0 && n != s.nsig * (uint64_t)o->mh.buckets)
        rc = sl_errf(err, "%s: %llu band records for %llu signatures", path, (unsigned long long)n,
                     (unsigned long long)s.nsig);
    t[T_IDS_HASH] = XXH64_digest(s.idh);
    if (rc == 0 && wr_trailer(&w, t, err) < 0)
        rc = -1;
    if (out) {
        if (rc < 0)
            sl_output_abort(out);
        else if (sl_output_commit(out, err) < 0)
            rc = -1;
    }
    wr_free(&w);
    signer_free(&s);
    return rc < 0 ? -1 : 0;
}

/* The signature files of a directory, checked: all parts, one N, one configuration. */
typedef struct {
    char **paths;
    mhfile *f;
    size_t n;
    uint64_t *base; /* documents before part p; base[n]: all */
    uint64_t sigset;
} sigset;

static void sigset_free(sigset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->f)
            mh_close(&s->f[i]);
        free(s->paths[i]);
    }
    free(s->paths);
    free(s->f);
    free(s->base);
    memset(s, 0, sizeof *s);
}

static int sigset_open(sigset *s, const char *dir, const sl_dedup_opts *o, sl_err *err)
{
    memset(s, 0, sizeof *s);
    int k = sl_parts_list(dir, &s->paths, &s->n, err);
    if (k < 0)
        return -1;
    if (k == 0)
        return sl_errf(err, "%s: not a directory of signature part files", dir);
    s->f = sl_xcalloc(s->n, sizeof *s->f);
    for (size_t i = 0; i < s->n; i++)
        s->f[i].fd = -1;
    s->base = sl_xcalloc(s->n + 1, sizeof *s->base);
    XXH64_state_t *h = XXH64_createState();
    XXH64_reset(h, 0);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        mhfile *f = &s->f[i];
        if (mh_open(f, s->paths[i], MAGIC_SIG, err) < 0 || mh_check_config(f, o, err) < 0) {
            rc = -1;
            break;
        }
        if (f->h.part != i || f->h.nparts != s->n) {
            rc = sl_errf(err, "%s: holds part %llu of %llu, not %zu of %zu", f->name, (unsigned long long)f->h.part,
                         (unsigned long long)f->h.nparts, i, s->n);
            break;
        }
        const uint64_t *t = f->t;
        uint64_t per = (uint64_t)o->mh.buckets * ((uint64_t)o->mh.rows + 1) * 8; /* band bytes per signature */
        int bad = t[T_BANDS_OFF] > t[T_SIZE] - TRL_BYTES ||
                  t[T_NSIG] > (t[T_SIZE] - TRL_BYTES - t[T_BANDS_OFF]) / per ||
                  t[T_BANDS_OFF] + t[T_NSIG] * per + TRL_BYTES != t[T_SIZE] || t[T_IDS_OFF] != HDR_BYTES ||
                  t[T_NSIG] > t[T_DOCS] || t[T_BANDS_OFF] < HDR_BYTES || t[T_IDS_BYTES] > t[T_BANDS_OFF] - HDR_BYTES ||
                  t[T_DOCS] > t[T_IDS_BYTES] / 4;
        if (!bad && f->h.shingles) /* ids | shingle sets | their index (8 bytes per document) | bands */
            bad = t[T_SH_OFF] != HDR_BYTES + t[T_IDS_BYTES] || t[T_SHIDX_OFF] < t[T_SH_OFF] ||
                  t[T_SHIDX_OFF] > t[T_BANDS_OFF] || (t[T_BANDS_OFF] - t[T_SHIDX_OFF]) / 8 != t[T_DOCS] ||
                  (t[T_BANDS_OFF] - t[T_SHIDX_OFF]) % 8;
        if (bad) {
            rc = sl_errf(err, "%s: sections do not add up: damaged", f->name);
            break;
        }
        s->base[i + 1] = s->base[i] + f->t[T_DOCS];
        XXH64_update(h, &f->t[T_BODY_HASH], 8);
    }
    s->sigset = XXH64_digest(h) ^ s->n;
    XXH64_freeState(h);
    if (rc < 0)
        sigset_free(s);
    return rc;
}

static int pair_write(void *ctx, uint64_t a, uint64_t b, sl_err *err)
{
    wr *w = ctx;
    unsigned char p[16];
    sl_put_le64(p, a);
    sl_put_le64(p + 8, b);
    return wr_put(w, p, 16, err);
}

typedef struct {
    rd r;
    uint64_t base;
    uint64_t *rec; /* band, values, g */
} prd;

static int prd_load(prd *p, int R, uint64_t band, sl_err *err)
{
    int k = rd_get(&p->r, p->rec + 1, ((size_t)R + 1) * 8, err);
    if (k != 0)
        return k;
    le_words(p->rec + 1, (size_t)R + 1);
    p->rec[0] = band;
    p->rec[R + 1] += p->base;
    return 0;
}

int sl_lsh_buckets(const sl_dedup_opts *o, size_t budget, const char *sigdir, uint64_t part, uint64_t nparts,
                   const char *path, sl_err *err)
{
    sigset S;
    if (sigset_open(&S, sigdir, o, err) < 0)
        return -1;
    int R = o->mh.rows, B = o->mh.buckets, rc = 0;
    uint64_t b0 = (uint64_t)B * part / nparts, b1 = (uint64_t)B * (part + 1) / nparts;
    shsrc *src = sl_xcalloc(S.n, sizeof *src);
    for (size_t i = 0; i < S.n; i++)
        src[i] = (shsrc){.fd_data = S.f[i].fd,
                         .fd_idx = S.f[i].fd,
                         .data_off = S.f[i].t[T_SH_OFF],
                         .idx_off = S.f[i].t[T_SHIDX_OFF],
                         .base = S.base[i],
                         .docs = S.f[i].t[T_DOCS],
                         .name = S.f[i].name,
                         .data_len = S.f[i].t[T_SHIDX_OFF] - S.f[i].t[T_SH_OFF]};
    shlookup L = {src, S.n};
    sl_output *out = sl_output_open(path, err);
    wr w;
    wr_init(&w, out, -1, path, 1);
    hdr h;
    hdr_of(&h, MAGIC_PAIR, o, o->jaccard_on);
    h.part = part, h.nparts = nparts, h.x1 = b0, h.x2 = b1, h.sigset = S.sigset;
    if (!out || write_header(&w, &h, err) < 0)
        rc = -1;
    walker wk;
    walker_init(&wk, R, o, &L, pair_write, &w);
    prd *p = sl_xcalloc(S.n, sizeof *p);
    size_t *heap = sl_xmalloc(S.n * sizeof *heap);
    size_t rb = ((size_t)R + 1) * 8, per = budget / 2 / (S.n ? S.n : 1);
    per = per < rb * 16 ? rb * 16 : per > ((size_t)1 << 20) ? (size_t)1 << 20 : per;
    for (size_t i = 0; i < S.n; i++)
        p[i].rec = sl_xmalloc(((size_t)R + 2) * 8), p[i].base = S.base[i];
    for (uint64_t b = b0; b < b1 && rc == 0; b++) {
        size_t nh = 0;
        for (size_t i = 0; i < S.n && rc == 0; i++) {
            uint64_t nsig = S.f[i].t[T_NSIG];
            rd_free(&p[i].r);
            rd_init(&p[i].r, S.f[i].fd, S.f[i].name, S.f[i].t[T_BANDS_OFF] + b * nsig * rb, nsig * rb, per);
            int k = prd_load(&p[i], R, b, err);
            if (k < 0)
                rc = -1;
            else if (k == 0)
                heap[nh++] = i;
        }
        /* a heap of the parts by their next record (values, then document) */
#define LESS(x, y) (sl_words_cmp(p[x].rec + 1, p[y].rec + 1, R + 1) < 0)
        for (size_t i = nh; i-- > 0;)
            for (size_t j = i;;) {
                size_t l = 2 * j + 1, mn = j;
                if (l < nh && LESS(heap[l], heap[mn]))
                    mn = l;
                if (l + 1 < nh && LESS(heap[l + 1], heap[mn]))
                    mn = l + 1;
                if (mn == j)
                    break;
                size_t t = heap[j];
                heap[j] = heap[mn], heap[mn] = t, j = mn;
            }
        while (nh && rc == 0) {
            size_t top = heap[0];
            if (walk(&wk, p[top].rec, err) < 0) {
                rc = -1;
                break;
            }
            int k = prd_load(&p[top], R, b, err);
            if (k < 0) {
                rc = -1;
                break;
            }
            if (k == 1)
                heap[0] = heap[--nh];
            for (size_t j = 0;;) {
                size_t l = 2 * j + 1, mn = j;
                if (l < nh && LESS(heap[l], heap[mn]))
                    mn = l;
                if (l + 1 < nh && LESS(heap[l + 1], heap[mn]))
                    mn = l + 1;
                if (mn == j)
                    break;
                size_t t = heap[j];
                heap[j] = heap[mn], heap[mn] = t, j = mn;
            }
        }
#undef LESS
    }
    for (size_t i = 0; i < S.n; i++) {
        rd_free(&p[i].r);
        free(p[i].rec);
    }
    free(p);
    free(heap);
    uint64_t t[T_WORDS] = {0};
    t[T_DOCS] = S.base[S.n], t[T_COUNT] = wk.pairs;
    walker_free(&wk);
    if (rc == 0 && wr_trailer(&w, t, err) < 0)
        rc = -1;
    if (out) {
        if (rc < 0)
            sl_output_abort(out);
        else if (sl_output_commit(out, err) < 0)
            rc = -1;
    }
    wr_free(&w);
    free(src);
    sigset_free(&S);
    return rc < 0 ? -1 : 0;
}

int sl_lsh_cluster(const sl_dedup_opts *o, size_t budget, const char *sigdir, const char *pairdir, const char *path,
                   sl_dedup_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    sigset S;
    if (sigset_open(&S, sigdir, o, err) < 0)
        return -1;
    char **pp = NULL;
    size_t np = 0;
    int rc = 0, k = sl_parts_list(pairdir, &pp, &np, err);
    if (k <= 0)
        rc = k < 0 ? -1 : sl_errf(err, "%s: not a directory of pair part files", pairdir);
    suf u = {0};
    int B = o->mh.buckets;
    uint64_t pairs = 0;
    for (size_t i = 0; i < np && rc == 0; i++) {
        mhfile f;
        if (mh_open(&f, pp[i], MAGIC_PAIR, err) < 0) {
            rc = -1;
            break;
        }
        if (mh_check_config(&f, o, err) < 0)
            rc = -1;
        else if (f.h.sigset != S.sigset)
            rc = sl_errf(err, "%s: made from other signature files than those in %s (run the buckets step again)",
                         f.name, sigdir);
        else if (f.h.part != i || f.h.nparts != np || f.h.x1 != (uint64_t)B * i / np ||
                 f.h.x2 != (uint64_t)B * (i + 1) / np)
            rc = sl_errf(err, "%s: holds bucket part %llu of %llu, not %zu of %zu", f.name,
                         (unsigned long long)f.h.part, (unsigned long long)f.h.nparts, i, np);
        else if (f.t[T_SIZE] != HDR_BYTES + f.t[T_COUNT] * 16 + TRL_BYTES)
            rc = sl_errf(err, "%s: sections do not add up: damaged", f.name);
        if (rc == 0) {
            rd r;
            rd_init(&r, f.fd, f.name, HDR_BYTES, f.t[T_COUNT] * 16, (size_t)1 << 20);
            unsigned char b[16];
            while (rc == 0 && (k = rd_get(&r, b, 16, err)) == 0) {
                uint64_t a = sl_get_le64(b), c = sl_get_le64(b + 8);
                if (a >= S.base[S.n] || c >= S.base[S.n])
                    rc = sl_errf(err, "%s: a pair of documents beyond the %llu signed", f.name,
                                 (unsigned long long)S.base[S.n]);
                else
                    rc = suf_union(&u, a, c, err);
                pairs++;
            }
            if (k < 0)
                rc = -1;
            rd_free(&r);
        }
        mh_close(&f);
    }
    for (size_t i = 0; i < np; i++)
        free(pp[i]);
    free(pp);
    /* the clusters, with the kept ids from the signature files */
    rd *idr = sl_xcalloc(S.n ? S.n : 1, sizeof *idr);
    for (size_t i = 0; i < S.n; i++)
        rd_init(&idr[i], S.f[i].fd, S.f[i].name, S.f[i].t[T_IDS_OFF], S.f[i].t[T_IDS_BYTES], (size_t)1 << 16);
    idsrc is = {idr, S.n, 0};
    entries e = {NULL, -1};
    if (rc == 0)
        rc = make_entries(&u, budget, ids_next, &is, S.base[S.n], &e, st, err);
    suf_free(&u);
    for (size_t i = 0; i < S.n; i++)
        rd_free(&idr[i]);
    free(idr);
    for (size_t i = 0; i < S.n; i++) {
        st->empty += S.f[i].t[T_EMPTY];
        st->no_signature += S.f[i].t[T_DOCS] - S.f[i].t[T_NSIG];
    }
    st->docs = S.base[S.n];
    st->kept = st->docs - st->removed;
    /* the clusters file */
    sl_output *out = rc == 0 ? sl_output_open(path, err) : NULL;
    if (rc == 0 && !out)
        rc = -1;
    wr w;
    wr_init(&w, out, -1, path, 1);
    hdr h;
    hdr_of(&h, MAGIC_CLU, o, o->jaccard_on);
    h.nparts = S.n, h.sigset = S.sigset;
    if (rc == 0 && write_header(&w, &h, err) < 0)
        rc = -1;
    uint64_t *sec = sl_xcalloc(S.n + 1, sizeof *sec), nent = 0;
    size_t p = 0;
    entry en = {0};
    unsigned char b[32];
    while (rc == 0 && (k = entries_next(&e, &en, err)) == 1) {
        while (p < S.n && S.base[p] <= en.g)
            sec[p++] = w.off; /* part p's entries start here */
        sl_put_le64(b, en.g), sl_put_le64(b + 8, en.root), sl_put_le64(b + 16, en.size);
        sl_put_le64(b + 24, en.kept.len);
        if (wr_put(&w, b, 32, err) < 0 || wr_put(&w, en.kept.data, en.kept.len, err) < 0)
            rc = -1;
        nent++;
    }
    if (k < 0)
        rc = -1;
    while (p <= S.n)
        sec[p++] = w.off;
    uint64_t t[T_WORDS] = {0};
    t[T_TABLE] = w.off;
    for (size_t i = 0; i < S.n && rc == 0; i++) {
        const uint64_t *ft = S.f[i].t;
        uint64_t row[5] = {ft[T_DOCS], ft[T_IDS_HASH], sec[i], ft[T_EMPTY], ft[T_NSIG]};
        for (int j = 0; j < 5 && rc == 0; j++)
            rc = wr_u64(&w, row[j], err);
    }
    if (rc == 0)
        rc = wr_u64(&w, sec[S.n], err);
    t[T_DOCS] = st->docs, t[T_EMPTY] = st->empty, t[T_NSIG] = st->docs - st->no_signature;
    t[T_COUNT] = nent, t[T_CLUSTERS] = st->clusters;
    if (rc == 0 && wr_trailer(&w, t, err) < 0)
        rc = -1;
    if (out) {
        if (rc < 0)
            sl_output_abort(out);
        else if (sl_output_commit(out, err) < 0)
            rc = -1;
    }
    (void)pairs;
    sl_buf_free(&en.kept);
    free(sec);
    wr_free(&w);
    entries_free(&e);
    sigset_free(&S);
    return rc < 0 ? -1 : 0;
}

int sl_lsh_filter(sl_docreader *r, const sl_dedup_opts *o, const char *clusters, uint64_t part, uint64_t nparts,
                  sl_output *out, sl_dedup_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    mhfile f;
    if (mh_open(&f, clusters, MAGIC_CLU, err) < 0)
        return -1;
    int rc = mh_check_config(&f, o, err);
    uint64_t N = f.h.nparts;
    if (rc == 0 && N != nparts)
        rc = sl_errf(err,
                     "%s: made from %llu signature parts; this filter is part %llu of %llu (use the --part of the "
                     "signatures step)",
                     clusters, (unsigned long long)N, (unsigned long long)part, (unsigned long long)nparts);
    uint64_t tb = f.t[T_TABLE];
    if (rc == 0 && tb + (N * 5 + 1) * 8 + TRL_BYTES != f.t[T_SIZE])
        rc = sl_errf(err, "%s: sections do not add up: damaged", clusters);
    uint64_t base = 0, row[5] = {0}, next_sec = 0;
    unsigned char b[40];
    for (uint64_t i = 0; rc == 0 && i <= part; i++) {
        if (pread_all(f.fd, b, 40, tb + i * 40, clusters, err) < 0) {
            rc = -1;
            break;
        }
        for (int j = 0; j < 5; j++)
            row[j] = sl_get_le64(b + 8 * j);
        if (i < part)
            base += row[0];
    }
    if (rc == 0 && pread_all(f.fd, b, 8, part + 1 < N ? tb + (part + 1) * 40 + 16 : tb + N * 40, clusters, err) < 0)
        rc = -1;
    next_sec = sl_get_le64(b);
    if (rc == 0 && (row[2] > next_sec || next_sec > tb))
        rc = sl_errf(err, "%s: sections do not add up: damaged", clusters);
    rd er;
    rd_init(&er, f.fd, clusters, row[2], next_sec - row[2], (size_t)1 << 16);
    sl_output *removed = NULL;
    if (rc == 0 && o->removed && !(removed = sl_output_open(o->removed, err)))
        rc = -1;
    filt fl = {o, out, removed, file_entries_next, &er, {0}, {0}, st};
    XXH64_state_t *idh = XXH64_createState();
    XXH64_reset(idh, 0);
    sl_textdoc d = {0};
    sl_buf id = {0}, line = {0};
    uint64_t n = 0;
    sl_progress *pg = sl_progress_start("dedup", "docs", o->progress);
    sl_progress_track(pg, sl_docreader_position, r);
    while (rc == 0) {
        int k = sl_docreader_next(r, &d, err);
        if (k <= 0) {
            rc = k;
            break;
        }
        if (n == row[0]) {
            rc = sl_errf(err,
                         "%s: more documents in this part than in part %llu signed (%llu): other inputs or "
                         "another --part than the signatures step's",
                         d.source ? d.source : "input", (unsigned long long)part, (unsigned long long)row[0]);
            break;
        }
        st->empty += d.text.len == 0;
        sl_buf_clear(&id);
        sl_read_put_id(&id, &d);
        ids_hash_add(idh, &id);
        sl_buf_clear(&line);
        sl_read_put_doc(&line, &d);
        rc = filter_doc(&fl, base + n, &id, &line, err);
        n++;
        sl_progress_add(pg, 1, d.text.len);
        if (d.text.cap > ((size_t)1 << 20))
            sl_buf_free(&d.text);
    }
    sl_progress_done(pg);
    if (rc == 0 && (n != row[0] || XXH64_digest(idh) != row[1]))
        rc = sl_errf(err,
                     "part %llu of %llu: %llu documents, not the %llu signed (or other ids): other inputs or "
                     "another --part than the signatures step's",
                     (unsigned long long)part, (unsigned long long)nparts, (unsigned long long)n,
                     (unsigned long long)row[0]);
    if (rc == 0 && !fl.e.have && !fl.e.done) { /* every entry of the part used */
        int k = file_entries_next(&er, &fl.e, err);
        if (k != 0)
            rc = k < 0 ? -1 : sl_errf(err, "%s: an entry beyond this part's documents: damaged", clusters);
    } else if (rc == 0 && fl.e.have) {
        rc = sl_errf(err, "%s: an entry beyond this part's documents: damaged", clusters);
    }
    st->docs = n;
    st->removed = n - st->kept;
    if (removed) {
        if (rc < 0)
            sl_output_abort(removed);
        else if (sl_output_commit(removed, err) < 0)
            rc = -1;
    }
    XXH64_freeState(idh);
    sl_textdoc_free(&d);
    sl_buf_free(&id);
    sl_buf_free(&line);
    sl_buf_free(&fl.tmp);
    sl_buf_free(&fl.e.kept);
    rd_free(&er);
    mh_close(&f);
    return rc < 0 ? -1 : 0;
}

char *sl_lsh_step_file(const char *dir, int step, uint64_t part, uint64_t nparts)
{
    size_t cap = strlen(dir) + 64;
    char *path = sl_xmalloc(cap);
    if (step == SL_LSH_SIGNATURES)
        snprintf(path, cap, "%s/sigs/sig-%05llu-of-%05llu.mhsig", dir, (unsigned long long)part,
                 (unsigned long long)nparts);
    else if (step == SL_LSH_BUCKETS)
        snprintf(path, cap, "%s/pairs/pairs-%05llu-of-%05llu.mhpair", dir, (unsigned long long)part,
                 (unsigned long long)nparts);
    else
        snprintf(path, cap, "%s/clusters.mhclu", dir);
    return path;
}

int sl_lsh_step(int step, const sl_dedup_opts *o, size_t budget, const char *dir, uint64_t part, uint64_t nparts,
                sl_docreader *r, sl_output *out, sl_dedup_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    size_t cap = strlen(dir) + 64;
    char *path = sl_lsh_step_file(dir, step, part, nparts), *sigdir = sl_xmalloc(cap), *pairdir = sl_xmalloc(cap);
    snprintf(sigdir, cap, "%s/sigs", dir);
    snprintf(pairdir, cap, "%s/pairs", dir);
    int rc;
    if (step == SL_LSH_SIGNATURES)
        rc = sl_lsh_signatures(r, o, budget, part, nparts, path, err);
    else if (step == SL_LSH_BUCKETS)
        rc = sl_lsh_buckets(o, budget, sigdir, part, nparts, path, err);
    else if (step == SL_LSH_CLUSTER) {
        rc = sl_lsh_cluster(o, budget, sigdir, pairdir, path, st, err);
        if (rc == 0)
            rc = sl_dedup_report(o, st, err);
    } else
        rc = sl_lsh_filter(r, o, path, part, nparts, out, st, err);
    free(path);
    free(sigdir);
    free(pairdir);
    return rc;
}
