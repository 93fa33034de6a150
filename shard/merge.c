/* Merging shard directories and Megatron datasets (shard/merge.h). */
#include "shard/merge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shard/megatron.h"
#include "shard/meta.h"
#include "shard/shard.h"
#include "shard/shard_internal.h"
#include "base/buf.h"
#include "base/byteorder.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/parts.h"
#include "stream/spill.h"

/* Memory of a merge does not grow with the number of documents: the sources
 * are opened with sl_shard_open_docs, every document (ordinal, split,
 * status, where its line starts, id) waits in one FIFO spill, source after
 * source, and its metadata is read back from the source's documents.jsonl
 * (mapped, the pages read let go) when its turn comes; the pieces of a
 * source are sorted by document in a spill; the mapped token and bounds
 * files let their pages go as they are read. */
#define MERGE_DOCS_SPILL ((size_t)4 << 20)
#define MERGE_PIECES_SPILL ((size_t)16 << 20)
#define MERGE_LET_GO ((uint64_t)4 << 20) /* mapped bytes read before they are let go */

static int same_str(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int map_ro(const char *path, uint64_t want, unsigned char **data, size_t *len, sl_err *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    struct stat stt;
    if (fd < 0 || fstat(fd, &stt)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return sl_errf(err, "%s: %s", path, strerror(e));
    }
    if ((uint64_t)stt.st_size != want) {
        close(fd);
        return sl_errf(err, "%s: size %llu bytes, the manifest implies %llu", path, (unsigned long long)stt.st_size,
                       (unsigned long long)want);
    }
    if (stt.st_size > 0) {
        void *m = mmap(NULL, (size_t)stt.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return sl_errf(err, "%s: %s", path, strerror(e));
        }
        madvise(m, (size_t)stt.st_size, MADV_SEQUENTIAL);
        *data = m;
        *len = (size_t)stt.st_size;
    }
    close(fd);
    return 0;
}

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* ---- the documents of every source, in one FIFO spill ---------------------- */
#define DREC_HEAD 24 /* ordinal, line offset (le64 each), split, status, has_meta, 5 spare; then the id */

typedef struct {
    sl_spill *fifo;
    sl_buf rec;
    uint64_t last; /* ordinal of the last document of the source being opened */
} docs_ctx;

static int keep_doc(void *vc, const sl_shard_docref *d, const char *id, sl_err *err)
{
    docs_ctx *c = vc;
    unsigned char h[DREC_HEAD] = {0};
    sl_put_le64(h, d->ordinal);
    sl_put_le64(h + 8, d->line_off);
    h[16] = d->split;
    h[17] = d->long_status;
    h[18] = d->has_meta;
    sl_buf_clear(&c->rec);
    sl_buf_append(&c->rec, h, sizeof h);
    sl_buf_append(&c->rec, id, d->id_len);
    c->last = d->ordinal;
    return sl_spill_add(c->fifo, c->rec.data, c->rec.len, err);
}

typedef struct {
    uint64_t ordinal, line_off;
    int split, status, has_meta;
    const char *id; /* valid until the next record of its spill */
    uint32_t id_len;
    const void *raw; /* the record, to copy it */
    size_t raw_len;
} mdoc;

static int next_doc(sl_spill *fifo, const char *dir, mdoc *d, sl_err *err)
{
    const void *r;
    size_t n;
    int k = sl_spill_next(fifo, &r, &n, err);
    if (k < 0)
        return -1;
    if (!k || n < DREC_HEAD)
        return sl_errf(err, "%s: documents.jsonl: fewer documents read back than opened", dir);
    const unsigned char *h = r;
    d->ordinal = sl_get_le64(h);
    d->line_off = sl_get_le64(h + 8);
    d->split = h[16];
    d->status = h[17];
    d->has_meta = h[18];
    d->id = (const char *)h + DREC_HEAD;
    d->id_len = (uint32_t)(n - DREC_HEAD);
    d->raw = r;
    d->raw_len = n;
    return 0;
}

/* A source's documents.jsonl, mapped to read the lines of documents with
 * metadata in order; the pages before the line read are let go every 4 MiB. */
typedef struct {
    char *path;
    char *data;
    size_t len, let_go;
} mlines;

static int lines_open(mlines *l, const char *dir, sl_err *err)
{
    memset(l, 0, sizeof *l);
    l->path = join_path(dir, "documents.jsonl");
    int fd = open(l->path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return sl_errf(err, "%s: %s", l->path, strerror(e));
    }
    if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return sl_errf(err, "%s: %s", l->path, strerror(e));
        }
        madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
        l->data = m;
        l->len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

static void lines_close(mlines *l)
{
    if (l->data)
        munmap(l->data, l->len);
    free(l->path);
    memset(l, 0, sizeof *l);
}

/* The line at off, without its line end. */
static void lines_at(mlines *l, uint64_t off, const char **line, size_t *n)
{
    *line = "";
    *n = 0;
    if (off >= l->len)
        return; /* the file changed since it was opened: the line is not a document's (an error below) */
    if (off > l->let_go && off - l->let_go >= ((size_t)4 << 20)) {
        size_t pg = page_size();
        madvise(l->data, off / pg * pg, MADV_DONTNEED);
        l->let_go = off;
    }
    const char *p = l->data + off, *nl = memchr(p, '\n', l->len - off);
    size_t k = nl ? (size_t)(nl - p) : l->len - off;
    while (k && (p[k - 1] == '\n' || p[k - 1] == '\r'))
        k--;
    *line = p;
    *n = k;
}

/* The "meta" object of a document line, written compactly (as sl_shard_doc_meta). */
static int line_meta(const char *dir, uint64_t ordinal, const char *line, size_t n, sl_buf *out, sl_err *err)
{
    sl_json_doc *jd = sl_json_parse(line, n, NULL, err);
    const sl_json *mv = jd ? sl_json_get(sl_json_root(jd), "meta") : NULL;
    if (!mv) { /* checked when opened: only a file changed since can get here */
        sl_json_free(jd);
        return sl_errf(err, "%s/documents.jsonl: document %llu: the line changed since the directory was opened", dir,
                       (unsigned long long)ordinal);
    }
    sl_json_put_value(out, mv);
    sl_json_free(jd);
    return 0;
}

/* ---- concatenation of rows --------------------------------------------------
 * The first piece (in the order of the rows, per split) whose document is
 * not in documents.jsonl: its document table being a spill, a source whose
 * ordinals are 0, 1, 2, ... (every directory sluice writes) checks a piece
 * by its ordinal; another finds them by one merge of its pieces, sorted by
 * ordinal, with its documents. */
typedef struct {
    uint64_t ord, rec;
    uint32_t split, file;
} cpiece;

typedef struct {
    int dense, split;
    uint64_t nd;
    int found[SL_SPLIT_N];
    size_t file[SL_SPLIT_N];
    uint64_t rec[SL_SPLIT_N];
} concat_check;

/* The next record of a spill of fixed records, copied to out: 1, 0 at the end, -1 error. */
static int next_rec(sl_spill *sp, void *out, size_t size, sl_err *err)
{
    const void *r;
    size_t n;
    int m = sl_spill_next(sp, &r, &n, err);
    if (m == 1)
        memcpy(out, r, size);
    return m;
}

static int by_ord(const void *a, size_t alen, const void *b, size_t blen, void *ctx)
{
    (void)alen, (void)blen, (void)ctx;
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x < y ? -1 : x > y;
}

static void concat_missing(concat_check *c, const cpiece *p)
{
    int k = (int)p->split;
    if (!c->found[k] || p->file < c->file[k] || (p->file == c->file[k] && p->rec < c->rec[k])) {
        c->file[k] = p->file;
        c->rec[k] = p->rec;
    }
    c->found[k] = 1;
}

static int concat_has_doc(void *vc, uint64_t doc, size_t file, uint64_t rec)
{
    const concat_check *c = vc;
    if (c->dense)
        return doc < c->nd;
    return !(c->found[c->split] && c->file[c->split] == file && c->rec[c->split] == rec);
}

/* Every piece of a source, (ordinal, record, split, file), sorted by ordinal. */
static int concat_pieces(sl_shard *s, sl_spill *sp, sl_err *err)
{
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_shard_split *spl = sl_shard_get_split(s, k);
        for (size_t j = 0; spl->present && j < spl->n_files; j++) {
            char *bn = join_path(sl_shard_dir(s), spl->files[j].bounds);
            FILE *fb = fopen(bn, "rb");
            if (!fb) {
                sl_errf(err, "%s: %s", bn, strerror(errno));
                free(bn);
                return -1;
            }
            unsigned char rec[SL_BOUNDS_RECORD];
            int rc = 0;
            for (uint64_t r = 0; !rc && fread(rec, 1, sizeof rec, fb) == sizeof rec; r++) {
                cpiece p = {sl_get_le64(rec + 8), r, (uint32_t)k, (uint32_t)j};
                rc = sl_spill_add(sp, &p, sizeof p, err);
            }
            fclose(fb);
            free(bn);
            if (rc)
                return -1;
        }
    }
    return sl_spill_sort(sp, err);
}

