/* Megatron indexed dataset reader and writer (see megatron.h). The writer
 * streams tokens to .bin and keeps sizes and document indices in spills
 * (12 bytes per document, in memory up to 2 MiB each, then in unlinked
 * files), then writes .idx at the end, as IndexedDatasetBuilder.finalize
 * does. */
#include "shard/megatron.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/byteorder.h"
#include "base/buf.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/spill.h"

int sl_mega_dtype_for_vocab(uint64_t vocab_size)
{
    return vocab_size < 65500 ? SL_MEGA_UINT16 : SL_MEGA_INT32;
}

static char *with_ext(const char *prefix, const char *ext)
{
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s%s", prefix, ext);
    return p;
}

int sl_mega_parse_idx(const unsigned char *b, size_t len, uint64_t bin_size, const char *name, sl_mega_index *ix,
                      sl_err *err)
{
    memset(ix, 0, sizeof *ix);
    if (len < SL_MEGA_HEADER)
        return sl_errf(err, "%s: %zu bytes: too short for a Megatron index header (34 bytes)", name, len);
    if (memcmp(b, SL_MEGA_MAGIC, 9))
        return sl_errf(err, "%s: offset 0: bad magic (not a Megatron MMIDIDX index)", name);
    uint64_t version = sl_get_le64(b + 9);
    if (version != 1)
        return sl_errf(err, "%s: offset 9: unsupported version %llu (1 expected)", name, (unsigned long long)version);
    uint8_t code = b[17];
    if (code != SL_MEGA_UINT16 && code != SL_MEGA_INT32)
        return sl_errf(err, "%s: offset 17: dtype code %u is not a token dtype (8 = uint16, 4 = int32)", name, code);
    uint64_t S = sl_get_le64(b + 18), D = sl_get_le64(b + 26);
    uint64_t room = len - SL_MEGA_HEADER;
    /* sizes (4 B) and pointers (8 B) per sequence, 8 B per document index */
    if (S > room / 12 || D > room / 8 || 12 * S + 8 * D != room) {
        if (S <= room / 13 && D <= room / 8 && 13 * S + 8 * D == room)
            return sl_errf(err, "%s: multimodal index (sequence modes) is not supported", name);
        return sl_errf(err, "%s: %zu bytes do not match %llu sequences and %llu document indices", name, len,
                       (unsigned long long)S, (unsigned long long)D);
    }
    if (D < 1)
        return sl_errf(err, "%s: offset 26: document index count is 0 (at least 1 expected)", name);
    ix->dtype_code = code;
    ix->itemsize = code == SL_MEGA_UINT16 ? 2 : 4;
    ix->n_seq = S;
    ix->n_doc_idx = D;
    ix->sizes = sl_xmalloc((S ? S : 1) * sizeof *ix->sizes);
    ix->pointers = sl_xmalloc((S ? S : 1) * sizeof *ix->pointers);
    ix->doc_idx = sl_xmalloc(D * sizeof *ix->doc_idx);
    const unsigned char *ps = b + SL_MEGA_HEADER, *pp = ps + 4 * S, *pd = pp + 8 * S;
    uint64_t total = 0;
    for (uint64_t i = 0; i < S; i++) {
        int32_t sz = (int32_t)sl_get_le32(ps + 4 * i);
        int64_t ptr = (int64_t)sl_get_le64(pp + 8 * i);
        if (sz < 0) {
            sl_errf(err, "%s: offset %llu: sequence %llu has negative size %d", name,
                    (unsigned long long)(SL_MEGA_HEADER + 4 * i), (unsigned long long)i, sz);
            goto fail;
        }
        if (ptr < 0 || (uint64_t)ptr != total * (uint64_t)ix->itemsize) {
            sl_errf(err, "%s: offset %llu: sequence %llu pointer %lld, expected %llu (sum of sizes x %d)", name,
                    (unsigned long long)(SL_MEGA_HEADER + 4 * S + 8 * i), (unsigned long long)i, (long long)ptr,
                    (unsigned long long)(total * (uint64_t)ix->itemsize), ix->itemsize);
            goto fail;
        }
        ix->sizes[i] = sz;
        ix->pointers[i] = ptr;
        total += (uint64_t)sz;
    }
    for (uint64_t i = 0; i < D; i++) {
        int64_t d = (int64_t)sl_get_le64(pd + 8 * i);
        int64_t prev = i ? ix->doc_idx[i - 1] : 0;
        if ((i == 0 && d != 0) || d < prev || (uint64_t)d > S || (i == D - 1 && (uint64_t)d != S)) {
            sl_errf(err, "%s: offset %llu: document index %llu = %lld breaks 0 = first <= ... <= last = %llu", name,
                    (unsigned long long)(SL_MEGA_HEADER + 12 * S + 8 * i), (unsigned long long)i, (long long)d,
                    (unsigned long long)S);
            goto fail;
        }
        ix->doc_idx[i] = d;
    }
    ix->total_tokens = total;
    if (bin_size != UINT64_MAX && bin_size != total * (uint64_t)ix->itemsize) {
        sl_errf(err, "%s: the .bin has %llu bytes, the index describes %llu", name, (unsigned long long)bin_size,
                (unsigned long long)(total * (uint64_t)ix->itemsize));
        goto fail;
    }
    return 0;
fail:
    sl_mega_index_free(ix);
    return -1;
}

