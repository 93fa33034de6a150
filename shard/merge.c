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
#include "stream/buf.h"
#include "stream/byteorder.h"
#include "stream/io.h"
#include "stream/parts.h"

static int same_str(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int merge_concat(sl_shard **s, const char *const *srcs, size_t n, const char *dst, int force,
                        uint64_t max_file_bytes, sl_err *err)
{
    sl_shard_writer *w = NULL;
    sl_buf meta = {0};
    int rc = -1;
    sl_shard_info info = *sl_shard_get_info(s[0]);
    info.shuffle = 0; /* concatenation: rows keep the order each source has */
    if (!(w = sl_shard_writer_open(dst, &info, max_file_bytes, force, err)))
        goto done;
    uint64_t base = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t top = 0;
        for (size_t k = 0; k < sl_shard_n_docs(s[i]); k++) {
            const char *id;
            const sl_shard_docref *dr = sl_shard_doc(s[i], k, &id);
            sl_buf_clear(&meta);
            if (sl_shard_doc_meta(s[i], k, &meta, err) ||
                sl_shard_writer_doc_meta(w, base + dr->ordinal, id, dr->id_len, dr->split, dr->long_status, meta.data,
                                         meta.len, err))
                goto done;
            top = dr->ordinal + 1;
        }
        for (int k = 0; k < SL_SPLIT_N; k++) {
            if (!sl_shard_get_split(s[i], k)->present)
                continue;
            sl_shard_iter *it = sl_shard_iter_open(s[i], k, err);
            if (!it)
                goto done;
            sl_row row;
            int m;
            while ((m = sl_shard_iter_next(it, &row, err)) == 1) {
                /* the iterator's piece buffer is ours until the next call */
                for (size_t p = 0; p < row.n_pieces; p++)
                    ((sl_piece *)row.pieces)[p].doc += base;
                if (sl_shard_writer_row(w, k, &row, err)) {
                    m = -1;
                    break;
                }
            }
            sl_shard_iter_close(it);
            if (m < 0)
                goto done;
        }
        base += top;
    }
    rc = sl_shard_writer_finish(w, err);
    w = NULL;
done:
    sl_shard_writer_abort(w);
    sl_buf_free(&meta);
    (void)srcs;
    return rc;
}

/* ---- merge as one stream -------------------------------------------------
 * Each source's documents are read back in ordinal order (the pieces of a
 * document gathered from the boundary records of both splits, its [BOS] and
 * [EOS] taken off) and packed again, as one stream, with the options the
 * manifests record: the rows, shuffle, val split and manifest of one shard
 * run over the concatenated token streams. */

typedef struct {
    uint64_t doc_offset;
    uint64_t pos; /* token index in its file: row * seq_len + offset */
    uint32_t len;
    uint32_t file; /* index into the source's mapped files */
} mpiece;

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

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
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
} merge_ctx;

/* The metadata of document i as its line holds it: the text after "meta":
 * when the line is the writer's own (the line without metadata, then
 * ,"meta":{...}), which is what the shard run of its stream selected and
 * what a run over the concatenated streams writes; else (a line written
 * otherwise) the object parsed and written compactly. */
