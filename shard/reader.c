/* Shard directory reader (docs/shards.md section 4). Everything read from
 * the directory is checked before use: the manifest's fields and types, file
 * sizes against row and piece counts, optional XXH64 checksums, and every
 * boundary record against its row. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "shard/meta.h"
#include "shard/shard_internal.h"
#include "base/byteorder.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/tokstream.h"
#include "base/utf8.h"

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int sl_file_xxh64(const char *path, char hex[17], sl_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sl_errf(err, "%s: %s", path, strerror(errno));
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    size_t cap = 1 << 20, n;
    char *buf = sl_xmalloc(cap);
    while ((n = fread(buf, 1, cap, f)) > 0)
        XXH64_update(st, buf, n);
    int bad = ferror(f);
    fclose(f);
    free(buf);
    snprintf(hex, 17, "%016llx", (unsigned long long)XXH64_digest(st));
    XXH64_freeState(st);
    if (bad)
        return sl_errf(err, "%s: read error", path);
    return 0;
}

/* A file name from the manifest must stay inside the directory. */
static int safe_name(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") && strlen(s) < 256;
}

static int get_u64(const sl_json *o, const char *key, uint64_t *v)
{
    int64_t x;
    if (sl_json_get_int(o, key, &x) || x < 0)
        return -1;
    *v = (uint64_t)x;
    return 0;
}

/* Special ids: integer or null. */
static int get_special(const sl_json *o, const char *key, int64_t *v)
{
    sl_json *x = sl_json_get(o, key);
    if (!x || x->type == SL_JSON_NULL) {
        *v = SL_NO_TOKEN;
        return 0;
    }
    if (!sl_json_is_int(x, v) || *v < 0 || *v > (int64_t)UINT32_MAX)
        return -1;
    return 0;
}

static int check_size(const char *path, uint64_t want, sl_err *err)
{
    struct stat st;
    if (stat(path, &st))
        return sl_errf(err, "%s: %s", path, strerror(errno));
    if ((uint64_t)st.st_size != want)
        return sl_errf(err, "%s: size %llu bytes, the manifest implies %llu", path, (unsigned long long)st.st_size,
                       (unsigned long long)want);
    return 0;
}

/* Maps a whole file read-only (*len 0: no mapping). */
static int map_file(const char *path, char **data, size_t *len, sl_err *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return sl_errf(err, "%s: %s", path, strerror(e));
    }
    if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return sl_errf(err, "%s: %s", path, strerror(e));
        }
        *data = m;
        *len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

static int check_sum(const char *path, const char *want_hex, sl_err *err)
{
    char hex[17];
    if (sl_file_xxh64(path, hex, err))
        return -1;
    if (strcmp(hex, want_hex))
        return sl_errf(err, "%s: checksum mismatch (xxh64 %s, manifest says %s): the file is corrupted", path, hex,
                       want_hex);
    return 0;
}

/* A documents.jsonl line exactly as the writer puts it (sl_meta_doc_line:
 * compact, keys in order, an id without escapes), read without building a
 * JSON tree: 1 and the fields, else 0 (the line is then parsed in full,
 * which also accepts every other valid form, or says what is wrong). */