void sl_mega_index_free(sl_mega_index *ix)
{
    free(ix->sizes);
    free(ix->pointers);
    free(ix->doc_idx);
    memset(ix, 0, sizeof *ix);
}

/* Documents are read in order: each read goes on from where the one before
 * ended, through a 1 MiB buffer, with no seek (a seek before every document
 * dropped stdio's buffer: 30,600 lseek and 18,200 read calls to import 84 MB). */
#define MEGA_BUF ((size_t)1 << 20)

struct sl_mega_reader {
    sl_mega_index ix;
    FILE *bin;
    char *bin_buf; /* bin's stdio buffer (glibc takes setvbuf's size only with a buffer given) */
    uint64_t pos;  /* bin's offset after the last read_tokens, UINT64_MAX: not known */
    char *bin_path;
    unsigned char *raw;
    size_t cap_raw;
};

sl_mega_reader *sl_mega_open(const char *prefix, sl_err *err)
{
    char *ip = with_ext(prefix, ".idx");
    char *bp = with_ext(prefix, ".bin");
    char *data = NULL;
    size_t len = 0;
    sl_mega_reader *r = sl_xcalloc(1, sizeof *r);
    r->bin_path = bp;
    struct stat st;
    FILE *f = fopen(ip, "rb");
    if (!f) {
        sl_errf(err, "%s: %s", ip, strerror(errno));
        goto fail;
    }
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        sl_errf(err, "%s: not a regular file", ip);
        goto fail;
    }
    len = (size_t)st.st_size;
    data = sl_xmalloc(len ? len : 1);
    if (fread(data, 1, len, f) != len) {
        fclose(f);
        sl_errf(err, "%s: read error", ip);
        goto fail;
    }
    fclose(f);
    r->bin = fopen(bp, "rb");
    if (!r->bin || fstat(fileno(r->bin), &st)) {
        sl_errf(err, "%s: %s", bp, strerror(errno));
        goto fail;
    }
    r->bin_buf = sl_xmalloc(MEGA_BUF);
    setvbuf(r->bin, r->bin_buf, _IOFBF, MEGA_BUF);
    r->pos = UINT64_MAX;
    if (sl_mega_parse_idx((unsigned char *)data, len, (uint64_t)st.st_size, ip, &r->ix, err))
        goto fail;
    free(data);
    free(ip);
    return r;
fail:
    free(data);
    free(ip);
    sl_mega_close(r);
    return NULL;
}

const sl_mega_index *sl_mega_index_of(const sl_mega_reader *r)
{
    return &r->ix;
}
uint64_t sl_mega_n_docs(const sl_mega_reader *r)
{
    return r->ix.n_doc_idx - 1;
}

