/* The dedup stage (dedup/dedup.h).
 *
 * Pass 1 reads the documents in batches; the keys (a 128-bit hash of the
 * text, or of each line, or a MinHash signature) are computed by OpenMP
 * threads, and each document goes to a spool file in input order. Then the
 * clusters are made: exact, a hash table (the first document of each text
 * is the root). Pass 2 reads the spool and writes the kept documents.
 * minhash is dedup/lsh.c. */
#include "dedup/dedup.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/hashtab.h"

#include "dedup/lsh.h"
#include "dedup/spool.h"
#include "stream/stats.h"
#include "base/json.h"
#include "stream/batch.h"
#include "stream/progress.h"
#include "stream/read.h"
#include "base/utf8.h"
#include "text/textnorm.h"

typedef struct {
    uint64_t lo, hi;
} key128;

static key128 key_of(const char *s, size_t n)
{
    XXH128_hash_t h = XXH3_128bits(s, n);
    return (key128){h.low64, h.high64};
}

/* --- a map from 128-bit keys to a document number ------------------------- */

typedef struct {
    uint32_t idx; /* document + 1; 0: empty slot */
    uint32_t n;   /* documents with this key */
    key128 k;
} slot;

static uint64_t key_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return ((const key128 *)key)->lo;
}

static uint64_t slot_hash(const void *entry, const void *ctx)
{
    (void)ctx;
    return ((const slot *)entry)->k.lo;
}

static int slot_eq(const void *key, const void *entry, const void *ctx)
{
    (void)ctx;
    const key128 *k = key;
    const slot *e = entry;
    return e->k.lo == k->lo && e->k.hi == k->hi;
}

static const sl_htab_type keymap_type = {.entry_size = sizeof(slot),
                                         .key_size = sizeof(uint32_t),
                                         .hash = key_hash,
                                         .entry_hash = slot_hash,
                                         .eq = slot_eq,
                                         .max_load = 50,
                                         .min_cap = 1024};

/* The slot of key k; a fresh one (*fresh = 1) is zeroed but for its key, and
 * the caller sets its idx. */
static slot *keymap_get(sl_htab *m, key128 k, int *fresh)
{
    slot *s = sl_htab_put(m, &keymap_type, &k, fresh);
    if (*fresh)
        s->k = k;
    return s;
}

/* --- union-find, as datatrove's MinhashDedupCluster ----------------------- */

typedef struct {
    uint32_t *parent, *size;
    size_t cap;
} uf;

static void uf_grow(uf *u, size_t n)
{
    if (n <= u->cap)
        return;
    size_t cap = u->cap ? u->cap : 4096;
    while (cap < n)
        cap *= 2;
    u->parent = sl_xrealloc(u->parent, cap * sizeof *u->parent);
    u->size = sl_xrealloc(u->size, cap * sizeof *u->size);
    for (size_t i = u->cap; i < cap; i++)
        u->parent[i] = (uint32_t)i, u->size[i] = 1;
    u->cap = cap;
}

static uint32_t uf_find(uf *u, uint32_t x)
{
    uint32_t r = x;
    while (u->parent[r] != r)
        r = u->parent[r];
    while (u->parent[x] != r) { /* path compression: the roots are not changed by it */
        uint32_t nx = u->parent[x];
        u->parent[x] = r;
        x = nx;
    }
    return r;
}

/* --- per-document work in a batch ----------------------------------------- */

typedef struct {
    sl_textdoc d;
    sl_buf line;   /* the output line (exact, minhash) */
    key128 key;    /* exact */
    key128 *lkeys; /* lines: per line; {0,0}: never removed */
    size_t nlines, lcap;
    size_t held; /* bytes of buffers kept after its last write */
} item;

typedef struct {
    sl_textnorm tn;
    sl_buf norm;
} worker;

static void line_keys(item *it, worker *w, size_t min_chars)
{
    it->nlines = 0;
    const char *s = it->d.text.data ? it->d.text.data : "";
    size_t n = it->d.text.len;
    for (size_t a = 0;;) {
        const char *nl = memchr(s + a, '\n', n - a);
        size_t b = nl ? (size_t)(nl - s) : n;
        sl_simplify_text(&w->tn, s + a, b - a, &w->norm);
        size_t cps = 0;
        for (size_t i = 0; i < w->norm.len; i++)
            cps += ((uint8_t)w->norm.data[i] & 0xC0) != 0x80;
        if (it->nlines == it->lcap) {
            it->lcap = it->lcap ? 2 * it->lcap : 16;
            it->lkeys = sl_xrealloc(it->lkeys, it->lcap * sizeof *it->lkeys);
        }
        key128 k = {0, 0};
        if (cps >= min_chars && cps > 0) {
            k = key_of(w->norm.data, w->norm.len);
            if (!k.lo && !k.hi)
                k.lo = 1;
        }
        it->lkeys[it->nlines++] = k;
        if (!nl)
            break;
        a = b + 1;
    }
}