static int merge_concat(sl_shard **s, const int *dense, sl_spill *docs, size_t n, const char *dst, int force,
                        uint64_t max_file_bytes, sl_err *err)
{
    sl_shard_writer *w = NULL;
    sl_spill *pcs = NULL;
    mlines ml = {0};
    sl_buf meta = {0};
    int rc = -1;
    sl_shard_info info = *sl_shard_get_info(s[0]);
    info.shuffle = 0; /* concatenation: rows keep the order each source has */
    if (!(w = sl_shard_writer_open(dst, &info, max_file_bytes, force, err)))
        goto done;
    uint64_t base = 0;
    for (size_t i = 0; i < n; i++) {
        const char *dir = sl_shard_dir(s[i]);
        uint64_t top = 0, nd = sl_shard_n_docs(s[i]);
        concat_check cc = {.dense = dense[i], .nd = nd};
        int m = 0;
        cpiece p;
        if (!dense[i]) {
            sl_spill_opts po = {
                .budget = MERGE_PIECES_SPILL, .rec_size = sizeof(cpiece), .cmp = by_ord, .purpose = "pieces of merge"};
            if (!(pcs = sl_spill_new(&po, err)) || concat_pieces(s[i], pcs, err))
                goto done;
            m = next_rec(pcs, &p, sizeof p, err);
        }
        if (lines_open(&ml, dir, err))
            goto done;
        for (uint64_t k = 0; k < nd; k++) {
            mdoc d;
            if (next_doc(docs, dir, &d, err))
                goto done;
            for (; m == 1 && p.ord <= d.ordinal; m = next_rec(pcs, &p, sizeof p, err))
                if (p.ord < d.ordinal)
                    concat_missing(&cc, &p);
            if (m < 0)
                goto done;
            sl_buf_clear(&meta);
            if (d.has_meta) {
                const char *line;
                size_t ln;
                lines_at(&ml, d.line_off, &line, &ln);
                if (line_meta(dir, d.ordinal, line, ln, &meta, err))
                    goto done;
            }
            if (sl_shard_writer_doc_meta(w, base + d.ordinal, d.id, d.id_len, d.split, d.status, meta.data, meta.len,
                                         err))
                goto done;
            top = d.ordinal + 1;
        }
        lines_close(&ml);
        for (; m == 1; m = next_rec(pcs, &p, sizeof p, err))
            concat_missing(&cc, &p);
        if (m < 0)
            goto done;
        sl_spill_free(pcs);
        pcs = NULL;
        for (int k = 0; k < SL_SPLIT_N; k++) {
            if (!sl_shard_get_split(s[i], k)->present)
                continue;
            sl_shard_iter *it = sl_shard_iter_open(s[i], k, err);
            if (!it)
                goto done;
            cc.split = k;
            sl_shard_iter_check_docs(it, concat_has_doc, &cc);
            sl_row row;
            int q;
            while ((q = sl_shard_iter_next(it, &row, err)) == 1) {
                /* the iterator's piece buffer is ours until the next call */
                for (size_t a = 0; a < row.n_pieces; a++)
                    ((sl_piece *)row.pieces)[a].doc += base;
                if (sl_shard_writer_row(w, k, &row, err)) {
                    q = -1;
                    break;
                }
            }
            sl_shard_iter_close(it);
            if (q < 0)
                goto done;
        }
        base += top;
    }
    rc = sl_shard_writer_finish(w, err);
    w = NULL;
done:
    sl_shard_writer_abort(w);
    sl_spill_free(pcs);
    lines_close(&ml);
    sl_buf_free(&meta);
    return rc;
}