static int read_tokens(sl_mega_reader *r, uint64_t byte_off, uint64_t count, uint32_t *dst, sl_err *err)
{
    size_t nb = (size_t)count * (size_t)r->ix.itemsize;
    if (nb > r->cap_raw) {
        r->cap_raw = nb;
        r->raw = sl_xrealloc(r->raw, nb);
    }
    if ((r->pos != byte_off && fseeko(r->bin, (off_t)byte_off, SEEK_SET)) || fread(r->raw, 1, nb, r->bin) != nb) {
        r->pos = UINT64_MAX;
        return sl_errf(err, "%s: offset %llu: unexpected end of file", r->bin_path, (unsigned long long)byte_off);
    }
    r->pos = byte_off + nb;
    for (uint64_t i = 0; i < count; i++) {
        if (r->ix.itemsize == 2) {
            dst[i] = sl_get_le16(r->raw + 2 * i);
        } else {
            int32_t v = (int32_t)sl_get_le32(r->raw + 4 * i);
            if (v < 0)
                return sl_errf(err, "%s: offset %llu: negative token id %d", r->bin_path,
                               (unsigned long long)(byte_off + 4 * i), v);
            dst[i] = (uint32_t)v;
        }
    }
    return 0;
}

int sl_mega_read_doc(sl_mega_reader *r, uint64_t k, uint32_t **tok, size_t *n, size_t *cap, sl_err *err)
{
    uint64_t a = (uint64_t)r->ix.doc_idx[k], b = (uint64_t)r->ix.doc_idx[k + 1];
    uint64_t total = 0;
    for (uint64_t i = a; i < b; i++)
        total += (uint64_t)r->ix.sizes[i];
    if (total > *cap) {
        *cap = total;
        *tok = sl_xrealloc(*tok, total * sizeof **tok);
    }
    *n = 0;
    if (total && read_tokens(r, (uint64_t)r->ix.pointers[a], total, *tok, err))
        return -1;
    *n = total;
    return 0;
}

int sl_mega_max_token(sl_mega_reader *r, uint32_t *max, sl_err *err)
{
    uint64_t chunk = 1 << 20, done = 0;
    uint32_t *buf = sl_xmalloc(chunk * sizeof *buf);
    *max = 0;
    while (done < r->ix.total_tokens) {
        uint64_t c = r->ix.total_tokens - done < chunk ? r->ix.total_tokens - done : chunk;
        if (read_tokens(r, done * (uint64_t)r->ix.itemsize, c, buf, err)) {
            free(buf);
            return -1;
        }
        for (uint64_t i = 0; i < c; i++)
            if (buf[i] > *max)
                *max = buf[i];
        done += c;
    }
    free(buf);
    return 0;
}

void sl_mega_close(sl_mega_reader *r)
{
    if (!r)
        return;
    if (r->bin)
        fclose(r->bin);
    free(r->bin_buf);
    sl_mega_index_free(&r->ix);
    free(r->bin_path);
    free(r->raw);
    free(r);
}

/* The index's arrays (a size per sequence, a document index per document)
 * are known only at the end and go to the .idx after the header that counts
 * them: they wait in FIFO spills (stream/spill.h, unlinked files past
 * MEGA_SPILL bytes each), so memory does not grow with the number of
 * documents. */
#define MEGA_SPILL ((size_t)4 << 20)

struct sl_mega_writer {
    char *idx_path;
    sl_output *bin;
    int code, itemsize;
    sl_spill *sizes;   /* int32 LE per sequence */
    sl_spill *doc_idx; /* int64 LE per document index entry, after the leading 0 */
    uint64_t n_seq, n_doc;
    unsigned char *conv;
    size_t cap_conv;
    sl_err spill_err; /* a failed append, reported by the next call that can fail */
    int spill_failed;
};

