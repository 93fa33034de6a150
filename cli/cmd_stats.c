/* `sluice stats`: counts and length histograms of a token stream (documents
 * or packed rows) or a shard directory, as one JSON object. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "shard/packed.h"
#include "shard/shard.h"
#include "shard/util.h"
#include "stream/spill.h"
#include "stream/buf.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/tokstream.h"

static const char help[] = "Prints one JSON object:\n"
                           "  document stream: documents, tokens, empty documents, min/max/mean length and a\n"
                           "    histogram of lengths in power-of-two buckets [lo, hi);\n"
                           "  packed stream (`sluice pack`): rows, pieces, document starts, padding;\n"
                           "  with memory-token slots (--memory-tokens) also memory_tokens, memory_fraction\n"
                           "    and overhead_fraction (padding and memory; pad_tokens excludes memory);\n"
                           "  shard directory: per split rows, tokens, padding fraction, documents and their\n"
                           "    length histogram (lengths include EOS/BOS); per warmup stage the batch, steps,\n"
                           "    tokens per step, and the rows, pieces and document starts of one epoch of\n"
                           "    its view. The directory is verified (checksums) first.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
                           "example:\n"
                           "  sluice stats shards/ | jq .stages\n";

#define NB 65 /* bucket 0: length 0; bucket k: [2^(k-1), 2^k) */

typedef struct {
    uint64_t n, tokens, empty, min, max;
    uint64_t hist[NB];
} lenstats;

static void ls_add(lenstats *s, uint64_t len)
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