static int fast_line(const char *l, size_t n, int64_t *ord, const char **id, size_t *id_len, const char **split,
                     const char **lng, int *has_meta)
{
    static const char k_doc[] = "{\"doc\":", k_id[] = ",\"id\":\"", k_split[] = ",\"split\":\"",
                      k_long[] = ",\"long\":\"", k_meta[] = ",\"meta\":";
    const char *p = l, *e = l + n;
#define SKIP(k) (e - p >= (ptrdiff_t)sizeof k - 1 && !memcmp(p, k, sizeof k - 1) ? (p += sizeof k - 1, 1) : 0)
    if (!SKIP(k_doc) || p == e || *p < '0' || *p > '9' || (*p == '0' && e - p > 1 && p[1] >= '0' && p[1] <= '9'))
        return 0;
    int64_t v = 0;
    for (int k = 0; p < e && *p >= '0' && *p <= '9'; p++, k++) {
        if (k == 18)
            return 0;
        v = v * 10 + (*p - '0');
    }
    if (!SKIP(k_id))
        return 0;
    const char *q = p;
    while (q < e && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
        q++;
    if (q == e || *q != '"' || sl_utf8_check(p, (size_t)(q - p)) != (size_t)(q - p))
        return 0;
    *id = p;
    *id_len = (size_t)(q - p);
    p = q + 1;
    if (!SKIP(k_split))
        return 0;
    if (SKIP("train\""))
        *split = "train";
    else if (SKIP("val\""))
        *split = "val";
    else
        return 0;
    *lng = NULL;
    if (SKIP(k_long)) {
        if (SKIP("truncated\""))
            *lng = "truncated";
        else if (SKIP("dropped\""))
            *lng = "dropped";
        else
            return 0;
    }
    *has_meta = 0;
    if (SKIP(k_meta)) {
        if (e - p < 3 || e[-1] != '}' || !sl_meta_compact_object(p, (size_t)(e - p - 1)))
            return 0;
        *has_meta = 1;
        p = e - 1;
    }
#undef SKIP
    if (e - p != 1 || *p != '}')
        return 0;
    *ord = v;
    return 1;
}

/* Without fn, the table is kept (s->docs, s->doc_ids, documents.jsonl
 * mapped); with fn, each document is handed to fn in turn, nothing is kept,
 * and the pages of the mapped files already read are let go every 4 MiB, so
 * memory does not grow with the number of documents. */
static int load_docs(sl_shard *s, const sl_json *dj, int verify, sl_shard_doc_fn fn, void *ctx, sl_err *err)
{
    uint64_t count, bytes;
    const char *want_hex = sl_json_get_str(dj, "xxh64");
    if (get_u64(dj, "count", &count) || get_u64(dj, "bytes", &bytes) || !want_hex)
        return sl_errf(err, "%s/manifest.json: \"documents\" needs count, bytes and xxh64", s->dir);
    /* documents.idx (written since the metadata change; older directories have none) */
    const char *iname = sl_json_get_str(dj, "index"), *ihex = sl_json_get_str(dj, "index_xxh64");
    if ((iname || ihex) && (!safe_name(iname) || !ihex || strlen(ihex) != 16))
        return sl_errf(err, "%s/manifest.json: \"documents\": \"index\" needs a file name and \"index_xxh64\"", s->dir);
    if (count > (1ull << 48))
        return sl_errf(err, "%s/manifest.json: \"documents\": count %llu is too large", s->dir,
                       (unsigned long long)count);
    char *p = path_in(s->dir, "documents.jsonl");
    char *ip = iname ? path_in(s->dir, iname) : NULL;
    char *data = NULL, *idx = NULL;
    size_t len = 0, ilen = 0;
    int rc = -1;
    if (check_size(p, bytes, err) || (ip && check_size(ip, (count + 1) * 8, err)))
        goto out;
    if (verify && (check_sum(p, want_hex, err) || (ip && check_sum(ip, ihex, err))))
        goto out;
    if (map_file(p, &data, &len, err) || (ip && map_file(ip, &idx, &ilen, err)))
        goto out;
    if (len != bytes || (ip && ilen != (count + 1) * 8)) {
        sl_errf(err, "%s: the file changed while it was opened", len != bytes ? p : ip);
        goto out;
    }
    if (!fn)
        s->docs = sl_xcalloc(count ? count : 1, sizeof *s->docs);
    sl_buf ids = {0};
    size_t line = 0, pos = 0, let_go = 0;
    uint64_t prev = 0;
    long page = sysconf(_SC_PAGESIZE);
    while (pos < len) {
        if (fn && pos - let_go >= (4u << 20) && page > 0) {
            /* the pages before pos (and their entries of documents.idx) are done */
            size_t upto = pos / (size_t)page * (size_t)page, iupto = 8 * s->n_docs / (size_t)page * (size_t)page;
            madvise(data, upto, MADV_DONTNEED);
            if (idx && iupto)
                madvise(idx, iupto, MADV_DONTNEED);
            let_go = pos;
        }
        char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        line++;
        if (idx && s->n_docs < count && sl_get_le64((const unsigned char *)idx + 8 * s->n_docs) != pos) {
            sl_errf(err, "%s: entry %zu is %llu, but line %zu of documents.jsonl starts at byte %zu", ip, s->n_docs,
                    (unsigned long long)sl_get_le64((const unsigned char *)idx + 8 * s->n_docs), line, pos);
            sl_buf_free(&ids);
            goto out;
        }
        int64_t ord;
        const char *split = NULL, *lng = NULL, *idp = NULL;
        size_t idl = 0;
        int has_meta = 0, ok;
        sl_json_doc *jd = NULL;
        if (fast_line(data + pos, end - pos, &ord, &idp, &idl, &split, &lng, &has_meta)) {
            ok = 1;
        } else {
            jd = sl_json_parse(data + pos, end - pos, NULL, err);
            sl_json *o = jd ? sl_json_root(jd) : NULL;
            sl_json *idv = o ? sl_json_get(o, "id") : NULL, *mv = o ? sl_json_get(o, "meta") : NULL;
            split = o ? sl_json_get_str(o, "split") : NULL;
            lng = o ? sl_json_get_str(o, "long") : NULL;
            ok = o && o->type == SL_JSON_OBJECT && !sl_json_get_int(o, "doc", &ord) && idv &&
                 idv->type == SL_JSON_STRING && (!mv || mv->type == SL_JSON_OBJECT);
            if (ok) {
                idp = idv->str;
                idl = idv->str_len;
                has_meta = mv != NULL;
            }
        }
        if (!ok || ord < 0 || !split || (strcmp(split, "train") && strcmp(split, "val")) || s->n_docs >= count ||
            (s->n_docs && (uint64_t)ord <= prev) || (idx && (uint64_t)ord != s->n_docs) || idl > UINT32_MAX ||
            ids.len > UINT32_MAX) {
            if (ok || jd)
                sl_errf(err, "not a valid document line (doc, id, split, meta an object; ordinals %s; count %llu)",
                        idx ? "0, 1, 2, ..." : "increasing", (unsigned long long)count);
            sl_err_prefix(err, "%s:%zu", p, line);
            sl_json_free(jd);
            sl_buf_free(&ids);
            goto out;
        }
        sl_shard_docref one, *d = fn ? &one : &s->docs[s->n_docs];
        s->n_docs++;
        prev = (uint64_t)ord;
        d->ordinal = (uint64_t)ord;
        d->id_off = (uint32_t)ids.len;
        d->id_len = (uint32_t)idl;
        d->split = (uint8_t)(strcmp(split, "train") ? SL_SPLIT_VAL : SL_SPLIT_TRAIN);
        d->long_status = (uint8_t)(!lng ? SL_DOC_PLACED : !strcmp(lng, "dropped") ? SL_DOC_DROPPED : SL_DOC_TRUNCATED);
        d->has_meta = (uint8_t)has_meta;
        d->line_off = pos;
        if (fn) {
            d->id_off = 0;
            if (fn(ctx, d, idp, err)) {
                sl_json_free(jd);
                goto out;
            }
        } else {
            sl_buf_append(&ids, idp, idl);
            sl_buf_putc(&ids, 0);
        }
        sl_json_free(jd);
        pos = end + 1;
    }
    if (s->n_docs != count) {
        sl_errf(err, "%s: %zu documents, the manifest says %llu", p, s->n_docs, (unsigned long long)count);
        sl_buf_free(&ids);
        goto out;
    }
    if (idx && sl_get_le64((const unsigned char *)idx + 8 * count) != len) {
        sl_errf(err, "%s: entry %llu is %llu, but documents.jsonl has %zu bytes", ip, (unsigned long long)count,
                (unsigned long long)sl_get_le64((const unsigned char *)idx + 8 * count), len);
        sl_buf_free(&ids);
        goto out;
    }
    if (!fn) {
        s->doc_ids = ids.data ? ids.data : sl_xcalloc(1, 1);
        s->docs_map = data;
        s->docs_len = len;
        data = NULL;
    }
    rc = 0;
out:
    if (data)
        munmap(data, len);
    if (idx)
        munmap(idx, ilen);
    free(p);
    free(ip);
    return rc;
}

static int load_split(sl_shard *s, int k, const sl_json *sj, int verify, sl_err *err)
{
    sl_shard_split *sp = &s->split[k];
    const char *name = sl_shard_split_names[k];
    sl_json *files = sl_json_get(sj, "files");
    if (sj->type != SL_JSON_OBJECT || get_u64(sj, "rows", &sp->rows) || get_u64(sj, "tokens", &sp->tokens) ||
        get_u64(sj, "pad_tokens", &sp->pad_tokens) || get_u64(sj, "pieces", &sp->pieces) || !files ||
        files->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s/manifest.json: split \"%s\" needs rows, tokens, pad_tokens, pieces and files", s->dir,
                       name);
    sl_json *mt = sl_json_get(sj, "memory_tokens");
    if (mt && get_u64(sj, "memory_tokens", &sp->mem_tokens))
        return sl_errf(err, "%s/manifest.json: split \"%s\": memory_tokens is not a count", s->dir, name);
    sp->present = 1;
    sp->files = sl_xcalloc(files->n ? files->n : 1, sizeof *sp->files);
    uint64_t rows = 0, pieces = 0;
    uint64_t row_bytes = (uint64_t)s->info.seq_len * (uint64_t)s->info.dtype_bytes;
    for (size_t i = 0; i < files->n; i++) {
        const sl_json *fj = files->kids[i];
        sl_shard_file *f = &sp->files[sp->n_files++];
        const char *tn = fj->type == SL_JSON_OBJECT ? sl_json_get_str(fj, "tokens") : NULL;
        const char *bn = tn ? sl_json_get_str(fj, "bounds") : NULL;
        const char *tx = bn ? sl_json_get_str(fj, "tokens_xxh64") : NULL;
        const char *bx = tx ? sl_json_get_str(fj, "bounds_xxh64") : NULL;
        if (!bx || !safe_name(tn) || !safe_name(bn) || get_u64(fj, "rows", &f->rows) ||
            get_u64(fj, "pieces", &f->pieces) || strlen(tx) != 16 || strlen(bx) != 16 || f->rows > (1ull << 48) ||
            f->pieces > (1ull << 48))
            return sl_errf(err,
                           "%s/manifest.json: split \"%s\" file %zu: needs tokens, bounds, rows, pieces, "
                           "tokens_xxh64 and bounds_xxh64",
                           s->dir, name, i);
        f->tokens = sl_xstrdup(tn);
        f->bounds = sl_xstrdup(bn);
        memcpy(f->tokens_xxh64, tx, 17);
        memcpy(f->bounds_xxh64, bx, 17);
        f->first_row = rows;
        rows += f->rows;
        pieces += f->pieces;
        const char *names[2] = {f->tokens, f->bounds};
        const char *want[2] = {f->tokens_xxh64, f->bounds_xxh64};
        uint64_t sizes[2] = {f->rows * row_bytes, f->pieces * SL_BOUNDS_RECORD};
        for (int j = 0; j < 2; j++) {
            char *p = path_in(s->dir, names[j]);
            char hex[17];
            int rc = check_size(p, sizes[j], err);
            if (!rc && verify) {
                rc = sl_file_xxh64(p, hex, err);
                if (!rc && strcmp(hex, want[j]))
                    rc = sl_errf(err, "%s: checksum mismatch (xxh64 %s, manifest says %s): the file is corrupted", p,
                                 hex, want[j]);
            }
            free(p);
            if (rc)
                return -1;
        }
    }
    if (rows != sp->rows || pieces != sp->pieces || sp->tokens != rows * s->info.seq_len)
        return sl_errf(err, "%s/manifest.json: split \"%s\": totals do not match its files", s->dir, name);
    return 0;
}

static int load_stages(sl_shard *s, const sl_json *arr, sl_err *err)
{
    if (!arr || arr->type != SL_JSON_ARRAY || arr->n == 0 || arr->n > 100000)
        return sl_errf(err, "%s/manifest.json: \"stages\" must be a non-empty array", s->dir);
    s->warmup.stages = sl_xcalloc(arr->n, sizeof *s->warmup.stages);
    s->warmup.max_len = s->info.seq_len;
    for (size_t i = 0; i < arr->n; i++) {
        const sl_json *o = arr->kids[i];
        sl_stage *st = &s->warmup.stages[i];
        uint64_t len;
        int64_t steps = -1;
        sl_json *sv = o->type == SL_JSON_OBJECT ? sl_json_get(o, "steps") : NULL;
        if (!sv || get_u64(o, "seq_len", &len) || get_u64(o, "batch", &st->batch) ||
            get_u64(o, "tokens_per_step", &st->tokens_per_step) || get_u64(o, "start_token", &st->start_token) ||
            (sv->type != SL_JSON_NULL && (!sl_json_is_int(sv, &steps) || steps < 0)) || len == 0 || len % 8 ||
            len > s->info.seq_len || st->batch == 0 || st->tokens_per_step != st->batch * len)
            return sl_errf(err, "%s/manifest.json: stage %zu is malformed", s->dir, i);
        st->seq_len = (uint32_t)len;
        st->steps = steps;
        st->amount_kind = steps < 0 ? SL_AMOUNT_OPEN : SL_AMOUNT_STEPS;
        s->warmup.n++;
    }
    return 0;
}

static sl_shard *shard_open(const char *dir, int verify, sl_shard_doc_fn fn, void *ctx, sl_err *err)
{
    sl_shard *s = sl_xcalloc(1, sizeof *s);
    s->dir = sl_xstrdup(dir);
    char *mp = path_in(dir, "manifest.json");
    char *text = NULL;
    size_t len;
    sl_json_doc *jd = NULL;
    if (sl_read_file(mp, &text, &len, err))
        goto fail;
    jd = sl_json_parse(text, len, NULL, err);
    if (!jd) {
        sl_err_prefix(err, "%s", mp);
        goto fail;
    }
    sl_json *m = sl_json_root(jd);
    int64_t version;
    const char *fmt = m->type == SL_JSON_OBJECT ? sl_json_get_str(m, "format") : NULL;
    if (!fmt || strcmp(fmt, SL_SHARD_FORMAT) || sl_json_get_int(m, "version", &version)) {
        sl_errf(err, "%s: not a sluice shard manifest (format \"%s\" expected)", mp, SL_SHARD_FORMAT);
        goto fail;
    }
    if (version != SL_SHARD_VERSION) {
        sl_errf(err, "%s: unsupported version %lld (this sluice reads %d)", mp, (long long)version, SL_SHARD_VERSION);
        goto fail;
    }
    sl_shard_info *in = &s->info;
    sl_json *tk = sl_json_get(m, "tokenizer"), *sp = sl_json_get(m, "special"), *splits = sl_json_get(m, "splits");
    const char *dtype = sl_json_get_str(m, "dtype"), *layout = sl_json_get_str(m, "layout");
    uint64_t seq_len, vocab;
    sl_json *bv = sl_json_get(m, "batch"), *wv = sl_json_get(m, "warmup"), *dv = sl_json_get(m, "documents");
    if (!tk || tk->type != SL_JSON_OBJECT || !sp || sp->type != SL_JSON_OBJECT || !splits ||
        splits->type != SL_JSON_OBJECT || !dtype || !layout || get_u64(m, "seq_len", &seq_len) || seq_len == 0 ||
        seq_len % 8 || seq_len > (1u << 31) || get_u64(tk, "vocab_size", &vocab) || vocab > UINT32_MAX || !dv ||
        dv->type != SL_JSON_OBJECT || get_special(sp, "eos", &in->eos) || get_special(sp, "bos", &in->bos) ||
        get_special(sp, "pad", &in->pad)) {
        sl_errf(err, "%s: missing or malformed field (tokenizer, special, splits, dtype, layout, seq_len, documents)",
                mp);
        goto fail;
    }
    in->seq_len = (uint32_t)seq_len;
    in->vocab_size = (uint32_t)vocab;
    if (!strcmp(dtype, "uint16"))
        in->dtype_bytes = 2;
    else if (!strcmp(dtype, "uint32"))
        in->dtype_bytes = 4;
    else {
        sl_errf(err, "%s: dtype \"%s\" is not uint16 or uint32", mp, dtype);
        goto fail;
    }
    if (in->dtype_bytes == 2 && vocab > 65536) {
        sl_errf(err, "%s: vocab size %llu does not fit dtype uint16", mp, (unsigned long long)vocab);
        goto fail;
    }
    if (!strcmp(layout, "sequential"))
        in->layout = SL_LAYOUT_SEQUENTIAL;
    else if (!strcmp(layout, "recurrent")) {
        int64_t b;
        in->layout = SL_LAYOUT_RECURRENT;
        if (!bv || !sl_json_is_int(bv, &b) || b <= 0 || b > UINT32_MAX) {
            sl_errf(err, "%s: recurrent layout needs a positive batch", mp);
            goto fail;
        }
        in->batch = (uint32_t)b;
    } else {
        sl_errf(err, "%s: layout \"%s\" is not sequential or recurrent", mp, layout);
        goto fail;
    }
    sl_json *mv = sl_json_get(m, "memory");
    if (mv && mv->type != SL_JSON_NULL) {
        /* added within version 1: older directories have no "memory" */
        uint64_t mk, mi;
        sl_json *wr = mv->type == SL_JSON_OBJECT ? sl_json_get(mv, "write") : NULL;
        if (!wr || (wr->type != SL_JSON_TRUE && wr->type != SL_JSON_FALSE) || get_u64(mv, "tokens", &mk) ||
            get_u64(mv, "id", &mi) || mk == 0 || mi > UINT32_MAX || mi >= vocab ||
            mk * (wr->type == SL_JSON_TRUE ? 2 : 1) >= seq_len || in->layout != SL_LAYOUT_RECURRENT) {
            sl_errf(err,
                    "%s: \"memory\" must be {\"tokens\":K,\"id\":ID,\"write\":true|false} with K > 0, ID below the "
                    "vocab size and room for data in a row, in the recurrent layout",
                    mp);
            goto fail;
        }
        in->mem_tokens = (uint32_t)mk;
        in->mem_id = (int64_t)mi;
        in->mem_write = wr->type == SL_JSON_TRUE;
    } else {
        in->mem_id = SL_NO_TOKEN;
    }
    sl_json *ns = sl_json_get(m, "no_split");
    if (ns && ns->type != SL_JSON_NULL) {
        /* added within version 1: older directories have no "no_split" */
        const char *lm = ns->type == SL_JSON_OBJECT ? sl_json_get_str(ns, "long") : NULL;
        in->long_mode = lm ? sl_long_mode_parse(lm) : -1;
        if (in->long_mode < 0 || in->layout != SL_LAYOUT_SEQUENTIAL) {
            sl_errf(err,
                    "%s: \"no_split\" must be {\"long\":\"truncate\"|\"drop\"|\"split\"}, in the sequential layout",
                    mp);
            goto fail;
        }
        in->no_split = 1;
    }
    const char *fp = sl_json_get_str(tk, "fingerprint"), *tn = sl_json_get_str(tk, "name"),
               *mod = sl_json_get_str(tk, "modality");
    snprintf(in->fingerprint, sizeof in->fingerprint, "%s", fp ? fp : "");
    snprintf(in->tokenizer, sizeof in->tokenizer, "%s", tn ? tn : "");
    in->modality = mod && sl_modality_parse(mod) >= 0 ? sl_modality_parse(mod) : 0;
    if (wv && wv->type == SL_JSON_STRING)
        in->warmup = sl_xstrdup(wv->str);
    sl_json_get_num(m, "val_fraction", &in->val_fraction);
    sl_json *sh = sl_json_get(m, "shuffle");
    if (sh && sh->type == SL_JSON_OBJECT) {
        in->shuffle = 1;
        get_u64(sh, "seed", &in->seed);
        get_u64(sh, "window", &in->shuffle_window);
    }
    if (load_stages(s, sl_json_get(m, "stages"), err))
        goto fail;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        sl_json *sj = sl_json_get(splits, sl_shard_split_names[k]);
        if (sj && load_split(s, k, sj, verify, err))
            goto fail;
    }
    if (!s->split[SL_SPLIT_TRAIN].present) {
        sl_errf(err, "%s: no \"train\" split", mp);
        goto fail;
    }
    if (in->layout == SL_LAYOUT_RECURRENT && s->split[SL_SPLIT_TRAIN].rows % in->batch) {
        sl_errf(err, "%s: recurrent layout: %llu rows is not a multiple of batch %u", mp,
                (unsigned long long)s->split[SL_SPLIT_TRAIN].rows, in->batch);
        goto fail;
    }
    s->docs_streamed = fn != NULL;
    if (load_docs(s, dv, verify, fn, ctx, err))
        goto fail;
    sl_json_free(jd);
    free(text);
    free(mp);
    return s;
fail:
    sl_json_free(jd);
    free(text);
    free(mp);
    sl_shard_close(s);
    return NULL;
}