sl_mega_writer *sl_mega_writer_open(const char *prefix, int dtype_code, sl_err *err)
{
    if (dtype_code != SL_MEGA_UINT16 && dtype_code != SL_MEGA_INT32) {
        sl_errf(err, "%s: dtype code %d is not 8 (uint16) or 4 (int32)", prefix, dtype_code);
        return NULL;
    }
    sl_mega_writer *w = sl_xcalloc(1, sizeof *w);
    char *bp = with_ext(prefix, ".bin");
    w->bin = sl_output_open(bp, err);
    free(bp);
    if (!w->bin) {
        free(w);
        return NULL;
    }
    w->idx_path = with_ext(prefix, ".idx");
    w->code = dtype_code;
    w->itemsize = dtype_code == SL_MEGA_UINT16 ? 2 : 4;
    sl_spill_opts so = {.budget = MEGA_SPILL, .rec_size = 4, .purpose = "Megatron sizes"};
    w->sizes = sl_spill_new(&so, err);
    so.rec_size = 8;
    so.purpose = "Megatron document index";
    w->doc_idx = sl_spill_new(&so, err);
    w->n_doc = 1; /* doc_idx[0] = 0 */
    return w;
}

static void push_seq(sl_mega_writer *w, int32_t size)
{
    unsigned char b[4];
    sl_put_le32(b, (uint32_t)size);
    if (!w->spill_failed && sl_spill_add(w->sizes, b, 4, &w->spill_err))
        w->spill_failed = 1;
    w->n_seq++;
}

static void push_doc(sl_mega_writer *w, int64_t end)
{
    unsigned char b[8];
    sl_put_le64(b, (uint64_t)end);
    if (!w->spill_failed && sl_spill_add(w->doc_idx, b, 8, &w->spill_err))
        w->spill_failed = 1;
    w->n_doc++;
}

int sl_mega_add_doc(sl_mega_writer *w, const uint32_t *tok, size_t n, sl_err *err)
{
    if (n > INT32_MAX)
        return sl_errf(err, "%s: a document of %zu tokens does not fit Megatron's int32 sizes", sl_output_name(w->bin),
                       n);
    size_t nb = n * (size_t)w->itemsize;
    if (nb > w->cap_conv) {
        w->cap_conv = nb;
        w->conv = sl_xrealloc(w->conv, nb);
    }
    for (size_t i = 0; i < n; i++) {
        if (w->itemsize == 2) {
            if (tok[i] > 0xffff)
                return sl_errf(err, "%s: token %u does not fit uint16", sl_output_name(w->bin), tok[i]);
            sl_put_le16(w->conv + 2 * i, (uint16_t)tok[i]);
        } else {
            if (tok[i] > INT32_MAX)
                return sl_errf(err, "%s: token %u does not fit int32", sl_output_name(w->bin), tok[i]);
            sl_put_le32(w->conv + 4 * i, tok[i]);
        }
    }
    if (nb && sl_output_write(w->bin, w->conv, nb, err))
        return -1;
    push_seq(w, (int32_t)n);
    push_doc(w, (int64_t)w->n_seq);
    return w->spill_failed ? (*err = w->spill_err, -1) : 0;
}

int sl_mega_add_index(sl_mega_writer *w, sl_mega_reader *r, sl_err *err)
{
    const sl_mega_index *ix = &r->ix;
    if (ix->dtype_code != w->code)
        return sl_errf(err,
                       "%s: dtype code %u differs from the output's %d (Megatron's add_index requires equal dtypes)",
                       r->bin_path, ix->dtype_code, w->code);
    int64_t off = (int64_t)w->n_seq;
    for (uint64_t i = 0; i < ix->n_seq; i++)
        push_seq(w, ix->sizes[i]);
    for (uint64_t i = 1; i < ix->n_doc_idx; i++)
        push_doc(w, off + ix->doc_idx[i]);
    if (w->spill_failed) {
        *err = w->spill_err;
        return -1;
    }
    /* copy the .bin */
    r->pos = UINT64_MAX; /* (read_tokens seeks again after this) */
    if (fseeko(r->bin, 0, SEEK_SET))
        return sl_errf(err, "%s: cannot seek", r->bin_path);
    size_t cap = 1 << 20, n;
    char *buf = sl_xmalloc(cap);
    uint64_t want = ix->total_tokens * (uint64_t)ix->itemsize, got = 0;
    while (got < want && (n = fread(buf, 1, want - got < cap ? (size_t)(want - got) : cap, r->bin)) > 0) {
        if (sl_output_write(w->bin, buf, n, err)) {
            free(buf);
            return -1;
        }
        got += n;
    }
    free(buf);
    if (got != want)
        return sl_errf(err, "%s: offset %llu: unexpected end of file", r->bin_path, (unsigned long long)got);
    return 0;
}