/* ---- merge as one stream -------------------------------------------------
 * Each source's documents are read back in ordinal order (the pieces of a
 * document gathered from the boundary records of both splits, its [BOS] and
 * [EOS] taken off) and packed again, as one stream, with the options the
 * manifests record: the rows, shuffle, val split and manifest of one shard
 * run over the concatenated token streams. */

typedef struct {
    uint64_t ord, doc_offset;
    uint64_t pos; /* token index in its file: row * seq_len + offset */
    uint64_t rec; /* its record in its bounds file, for messages */
    uint32_t len;
    uint32_t file; /* index into the source's mapped files */
} mpiece;

/* by document, then by offset in the document (stable: equal pieces in the
 * order of the files) */
static int by_doc(const void *x, size_t xl, const void *y, size_t yl, void *ctx)
{
    (void)xl, (void)yl, (void)ctx;
    uint64_t a[2], b[2];
    memcpy(a, x, sizeof a);
    memcpy(b, y, sizeof b);
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

typedef struct {
    char *tname, *bname;
    unsigned char *tok, *bnd; /* mapped, NULL when empty */
    size_t tok_len, bnd_len;
    uint64_t rows, pieces;
    int split;
} mfile;

typedef struct {
    sl_shard_writer *w;
    int split;
} mrow_ctx;

static int merge_on_row(void *vc, const sl_row *row, sl_err *err)
{
    mrow_ctx *c = vc;
    return sl_shard_writer_row(c->w, c->split, row, err);
}

/* What a merge as one stream needs from a source beyond the checks every
 * merge makes. */
static int same_stream_opts(const sl_shard_info *a, const sl_shard_info *b)
{
    return a->shuffle == b->shuffle &&
           (!a->shuffle || (a->seed == b->seed && a->shuffle_window == b->shuffle_window)) &&
           a->val_fraction == b->val_fraction && a->no_split == b->no_split &&
           (!a->no_split || a->long_mode == b->long_mode) && a->modality == b->modality &&
           !strcmp(a->tokenizer, b->tokenizer);
}

typedef struct {
    const sl_shard_info *info;
    sl_packer *pk[SL_SPLIT_N];
    sl_shard_writer *w;
    sl_docmeta dm;
    sl_buf meta;
    uint32_t *tok;
    size_t tok_cap;
    sl_stage_stats *st;
    sl_spill *docs; /* every source's documents, in order */
} merge_ctx;

/* The metadata of a document as its line holds it: the text after "meta":
 * when the line is the writer's own (the line without metadata, then
 * ,"meta":{...}), which is what the shard run of its stream selected and
 * what a run over the concatenated streams writes; else (a line written
 * otherwise) the object parsed and written compactly. */
static int doc_meta(merge_ctx *mc, const char *dir, mlines *ml, const mdoc *d, const char **meta, size_t *len,
                    sl_err *err)
{
    *meta = NULL;
    *len = 0;
    if (!d->has_meta)
        return 0;
    const char *line;
    size_t n;
    lines_at(ml, d->line_off, &line, &n);
    sl_buf_clear(&mc->meta);
    sl_meta_doc_line(&mc->meta, d->ordinal, d->id, d->id_len, sl_shard_split_names[d->split], d->status, NULL, 0);
    size_t pre = mc->meta.len - 2; /* without "}\n" */
    static const char key[] = ",\"meta\":";
    if (n > pre + sizeof key && !memcmp(line, mc->meta.data, pre) && !memcmp(line + pre, key, sizeof key - 1) &&
        line[n - 1] == '}' && line[pre + sizeof key - 1] == '{') {
        *meta = line + pre + sizeof key - 1;
        *len = n - 1 - (pre + sizeof key - 1);
        return 0;
    }
    sl_buf_clear(&mc->meta);
    if (line_meta(dir, d->ordinal, line, n, &mc->meta, err))
        return -1;
    *meta = mc->meta.data;
    *len = mc->meta.len;
    return 0;
}

/* The message for a source made with no_split by a version that did not
 * record it. */
static int unrecorded_no_split(const char *dir, const char *why, int padded, sl_err *err)
{
    return sl_errf(err,
                   "%s: %s: packed with `no_split` by an older sluice that did not record it in the manifest%s; it "
                   "cannot be merged as one stream: shard %s again, or merge with `concat_rows`",
                   dir, why, padded ? ", or its rows were concatenated (`concat_rows`)" : "",
                   padded ? "that part (or merge the sources of a concatenation)" : "that part");
}

static int missing_doc(const mfile *f, uint64_t rec, uint64_t doc, sl_err *err)
{
    return sl_errf(err, "%s: record %llu: document %llu is not in documents.jsonl", f->bname, (unsigned long long)rec,
                   (unsigned long long)doc);
}

/* The pieces of a source whose ordinals are not 0, 1, 2, ... (not written
 * by sluice): the first one (in the order of the files) whose document is
 * not in documents.jsonl, found by one merge of the sorted pieces with the
 * documents; the documents are copied to *local, for the pass that packs
 * them. 1 and *at set when there is one. */
static int find_missing(sl_spill *pcs, sl_spill *docs, size_t nd, const char *dir, sl_spill **local, mpiece *at,
                        sl_err *err)
{
    sl_spill_opts lo = {.budget = MERGE_DOCS_SPILL, .purpose = "documents of merge"};
    if (!(*local = sl_spill_new(&lo, err)))
        return -1;
    int found = 0;
    mpiece p;
    int m = next_rec(pcs, &p, sizeof p, err);
    for (size_t i = 0; i < nd && m >= 0; i++) {
        mdoc d;
        if (next_doc(docs, dir, &d, err) || sl_spill_add(*local, d.raw, d.raw_len, err))
            return -1;
        for (; m == 1 && p.ord <= d.ordinal; m = next_rec(pcs, &p, sizeof p, err))
            if (p.ord < d.ordinal && (!found || p.file < at->file || (p.file == at->file && p.rec < at->rec))) {
                *at = p;
                found = 1;
            }
    }
    for (; m == 1; m = next_rec(pcs, &p, sizeof p, err))
        if (!found || p.file < at->file || (p.file == at->file && p.rec < at->rec)) {
            *at = p;
            found = 1;
        }
    if (m < 0 || sl_spill_sort(*local, err) || sl_spill_rewind(pcs, err))
        return -1;
    return found;
}

static int merge_source(merge_ctx *mc, sl_shard *s, int dense, uint64_t base, uint64_t *top, sl_err *err)
{
    const sl_shard_info *in = sl_shard_get_info(s);
    const char *dir = sl_shard_dir(s);
    const uint32_t L = in->seq_len;
    const size_t db = (size_t)in->dtype_bytes;
    const uint32_t mr = in->layout == SL_LAYOUT_RECURRENT ? in->mem_tokens : 0;
    const uint32_t mw = in->layout == SL_LAYOUT_RECURRENT && in->mem_write ? in->mem_tokens : 0;
    const size_t nd = sl_shard_n_docs(s);
    const size_t pg = page_size();
    size_t nf = 0;
    for (int k = 0; k < SL_SPLIT_N; k++)
        nf += sl_shard_get_split(s, k)->present ? sl_shard_get_split(s, k)->n_files : 0;
    mfile *f = sl_xcalloc(nf ? nf : 1, sizeof *f);
    sl_spill *pcs = NULL, *local = NULL, *dsrc = mc->docs;
    mlines ml = {0};
    int rc = -1;
    size_t fi = 0;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_shard_split *sp = sl_shard_get_split(s, k);
        for (size_t j = 0; sp->present && j < sp->n_files; j++, fi++) {
            const sl_shard_file *sf = &sp->files[j];
            f[fi].split = k;
            f[fi].rows = sf->rows;
            f[fi].pieces = sf->pieces;
            f[fi].tname = join_path(dir, sf->tokens);
            f[fi].bname = join_path(dir, sf->bounds);
            if (map_ro(f[fi].tname, sf->rows * L * db, &f[fi].tok, &f[fi].tok_len, err) ||
                map_ro(f[fi].bname, sf->pieces * SL_BOUNDS_RECORD, &f[fi].bnd, &f[fi].bnd_len, err))
                goto done;
        }
    }
    sl_spill_opts po = {
        .budget = MERGE_PIECES_SPILL, .rec_size = sizeof(mpiece), .cmp = by_doc, .purpose = "pieces of merge"};
    if (!(pcs = sl_spill_new(&po, err)))
        goto done;
    /* pass 1: every record checked, the pieces to the spill. With ordinals
     * 0, 1, 2, ... a piece's document is checked here, in the order of the
     * records; else the first error (bad) waits for the merge that finds the
     * pieces of missing documents, which may come before it. */
    int check_pad = in->layout == SL_LAYOUT_SEQUENTIAL && !in->no_split;
    uint64_t padded[SL_SPLIT_N] = {0, 0};
    int bad = 0;
    size_t bad_file = 0;
    uint64_t bad_rec = 0;
    sl_err bad_err;
    for (fi = 0; fi < nf && !bad; fi++) {
        const mfile *m = &f[fi];
        uint64_t prow = 0, used = 0, full = 0, let_go = 0;
        uint32_t end = 0;
        for (uint64_t r = 0; r < m->pieces; r++) {
            if (r * SL_BOUNDS_RECORD - let_go >= MERGE_LET_GO) {
                let_go = r * SL_BOUNDS_RECORD;
                madvise(m->bnd, let_go / pg * pg, MADV_DONTNEED);
            }
            const unsigned char *rec = m->bnd + r * SL_BOUNDS_RECORD;
            uint64_t row = sl_get_le64(rec), doc = sl_get_le64(rec + 8);
            uint32_t off = sl_get_le32(rec + 24), len = sl_get_le32(rec + 28);
            if (row != prow || !r) {
                if (r && row < prow) {
                    sl_errf(&bad_err, "%s: record %llu: rows are not sorted", m->bname, (unsigned long long)r);
                    bad = 1;
                }
                if (r && used == L)
                    full++;
                prow = row;
                used = 0;
                end = 0;
            }
            if (!bad && (row >= m->rows || len == 0 || len > L || off > L - len || off < end || off < mr ||
                         off + len > L - mw)) {
                sl_errf(&bad_err,
                        "%s: record %llu: piece [%u, +%u) of row %llu is out of order, empty, outside the row or on a "
                        "memory position",
                        m->bname, (unsigned long long)r, off, len, (unsigned long long)row);
                bad = 1;
            }
            if (bad) {
                if (dense) {
                    *err = bad_err;
                    goto done;
                }
                bad_file = fi;
                bad_rec = r;
                break;
            }
            end = off + len;
            used += len;
            if (dense && doc >= nd) {
                missing_doc(m, r, doc, err);
                goto done;
            }
            mpiece p = {.ord = doc,
                        .doc_offset = sl_get_le64(rec + 16),
                        .pos = row * L + off,
                        .rec = r,
                        .len = len,
                        .file = (uint32_t)fi};
            if (sl_spill_add(pcs, &p, sizeof p, err))
                goto done;
        }
        if (m->pieces && used == L)
            full++;
        padded[m->split] += m->rows - full;
        if (m->bnd)
            madvise(m->bnd, m->bnd_len, MADV_DONTNEED);
    }
    if (sl_spill_sort(pcs, err))
        goto done;
    if (!dense) {
        mpiece at = {0};
        int k = find_missing(pcs, mc->docs, nd, dir, &local, &at, err);
        if (k < 0)
            goto done;
        if (k && (!bad || at.file < bad_file || (at.file == bad_file && at.rec < bad_rec))) {
            missing_doc(&f[at.file], at.rec, at.ord, err);
            goto done;
        }
        if (bad) {
            *err = bad_err;
            goto done;
        }
        dsrc = local;
    }
    if (check_pad)
        for (int k = 0; k < SL_SPLIT_N; k++)
            if (padded[k] > 1) {
                char why[96];
                snprintf(why, sizeof why, "%llu %s rows are padded (split mode pads only the last)",
                         (unsigned long long)padded[k], sl_shard_split_names[k]);
                rc = unrecorded_no_split(dir, why, 1, err);
                goto done;
            }
    if (lines_open(&ml, dir, err))
        goto done;
    /* pass 2: the documents in order, each with its pieces in order */
    const int has_bos = in->bos != SL_NO_TOKEN, has_eos = in->eos != SL_NO_TOKEN;
    mpiece p;
    int m = next_rec(pcs, &p, sizeof p, err);
    uint64_t touched = 0, prev_pg = 0; /* token pages read since they were let go */
    uint32_t prev_file = UINT32_MAX;
    for (size_t i = 0; i < nd; i++) {
        mdoc d;
        if (m < 0 || next_doc(dsrc, dir, &d, err))
            goto done;
        if (m == 1 && p.ord < d.ordinal) { /* found above: cannot happen */
            missing_doc(&f[p.file], p.rec, p.ord, err);
            goto done;
        }
        uint64_t S = 0;
        for (; m == 1 && p.ord == d.ordinal; m = next_rec(pcs, &p, sizeof p, err)) {
            if (p.doc_offset != S || f[p.file].split != d.split) {
                sl_errf(err,
                        "%s: document %llu: its pieces do not cover its sequence once, in the %s split (piece at "
                        "sequence offset %llu, expected %llu)",
                        dir, (unsigned long long)d.ordinal, sl_shard_split_names[d.split],
                        (unsigned long long)p.doc_offset, (unsigned long long)S);
                goto done;
            }
            if (S + p.len > mc->tok_cap) {
                mc->tok_cap = (S + p.len) * 2;
                mc->tok = sl_xrealloc(mc->tok, mc->tok_cap * sizeof *mc->tok);
            }
            uint32_t *t = mc->tok + S;
            const unsigned char *src = f[p.file].tok + p.pos * db;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            const uint32_t len = p.len; /* a local: the stores below cannot change it (vectorized) */
            if (db == 2) {              /* token files start page-aligned: 2-byte aligned here */
                const uint16_t *s16 = (const uint16_t *)(const void *)src;
                for (uint32_t q = 0; q < len; q++)
                    t[q] = s16[q];
            } else {
                memcpy(t, src, (size_t)len * 4);
            }
#else
            if (db == 2)
                for (uint32_t q = 0; q < p.len; q++)
                    t[q] = sl_get_le16(src + 2 * q);
            else
                for (uint32_t q = 0; q < p.len; q++)
                    t[q] = sl_get_le32(src + 4 * q);
#endif
            S += p.len;
            /* the pages of the token files read so far are let go every MERGE_LET_GO bytes */
            uint64_t pg0 = p.pos * db / pg, pg1 = (p.pos + p.len) * db / pg;
            touched += pg1 - pg0 + (p.file != prev_file || pg0 != prev_pg);
            prev_file = p.file;
            prev_pg = pg1;
            if (touched * pg >= MERGE_LET_GO) {
                for (size_t a = 0; a < nf; a++)
                    if (f[a].tok)
                        madvise(f[a].tok, f[a].tok_len, MADV_DONTNEED);
                touched = 0;
                prev_file = UINT32_MAX;
            }
        }
        if (m < 0)
            goto done;
        int status = d.status;
        if (status != SL_DOC_PLACED && !in->no_split) {
            rc = unrecorded_no_split(
                dir, status == SL_DOC_DROPPED ? "a document was dropped" : "a document was truncated", 0, err);
            goto done;
        }
        if ((status == SL_DOC_DROPPED && S) || (status == SL_DOC_TRUNCATED && S != L) ||
            (status != SL_DOC_DROPPED && !S && (has_bos || has_eos))) {
            sl_errf(err, "%s: document %llu: %llu tokens in the rows, which does not fit its %s line", dir,
                    (unsigned long long)d.ordinal, (unsigned long long)S,
                    status == SL_DOC_DROPPED     ? "\"dropped\""
                    : status == SL_DOC_TRUNCATED ? "\"truncated\""
                                                 : "documents.jsonl");
            goto done;
        }
        const uint32_t *body = mc->tok;
        size_t n = S;
        if (S && has_bos) {
            if (body[0] != (uint32_t)in->bos)
                goto markers;
            body++;
            n--;
        }
        if (S && has_eos && status != SL_DOC_TRUNCATED) {
            if (!n || body[n - 1] != (uint32_t)in->eos)
                goto markers;
            n--;
        }
        uint64_t ord = base + d.ordinal;
        if (sl_docmeta_id(&mc->dm, d.id, d.id_len, ord, dir, err))
            goto done;
        if (status != SL_DOC_DROPPED && sl_packer_add(mc->pk[d.split], ord, d.id, d.id_len, body, n, NULL, err)) {
            char q[96];
            sl_err_prefix(err, "%s: document '%s'", dir, sl_err_quote(d.id, d.id_len, q, sizeof q));
            goto done;
        }
        mc->st->truncated += status == SL_DOC_TRUNCATED;
        mc->st->dropped += status == SL_DOC_DROPPED;
        const char *mt;
        size_t mlen;
        if (doc_meta(mc, dir, &ml, &d, &mt, &mlen, err) ||
            sl_shard_writer_doc_meta(mc->w, ord, d.id, d.id_len, d.split, status, mt, mlen, err))
            goto done;
        *top = d.ordinal + 1;
        mc->st->docs++;
        continue;
    markers:
        sl_errf(err, "%s: document %llu: its sequence does not %s with the manifest's %s id", dir,
                (unsigned long long)d.ordinal, S && has_bos && mc->tok[0] != (uint32_t)in->bos ? "begin" : "end",
                S && has_bos && mc->tok[0] != (uint32_t)in->bos ? "bos" : "eos");
        goto done;
    }
    if (m == 1) { /* found above: cannot happen */
        missing_doc(&f[p.file], p.rec, p.ord, err);
        goto done;
    }
    rc = m < 0 ? -1 : 0;
done:
    for (fi = 0; fi < nf; fi++) {
        if (f[fi].tok)
            munmap(f[fi].tok, f[fi].tok_len);
        if (f[fi].bnd)
            munmap(f[fi].bnd, f[fi].bnd_len);
        free(f[fi].tname);
        free(f[fi].bname);
    }
    free(f);
    sl_spill_free(pcs);
    sl_spill_free(local);
    lines_close(&ml);
    return rc;
}

