/* Shard directory writer (docs/shards.md section 4).
 *
 * Rows of each split pass through an optional shuffle window, then go to the
 * split's current file pair (.tokens/.bounds), whose XXH64 is computed while
 * writing. Everything lands in DIR.tmp.<pid>/; manifest.json is written last
 * and the directory is renamed into place, so a reader never sees a
 * complete-looking directory from an interrupted run. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "shard/meta.h"
#include "shard/shard.h"
#include "shard/util.h"
#include "base/buf.h"
#include "base/byteorder.h"
#include "stream/io.h"
#include "base/json.h"
#include "base/rng.h"
#include "stream/tokstream.h"

const char *const sl_shard_split_names[SL_SPLIT_N] = {"train", "val"};

typedef struct {
    uint64_t doc, doc_offset;
    uint32_t offset, length;
} wpiece;

typedef struct {
    /* shuffle window: rows and their pieces */
    uint32_t *win_tok;
    size_t win_n, win_cap;
    wpiece *win_pieces;
    size_t n_wp, cap_wp;
    size_t *win_first; /* win_cap + 1 piece starts */
    uint64_t rng;
    /* current file */
    sl_output *tok_out, *bnd_out;
    XXH64_state_t *xt, *xb;
    uint64_t file_rows, file_pieces;
    /* totals */
    uint64_t rows, pieces, pad_tokens, mem_tokens;
    sl_shard_file *files;
    size_t n_files;
    int used;
} split_state;

struct sl_shard_writer {
    char *dir, *tmp;
    sl_outdir *od;
    sl_shard_info info;
    sl_warmup warmup;
    uint64_t rows_per_file;
    split_state sp[SL_SPLIT_N];
    unsigned char *conv; /* one row in the file's dtype */
    unsigned char *bconv;
    size_t bconv_cap;
    sl_output *docs_out, *idx_out;
    XXH64_state_t *xd, *xi;
    uint64_t n_docs, docs_bytes;
    sl_buf line;
};

int sl_split_of(const char *id, size_t len, double fraction)
{
    if (fraction <= 0)
        return SL_SPLIT_TRAIN;
    /* 2^-64 scaling is exact in double; the comparison is on the top 53 bits. */
    double u = (double)XXH64(id, len, 0) * 0x1p-64;
    return u < fraction ? SL_SPLIT_VAL : SL_SPLIT_TRAIN;
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

sl_shard_writer *sl_shard_writer_open(const char *dir, const sl_shard_info *info, uint64_t max_file_bytes, int force,
                                      sl_err *err)
{
    if (info->dtype_bytes != 2 && info->dtype_bytes != 4) {
        sl_errf(err, "%s: token width must be 2 or 4 bytes", dir);
        return NULL;
    }
    if (info->dtype_bytes == 2 && info->vocab_size > 65536) {
        sl_errf(err, "%s: vocab size %u does not fit uint16 tokens", dir, info->vocab_size);
        return NULL;
    }
    sl_shard_writer *w = sl_xcalloc(1, sizeof *w);
    w->info = *info;
    w->info.warmup = info->warmup ? sl_xstrdup(info->warmup) : NULL;
    if (info->warmup) {
        if (sl_warmup_parse(info->warmup, &w->warmup, err))
            goto fail;
        if (w->warmup.max_len != info->seq_len) {
            sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': longest stage %u differs from `seq_len` %u",
                       info->warmup, w->warmup.max_len, info->seq_len);
            goto fail;
        }
    } else {
        sl_warmup_single(&w->warmup, info->seq_len, info->layout == SL_LAYOUT_RECURRENT ? info->batch : 1);
    }
    uint64_t row_bytes = (uint64_t)info->seq_len * (uint64_t)info->dtype_bytes;
    w->rows_per_file = max_file_bytes ? (max_file_bytes / row_bytes ? max_file_bytes / row_bytes : 1) : UINT64_MAX;
    /* DIR.tmp.<pid>/ (parents created, removed on failure or signal) */
    if (!(w->od = sl_outdir_open(dir, force, err)))
        goto fail;
    w->dir = sl_xstrdup(sl_outdir_name(w->od));
    w->tmp = sl_xstrdup(sl_outdir_tmp(w->od));
    w->conv = sl_xmalloc(row_bytes);
    for (int s = 0; s < SL_SPLIT_N; s++) {
        split_state *sp = &w->sp[s];
        sp->win_cap = info->shuffle ? (info->shuffle_window ? info->shuffle_window : 1) : 1;
        sp->win_tok = sl_xmalloc(sp->win_cap * info->seq_len * sizeof *sp->win_tok);
        sp->win_first = sl_xcalloc(sp->win_cap + 1, sizeof *sp->win_first);
        /* distinct streams per split, all determined by the seed */
        sp->rng = info->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(s + 1));
    }
    char *dp = path_in(w->tmp, "documents.jsonl");
    w->docs_out = sl_output_open(dp, err);
    free(dp);
    if (!w->docs_out)
        goto fail;
    dp = path_in(w->tmp, "documents.idx");
    w->idx_out = sl_output_open(dp, err);
    free(dp);
    if (!w->idx_out)
        goto fail;
    w->xd = XXH64_createState();
    XXH64_reset(w->xd, 0);
    w->xi = XXH64_createState();
    XXH64_reset(w->xi, 0);
    return w;