uint64_t sl_mega_writer_docs(const sl_mega_writer *w)
{
    return w->n_doc - 1;
}

/* Copies a spill's records to out; with ptr, the running sums of the sizes
 * times the item size instead (the pointers section). */
static int copy_spill(sl_spill *sp, sl_output *out, uint64_t *ptr, int itemsize, unsigned char *buf, size_t chunk,
                      sl_err *err)
{
    const void *r;
    size_t n = 0, k = 0;
    int got;
    while ((got = sl_spill_next(sp, &r, &n, err)) == 1) {
        if (ptr) {
            sl_put_le64(buf + 8 * k, *ptr);
            *ptr += (uint64_t)sl_get_le32(r) * (uint64_t)itemsize;
            k++;
        } else {
            memcpy(buf + n * k, r, n);
            k++;
        }
        if (k == chunk) {
            if (sl_output_write(out, buf, (ptr ? 8 : n) * k, err))
                return -1;
            k = 0;
        }
    }
    if (got < 0)
        return -1;
    size_t each = ptr ? 8 : (n ? n : 8);
    return k ? sl_output_write(out, buf, each * k, err) : 0;
}

int sl_mega_writer_finish(sl_mega_writer *w, sl_err *err)
{
    sl_output *idx = NULL;
    unsigned char *buf = NULL;
    int rc = -1;
    if (w->spill_failed) {
        *err = w->spill_err;
        goto out;
    }
    if (sl_spill_sort(w->sizes, err) || sl_spill_sort(w->doc_idx, err))
        goto out;
    if (!(idx = sl_output_open(w->idx_path, err)))
        goto out;
    unsigned char h[SL_MEGA_HEADER];
    memcpy(h, SL_MEGA_MAGIC, 9);
    sl_put_le64(h + 9, 1);
    h[17] = (unsigned char)w->code;
    sl_put_le64(h + 18, w->n_seq);
    sl_put_le64(h + 26, w->n_doc);
    if (sl_output_write(idx, h, sizeof h, err))
        goto out;
    size_t chunk = 8192;
    buf = sl_xmalloc(chunk * 8);
    uint64_t ptr = 0;
    unsigned char zero[8] = {0};
    if (copy_spill(w->sizes, idx, NULL, 0, buf, chunk, err) || sl_spill_rewind(w->sizes, err) ||
        copy_spill(w->sizes, idx, &ptr, w->itemsize, buf, chunk, err) || sl_output_write(idx, zero, 8, err) ||
        copy_spill(w->doc_idx, idx, NULL, 0, buf, chunk, err))
        goto out;
    rc = sl_output_commit(w->bin, err);
    w->bin = NULL;
    if (!rc) {
        rc = sl_output_commit(idx, err);
        idx = NULL;
    }
out:
    free(buf);
    sl_output_abort(idx);
    sl_mega_writer_abort(w);
    return rc;
}

void sl_mega_writer_abort(sl_mega_writer *w)
{
    if (!w)
        return;
    sl_output_abort(w->bin);
    free(w->idx_path);
    sl_spill_free(w->sizes);
    sl_spill_free(w->doc_idx);
    free(w->conv);
    free(w);
}