static int merge_stream(sl_shard **s, const int *dense, sl_spill *docs, size_t n, const char *dst, int force,
                        uint64_t max_file_bytes, sl_stage_stats *st, sl_err *err)
{
    sl_shard_info info = *sl_shard_get_info(s[0]);
    merge_ctx mc = {.info = &info, .st = st, .docs = docs};
    mrow_ctx rcx[SL_SPLIT_N];
    int rc = -1;
    sl_pack_opts po;
    memset(&po, 0, sizeof po);
    po.seq_len = info.seq_len;
    po.eos = info.eos;
    po.bos = info.bos;
    po.pad = info.pad;
    po.layout = info.layout;
    po.batch = info.layout == SL_LAYOUT_RECURRENT ? info.batch : 0;
    po.no_split = info.no_split;
    po.long_mode = info.no_split ? info.long_mode : SL_LONG_TRUNCATE;
    po.mem_tokens = info.layout == SL_LAYOUT_RECURRENT ? info.mem_tokens : 0;
    po.mem_id = po.mem_tokens ? info.mem_id : SL_NO_TOKEN;
    po.mem_write = po.mem_tokens && info.mem_write;
    if (!(mc.w = sl_shard_writer_open(dst, &info, max_file_bytes, force, err)))
        goto done;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        rcx[k] = (mrow_ctx){mc.w, k};
        if (!(mc.pk[k] = sl_packer_new(&po, merge_on_row, &rcx[k], err))) {
            sl_err_prefix(err, "%s", sl_shard_dir(s[0]));
            goto done;
        }
    }
    uint64_t base = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t top = 0;
        if (merge_source(&mc, s[i], dense[i], base, &top, err))
            goto done;
        base += top;
    }
    for (int k = 0; k < SL_SPLIT_N; k++)
        if (sl_packer_finish(mc.pk[k], err))
            goto done;
    if (sl_docmeta_finish(&mc.dm, err))
        goto done;
    rc = sl_shard_writer_finish(mc.w, err);
    mc.w = NULL;
