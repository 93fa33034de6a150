/* `sluice stats` as a library call (shard/stats.h). */
#include "shard/stats.h"

#include <stdlib.h>
#include <string.h>

#include "shard/packed.h"
#include "shard/util.h"
#include "base/json.h"
#include "stream/spill.h"
#include "stream/tokstream.h"

void sl_len_stats_add(sl_len_stats *s, uint64_t len)
{
    if (!s->n || len < s->min)
        s->min = len;
    if (len > s->max)
        s->max = len;
    s->n++;
    s->tokens += len;
    s->empty += len == 0;
    int k = 0;
    while (k < 64 && (len >> k))
        k++;
    s->hist[k]++;
}

/* The name for messages: the path given when there is one input, else the
 * file being read now. */
static const char *src_name(const sl_ts_reader *r, const char *path)
{
    return sl_ts_reader_n_inputs(r) == 1 ? path : sl_input_name(sl_ts_reader_input(r));
}

static int stats_stream(const char *const *paths, size_t n, sl_stats *st, sl_err *err)
{
    const char *path = n ? paths[0] : "-";
    sl_ts_reader *r = sl_ts_reader_open_paths((char *const *)paths, n, err);
    sl_doc d = {0};
    sl_packed_row pr = {0};
    char *wu = NULL;
    int rc = -1, k = 0;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    int packed = sl_packed_detect(h, &po, &wu, err);
    if (packed < 0)
        goto done;
    st->modality = h->modality;
    st->vocab_size = h->vocab_size;
    if (packed) {
        st->kind = SL_STATS_PACKED;
        uint64_t rows = 0, pieces = 0, starts = 0, used = 0;
        while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
            sl_row row;
            if (sl_packed_decode(&d, po.seq_len, &pr, &row, src_name(r, path), err))
                goto done;
            rows++;
            pieces += row.n_pieces;
            for (size_t i = 0; i < row.n_pieces; i++) {
                starts += row.pieces[i].doc_offset == 0;
                used += row.pieces[i].length;
            }
        }
        st->seq_len = po.seq_len;
        st->layout = po.layout;
        st->mem_tokens = po.mem_tokens;
        st->mem_id = po.mem_id;
        st->mem_write = po.mem_write;
        st->rows = rows;
        st->tokens = rows * po.seq_len;
        st->pieces = pieces;
        st->document_starts = starts;
        st->mem_tokens_total = rows * (sl_pack_mem_read(&po) + sl_pack_mem_write(&po));
        st->pad_tokens = st->tokens - used - st->mem_tokens_total;
    } else {
        st->kind = SL_STATS_DOCUMENTS;
        while ((k = sl_ts_read_doc(r, &d, err)) == 1)
            sl_len_stats_add(&st->docs, d.n_tokens);
    }
    rc = k < 0 ? -1 : 0;
done:
    free(wu);
    sl_packed_row_free(&pr);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return rc;
}

/* stats of a shard directory keeps nothing per document: the documents
 * (ordinal, split, status) wait in a FIFO spill as the reader checks them,
 * the pieces of every row (ordinal, split, length) in a spill sorted by
 * ordinal, and one merge of the two gives each document its length. */
typedef struct {
    uint64_t ord;
    uint32_t split, status;
} doc_rec;
typedef struct {
    uint64_t ord, rec; /* rec: its record in its bounds file, for messages */
    uint32_t len, split, file, pad;
} piece_rec;

/* The first piece (in the order of the rows) whose document is not in
 * documents.jsonl, as the reader names it when it keeps the table. */
typedef struct {
    int found;
    piece_rec at;
} missing;

static void note_missing(missing *ms, const piece_rec *p)
{
    if (!ms->found || p->split < ms->at.split ||
        (p->split == ms->at.split && (p->file < ms->at.file || (p->file == ms->at.file && p->rec < ms->at.rec))))
        ms->at = *p;
    ms->found = 1;
}

static int keep_doc(void *ctx, const sl_shard_docref *d, const char *id, sl_err *err)
{
    (void)id;
    doc_rec r = {d->ordinal, d->split, d->long_status};
    return sl_spill_add(ctx, &r, sizeof r, err);
}

static int by_ord(const void *a, size_t alen, const void *b, size_t blen, void *ctx)
{
    (void)alen, (void)blen, (void)ctx;
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x < y ? -1 : x > y;
}

/* Each document's length in the split it belongs to: the pieces of its
 * ordinal in the splits read up to its own, as one pass over the rows split
 * by split counted them. */