fail:
    sl_shard_writer_abort(w);
    return NULL;
}

/* Appends entry "offset of the next line" to documents.idx. */
static int put_index(sl_shard_writer *w, sl_err *err)
{
    unsigned char e[8];
    sl_put_le64(e, w->docs_bytes);
    XXH64_update(w->xi, e, 8);
    return sl_output_write(w->idx_out, e, 8, err);
}

/* One line of documents.jsonl (and its index entry). */
static int put_line(sl_shard_writer *w, uint64_t ordinal, const char *id, size_t id_len, int split, int long_status,
                    const char *meta, size_t meta_len, sl_err *err)
{
    sl_buf *b = &w->line;
    sl_buf_clear(b);
    sl_meta_doc_line(b, ordinal, id, id_len, sl_shard_split_names[split], long_status, meta, meta_len);
    if (put_index(w, err))
        return -1;
    XXH64_update(w->xd, b->data, b->len);
    int rc = sl_output_write(w->docs_out, b->data, b->len, err);
    w->docs_bytes += b->len;
    w->n_docs++;
    return rc;
}

int sl_shard_writer_doc(sl_shard_writer *w, uint64_t ordinal, const char *id, size_t id_len, int split, int long_status,
                        sl_err *err)
{
    return sl_shard_writer_doc_meta(w, ordinal, id, id_len, split, long_status, NULL, 0, err);
}

int sl_shard_writer_doc_meta(sl_shard_writer *w, uint64_t ordinal, const char *id, size_t id_len, int split,
                             int long_status, const char *meta, size_t meta_len, sl_err *err)
{
    if (ordinal < w->n_docs)
        return sl_errf(err, "%s: document %llu: ordinals must increase (the last line is document %llu)", w->dir,
                       (unsigned long long)ordinal, (unsigned long long)(w->n_docs - 1));
    if (meta && meta_len && (meta[0] != '{' || meta[meta_len - 1] != '}' || memchr(meta, '\n', meta_len)))
        return sl_errf(err, "%s: document %llu: metadata must be a one-line JSON object", w->dir,
                       (unsigned long long)ordinal);
    /* every ordinal gets a line: one not given (only a source that skipped it
     * can leave a gap) is recorded as a dropped document with no id */
    while (w->n_docs < ordinal)
        if (put_line(w, w->n_docs, "", 0, SL_SPLIT_TRAIN, SL_DOC_DROPPED, NULL, 0, err))
            return -1;
    if (meta_len == 2) /* "{}": no metadata, no "meta" key */
        meta_len = 0;
    return put_line(w, ordinal, id, id_len, split, long_status, meta, meta_len, err);
}