sl_shard *sl_shard_open(const char *dir, int verify, sl_err *err)
{
    return shard_open(dir, verify, NULL, NULL, err);
}

sl_shard *sl_shard_open_docs(const char *dir, int verify, sl_shard_doc_fn fn, void *ctx, sl_err *err)
{
    return shard_open(dir, verify, fn, ctx, err);
}

void sl_shard_close(sl_shard *s)
{
    if (!s)
        return;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        for (size_t i = 0; i < s->split[k].n_files; i++) {
            free(s->split[k].files[i].tokens);
            free(s->split[k].files[i].bounds);
        }
        free(s->split[k].files);
    }
    sl_warmup_free(&s->warmup);
    free(s->info.warmup);
    if (s->docs_map)
        munmap(s->docs_map, s->docs_len);
    free(s->docs);
    free(s->doc_ids);
    free(s->dir);
    free(s);
}

const char *sl_shard_dir(const sl_shard *s)
{
    return s->dir;
}
const sl_shard_info *sl_shard_get_info(const sl_shard *s)
{
    return &s->info;
}
const sl_warmup *sl_shard_get_warmup(const sl_shard *s)
{
    return &s->warmup;
}
const sl_shard_split *sl_shard_get_split(const sl_shard *s, int split)
{
    return &s->split[split];
}
size_t sl_shard_n_docs(const sl_shard *s)
{
    return s->n_docs;
}