static int doc_lengths(const sl_shard *s, sl_spill *docs, sl_spill *pieces, sl_len_stats *ls, sl_err *err)
{
    missing ms = {0};
    const void *r;
    size_t n;
    int k, m = sl_spill_next(pieces, &r, &n, err);
    piece_rec p;
    if (m == 1)
        memcpy(&p, r, sizeof p);
    while ((k = sl_spill_next(docs, &r, &n, err)) == 1) {
        doc_rec d;
        memcpy(&d, r, sizeof d);
        uint64_t len = 0;
        while (m == 1 && p.ord <= d.ord) {
            if (p.ord < d.ord)
                note_missing(&ms, &p);
            else if (p.split <= d.split)
                len += p.len;
            if ((m = sl_spill_next(pieces, &r, &n, err)) == 1)
                memcpy(&p, r, sizeof p);
        }
        if (m < 0)
            return -1;
        if (d.status != SL_DOC_DROPPED)
            sl_len_stats_add(&ls[d.split], len);
    }
    for (; m == 1; m = sl_spill_next(pieces, &r, &n, err)) {
        memcpy(&p, r, sizeof p);
        note_missing(&ms, &p);
    }
    if (k < 0 || m < 0)
        return -1;
    if (ms.found)
        return sl_errf(err, "%s/%s: record %llu: document %llu is not in documents.jsonl", sl_shard_dir(s),
                       sl_shard_get_split(s, (int)ms.at.split)->files[ms.at.file].bounds, (unsigned long long)ms.at.rec,
                       (unsigned long long)ms.at.ord);
    return 0;
}

static int stats_dir(const char *dir, sl_stats *st, sl_err *err)
{
    sl_spill_opts dopt = {.budget = 4u << 20, .rec_size = sizeof(doc_rec), .purpose = "document table"},
                  popt = {.budget = 16u << 20, .rec_size = sizeof(piece_rec), .cmp = by_ord, .purpose = "pieces"};
    sl_spill *docs = sl_spill_new(&dopt, err), *pieces = docs ? sl_spill_new(&popt, err) : NULL;
    sl_shard *s = pieces ? sl_shard_open_docs(dir, 1, keep_doc, docs, err) : NULL;
    if (!s) {
        sl_spill_free(docs);
        sl_spill_free(pieces);
        return -1;
    }
    const sl_shard_info *info = sl_shard_get_info(s);
    const sl_warmup *wu = sl_shard_get_warmup(s);
    uint32_t L = info->seq_len;
    size_t ns = wu->n;
    st->kind = SL_STATS_SHARDS;
    st->seq_len = L;
    st->dtype_bytes = info->dtype_bytes;
    st->vocab_size = info->vocab_size;
    st->modality = info->modality;
    st->layout = info->layout;
    st->mem_tokens = info->mem_tokens;
    st->mem_id = info->mem_id;
    st->mem_write = info->mem_write;
    st->documents = sl_shard_n_docs(s);
    st->warmup = info->warmup ? sl_xstrdup(info->warmup) : NULL;
    st->stages = sl_xcalloc(ns ? ns : 1, sizeof *st->stages);
    st->n_stages = ns;
    sl_len_stats ls[SL_SPLIT_N] = {0};
    int rc = -1;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        if (!sl_shard_get_split(s, k)->present)
            continue;
        sl_shard_iter *it = sl_shard_iter_open(s, k, err);
        if (!it)
            goto done;
        sl_row row;
        int m;
        while ((m = sl_shard_iter_next(it, &row, err)) == 1) {
            size_t file;
            uint64_t next;
            sl_shard_iter_pos(it, &file, &next);
            for (size_t i = 0; i < row.n_pieces; i++) {
                const sl_piece *p = &row.pieces[i];
                piece_rec pr = {p->doc, next - row.n_pieces + i, p->length, (uint32_t)k, (uint32_t)file, 0};
                st->splits[k].pieces++;
                if (sl_spill_add(pieces, &pr, sizeof pr, err)) {
                    sl_shard_iter_close(it);
                    goto done;
                }
                if (k != SL_SPLIT_TRAIN)
                    continue;
                uint64_t g = row.index * (uint64_t)L + p->offset;
                for (size_t j = 0; j < ns; j++) {
                    uint64_t l = wu->stages[j].seq_len;
                    st->stages[j].epoch_pieces += (g + p->length - 1) / l - g / l + 1;
                    st->stages[j].epoch_document_starts += p->doc_offset == 0;
                }
            }
        }
        sl_shard_iter_close(it);
        if (m < 0)
            goto done;
    }
    if (sl_spill_sort(docs, err) || sl_spill_sort(pieces, err) || doc_lengths(s, docs, pieces, ls, err))
        goto done;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_shard_split *sp = sl_shard_get_split(s, k);
        sl_stats_split *o = &st->splits[k];
        o->present = sp->present;
        o->rows = sp->rows;
        o->files = sp->n_files;
        o->tokens = sp->tokens;
        o->pad_tokens = sp->pad_tokens;
        o->mem_tokens = sp->mem_tokens;
        o->docs = ls[k];
    }
    uint64_t D = sl_shard_get_split(s, SL_SPLIT_TRAIN)->tokens;
    for (size_t j = 0; j < ns; j++) {
        const sl_stage *sg = &wu->stages[j];
        sl_stats_stage *o = &st->stages[j];
        o->seq_len = sg->seq_len;
        o->batch = sg->batch;
        o->steps = sg->steps;
        o->tokens_per_step = sg->tokens_per_step;
        o->start_token = sg->start_token;
        o->epoch_rows = (D + sg->seq_len - 1) / sg->seq_len;
    }
    rc = 0;