static int close_file(sl_shard_writer *w, split_state *sp, sl_err *err)
{
    if (!sp->tok_out)
        return 0;
    sl_shard_file *f = &sp->files[sp->n_files - 1];
    f->rows = sp->file_rows;
    f->pieces = sp->file_pieces;
    snprintf(f->tokens_xxh64, sizeof f->tokens_xxh64, "%016llx", (unsigned long long)XXH64_digest(sp->xt));
    snprintf(f->bounds_xxh64, sizeof f->bounds_xxh64, "%016llx", (unsigned long long)XXH64_digest(sp->xb));
    XXH64_freeState(sp->xt);
    XXH64_freeState(sp->xb);
    sp->xt = sp->xb = NULL;
    int rc = sl_output_commit(sp->tok_out, err);
    sp->tok_out = NULL;
    if (rc) {
        sl_output_abort(sp->bnd_out);
        sp->bnd_out = NULL;
        return -1;
    }
    rc = sl_output_commit(sp->bnd_out, err);
    sp->bnd_out = NULL;
    (void)w;
    return rc;
}

static int open_file(sl_shard_writer *w, int split, split_state *sp, sl_err *err)
{
    char name[64];
    sp->files = sl_xrealloc(sp->files, (sp->n_files + 1) * sizeof *sp->files);
    sl_shard_file *f = &sp->files[sp->n_files++];
    memset(f, 0, sizeof *f);
    f->first_row = sp->rows;
    snprintf(name, sizeof name, "%s-%05zu.tokens", sl_shard_split_names[split], sp->n_files - 1);
    f->tokens = sl_xstrdup(name);
    snprintf(name, sizeof name, "%s-%05zu.bounds", sl_shard_split_names[split], sp->n_files - 1);
    f->bounds = sl_xstrdup(name);
    char *tp = path_in(w->tmp, f->tokens), *bp = path_in(w->tmp, f->bounds);
    sp->tok_out = sl_output_open(tp, err);
    sp->bnd_out = sp->tok_out ? sl_output_open(bp, err) : NULL;
    free(tp);
    free(bp);
    if (!sp->bnd_out) {
        sl_output_abort(sp->tok_out);
        sp->tok_out = NULL;
        return -1;
    }
    sp->xt = XXH64_createState();
    sp->xb = XXH64_createState();
    XXH64_reset(sp->xt, 0);
    XXH64_reset(sp->xb, 0);
    sp->file_rows = sp->file_pieces = 0;
    return 0;
}

/* Writes one row to the split's current file. */
static int write_row(sl_shard_writer *w, int split, const uint32_t *tok, const wpiece *pc, size_t np, sl_err *err)
{
    split_state *sp = &w->sp[split];
    uint32_t L = w->info.seq_len;
    if (!sp->tok_out && open_file(w, split, sp, err))
        return -1;
    size_t nb = (size_t)L * (size_t)w->info.dtype_bytes;
    if (w->info.dtype_bytes == 2) {
        /* branch-free so the compiler vectorizes it; the check comes after */
        uint32_t high = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint16_t *o16 = (uint16_t *)(void *)w->conv;
        for (uint32_t i = 0; i < L; i++) {
            high |= tok[i];
            o16[i] = (uint16_t)tok[i];
        }
#else
        for (uint32_t i = 0; i < L; i++) {
            high |= tok[i];
            sl_put_le16(w->conv + 2 * i, (uint16_t)tok[i]);
        }
#endif
        if (high > 0xffff)
            for (uint32_t i = 0; i < L; i++)
                if (tok[i] > 0xffff)
                    return sl_errf(err, "%s: row %llu: offset %u: token %u does not fit uint16",
                                   sp->files[sp->n_files - 1].tokens, (unsigned long long)sp->file_rows, i, tok[i]);
    } else {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(w->conv, tok, nb);
#else
        for (uint32_t i = 0; i < L; i++)
            sl_put_le32(w->conv + 4 * i, tok[i]);
#endif
    }
    size_t bb = np * SL_BOUNDS_RECORD;
    if (bb > w->bconv_cap) {
        w->bconv_cap = bb * 2;
        w->bconv = sl_xrealloc(w->bconv, w->bconv_cap);
    }
    uint64_t used = 0;
    for (size_t i = 0; i < np; i++) {
        unsigned char *r = w->bconv + i * SL_BOUNDS_RECORD;
        sl_put_le64(r, sp->file_rows);
        sl_put_le64(r + 8, pc[i].doc);
        sl_put_le64(r + 16, pc[i].doc_offset);
        sl_put_le32(r + 24, pc[i].offset);
        sl_put_le32(r + 28, pc[i].length);
        used += pc[i].length;
    }
    XXH64_update(sp->xt, w->conv, nb);
    if (bb)
        XXH64_update(sp->xb, w->bconv, bb);
    if (sl_output_write(sp->tok_out, w->conv, nb, err) || (bb && sl_output_write(sp->bnd_out, w->bconv, bb, err)))
        return -1;
    sp->file_rows++;
    sp->file_pieces += np;
    sp->rows++;
    sp->pieces += np;
    uint32_t mem = w->info.layout == SL_LAYOUT_RECURRENT ? w->info.mem_tokens * (w->info.mem_write ? 2u : 1u) : 0;
    sp->pad_tokens += L - used - mem;
    sp->mem_tokens += mem;
    if (sp->file_rows == w->rows_per_file)
        return close_file(w, sp, err);
    return 0;
}

