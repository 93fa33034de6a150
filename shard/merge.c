/* Merging shard directories and Megatron datasets (shard/merge.h). */
#include "shard/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shard/megatron.h"
#include "shard/meta.h"
#include "shard/shard.h"
#include "stream/buf.h"
#include "stream/io.h"

static int same_str(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

int sl_shard_merge(const char *const *srcs, size_t n, const char *dst, int force, uint64_t max_file_bytes, sl_err *err)
{
    sl_shard **s = sl_xcalloc(n, sizeof *s);
    sl_shard_writer *w = NULL;
    sl_buf meta = {0};
    int rc = -1;
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
    }
    sl_shard_info info = *a;
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
    for (size_t i = 0; i < n; i++)
        sl_shard_close(s[i]);
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

int sl_mega_merge(const char *const *srcs, size_t n, const char *dst, sl_err *err)
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