static void ls_put(sl_buf *b, const lenstats *s, const char *ind)
{
    sl_buf_printf(b, "%s\"documents\": %llu,\n%s\"document_tokens\": %llu,\n%s\"empty_documents\": %llu,\n", ind,
                  (unsigned long long)s->n, ind, (unsigned long long)s->tokens, ind, (unsigned long long)s->empty);
    sl_buf_printf(b, "%s\"length\": {\"min\": %llu, \"max\": %llu, \"mean\": ", ind, (unsigned long long)s->min,
                  (unsigned long long)s->max);
    sl_json_put_num(b, s->n ? (double)s->tokens / (double)s->n : 0);
    sl_buf_printf(b, "},\n%s\"length_histogram\": [", ind);
    int first = 1;
    for (int k = 0; k < NB; k++) {
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
static void put_memory(sl_buf *b, const char *ind, uint32_t k, int64_t id, int write, uint64_t mem, uint64_t pad,
                       uint64_t tok)
{
    sl_buf_printf(b, ",\n%s\"memory\": {\"tokens\": %u, \"id\": %lld, \"write\": %s},\n%s\"memory_tokens\": %llu,\n",
                  ind, k, (long long)id, write ? "true" : "false", ind, (unsigned long long)mem);
    sl_buf_printf(b, "%s\"memory_fraction\": ", ind);
    put_frac(b, mem, tok);
    sl_buf_printf(b, ",\n%s\"overhead_fraction\": ", ind);
    put_frac(b, mem + pad, tok);
}

static int stats_stream(char **paths, int n, sl_buf *b, sl_err *err)
{
    const char *path = n ? paths[0] : "-";
    sl_ts_reader *r = sl_ts_reader_open_paths(paths, (size_t)n, err);
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
    sl_buf_puts(b, "{\n  \"input\": ");
    if (n <= 1)
        sl_json_put_cstr(b, path);
    else
        for (int i = 0; i < n; i++) {
            sl_buf_puts(b, i ? ", " : "[");
            sl_json_put_cstr(b, paths[i]);
            sl_buf_puts(b, i == n - 1 ? "]" : "");
        }
    sl_buf_printf(b, ",\n  \"modality\": \"%s\",\n  \"vocab_size\": %u,\n", sl_modality_name(h->modality),
                  h->vocab_size);
    if (packed) {
        uint64_t rows = 0, pieces = 0, starts = 0, used = 0;
        while ((k = sl_ts_read_doc(r, &d, err)) == 1) {
            sl_row row;
            if (sl_packed_decode(&d, po.seq_len, &pr, &row, sl_cli_src(r, path), err))
                goto done;
            rows++;
            pieces += row.n_pieces;
            for (size_t i = 0; i < row.n_pieces; i++) {
                starts += row.pieces[i].doc_offset == 0;
                used += row.pieces[i].length;
            }
        }
        uint64_t tok = rows * po.seq_len;
        uint64_t mem = rows * (sl_pack_mem_read(&po) + sl_pack_mem_write(&po));
        sl_buf_printf(b,
                      "  \"kind\": \"packed\",\n  \"seq_len\": %u,\n  \"layout\": \"%s\",\n  \"rows\": %llu,\n"
                      "  \"tokens\": %llu,\n  \"pieces\": %llu,\n  \"document_starts\": %llu,\n"
                      "  \"pad_tokens\": %llu,\n  \"pad_fraction\": ",
                      po.seq_len, po.layout == SL_LAYOUT_RECURRENT ? "recurrent" : "sequential",
                      (unsigned long long)rows, (unsigned long long)tok, (unsigned long long)pieces,
                      (unsigned long long)starts, (unsigned long long)(tok - used - mem));
        put_frac(b, tok - used - mem, tok);
        if (po.mem_tokens)
            put_memory(b, "  ", po.mem_tokens, po.mem_id, po.mem_write, mem, tok - used - mem, tok);
        sl_buf_puts(b, "\n}\n");
    } else {
        lenstats ls = {0};
        while ((k = sl_ts_read_doc(r, &d, err)) == 1)
            ls_add(&ls, d.n_tokens);
        sl_buf_puts(b, "  \"kind\": \"documents\",\n");
        ls_put(b, &ls, "  ");
        sl_buf_puts(b, "\n}\n");
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
static int doc_lengths(const sl_shard *s, sl_spill *docs, sl_spill *pieces, lenstats *ls, sl_err *err)
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
            ls_add(&ls[d.split], len);
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

static int stats_dir(const char *dir, sl_buf *b, sl_err *err)
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
    size_t nd = sl_shard_n_docs(s);
    uint32_t L = info->seq_len;
    size_t ns = wu->n;
    uint64_t *st_pieces = sl_xcalloc(ns, sizeof *st_pieces), *st_starts = sl_xcalloc(ns, sizeof *st_starts);
    uint64_t n_pieces[SL_SPLIT_N] = {0};
    lenstats ls[SL_SPLIT_N] = {0};
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
                n_pieces[k]++;
                if (sl_spill_add(pieces, &pr, sizeof pr, err)) {
                    sl_shard_iter_close(it);
                    goto done;
                }
                if (k != SL_SPLIT_TRAIN)
                    continue;
                uint64_t g = row.index * (uint64_t)L + p->offset;
                for (size_t j = 0; j < ns; j++) {
                    uint64_t l = wu->stages[j].seq_len;
                    st_pieces[j] += (g + p->length - 1) / l - g / l + 1;
                    st_starts[j] += p->doc_offset == 0;
                }
            }
        }
        sl_shard_iter_close(it);
        if (m < 0)
            goto done;
    }
    if (sl_spill_sort(docs, err) || sl_spill_sort(pieces, err) || doc_lengths(s, docs, pieces, ls, err))
        goto done;
    sl_buf_puts(b, "{\n  \"input\": ");
    sl_json_put_cstr(b, dir);
    sl_buf_printf(b,
                  ",\n  \"kind\": \"shards\",\n  \"seq_len\": %u,\n  \"dtype\": \"%s\",\n  \"vocab_size\": %u,\n"
                  "  \"layout\": \"%s\",\n  \"documents\": %zu,\n  \"splits\": {",
                  L, info->dtype_bytes == 2 ? "uint16" : "uint32", info->vocab_size,
                  info->layout == SL_LAYOUT_RECURRENT ? "recurrent" : "sequential", nd);
    int first = 1;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_shard_split *sp = sl_shard_get_split(s, k);
        if (!sp->present)
            continue;
        sl_buf_printf(b,
                      "%s\n    \"%s\": {\n      \"rows\": %llu,\n      \"files\": %zu,\n      \"tokens\": %llu,\n"
                      "      \"pad_tokens\": %llu,\n      \"pad_fraction\": ",
                      first ? "" : ",", sl_shard_split_names[k], (unsigned long long)sp->rows, sp->n_files,
                      (unsigned long long)sp->tokens, (unsigned long long)sp->pad_tokens);
        put_frac(b, sp->pad_tokens, sp->tokens);
        if (info->mem_tokens)
            put_memory(b, "      ", info->mem_tokens, info->mem_id, info->mem_write, sp->mem_tokens, sp->pad_tokens,
                       sp->tokens);
        sl_buf_printf(b, ",\n      \"pieces\": %llu,\n", (unsigned long long)n_pieces[k]);
        ls_put(b, &ls[k], "      ");
        sl_buf_puts(b, "\n    }");
        first = 0;
    }
    sl_buf_puts(b, "\n  },\n  \"warmup\": ");
    if (info->warmup)
        sl_json_put_cstr(b, info->warmup);
    else
        sl_buf_puts(b, "null");
    sl_buf_puts(b, ",\n  \"stages\": [");
    uint64_t D = sl_shard_get_split(s, SL_SPLIT_TRAIN)->tokens;
    for (size_t j = 0; j < ns; j++) {
        const sl_stage *st = &wu->stages[j];
        sl_buf_printf(b, "%s\n    {\"stage\": %zu, \"seq_len\": %u, \"batch\": %llu, \"steps\": ", j ? "," : "", j,
                      st->seq_len, (unsigned long long)st->batch);
        if (st->steps < 0)
            sl_buf_puts(b, "null");
        else
            sl_buf_printf(b, "%lld", (long long)st->steps);
        sl_buf_printf(b,
                      ", \"tokens_per_step\": %llu, \"start_token\": %llu, \"epoch_rows\": %llu, "
                      "\"epoch_pieces\": %llu, \"epoch_document_starts\": %llu}",
                      (unsigned long long)st->tokens_per_step, (unsigned long long)st->start_token,
                      (unsigned long long)((D + st->seq_len - 1) / st->seq_len), (unsigned long long)st_pieces[j],
                      (unsigned long long)st_starts[j]);
    }
    sl_buf_puts(b, "\n  ]\n}\n");
    rc = 0;