/* Empties the shuffle window (in a seeded random order when shuffling). */
static int flush_window(sl_shard_writer *w, int split, sl_err *err)
{
    split_state *sp = &w->sp[split];
    size_t n = sp->win_n;
    size_t *order = sl_xmalloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (w->info.shuffle)
        for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
            size_t j = (size_t)sl_rng_below(&sp->rng, i);
            size_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t r = order[i];
        rc = write_row(w, split, sp->win_tok + r * w->info.seq_len, sp->win_pieces + sp->win_first[r],
                       sp->win_first[r + 1] - sp->win_first[r], err);
    }
    free(order);
    sp->win_n = 0;
    sp->n_wp = 0;
    return rc;
}

int sl_shard_writer_row(sl_shard_writer *w, int split, const sl_row *row, sl_err *err)
{
    split_state *sp = &w->sp[split];
    sp->used = 1;
    uint32_t L = w->info.seq_len;
    if (!w->info.shuffle) { /* straight to the file */
        if (row->n_pieces > sp->cap_wp) {
            sp->cap_wp = row->n_pieces * 2;
            sp->win_pieces = sl_xrealloc(sp->win_pieces, sp->cap_wp * sizeof *sp->win_pieces);
        }
        for (size_t i = 0; i < row->n_pieces; i++) {
            const sl_piece *p = &row->pieces[i];
            sp->win_pieces[i] =
                (wpiece){.doc = p->doc, .doc_offset = p->doc_offset, .offset = p->offset, .length = p->length};
        }
        return write_row(w, split, row->tokens, sp->win_pieces, row->n_pieces, err);
    }
    if (sp->n_wp + row->n_pieces > sp->cap_wp) {
        sp->cap_wp = (sp->n_wp + row->n_pieces) * 2;
        sp->win_pieces = sl_xrealloc(sp->win_pieces, sp->cap_wp * sizeof *sp->win_pieces);
    }
    memcpy(sp->win_tok + sp->win_n * L, row->tokens, (size_t)L * sizeof *row->tokens);
    sp->win_first[sp->win_n] = sp->n_wp;
    for (size_t i = 0; i < row->n_pieces; i++) {
        const sl_piece *p = &row->pieces[i];
        sp->win_pieces[sp->n_wp++] =
            (wpiece){.doc = p->doc, .doc_offset = p->doc_offset, .offset = p->offset, .length = p->length};
    }
    sp->win_n++;
    sp->win_first[sp->win_n] = sp->n_wp;
    if (sp->win_n == sp->win_cap)
        return flush_window(w, split, err);
    return 0;
}

static void put_special(sl_buf *b, const char *key, int64_t v)
{
    sl_buf_printf(b, "\"%s\":", key);
    if (v == SL_NO_TOKEN)
        sl_buf_puts(b, "null");
    else
        sl_buf_printf(b, "%lld", (long long)v);
}