/* spool records (sl_spool_put_blob): the id (JSON), the line; lines mode:
 * the id, the text, the meta, the lines' keys */

/* Appends the annotation fields to a line {...}\n. */
static void annotate_line(sl_buf *line, uint64_t cluster, uint64_t count)
{
    if (line->len >= 2 && line->data[line->len - 1] == '\n' && line->data[line->len - 2] == '}') {
        line->len -= 2;
        sl_buf_printf(line, ",\"dup_cluster\":%llu,\"dup_count\":%llu}\n", (unsigned long long)cluster,
                      (unsigned long long)count);
    }
}

/* --- the stage ------------------------------------------------------------ */

typedef struct {
    uint32_t idx;
    char *id;
} root_id;

static int cmp_root(const void *x, const void *y)
{
    const root_id *a = x, *b = y;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int write_file(const char *path, const sl_buf *b, sl_err *err)
{
    sl_output *out = sl_output_open(path, err);
    int rc = out ? sl_output_write(out, b->data, b->len, err) : -1;
    if (out)
        rc = rc < 0 ? (sl_output_abort(out), -1) : sl_output_commit(out, err);
    return rc;
}

void sl_dedup_plot_svg(sl_buf *b, const sl_dedup_stats *st)
{
    /* documents in clusters of each size 2..63, and 64 or more */
    uint64_t counts[63];
    double edges[64];
    for (int k = 2; k <= 64; k++) {
        counts[k - 2] = st->hist[k] * (uint64_t)k;
        edges[k - 2] = k;
    }
    edges[63] = 65;
    sl_histogram_svg(b, counts, edges, 63, "cluster size (64: 64 or more)", NULL, 0);
}

static int write_summary(const sl_dedup_opts *o, const sl_dedup_stats *st, sl_err *err)
{
    static const char *const modes[] = {"exact", "lines", "minhash"};
    sl_buf b = {0};
    sl_buf_printf(&b, "{\"mode\":\"%s\"", modes[o->mode]);
    if (o->mode == SL_DEDUP_EXACT)
        sl_buf_printf(&b, ",\"normalize\":%s", o->normalize ? "true" : "false");
    if (o->mode == SL_DEDUP_MINHASH)
        sl_buf_printf(&b, ",\"ngram\":%d,\"buckets\":%d,\"rows\":%d,\"seed\":%llu,\"hash\":\"%s\",\"language\":\"%s\"",
                      o->mh.ngram, o->mh.buckets, o->mh.rows, (unsigned long long)o->mh.seed,
                      sl_minhash_hash_name(o->mh.hash), o->mh.language ? o->mh.language : "en");
    if (o->mode == SL_DEDUP_MINHASH && o->jaccard_on) {
        char t[32];
        for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back as the same number */
            snprintf(t, sizeof t, "%.*g", prec, o->jaccard);
            if (strtod(t, NULL) == o->jaccard)
                break;
        }
        sl_buf_printf(&b, ",\"jaccard\":%s", t);
    }
    sl_buf_printf(&b, ",\"docs\":%llu,\"empty\":%llu,\"kept\":%llu,\"removed\":%llu", (unsigned long long)st->docs,
                  (unsigned long long)st->empty, (unsigned long long)st->kept, (unsigned long long)st->removed);
    if (o->mode == SL_DEDUP_LINES)
        sl_buf_printf(&b, ",\"lines\":%llu,\"lines_removed\":%llu", (unsigned long long)st->lines,
                      (unsigned long long)st->lines_removed);
    else
        sl_buf_printf(&b, ",\"clusters\":%llu", (unsigned long long)st->clusters);
    if (o->mode == SL_DEDUP_MINHASH)
        sl_buf_printf(&b, ",\"no_signature\":%llu", (unsigned long long)st->no_signature);
    if (o->mode != SL_DEDUP_LINES) {
        sl_buf_puts(&b, ",\"cluster_sizes\":{");
        int first = 1;
        for (int k = 2; k <= 64; k++)
            if (st->hist[k]) {
                sl_buf_printf(&b, "%s\"%s%d\":%llu", first ? "" : ",", k == 64 ? ">=" : "", k,
                              (unsigned long long)st->hist[k]);
                first = 0;
            }
        sl_buf_putc(&b, '}');
    }
    sl_buf_puts(&b, "}\n");
    int rc = write_file(o->summary, &b, err);
    sl_buf_free(&b);
    return rc;
}