const sl_shard_docref *sl_shard_doc(const sl_shard *s, size_t i, const char **id)
{
    if (id)
        *id = s->doc_ids + s->docs[i].id_off;
    return &s->docs[i];
}

size_t sl_shard_doc_find(const sl_shard *s, uint64_t ordinal)
{
    size_t lo = 0, hi = s->n_docs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->docs[mid].ordinal < ordinal)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_docs && s->docs[lo].ordinal == ordinal ? lo : SIZE_MAX;
}

const char *sl_shard_doc_id(const sl_shard *s, uint64_t ordinal, size_t *len)
{
    size_t i = sl_shard_doc_find(s, ordinal);
    if (i == SIZE_MAX)
        return NULL;
    if (len)
        *len = s->docs[i].id_len;
    return s->doc_ids + s->docs[i].id_off;
}

int sl_shard_doc_meta(const sl_shard *s, size_t i, sl_buf *out, sl_err *err)
{
    const sl_shard_docref *d = &s->docs[i];
    if (!d->has_meta)
        return 0;
    uint64_t end = i + 1 < s->n_docs ? s->docs[i + 1].line_off : s->docs_len; /* the newline is whitespace */
    sl_json_doc *jd = sl_json_parse(s->docs_map + d->line_off, end - d->line_off, NULL, err);
    const sl_json *mv = jd ? sl_json_get(sl_json_root(jd), "meta") : NULL;
    if (!mv) { /* checked when opened: only a file changed since can get here */
        sl_json_free(jd);
        return sl_errf(err, "%s/documents.jsonl: document %llu: the line changed since the directory was opened",
                       s->dir, (unsigned long long)d->ordinal);
    }
    sl_json_put_value(out, mv);
    sl_json_free(jd);
    return 0;
}