static void put_manifest(sl_shard_writer *w, sl_buf *b, const char *docs_hex, const char *idx_hex)
{
    const sl_shard_info *in = &w->info;
    sl_buf_printf(b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", SL_SHARD_FORMAT, SL_SHARD_VERSION);
    sl_buf_puts(b, "  \"tokenizer\": {\"fingerprint\": ");
    sl_json_put_cstr(b, in->fingerprint);
    sl_buf_puts(b, ", \"name\": ");
    sl_json_put_cstr(b, in->tokenizer);
    sl_buf_puts(b, ", \"modality\": ");
    sl_json_put_cstr(b, sl_modality_name(in->modality));
    sl_buf_printf(b, ", \"vocab_size\": %u},\n", in->vocab_size);
    sl_buf_printf(b, "  \"dtype\": \"%s\",\n  \"special\": {", in->dtype_bytes == 2 ? "uint16" : "uint32");
    put_special(b, "eos", in->eos);
    sl_buf_puts(b, ", ");
    put_special(b, "bos", in->bos);
    sl_buf_puts(b, ", ");
    put_special(b, "pad", in->pad);
    sl_buf_printf(b, "},\n  \"seq_len\": %u,\n  \"layout\": \"%s\",\n  \"batch\": ", in->seq_len,
                  in->layout == SL_LAYOUT_RECURRENT ? "recurrent" : "sequential");
    if (in->layout == SL_LAYOUT_RECURRENT)
        sl_buf_printf(b, "%u", in->batch);
    else
        sl_buf_puts(b, "null");
    if (in->layout == SL_LAYOUT_RECURRENT && in->mem_tokens) /* absent without memory slots */
        sl_buf_printf(b, ",\n  \"memory\": {\"tokens\": %u, \"id\": %lld, \"write\": %s}", in->mem_tokens,
                      (long long)in->mem_id, in->mem_write ? "true" : "false");
    if (in->layout == SL_LAYOUT_SEQUENTIAL && in->no_split) /* absent in split mode */
        sl_buf_printf(b, ",\n  \"no_split\": {\"long\": \"%s\"}", sl_long_mode_name(in->long_mode));
    sl_buf_puts(b, ",\n  \"warmup\": ");
    if (in->warmup)
        sl_json_put_cstr(b, in->warmup);
    else
        sl_buf_puts(b, "null");
    sl_buf_puts(b, ",\n  \"shuffle\": ");
    if (in->shuffle)
        sl_buf_printf(b, "{\"seed\": %llu, \"window\": %llu}", (unsigned long long)in->seed,
                      (unsigned long long)in->shuffle_window);
    else
        sl_buf_puts(b, "null");
    sl_buf_puts(b, ",\n  \"val_fraction\": ");
    sl_json_put_num(b, in->val_fraction);
    sl_buf_printf(b,
                  ",\n  \"documents\": {\"file\": \"documents.jsonl\", \"count\": %llu, \"bytes\": %llu, "
                  "\"xxh64\": \"%s\", \"index\": \"documents.idx\", \"index_xxh64\": \"%s\"},\n  \"stages\": [",
                  (unsigned long long)w->n_docs, (unsigned long long)w->docs_bytes, docs_hex, idx_hex);
    for (size_t i = 0; i < w->warmup.n; i++) {
        const sl_stage *s = &w->warmup.stages[i];
        sl_buf_printf(b, "%s\n    {\"seq_len\": %u, \"batch\": %llu, \"steps\": ", i ? "," : "", s->seq_len,
                      (unsigned long long)s->batch);
        if (s->steps < 0)
            sl_buf_puts(b, "null");
        else
            sl_buf_printf(b, "%lld", (long long)s->steps);
        sl_buf_printf(b, ", \"tokens_per_step\": %llu, \"start_token\": %llu}", (unsigned long long)s->tokens_per_step,
                      (unsigned long long)s->start_token);
    }
    sl_buf_puts(b, "\n  ],\n  \"splits\": {");
    int first = 1;
    for (int s = 0; s < SL_SPLIT_N; s++) {
        const split_state *sp = &w->sp[s];
        if (s == SL_SPLIT_VAL && !sp->used && in->val_fraction <= 0)
            continue;
        sl_buf_printf(b, "%s\n    \"%s\": {\"rows\": %llu, \"tokens\": %llu, \"pad_tokens\": %llu, ", first ? "" : ",",
                      sl_shard_split_names[s], (unsigned long long)sp->rows,
                      (unsigned long long)(sp->rows * in->seq_len), (unsigned long long)sp->pad_tokens);
        if (in->layout == SL_LAYOUT_RECURRENT && in->mem_tokens)
            sl_buf_printf(b, "\"memory_tokens\": %llu, ", (unsigned long long)sp->mem_tokens);
        sl_buf_printf(b, "\"pieces\": %llu, \"files\": [", (unsigned long long)sp->pieces);
        first = 0;
        for (size_t i = 0; i < sp->n_files; i++) {
            const sl_shard_file *f = &sp->files[i];
            sl_buf_printf(b,
                          "%s\n      {\"tokens\": \"%s\", \"bounds\": \"%s\", \"rows\": %llu, \"pieces\": %llu, "
                          "\"tokens_xxh64\": \"%s\", \"bounds_xxh64\": \"%s\"}",
                          i ? "," : "", f->tokens, f->bounds, (unsigned long long)f->rows,
                          (unsigned long long)f->pieces, f->tokens_xxh64, f->bounds_xxh64);
        }
        sl_buf_puts(b, sp->n_files ? "\n    ]}" : "]}");
    }
    sl_buf_puts(b, "\n  }\n}\n");
}

int sl_shard_writer_finish(sl_shard_writer *w, sl_err *err)
{
    for (int s = 0; s < SL_SPLIT_N; s++)
        if (flush_window(w, s, err) || close_file(w, &w->sp[s], err))
            goto fail;
    char docs_hex[17], idx_hex[17];
    if (put_index(w, err)) /* entry count: the size of documents.jsonl */
        goto fail;
    snprintf(docs_hex, sizeof docs_hex, "%016llx", (unsigned long long)XXH64_digest(w->xd));
    snprintf(idx_hex, sizeof idx_hex, "%016llx", (unsigned long long)XXH64_digest(w->xi));
    int rc = sl_output_commit(w->docs_out, err);
    w->docs_out = NULL;
    if (!rc)
        rc = sl_output_commit(w->idx_out, err);
    w->idx_out = NULL;
    if (rc)
        goto fail;
    if (sl_warmup_resolve(&w->warmup, w->sp[SL_SPLIT_TRAIN].rows * w->info.seq_len, err))
        goto fail;
    sl_buf m = {0};
    put_manifest(w, &m, docs_hex, idx_hex);
    char *mp = path_in(w->tmp, "manifest.json");
    sl_output *mo = sl_output_open(mp, err);
    free(mp);
    rc = !mo || sl_output_write(mo, m.data, m.len, err) || sl_output_commit(mo, err);
    sl_buf_free(&m);
    if (rc)
        goto fail;
    rc = sl_outdir_commit(w->od, err);
    w->od = NULL; /* committed, or removed on failure */
    if (rc)
        goto fail;
    sl_shard_writer_abort(w);
    return 0;
fail:
    sl_shard_writer_abort(w);
    return -1;
}

void sl_shard_writer_abort(sl_shard_writer *w)
{
    if (!w)
        return;
    for (int s = 0; s < SL_SPLIT_N; s++) {
        split_state *sp = &w->sp[s];
        sl_output_abort(sp->tok_out);
        sl_output_abort(sp->bnd_out);
        if (sp->xt)
            XXH64_freeState(sp->xt);
        if (sp->xb)
            XXH64_freeState(sp->xb);
        for (size_t i = 0; i < sp->n_files; i++) {
            free(sp->files[i].tokens);
            free(sp->files[i].bounds);
        }
        free(sp->files);
        free(sp->win_tok);
        free(sp->win_pieces);
        free(sp->win_first);
    }
    sl_output_abort(w->docs_out);
    sl_output_abort(w->idx_out);
    if (w->xd)
        XXH64_freeState(w->xd);
    if (w->xi)
        XXH64_freeState(w->xi);
    sl_buf_free(&w->line);
    sl_outdir_abort(w->od);
    sl_warmup_free(&w->warmup);
    free(w->info.warmup);
    free(w->tmp);
    free(w->dir);
    free(w->conv);
    free(w->bconv);
    free(w);
}