/* --- PREFIX.documents.jsonl ----------------------------------------------- */
struct sl_mega_docs {
    uint64_t n;
    size_t *off; /* per document: id at off[2k] (length off[2k+1]-off[2k]), meta up to off[2k+2] */
    sl_buf text;
};

char *sl_mega_docs_path(const char *prefix)
{
    return with_ext(prefix, ".documents.jsonl");
}

int sl_mega_docs_open(const char *prefix, uint64_t n_docs, sl_mega_docs **out, sl_err *err)
{
    *out = NULL;
    char *p = sl_mega_docs_path(prefix);
    struct stat st;
    if (stat(p, &st)) {
        int e = errno, rc = e == ENOENT ? 0 : sl_errf(err, "%s: %s", p, strerror(e));
        free(p);
        return rc;
    }
    char *data = NULL;
    size_t len = 0;
    if (sl_read_file(p, &data, &len, err)) {
        free(p);
        return -1;
    }
    sl_mega_docs *d = sl_xcalloc(1, sizeof *d);
    d->off = sl_xmalloc((2 * n_docs + 1) * sizeof *d->off);
    d->off[0] = 0;
    size_t pos = 0, line = 0;
    int rc = -1;
    while (pos < len) {
        char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        line++;
        sl_json_doc *jd = sl_json_parse(data + pos, end - pos, NULL, err);
        sl_json *o = jd ? sl_json_root(jd) : NULL;
        int64_t k;
        sl_json *idv = o && o->type == SL_JSON_OBJECT ? sl_json_get(o, "id") : NULL;
        sl_json *mv = idv ? sl_json_get(o, "meta") : NULL;
        if (!idv || idv->type != SL_JSON_STRING || sl_json_get_int(o, "doc", &k) || (uint64_t)k != d->n ||
            d->n >= n_docs || (mv && mv->type != SL_JSON_OBJECT)) {
            if (jd)
                sl_errf(err, "expected {\"doc\":%llu,\"id\":\"...\",...,\"meta\":{...}} (the index has %llu documents)",
                        (unsigned long long)d->n, (unsigned long long)n_docs);
            sl_err_prefix(err, "%s:%zu", p, line);
            sl_json_free(jd);
            goto out;
        }
        sl_buf_append(&d->text, idv->str, idv->str_len);
        d->off[2 * d->n + 1] = d->text.len;
        if (mv && mv->n)
            sl_json_put_value(&d->text, mv);
        d->off[2 * d->n + 2] = d->text.len;
        d->n++;
        sl_json_free(jd);
        pos = end + 1;
    }
    if (d->n != n_docs) {
        sl_errf(err, "%s: %llu lines, the index has %llu documents", p, (unsigned long long)d->n,
                (unsigned long long)n_docs);
        goto out;
    }
    if (!d->text.data)
        sl_buf_putc(&d->text, 0);
    *out = d;
    d = NULL;
    rc = 1;
out:
    sl_mega_docs_close(d);
    free(data);
    free(p);
    return rc;
}

void sl_mega_docs_get(const sl_mega_docs *d, uint64_t k, const char **id, size_t *id_len, const char **meta,
                      size_t *meta_len)
{
    *id = d->text.data + d->off[2 * k];
    *id_len = d->off[2 * k + 1] - d->off[2 * k];
    *meta = d->text.data + d->off[2 * k + 1];
    *meta_len = d->off[2 * k + 2] - d->off[2 * k + 1];
}

void sl_mega_docs_close(sl_mega_docs *d)
{
    if (!d)
        return;
    free(d->off);
    sl_buf_free(&d->text);
    free(d);
}

int sl_mega_finish_with_docs(sl_mega_writer *w, sl_output *side, const char *prefix, sl_err *err)
{
    if (sl_mega_writer_finish(w, err)) {
        sl_output_abort(side);
        return -1;
    }
    if (side)
        return sl_output_commit(side, err) ? -1 : 0;
    char *sp = sl_mega_docs_path(prefix);
    unlink(sp);
    free(sp);
    return 0;
}