done:
    free(st_pieces);
    free(st_starts);
    sl_shard_close(s);
    sl_spill_free(docs);
    sl_spill_free(pieces);
    return rc;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {SL_CLI_COMMON_LONG, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1)
        sl_cli_common(cli, c, argv[optind - 1]);
    const char *path = optind < argc ? argv[optind] : "-";
    if (argc - optind > 1)
        for (int i = optind; i < argc; i++)
            if (sl_cli_is_shard_dir(argv[i]))
                sl_cli_usage_error(cli, "%s is a shard directory: one at a time (several inputs are token streams)",
                                   argv[i]);
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    sl_buf b = {0};
    int rc = argc - optind == 1 && sl_cli_is_shard_dir(path) ? stats_dir(path, &b, &err)
                                                             : stats_stream(argv + optind, argc - optind, &b, &err);
    sl_output *out = rc ? NULL : sl_output_open(cli->output, &err);
    if (out && (sl_output_write(out, b.data, b.len, &err) || sl_output_commit(out, &err)))
        out = NULL;
    sl_buf_free(&b);
    return out ? 0 : sl_cli_fail(cli, &err);
}

const sl_command sl_cmd_stats = {
    .name = "stats",
    .summary = "rows, documents, tokens and length histograms of a stream or shard directory",
    .usage = "sluice stats [FILE...|DIR]",
    .help = help,
    .run = run,
};