done:
    sl_shard_close(s);
    sl_spill_free(docs);
    sl_spill_free(pieces);
    return rc;
}

int sl_stats_run(const char *const *inputs, size_t n, sl_stats *st, sl_err *err)
{
    memset(st, 0, sizeof *st);
    st->n_inputs = n ? n : 1;
    st->inputs = sl_xcalloc(st->n_inputs, sizeof *st->inputs);
    for (size_t i = 0; i < st->n_inputs; i++)
        st->inputs[i] = sl_xstrdup(n ? inputs[i] : "-");
    if (n == 1 && sl_shard_has_manifest(inputs[0]))
        return stats_dir(inputs[0], st, err);
    return stats_stream(inputs, n, st, err);
}

void sl_stats_free(sl_stats *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n_inputs; i++)
        free(st->inputs[i]);
    free(st->inputs);
    free(st->warmup);
    free(st->stages);
    memset(st, 0, sizeof *st);
}

/* ---- JSON ------------------------------------------------------------------ */

static void put_len(sl_buf *b, const sl_len_stats *s, const char *ind)
{
    sl_buf_printf(b, "%s\"documents\": %llu,\n%s\"document_tokens\": %llu,\n%s\"empty_documents\": %llu,\n", ind,
                  (unsigned long long)s->n, ind, (unsigned long long)s->tokens, ind, (unsigned long long)s->empty);
    sl_buf_printf(b, "%s\"length\": {\"min\": %llu, \"max\": %llu, \"mean\": ", ind, (unsigned long long)s->min,
                  (unsigned long long)s->max);
    sl_json_put_num(b, s->n ? (double)s->tokens / (double)s->n : 0);
    sl_buf_printf(b, "},\n%s\"length_histogram\": [", ind);
    int first = 1;
    for (int k = 0; k < SL_LEN_BUCKETS; k++) {
        if (!s->hist[k])
            continue;
        unsigned long long lo = k ? 1ull << (k - 1) : 0, hi = k < 64 ? 1ull << k : 0;
        sl_buf_printf(b, "%s{\"lo\": %llu, \"hi\": %llu, \"count\": %llu}", first ? "" : ", ", lo, hi,
                      (unsigned long long)s->hist[k]);
        first = 0;
    }
    sl_buf_puts(b, "]");
}

static void put_frac(sl_buf *b, uint64_t a, uint64_t n)
{
    sl_json_put_num(b, n ? (double)a / (double)n : 0);
}

/* Memory-token slots (recurrent layout): the memory positions and the
 * overhead, padding and memory together, as a fraction of the tokens. */
static void put_memory(sl_buf *b, const char *ind, const sl_stats *st, uint64_t mem, uint64_t pad, uint64_t tok)
{
    sl_buf_printf(b, ",\n%s\"memory\": {\"tokens\": %u, \"id\": %lld, \"write\": %s},\n%s\"memory_tokens\": %llu,\n",
                  ind, st->mem_tokens, (long long)st->mem_id, st->mem_write ? "true" : "false", ind,
                  (unsigned long long)mem);
    sl_buf_printf(b, "%s\"memory_fraction\": ", ind);
    put_frac(b, mem, tok);
    sl_buf_printf(b, ",\n%s\"overhead_fraction\": ", ind);
    put_frac(b, mem + pad, tok);
}

static const char *layout_name(int layout)
{
    return layout == SL_LAYOUT_RECURRENT ? "recurrent" : "sequential";
}