done:
    for (int k = 0; k < SL_SPLIT_N; k++)
        sl_packer_free(mc.pk[k]);
    sl_shard_writer_abort(mc.w);
    st->dup_ids = mc.dm.dups;
    st->first_dup_doc = mc.dm.first_dup_doc;
    if (mc.dm.first_dup)
        snprintf(st->first_dup, sizeof st->first_dup, "%s", mc.dm.first_dup);
    sl_docmeta_free(&mc.dm);
    sl_buf_free(&mc.meta);
    free(mc.tok);
    return rc;
}

/* The cap on token files of sources that have several files in a split: the
 * rows of their first files (every such source must agree, and no single
 * file may be longer); 0 when no source has several. */
static int infer_file_rows(sl_shard **s, size_t n, uint64_t *rows, sl_err *err)
{
    uint64_t rpf = 0;
    size_t from = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < SL_SPLIT_N; k++) {
            const sl_shard_split *sp = sl_shard_get_split(s[i], k);
            if (!sp->present || sp->n_files < 2)
                continue;
            if (rpf && sp->files[0].rows != rpf)
                return sl_errf(err, "%s: %llu rows per token file, %s has %llu: set `max_file_bytes`",
                               sl_shard_dir(s[i]), (unsigned long long)sp->files[0].rows, sl_shard_dir(s[from]),
                               (unsigned long long)rpf);
            rpf = sp->files[0].rows;
            from = i;
        }
    for (size_t i = 0; rpf && i < n; i++)
        for (int k = 0; k < SL_SPLIT_N; k++) {
            const sl_shard_split *sp = sl_shard_get_split(s[i], k);
            for (size_t j = 0; sp->present && j < sp->n_files; j++)
                if (sp->files[j].rows > rpf)
                    return sl_errf(err,
                                   "%s: a token file of %llu rows, %s has %llu rows per file: set `max_file_bytes`",
                                   sl_shard_dir(s[i]), (unsigned long long)sp->files[j].rows, sl_shard_dir(s[from]),
                                   (unsigned long long)rpf);
        }
    *rows = rpf;
    return 0;
}