/* --- row iterator ----------------------------------------------------------- */
#define ITER_BUF ((size_t)1 << 20)
struct sl_shard_iter {
    const sl_shard *s;
    const sl_shard_split *sp;
    size_t file; /* index of the open file */
    FILE *ft, *fb;
    /* their stdio buffers: a row is read with one fread, which with stdio's
     * 4 KiB buffer was a read call a row (9,074 for a 74 MB file of rows of
     * 2,048 tokens) */
    char *bt, *bb;
    char *tname, *bname; /* paths, for messages */
    uint64_t row;        /* next row in the file */
    uint64_t piece;      /* pieces read in the file */
    int have_next;
    unsigned char rec[SL_BOUNDS_RECORD];
    unsigned char *raw;
    uint32_t *tok;
    sl_piece *pieces;
    size_t cap_pieces;
    sl_shard_has_doc_fn has_doc; /* sl_shard_iter_check_docs */
    void *has_doc_ctx;
};

sl_shard_iter *sl_shard_iter_open(const sl_shard *s, int split, sl_err *err)
{
    if (split < 0 || split >= SL_SPLIT_N || !s->split[split].present) {
        sl_errf(err, "%s: no \"%s\" split", s->dir,
                split >= 0 && split < SL_SPLIT_N ? sl_shard_split_names[split] : "?");
        return NULL;
    }
    sl_shard_iter *it = sl_xcalloc(1, sizeof *it);
    it->s = s;
    it->sp = &s->split[split];
    it->file = (size_t)-1;
    it->raw = sl_xmalloc((size_t)s->info.seq_len * (size_t)s->info.dtype_bytes);
    it->tok = sl_xmalloc((size_t)s->info.seq_len * sizeof *it->tok);
    return it;
}