static int doc_meta(merge_ctx *mc, const sl_shard *s, size_t i, const char **meta, size_t *len, sl_err *err)
{
    const sl_shard_docref *d = &s->docs[i];
    *meta = NULL;
    *len = 0;
    if (!d->has_meta)
        return 0;
    size_t end = i + 1 < s->n_docs ? s->docs[i + 1].line_off : s->docs_len;
    const char *line = s->docs_map + d->line_off;
    size_t n = end - d->line_off;
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    sl_buf_clear(&mc->meta);
    sl_meta_doc_line(&mc->meta, d->ordinal, s->doc_ids + d->id_off, d->id_len, sl_shard_split_names[d->split],
                     d->long_status, NULL, 0);
    size_t pre = mc->meta.len - 2; /* without "}\n" */
    static const char key[] = ",\"meta\":";
    if (n > pre + sizeof key && !memcmp(line, mc->meta.data, pre) && !memcmp(line + pre, key, sizeof key - 1) &&
        line[n - 1] == '}' && line[pre + sizeof key - 1] == '{') {
        *meta = line + pre + sizeof key - 1;
        *len = n - 1 - (pre + sizeof key - 1);
        return 0;
    }
    sl_buf_clear(&mc->meta);
    if (sl_shard_doc_meta(s, i, &mc->meta, err))
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

static int by_doc_offset(const void *x, const void *y)
{
    const mpiece *a = x, *b = y;
    return a->doc_offset < b->doc_offset ? -1 : a->doc_offset > b->doc_offset;
}

static int merge_source(merge_ctx *mc, sl_shard *s, uint64_t base, uint64_t *top, sl_err *err)
{
    const sl_shard_info *in = sl_shard_get_info(s);
    const char *dir = sl_shard_dir(s);
    const uint32_t L = in->seq_len;
    const size_t db = (size_t)in->dtype_bytes;
    const uint32_t mr = in->layout == SL_LAYOUT_RECURRENT ? in->mem_tokens : 0;
    const uint32_t mw = in->layout == SL_LAYOUT_RECURRENT && in->mem_write ? in->mem_tokens : 0;
    const size_t nd = sl_shard_n_docs(s);
    size_t nf = 0;
    for (int k = 0; k < SL_SPLIT_N; k++)
        nf += sl_shard_get_split(s, k)->present ? sl_shard_get_split(s, k)->n_files : 0;
    mfile *f = sl_xcalloc(nf ? nf : 1, sizeof *f);
    uint64_t *first = sl_xcalloc(nd + 1, sizeof *first), *fill = NULL;
    mpiece *pc = NULL;
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
    /* pass 1: every record checked, pieces counted per document */
    int dense = !nd || sl_shard_doc(s, nd - 1, NULL)->ordinal == nd - 1;
    int check_pad = in->layout == SL_LAYOUT_SEQUENTIAL && !in->no_split;
    uint64_t padded[SL_SPLIT_N] = {0, 0};
    for (fi = 0; fi < nf; fi++) {
        const mfile *m = &f[fi];
        uint64_t prow = 0, used = 0, full = 0;
        uint32_t end = 0;
        for (uint64_t r = 0; r < m->pieces; r++) {
            const unsigned char *rec = m->bnd + r * SL_BOUNDS_RECORD;
            uint64_t row = sl_get_le64(rec), doc = sl_get_le64(rec + 8);
            uint32_t off = sl_get_le32(rec + 24), len = sl_get_le32(rec + 28);
            if (row != prow || !r) {
                if (r && row < prow) {
                    sl_errf(err, "%s: record %llu: rows are not sorted", m->bname, (unsigned long long)r);
                    goto done;
                }
                if (r && used == L)
                    full++;
                prow = row;
                used = 0;
                end = 0;
            }
            if (row >= m->rows || len == 0 || len > L || off > L - len || off < end || off < mr || off + len > L - mw) {
                sl_errf(err,
                        "%s: record %llu: piece [%u, +%u) of row %llu is out of order, empty, outside the row or on a "
                        "memory position",
                        m->bname, (unsigned long long)r, off, len, (unsigned long long)row);
                goto done;
            }
            end = off + len;
            used += len;
            size_t i = dense ? (size_t)doc : sl_shard_doc_find(s, doc);
            if (doc >= (dense ? nd : UINT64_MAX) || i == SIZE_MAX) {
                sl_errf(err, "%s: record %llu: document %llu is not in documents.jsonl", m->bname,
                        (unsigned long long)r, (unsigned long long)doc);
                goto done;
            }
            first[i + 1]++;
        }
        if (m->pieces && used == L)
            full++;
        padded[m->split] += m->rows - full;
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
    for (size_t i = 0; i < nd; i++)
        first[i + 1] += first[i];
    pc = sl_xmalloc((first[nd] ? first[nd] : 1) * sizeof *pc);
    fill = sl_xmalloc((nd ? nd : 1) * sizeof *fill);
    memcpy(fill, first, nd * sizeof *fill);
    /* pass 2: the pieces in document order */
    for (fi = 0; fi < nf; fi++) {
        const mfile *m = &f[fi];
        for (uint64_t r = 0; r < m->pieces; r++) {
            const unsigned char *rec = m->bnd + r * SL_BOUNDS_RECORD;
            uint64_t doc = sl_get_le64(rec + 8);
            size_t i = dense ? (size_t)doc : sl_shard_doc_find(s, doc);
            pc[fill[i]++] = (mpiece){.doc_offset = sl_get_le64(rec + 16),
                                     .pos = sl_get_le64(rec) * L + sl_get_le32(rec + 24),
                                     .len = sl_get_le32(rec + 28),
                                     .file = (uint32_t)fi};
        }
    }
    const int has_bos = in->bos != SL_NO_TOKEN, has_eos = in->eos != SL_NO_TOKEN;
    for (size_t i = 0; i < nd; i++) {
        const char *id;
        const sl_shard_docref *d = sl_shard_doc(s, i, &id);
        mpiece *p = pc + first[i];
        size_t k = first[i + 1] - first[i];
        /* by offset in the document: usually in order already (shuffled rows
         * can scramble the pieces of a long document: then qsort) */
        size_t sorted = 1;
        while (sorted < k && p[sorted - 1].doc_offset <= p[sorted].doc_offset)
            sorted++;
        if (sorted < k)
            qsort(p, k, sizeof *p, by_doc_offset);
        uint64_t S = 0;
        for (size_t a = 0; a < k; a++) {
            if (p[a].doc_offset != S || f[p[a].file].split != d->split) {
                sl_errf(err,
                        "%s: document %llu: its pieces do not cover its sequence once, in the %s split (piece at "
                        "sequence offset %llu, expected %llu)",
                        dir, (unsigned long long)d->ordinal, sl_shard_split_names[d->split],
                        (unsigned long long)p[a].doc_offset, (unsigned long long)S);
                goto done;
            }
            S += p[a].len;
        }
        int status = d->long_status;
        if (status != SL_DOC_PLACED && !in->no_split) {
            rc = unrecorded_no_split(
                dir, status == SL_DOC_DROPPED ? "a document was dropped" : "a document was truncated", 0, err);
            goto done;
        }
        if ((status == SL_DOC_DROPPED && S) || (status == SL_DOC_TRUNCATED && S != L) ||
            (status != SL_DOC_DROPPED && !S && (has_bos || has_eos))) {
            sl_errf(err, "%s: document %llu: %llu tokens in the rows, which does not fit its %s line", dir,
                    (unsigned long long)d->ordinal, (unsigned long long)S,
                    status == SL_DOC_DROPPED     ? "\"dropped\""
                    : status == SL_DOC_TRUNCATED ? "\"truncated\""
                                                 : "documents.jsonl");
            goto done;
        }
        if (S > mc->tok_cap) {
            mc->tok_cap = S * 2;
            free(mc->tok);
            mc->tok = sl_xmalloc(mc->tok_cap * sizeof *mc->tok);
        }
        uint32_t *t = mc->tok;
        for (size_t a = 0; a < k; a++) {
            const unsigned char *src = f[p[a].file].tok + p[a].pos * db;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            const uint32_t len = p[a].len; /* a local: the stores below cannot change it (vectorized) */
            if (db == 2) {                 /* token files start page-aligned: 2-byte aligned here */
                const uint16_t *s16 = (const uint16_t *)(const void *)src;
                for (uint32_t q = 0; q < len; q++)
                    t[q] = s16[q];
            } else {
                memcpy(t, src, (size_t)len * 4);
            }
            t += len;
#else
            if (db == 2)
                for (uint32_t q = 0; q < p[a].len; q++)
                    *t++ = sl_get_le16(src + 2 * q);
            else
                for (uint32_t q = 0; q < p[a].len; q++)
                    *t++ = sl_get_le32(src + 4 * q);
#endif
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
        uint64_t ord = base + d->ordinal;
        if (sl_docmeta_id(&mc->dm, id, d->id_len, ord, dir, err))
            goto done;
        if (status != SL_DOC_DROPPED && sl_packer_add(mc->pk[d->split], ord, id, d->id_len, body, n, NULL, err)) {
            char q[96];
            sl_err_prefix(err, "%s: document '%s'", dir, sl_err_quote(id, d->id_len, q, sizeof q));
            goto done;
        }
        mc->st->truncated += status == SL_DOC_TRUNCATED;
        mc->st->dropped += status == SL_DOC_DROPPED;
        const char *mt;
        size_t ml;
        if (doc_meta(mc, s, i, &mt, &ml, err) ||
            sl_shard_writer_doc_meta(mc->w, ord, id, d->id_len, d->split, status, mt, ml, err))
            goto done;
        *top = d->ordinal + 1;
        mc->st->docs++;
        continue;
    markers:
        sl_errf(err, "%s: document %llu: its sequence does not %s with the manifest's %s id", dir,
                (unsigned long long)d->ordinal, S && has_bos && mc->tok[0] != (uint32_t)in->bos ? "begin" : "end",
                S && has_bos && mc->tok[0] != (uint32_t)in->bos ? "bos" : "eos");
        goto done;
    }
    rc = 0;
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
    free(first);
    free(fill);
    free(pc);
    return rc;
}

static int merge_stream(sl_shard **s, size_t n, const char *dst, int force, uint64_t max_file_bytes, sl_stage_stats *st,
                        sl_err *err)
{
    sl_shard_info info = *sl_shard_get_info(s[0]);
    merge_ctx mc = {.info = &info, .st = st};
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
        if (merge_source(&mc, s[i], base, &top, err))
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
    int rc = -1;
    if (!n) {
        sl_errf(err, "%s: no source directory", dst);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!(s[i] = sl_shard_open(srcs[i], 1, err)))
            goto done;
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
    rc = o->concat_rows ? merge_concat(s, srcs, n, dst, o->force, maxb, err)
                        : merge_stream(s, n, dst, o->force, maxb, st, err);
done:
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