/* The sources with each directory that has no manifest.json (not a shard
 * directory) replaced by the part shard directories in it, in part order
 * (stream/parts.h: a missing or repeated part is an error naming it). All
 * strings of *out are malloc'd. */
static int expand_parts(const char *const *srcs, size_t n, char ***out, size_t *n_out, sl_err *err)
{
    char **v = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        char *man = join_path(srcs[i], "manifest.json"), **parts = NULL;
        size_t np = 0;
        int listed = access(man, F_OK) != 0 ? sl_parts_list(srcs[i], &parts, &np, err) : 0;
        free(man);
        if (listed < 0) {
            for (size_t k = 0; k < nv; k++)
                free(v[k]);
            free(v);
            return -1;
        }
        v = sl_xrealloc(v, (nv + (listed ? np : 1)) * sizeof *v);
        if (!listed)
            v[nv++] = sl_xstrdup(srcs[i]);
        for (size_t k = 0; listed && k < np; k++)
            v[nv++] = parts[k];
        free(parts);
    }
    *out = v;
    *n_out = nv;
    return 0;
}

int sl_merge_run(const char *const *given, size_t n_given, const char *dst, const sl_merge_opts *o, sl_stage_stats *st,
                 sl_err *err)
{
    memset(st, 0, sizeof *st);
    char **list = NULL;
    size_t n = 0;
    if (expand_parts(given, n_given, &list, &n, err))
        return -1;
    const char *const *srcs = (const char *const *)list;
    sl_shard **s = sl_xcalloc(n ? n : 1, sizeof *s);
    int *dense = sl_xcalloc(n ? n : 1, sizeof *dense);
    docs_ctx dc = {0};
    int rc = -1;
    if (!n) {
        sl_errf(err, "%s: no source directory", dst);
        goto done;
    }
    sl_spill_opts dopt = {.budget = MERGE_DOCS_SPILL, .purpose = "documents of merge"};
    if (!(dc.fifo = sl_spill_new(&dopt, err)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!(s[i] = sl_shard_open_docs(srcs[i], 1, keep_doc, &dc, err)))
            goto done;
        /* ordinals increase: 0, 1, 2, ... when the last is n - 1 */
        dense[i] = !sl_shard_n_docs(s[i]) || dc.last == sl_shard_n_docs(s[i]) - 1;
    }
    const sl_shard_info *a = sl_shard_get_info(s[0]);
    for (size_t i = 1; i < n; i++) {
        const sl_shard_info *b = sl_shard_get_info(s[i]);
        if (a->seq_len != b->seq_len || a->dtype_bytes != b->dtype_bytes || a->vocab_size != b->vocab_size ||
            strcmp(a->fingerprint, b->fingerprint) || a->eos != b->eos || a->bos != b->bos || a->pad != b->pad ||
            a->layout != b->layout || a->batch != b->batch || !same_str(a->warmup, b->warmup) ||
            a->mem_tokens != b->mem_tokens || a->mem_id != b->mem_id || a->mem_write != b->mem_write) {
            sl_errf(err,
                    "%s: does not match %s (seq_len, dtype, vocab, fingerprint, special ids, layout, warmup "
                    "and memory slots must be equal)",
                    srcs[i], srcs[0]);
            goto done;
        }
        if (!o->concat_rows && !same_stream_opts(a, b)) {
            sl_errf(err,
                    "%s: does not match %s (shuffle, seed, window, val_fraction, no_split, modality and tokenizer "
                    "name must be equal to merge as one stream; `concat_rows` concatenates the rows as they are)",
                    srcs[i], srcs[0]);
            goto done;
        }
    }
    uint64_t maxb = o->max_file_bytes, rpf = 0;
    if (!maxb && !o->concat_rows) { /* the sources' own cap, when they show it */
        if (infer_file_rows(s, n, &rpf, err))
            goto done;
        maxb = rpf * a->seq_len * (uint64_t)a->dtype_bytes;
    }
    if (sl_spill_sort(dc.fifo, err))
        goto done;
    rc = o->concat_rows ? merge_concat(s, dense, dc.fifo, n, dst, o->force, maxb, err)
                        : merge_stream(s, dense, dc.fifo, n, dst, o->force, maxb, st, err);
done:
    sl_spill_free(dc.fifo);
    sl_buf_free(&dc.rec);
    free(dense);
    for (size_t i = 0; i < n; i++) {
        sl_shard_close(s[i]);
        free(list[i]);
    }
    free(list);
    free(s);
    return rc;
}