int sl_dedup_report(const sl_dedup_opts *o, const sl_dedup_stats *st, sl_err *err)
{
    if (o->summary && write_summary(o, st, err) < 0)
        return -1;
    if (o->plot && o->mode != SL_DEDUP_LINES) {
        sl_buf b = {0};
        sl_dedup_plot_svg(&b, st);
        int rc = write_file(o->plot, &b, err);
        sl_buf_free(&b);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Pass 1 of exact and line deduplication on the batcher: a slot is an item. */
typedef struct {
    sl_docreader *r;
    const sl_dedup_opts *o;
    sl_dedup_stats *st;
    worker *wk; /* per team thread */
    sl_htab km;
    uf *u;
    sl_buf *idb;
    FILE *spool;
    sl_progress *pg;
    uint64_t ndocs, bytes_seen;
    sl_slot_keep keep; /* what the idle slots keep */
} pass1;

static int pass1_fill(void *ctx, void *sp, uint64_t *cost, sl_err *err)
{
    pass1 *c = ctx;
    item *it = sp;
    int got = sl_docreader_next(c->r, &it->d, err);
    if (got > 0)
        *cost = it->d.text.len;
    return got;
}

static void pass1_encode(void *ctx, int thread, void *sp)
{
    const pass1 *c = ctx;
    item *it = sp;
    worker *w = &c->wk[thread];
    const sl_dedup_opts *o = c->o;
    const char *text = it->d.text.data ? it->d.text.data : "";
    sl_buf_clear(&it->line);
    if (o->mode != SL_DEDUP_LINES)
        sl_read_put_doc(&it->line, &it->d);
    if (o->mode == SL_DEDUP_EXACT) {
        if (o->normalize) {
            sl_simplify_text(&w->tn, text, it->d.text.len, &w->norm);
            it->key = key_of(w->norm.data, w->norm.len);
        } else {
            it->key = key_of(text, it->d.text.len);
        }
    } else {
        line_keys(it, w, o->min_line_chars);
    }
}

static int pass1_write(void *ctx, void *sp, sl_err *err)
{
    pass1 *c = ctx;
    item *it = sp;
    const sl_dedup_opts *o = c->o;
    if (c->ndocs >= UINT32_MAX - 1)
        return sl_errf(err, "more than 4,294,967,294 documents: not supported");
    uint32_t idx = (uint32_t)c->ndocs++;
    uf_grow(c->u, c->ndocs);
    int empty = it->d.text.len == 0;
    c->st->empty += empty;
    sl_buf_clear(c->idb);
    sl_read_put_id(c->idb, &it->d);
    if (sl_spool_put_blob(c->spool, c->idb->data, c->idb->len, err) < 0)
        return -1;
    if (o->mode == SL_DEDUP_LINES) {
        if (sl_spool_put_blob(c->spool, it->d.text.data ? it->d.text.data : "", it->d.text.len, err) < 0 ||
            sl_spool_put_blob(c->spool, it->d.meta.data ? it->d.meta.data : "{}", it->d.meta.len ? it->d.meta.len : 2,
                              err) < 0 ||
            sl_spool_put_blob(c->spool, it->lkeys, it->nlines * sizeof *it->lkeys, err) < 0)
            return -1;
        /* the first document that has each line */
        for (size_t l = 0; l < it->nlines; l++) {
            if (!it->lkeys[l].lo && !it->lkeys[l].hi)
                continue;
            int fresh;
            slot *s = keymap_get(&c->km, it->lkeys[l], &fresh);
            if (fresh)
                s->idx = idx + 1;
        }
    } else {
        if (sl_spool_put_blob(c->spool, it->line.data, it->line.len, err) < 0)
            return -1;
        if (o->mode == SL_DEDUP_EXACT && !empty) {
            int fresh;
            slot *s = keymap_get(&c->km, it->key, &fresh);
            if (fresh)
                s->idx = idx + 1;
            s->n++;
            if (!fresh) {
                c->u->parent[idx] = s->idx - 1;
                c->u->size[s->idx - 1]++;
            }
        }
    }
    /* a slot keeps its buffers, within the batches' memory (sl_slot_keep_settle) */
    size_t held = it->d.text.cap + it->d.id.cap + it->d.meta.cap + it->line.cap + it->lcap * sizeof *it->lkeys;
    if (sl_slot_keep_settle(&c->keep, &it->held, held, it->d.text.len)) {
        sl_textdoc_free(&it->d);
        sl_buf_free(&it->line);
        free(it->lkeys);
        it->lkeys = NULL;
        it->lcap = 0;
    }
    sl_docreader_progress(c->r, c->pg, &c->bytes_seen);
    return 0;
}

static void pass1_free(void *ctx, void *sp)
{
    (void)ctx;
    item *it = sp;
    sl_textdoc_free(&it->d);
    sl_buf_free(&it->line);
    free(it->lkeys);
}

int sl_dedup_run(sl_docreader *r, const sl_docreader_opts *ro, const sl_dedup_opts *o, sl_output *out,
                 sl_dedup_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    if (o->mode == SL_DEDUP_LINES && o->annotate)
        return sl_err_set(err, SL_E_OPTION, "annotate", "`annotate`: not for line deduplication");
    size_t budget = ro->mem_budget ? ro->mem_budget : SL_DOCS_DEFAULT_MEM_BUDGET;
    if (o->mode == SL_DEDUP_MINHASH) {
        if (sl_lsh_dedup(r, o, budget, out, st, err) < 0)
            return -1;
        return sl_dedup_report(o, st, err);
    }
    int nthreads = omp_get_max_threads();
    size_t batch_limit = sl_docs_batch_cap(sl_mem_budget_split(budget).read_batch, nthreads);
    pass1 c = {.r = r,
               .o = o,
               .st = st,
               .wk = sl_xcalloc((size_t)nthreads, sizeof *c.wk),
               .keep = {.keep = 2 * batch_limit, .big = (size_t)64 << 10, .copies = 2}};
    sl_htab_init(&c.km, NULL);
    uf u = {0};
    sl_buf idb = {0}, tmp = {0}, tmp2 = {0};
    FILE *spool = sl_spool_new("documents", err);
    sl_output *removed = NULL;
    root_id *roots = NULL;
    size_t nroots = 0;
    sl_progress *pg = sl_progress_start("dedup", "docs", o->progress);
    sl_progress_track(pg, sl_docreader_position, r);
    c.spool = spool, c.u = &u, c.idb = &idb, c.pg = pg;
    int rc = spool ? 0 : -1;
    /* pass 1, on the ordered-parallel batcher (stream/batch.h): the keys and
     * lines made on the team, the documents spooled and the first one of
     * each key found in input order */
    if (rc == 0) {
        static const sl_batch_ops ops = {sizeof(item), pass1_encode, pass1_write, pass1_free};
        sl_batch_opts bo = {
            .max_items = 1024, .max_cost = batch_limit, .parallel_min_cost = (uint64_t)64 << 10, .threads = nthreads};
        sl_batcher *bt = sl_batcher_new(&ops, &c, &bo);
        rc = sl_batcher_run(bt, pass1_fill, err) < 0 ? -1 : 0;
        sl_batcher_free(bt);
    }
    uint64_t ndocs = c.ndocs;
    st->docs = ndocs;
    if (rc >= 0 && o->mode != SL_DEDUP_LINES)
        for (uint32_t i = 0; i < ndocs; i++)
            if (uf_find(&u, i) == i && u.size[i] >= 2) {
                st->clusters++;
                st->hist[u.size[i] < 64 ? u.size[i] : 64]++;
            }
    /* the ids of the kept documents of clusters, for the removed list */
    if (rc >= 0 && o->removed && o->mode != SL_DEDUP_LINES && st->clusters) {
        roots = sl_xcalloc(st->clusters, sizeof *roots);
        rewind(spool);
        for (uint32_t i = 0; i < ndocs && rc >= 0; i++) {
            if (sl_spool_get_blob(spool, &idb, err) != 0 || sl_spool_get_blob(spool, &tmp, err) != 0) {
                rc = -1;
                break;
            }
            if (uf_find(&u, i) == i && u.size[i] >= 2)
                roots[nroots++] = (root_id){i, sl_xstrndup(idb.data, idb.len)};
        }
    }
    if (rc >= 0 && o->removed && !(removed = sl_output_open(o->removed, err)))
        rc = -1;
    /* pass 2 */
    if (rc >= 0) {
        rewind(spool);
        sl_textdoc d = {0};
        for (uint32_t i = 0; i < ndocs && rc >= 0; i++) {
            if (sl_spool_get_blob(spool, &idb, err) != 0) {
                rc = -1;
                break;
            }
            if (o->mode == SL_DEDUP_LINES) {
                if (sl_spool_get_blob(spool, &d.text, err) != 0 || sl_spool_get_blob(spool, &d.meta, err) != 0 ||
                    sl_spool_get_blob(spool, &tmp2, err) != 0) {
                    rc = -1;
                    break;
                }
                const key128 *keys = (const key128 *)(void *)tmp2.data;
                size_t nl = tmp2.len / sizeof *keys, li = 0, dropped_lines = 0;
                sl_buf_clear(&tmp);
                const char *s = d.text.data;
                size_t a = 0;
                int first = 1, any_text = 0;
                for (; li < nl; li++) {
                    const char *e = memchr(s + a, '\n', d.text.len - a);
                    size_t b = e ? (size_t)(e - s) : d.text.len;
                    int keep = 1;
                    if (keys[li].lo || keys[li].hi) {
                        const slot *sl = sl_htab_find(&c.km, &keymap_type, &keys[li]);
                        keep = sl && sl->idx == i + 1;
                    }
                    if (keep) {
                        if (!first)
                            sl_buf_putc(&tmp, '\n');
                        sl_buf_append(&tmp, s + a, b - a);
                        first = 0;
                        for (size_t c = a; c < b && !any_text;) {
                            uint32_t cp = 0;
                            size_t k = sl_utf8_seq((const uint8_t *)s + c, b - c, &cp);
                            any_text = !sl_tn_isspace(cp);
                            c += k ? k : 1;
                        }
                    } else {
                        dropped_lines++;
                    }
                    a = b + 1;
                }
                st->lines += nl;
                st->lines_removed += dropped_lines;
                int drop = dropped_lines && !any_text;
                if (dropped_lines && removed) {
                    sl_buf_clear(&tmp2);
                    sl_buf_printf(&tmp2, "{\"id\":%s,\"lines_removed\":%zu,\"dropped\":%s}\n", idb.data, dropped_lines,
                                  drop ? "true" : "false");
                    if (sl_output_write(removed, tmp2.data, tmp2.len, err) < 0)
                        rc = -1;
                }
                if (drop) {
                    st->removed++;
                    continue;
                }
                /* the line, with the text replaced */
                sl_buf_clear(&tmp2);
                sl_buf_printf(&tmp2, "{\"id\":%s,\"text\":", idb.data);
                sl_json_put_str(&tmp2, tmp.data ? tmp.data : "", tmp.len);
                if (d.meta.len > 2) {
                    sl_buf_putc(&tmp2, ',');
                    sl_buf_append(&tmp2, d.meta.data + 1, d.meta.len - 2);
                }
                sl_buf_puts(&tmp2, "}\n");
                st->kept++;
                if (sl_output_write(out, tmp2.data, tmp2.len, err) < 0)
                    rc = -1;
                continue;
            }
            if (sl_spool_get_blob(spool, &tmp, err) != 0) {
                rc = -1;
                break;
            }
            uint32_t root = uf_find(&u, i);
            uint32_t count = u.size[root];
            int drop = root != i;
            if (drop) {
                st->removed++;
                if (removed) {
                    root_id key = {root, NULL};
                    root_id *ri = bsearch(&key, roots, nroots, sizeof *roots, cmp_root);
                    sl_buf_clear(&tmp2);
                    sl_buf_printf(&tmp2, "{\"id\":%s,\"cluster\":%u,\"kept\":%s}\n", idb.data, root,
                                  ri ? ri->id : "null");
                    if (sl_output_write(removed, tmp2.data, tmp2.len, err) < 0)
                        rc = -1;
                }
            } else {
                st->kept++;
            }
            if (drop && !o->annotate)
                continue;
            if (o->annotate)
                annotate_line(&tmp, root, count);
            if (sl_output_write(out, tmp.data, tmp.len, err) < 0)
                rc = -1;
        }
        sl_textdoc_free(&d);
    }
    sl_progress_done(pg);
    if (removed) {
        if (rc < 0)
            sl_output_abort(removed);
        else if (sl_output_commit(removed, err) < 0)
            rc = -1;
    }
    if (rc >= 0 && sl_dedup_report(o, st, err) < 0)
        rc = -1;
    for (size_t i = 0; i < nroots; i++)
        free(roots[i].id);
    free(roots);
    sl_spool_close(spool);
    for (int t = 0; t < nthreads; t++) {
        sl_textnorm_free(&c.wk[t].tn);
        sl_buf_free(&c.wk[t].norm);
    }
    free(c.wk);
    sl_htab_free(&c.km);
    free(u.parent);
    free(u.size);
    sl_buf_free(&idb);
    sl_buf_free(&tmp);
    sl_buf_free(&tmp2);
    return rc < 0 ? -1 : 0;
}