static void json_stream(sl_buf *b, const sl_stats *st)
{
    sl_buf_puts(b, "{\n  \"input\": ");
    if (st->n_inputs <= 1)
        sl_json_put_cstr(b, st->inputs[0]);
    else
        for (size_t i = 0; i < st->n_inputs; i++) {
            sl_buf_puts(b, i ? ", " : "[");
            sl_json_put_cstr(b, st->inputs[i]);
            sl_buf_puts(b, i == st->n_inputs - 1 ? "]" : "");
        }
    sl_buf_printf(b, ",\n  \"modality\": \"%s\",\n  \"vocab_size\": %u,\n", sl_modality_name(st->modality),
                  st->vocab_size);
    if (st->kind == SL_STATS_PACKED) {
        sl_buf_printf(b,
                      "  \"kind\": \"packed\",\n  \"seq_len\": %u,\n  \"layout\": \"%s\",\n  \"rows\": %llu,\n"
                      "  \"tokens\": %llu,\n  \"pieces\": %llu,\n  \"document_starts\": %llu,\n"
                      "  \"pad_tokens\": %llu,\n  \"pad_fraction\": ",
                      st->seq_len, layout_name(st->layout), (unsigned long long)st->rows,
                      (unsigned long long)st->tokens, (unsigned long long)st->pieces,
                      (unsigned long long)st->document_starts, (unsigned long long)st->pad_tokens);
        put_frac(b, st->pad_tokens, st->tokens);
        if (st->mem_tokens)
            put_memory(b, "  ", st, st->mem_tokens_total, st->pad_tokens, st->tokens);
        sl_buf_puts(b, "\n}\n");
    } else {
        sl_buf_puts(b, "  \"kind\": \"documents\",\n");
        put_len(b, &st->docs, "  ");
        sl_buf_puts(b, "\n}\n");
    }
}

static void json_dir(sl_buf *b, const sl_stats *st)
{
    sl_buf_puts(b, "{\n  \"input\": ");
    sl_json_put_cstr(b, st->inputs[0]);
    sl_buf_printf(b,
                  ",\n  \"kind\": \"shards\",\n  \"seq_len\": %u,\n  \"dtype\": \"%s\",\n  \"vocab_size\": %u,\n"
                  "  \"layout\": \"%s\",\n  \"documents\": %zu,\n  \"splits\": {",
                  st->seq_len, st->dtype_bytes == 2 ? "uint16" : "uint32", st->vocab_size, layout_name(st->layout),
                  st->documents);
    int first = 1;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_stats_split *sp = &st->splits[k];
        if (!sp->present)
            continue;
        sl_buf_printf(b,
                      "%s\n    \"%s\": {\n      \"rows\": %llu,\n      \"files\": %zu,\n      \"tokens\": %llu,\n"
                      "      \"pad_tokens\": %llu,\n      \"pad_fraction\": ",
                      first ? "" : ",", sl_shard_split_names[k], (unsigned long long)sp->rows, sp->files,
                      (unsigned long long)sp->tokens, (unsigned long long)sp->pad_tokens);
        put_frac(b, sp->pad_tokens, sp->tokens);
        if (st->mem_tokens)
            put_memory(b, "      ", st, sp->mem_tokens, sp->pad_tokens, sp->tokens);
        sl_buf_printf(b, ",\n      \"pieces\": %llu,\n", (unsigned long long)sp->pieces);
        put_len(b, &sp->docs, "      ");
        sl_buf_puts(b, "\n    }");
        first = 0;
    }
    sl_buf_puts(b, "\n  },\n  \"warmup\": ");
    if (st->warmup)
        sl_json_put_cstr(b, st->warmup);
    else
        sl_buf_puts(b, "null");
    sl_buf_puts(b, ",\n  \"stages\": [");
    for (size_t j = 0; j < st->n_stages; j++) {
        const sl_stats_stage *sg = &st->stages[j];
        sl_buf_printf(b, "%s\n    {\"stage\": %zu, \"seq_len\": %u, \"batch\": %llu, \"steps\": ", j ? "," : "", j,
                      sg->seq_len, (unsigned long long)sg->batch);
        if (sg->steps < 0)
            sl_buf_puts(b, "null");
        else
            sl_buf_printf(b, "%lld", (long long)sg->steps);
        sl_buf_printf(b,
                      ", \"tokens_per_step\": %llu, \"start_token\": %llu, \"epoch_rows\": %llu, "
                      "\"epoch_pieces\": %llu, \"epoch_document_starts\": %llu}",
                      (unsigned long long)sg->tokens_per_step, (unsigned long long)sg->start_token,
                      (unsigned long long)sg->epoch_rows, (unsigned long long)sg->epoch_pieces,
                      (unsigned long long)sg->epoch_document_starts);
    }
    sl_buf_puts(b, "\n  ]\n}\n");
}

void sl_stats_json(sl_buf *b, const sl_stats *st)
{
    if (st->kind == SL_STATS_SHARDS)
        json_dir(b, st);
    else
        json_stream(b, st);
}