int sl_mega_merge_missing_docs(const char *const *srcs, size_t n)
{
    int with = 0, without = -1;
    for (size_t i = 0; i < n; i++) {
        char *sp = sl_mega_docs_path(srcs[i]);
        if (!access(sp, F_OK))
            with++;
        else if (without < 0)
            without = (int)i;
        free(sp);
    }
    return with ? without : -1;
}

int sl_merge_megatron_run(const char *const *srcs, size_t n, const char *dst, sl_err *err)
{
    sl_mega_writer *w = NULL;
    sl_output *side = NULL;
    sl_buf line = {0};
    int rc = -1, every = 1;
    for (size_t i = 0; i < n && every; i++) {
        char *sp = sl_mega_docs_path(srcs[i]);
        every = !access(sp, F_OK);
        free(sp);
    }
    char *dp = sl_mega_docs_path(dst);
    if (every && !(side = sl_output_open(dp, err)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        sl_mega_reader *r = sl_mega_open(srcs[i], err);
        if (!r)
            goto done;
        if (!w && !(w = sl_mega_writer_open(dst, sl_mega_index_of(r)->dtype_code, err))) {
            sl_mega_close(r);
            goto done;
        }
        sl_mega_docs *docs = NULL;
        uint64_t base = sl_mega_writer_docs(w);
        int bad = side && sl_mega_docs_open(srcs[i], sl_mega_n_docs(r), &docs, err) != 1;
        for (uint64_t k = 0; !bad && docs && k < sl_mega_n_docs(r); k++) {
            const char *id, *meta;
            size_t il, ml;
            sl_mega_docs_get(docs, k, &id, &il, &meta, &ml);
            sl_buf_clear(&line);
            sl_meta_doc_line(&line, base + k, id, il, "train", SL_DOC_PLACED, meta, ml);
            bad = sl_output_write(side, line.data, line.len, err);
        }
        sl_mega_docs_close(docs);
        bad = bad || sl_mega_add_index(w, r, err);
        sl_mega_close(r);
        if (bad)
            goto done;
    }
    rc = sl_mega_finish_with_docs(w, side, dst, err);
    w = NULL;
    side = NULL;
done:
    sl_mega_writer_abort(w);
    sl_output_abort(side);
    sl_buf_free(&line);
    free(dp);
    return rc;
}