static void close_files(sl_shard_iter *it)
{
    if (it->ft)
        fclose(it->ft);
    if (it->fb)
        fclose(it->fb);
    it->ft = it->fb = NULL;
    free(it->tname);
    free(it->bname);
    it->tname = it->bname = NULL;
}

static int read_rec(sl_shard_iter *it, sl_err *err)
{
    const sl_shard_file *f = &it->sp->files[it->file];
    it->have_next = 0;
    if (it->piece == f->pieces)
        return 0;
    if (fread(it->rec, 1, SL_BOUNDS_RECORD, it->fb) != SL_BOUNDS_RECORD)
        return sl_errf(err, "%s: offset %llu: unexpected end of file", it->bname,
                       (unsigned long long)(it->piece * SL_BOUNDS_RECORD));
    it->have_next = 1;
    return 0;
}

int sl_shard_iter_next(sl_shard_iter *it, sl_row *row, sl_err *err)
{
    const sl_shard *s = it->s;
    uint32_t L = s->info.seq_len;
    while (it->file == (size_t)-1 || it->row == it->sp->files[it->file].rows) {
        if (it->file != (size_t)-1 && it->have_next)
            return sl_errf(err, "%s: record %llu: row %llu is past the last row", it->bname,
                           (unsigned long long)it->piece, (unsigned long long)sl_get_le64(it->rec));
        close_files(it);
        it->file = it->file == (size_t)-1 ? 0 : it->file + 1;
        if (it->file >= it->sp->n_files)
            return 0;
        const sl_shard_file *f = &it->sp->files[it->file];
        it->tname = path_in(s->dir, f->tokens);
        it->bname = path_in(s->dir, f->bounds);
        it->ft = fopen(it->tname, "rb");
        it->fb = fopen(it->bname, "rb");
        if (!it->ft || !it->fb)
            return sl_errf(err, "%s: %s", !it->ft ? it->tname : it->bname, strerror(errno));
        if (!it->bt) {
            it->bt = sl_xmalloc(ITER_BUF);
            it->bb = sl_xmalloc(ITER_BUF);
        }
        setvbuf(it->ft, it->bt, _IOFBF, ITER_BUF); /* (glibc uses the size only with a buffer given) */
        setvbuf(it->fb, it->bb, _IOFBF, ITER_BUF);
        it->row = it->piece = 0;
        if (read_rec(it, err))
            return -1;
    }
    size_t w = (size_t)s->info.dtype_bytes;
    if (fread(it->raw, w, L, it->ft) != L)
        return sl_errf(err, "%s: row %llu: unexpected end of file", it->tname, (unsigned long long)it->row);
    for (uint32_t i = 0; i < L; i++) {
        it->tok[i] = w == 2 ? sl_get_le16(it->raw + 2 * i) : sl_get_le32(it->raw + 4 * i);
        if (it->tok[i] >= s->info.vocab_size)
            return sl_errf(err, "%s: row %llu: offset %u: token %u >= vocab size %u", it->tname,
                           (unsigned long long)it->row, i, it->tok[i], s->info.vocab_size);
    }
    size_t n = 0;
    uint32_t end = 0;
    const sl_shard_info *inf = &s->info;
    uint32_t mr = inf->mem_tokens, mw = inf->mem_write ? inf->mem_tokens : 0;
    while (it->have_next) {
        uint64_t r = sl_get_le64(it->rec);
        if (r < it->row)
            return sl_errf(err, "%s: record %llu: rows are not sorted", it->bname, (unsigned long long)it->piece);
        if (r > it->row)
            break;
        if (n == it->cap_pieces) {
            it->cap_pieces = it->cap_pieces ? 2 * it->cap_pieces : 16;
            it->pieces = sl_xrealloc(it->pieces, it->cap_pieces * sizeof *it->pieces);
        }
        sl_piece *p = &it->pieces[n];
        p->doc = sl_get_le64(it->rec + 8);
        p->doc_offset = sl_get_le64(it->rec + 16);
        p->offset = sl_get_le32(it->rec + 24);
        p->length = sl_get_le32(it->rec + 28);
        if (p->offset < end || p->length == 0 || p->length > L || p->offset > L - p->length)
            return sl_errf(err, "%s: record %llu: piece [%u, +%u) is out of order, empty or outside the row of %u",
                           it->bname, (unsigned long long)it->piece, p->offset, p->length, L);
        if (p->offset < mr || p->offset + p->length > L - mw)
            return sl_errf(err, "%s: record %llu: piece [%u, +%u) covers a memory position (manifest \"memory\")",
                           it->bname, (unsigned long long)it->piece, p->offset, p->length);
        size_t il = 0;
        p->id = s->docs_streamed ? NULL : sl_shard_doc_id(s, p->doc, &il);
        if ((!p->id && !s->docs_streamed) ||
            (s->docs_streamed && it->has_doc && !it->has_doc(it->has_doc_ctx, p->doc, it->file, it->piece)))
            return sl_errf(err, "%s: record %llu: document %llu is not in documents.jsonl", it->bname,
                           (unsigned long long)it->piece, (unsigned long long)p->doc);
        p->id_len = (uint32_t)il;
        end = p->offset + p->length;
        n++;
        it->piece++;
        if (read_rec(it, err))
            return -1;
    }
    row->index = it->sp->files[it->file].first_row + it->row;
    row->tokens = it->tok;
    row->n_pieces = n;
    row->pieces = it->pieces;
    it->row++;
    return 1;
}

void sl_shard_iter_close(sl_shard_iter *it)
{
    if (!it)
        return;
    close_files(it);
    free(it->bt);
    free(it->bb);
    free(it->raw);
    free(it->tok);
    free(it->pieces);
    free(it);
}

void sl_shard_iter_check_docs(sl_shard_iter *it, sl_shard_has_doc_fn fn, void *ctx)
{
    it->has_doc = fn;
    it->has_doc_ctx = ctx;
}

void sl_shard_iter_pos(const sl_shard_iter *it, size_t *file, uint64_t *next_record)
{
    *file = it->file;
    *next_record = it->piece;
}

int sl_shard_has_manifest(const char *path)
{
    struct stat st;
    char m[4096];
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(m, sizeof m, "%s/manifest.json", path);
    return stat(m, &st) == 0;
}
