/* `sluice score`: per-document log-likelihood under a Mamba model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "model/mamba.h"
#include "model/score.h"
#include "shard/shard.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/sha256.h"

static const char help[] =
    "Reads a token stream and scores every document with a Mamba-1 language\n"
    "model: the log-probability of each token given the tokens before it (the\n"
    "first token of a document has no prediction). Writes one JSON object per\n"
    "document:\n"
    "  {\"id\":..., \"tokens\":N, \"nll\":X, \"ppl\":P, \"bpb\":B}\n"
    "tokens = predicted tokens (document length - 1; the length with --prepend),\n"
    "nll = their summed negative log-likelihood in nats, ppl = exp(nll / tokens)\n"
    "(null when tokens = 0),\n"
    "bpb = nll / ln 2 / source bytes (only when the stream records source bytes).\n"
    "Documents are packed into chunks with the recurrent state reset at each\n"
    "document start and carried across chunks, so results equal scoring each\n"
    "document alone in one pass, in bounded memory.\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "options:\n"
    "  -m, --model DIR       model directory: config.json + model.safetensors (or\n"
    "                        sharded model-*.safetensors + model.safetensors.index.json);\n"
    "                        Hugging Face MambaForCausalLM or mamba_ssm names; F32/F16/BF16\n"
    "      --device NAME     cpu, cuda, cuda:N (device N) or auto (default auto: cuda\n"
    "                        when a device is found)\n"
    "      --per-token       add \"logprobs\": the natural-log probability of each predicted token\n"
    "      --max-tokens N    score only the first N tokens of each document (default: all)\n"
    "      --long-context W  add \"long_context\": (NLL with the state reset every W tokens\n"
    "                        - NLL with the full context) / tokens, in nats per token: how\n"
    "                        much the document rewards context longer than W; and \"nll_reset\"\n"
    "      --to-stream       write the token stream itself (same header and records) with\n"
    "                        the scores added to each record's metadata (nll, ppl, bpb,\n"
    "                        scored_tokens, long_context), for 'sluice filter'\n"
    "      --force           score even when the stream's tokenizer does not match the\n"
    "                        model (vocabulary size, or tokenizer.json fingerprint when the\n"
    "                        model directory has one)\n"
    "      --prepend ID|eos  put token ID (or the stream's eos id) before each document as\n"
    "                        context, so its first token is predicted too (tokens = length,\n"
    "                        and bpb covers every source byte); e.g. --prepend eos with\n"
    "                        GPT-NeoX-tokenized text (<|endoftext|> = 0). Default: none\n"
    "      --chunk N         tokens per forward pass (default 2048)\n"
    "      --batch-tokens N  tokens read ahead and scored together (default 16384)\n"
    "\nGiven a shard directory (sluice shard), the documents are reassembled from their\n"
    "pieces using the boundary index and scored as document sequences ([BOS] tokens\n"
    "[EOS], as packed), train split then val; each line gets \"split\". Shuffled\n"
    "shards cannot be reassembled: score the token stream they were made from.\n"
    "\nThe stream's vocab size must round up to the model's (padded) vocabulary:\n"
    "e.g. the GPT-NeoX tokenizer (50277) for mamba-130m (50280). A token id the\n"
    "model cannot embed is an error even with --force.\n"
    "\nexamples:\n"
    "  sluice score -m mamba-130m/ docs.tok > scores.jsonl\n"
    "  sluice score -m mamba-130m/ shards/ > shard-scores.jsonl\n"
    "  sluice score -m mamba-130m/ --to-stream docs.tok | sluice filter --keep-pct 10:90 -o kept.tok\n";

typedef struct opts {
    const char *model, *device;
    int per_token, to_stream, force;
    int64_t max_tokens, long_context, chunk, batch_tokens;
    const char *prepend_arg; /* --prepend as given */
    int64_t prepend;         /* resolved id, or -1 */
} opts;

/* Checks the stream's tokenizer against the model. */
static int check_vocab(const sl_ts_header *h, const sl_mamba_config *c, const char *model_dir, const char *src,
                       sl_err *err)
{
    uint64_t padded = ((uint64_t)h->vocab_size + (uint64_t)c->pad_multiple - 1) / (uint64_t)c->pad_multiple *
                      (uint64_t)c->pad_multiple;
    if ((uint64_t)h->vocab_size > (uint64_t)c->vocab || (padded != (uint64_t)c->vocab && h->vocab_size != c->vocab))
        return sl_errf(err,
                       "%s: the stream's vocabulary (%u ids, tokenizer '%s') does not match the model's (%lld, "
                       "padded %lld): use the model's tokenizer, or --force",
                       src, h->vocab_size, h->tokenizer, (long long)c->vocab_size, (long long)c->vocab);
    if (!h->fingerprint[0])
        return 0;
    size_t n = strlen(model_dir) + 32;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/tokenizer.json", model_dir);
    char *text = NULL;
    size_t len;
    sl_err e2;
    int rc = 0;
    if (sl_read_file(p, &text, &len, &e2) == 0) {
        char fp[72];
        sl_sha256_fingerprint(text, len, fp);
        if (strcmp(fp, h->fingerprint))
            rc = sl_errf(err,
                         "%s: the stream's tokenizer fingerprint %s differs from %s (%s): use the model's "
                         "tokenizer, or --force",
                         src, h->fingerprint, p, fp);
        free(text);
    }
    free(p);
    return rc;
}

/* --prepend eos: the stream's end-of-text id. */
static int resolve_prepend(opts *o, int64_t eos, const char *src, sl_err *err)
{
    if (!o->prepend_arg || strcmp(o->prepend_arg, "eos"))
        return 0;
    if (eos < 0)
        return sl_errf(err, "%s: --prepend eos, but the stream has no eos id (give the id: --prepend ID)", src);
    o->prepend = eos;
    return 0;
}

/* Appends the score fields (without braces, each preceded by a comma). */
static void put_scores(sl_buf *b, const sl_score_item *it, const sl_doc *d, const opts *o, const sl_score_item *lc,
                       int meta)
{
    sl_buf_printf(b, ",\"%s\":%lld,\"nll\":", meta ? "scored_tokens" : "tokens", (long long)it->n_pred);
    sl_json_put_num(b, it->nll);
    sl_buf_puts(b, ",\"ppl\":");
    sl_json_put_num(b, it->n_pred ? exp(it->nll / (double)it->n_pred) : NAN);
    if (d->src_bytes) {
        sl_buf_puts(b, ",\"bpb\":");
        sl_json_put_num(b, it->n_pred ? it->nll / M_LN2 / (double)d->src_bytes : NAN);
    }
    if (lc) {
        sl_buf_puts(b, ",\"long_context\":");
        sl_json_put_num(b, it->n_pred ? (lc->nll - it->nll) / (double)it->n_pred : NAN);
        sl_buf_puts(b, ",\"nll_reset\":");
        sl_json_put_num(b, lc->nll);
    }
    if (o->per_token && !meta) {
        sl_buf_puts(b, ",\"logprobs\":[");
        for (int64_t t = 0; t < it->n_pred; t++)
            sl_buf_printf(b, "%s%.9g", t ? "," : "", (double)it->logp[t]);
        sl_buf_putc(b, ']');
    }
}

/* The record's metadata with the score fields set (replacing old ones). */
static int merged_meta(sl_buf *b, const sl_doc *d, const sl_buf *scores, const char *src, sl_err *err)
{
    static const char *const ours[] = {"scored_tokens", "nll", "ppl", "bpb", "long_context", "nll_reset", NULL};
    sl_buf_clear(b);
    sl_buf_putc(b, '{');
    int first = 1;
    if (d->meta && d->meta_len) {
        sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
        if (!jd)
            return sl_err_prefix(err, "%s: document '%s': metadata", src, d->id);
        const sl_json *o = sl_json_root(jd);
        if (o->type != SL_JSON_OBJECT) {
            sl_json_free(jd);
            return sl_errf(err, "%s: document '%s': metadata is not a JSON object", src, d->id);
        }
        for (size_t i = 0; i < o->n; i++) {
            int skip = 0;
            for (int k = 0; ours[k]; k++)
                skip |=
                    strlen(ours[k]) == o->keys[i]->str_len && !memcmp(ours[k], o->keys[i]->str, o->keys[i]->str_len);
            if (skip)
                continue;
            if (!first)
                sl_buf_putc(b, ',');
            first = 0;
            sl_json_put_str(b, o->keys[i]->str, o->keys[i]->str_len);
            sl_buf_putc(b, ':');
            sl_json_put_value(b, o->kids[i]);
        }
        sl_json_free(jd);
    }
    sl_buf_append(b, scores->data + (first ? 1 : 0), scores->len - (first ? 1 : 0)); /* drop the leading comma */
    sl_buf_putc(b, '}');
    return 0;
}

typedef struct batch {
    sl_doc *docs;
    const char **split; /* per document, or NULL (token streams) */
    size_t n, cap;
    int64_t tokens;
} batch;

/* Returns the next free document slot of the batch (cleared). */
static sl_doc *batch_slot(batch *bt)
{
    if (bt->n == bt->cap) {
        bt->cap = bt->cap ? 2 * bt->cap : 64;
        bt->docs = sl_xrealloc(bt->docs, bt->cap * sizeof *bt->docs);
        bt->split = sl_xrealloc(bt->split, bt->cap * sizeof *bt->split);
        memset(bt->docs + bt->n, 0, (bt->cap - bt->n) * sizeof *bt->docs);
    }
    sl_doc *d = &bt->docs[bt->n];
    sl_doc_clear(d);
    d->src_bytes = 0;
    sl_doc_set_meta(d, "", 0);
    bt->split[bt->n] = NULL;
    return d;
}

static int score_and_write(sl_mamba_run *run, batch *bt, const opts *o, sl_output *out, sl_ts_writer *w,
                           const char *src, sl_progress *pg, sl_err *err)
{
    size_t n = bt->n;
    sl_score_item *it = sl_xcalloc(n ? n : 1, sizeof *it), *lc = NULL;
    uint32_t **with_ctx = o->prepend >= 0 ? sl_xcalloc(n ? n : 1, sizeof *with_ctx) : NULL;
    for (size_t i = 0; i < n; i++) {
        sl_doc *d = &bt->docs[i];
        int64_t len = (int64_t)d->n_tokens;
        if (o->max_tokens > 0 && len > o->max_tokens)
            len = o->max_tokens;
        it[i] = (sl_score_item){.id = d->id, .tokens = d->tokens, .n = len};
        if (with_ctx) { /* the context token in front, so the first token is predicted too */
            with_ctx[i] = sl_xmalloc((size_t)(len + 1) * sizeof(uint32_t));
            with_ctx[i][0] = (uint32_t)o->prepend;
            if (len)
                memcpy(with_ctx[i] + 1, d->tokens, (size_t)len * sizeof(uint32_t));
            it[i].tokens = with_ctx[i];
            it[i].n = len + 1;
        }
        if (o->per_token)
            it[i].logp = sl_xmalloc((size_t)(it[i].n ? it[i].n : 1) * sizeof(float));
    }
    int rc = sl_score_batch(run, it, n, 0, err);
    if (!rc && o->long_context) {
        lc = sl_xcalloc(n ? n : 1, sizeof *lc);
        for (size_t i = 0; i < n; i++)
            lc[i] = (sl_score_item){.id = it[i].id, .tokens = it[i].tokens, .n = it[i].n};
        rc = sl_score_batch(run, lc, n, o->long_context, err);
    }
    if (rc)
        sl_err_prefix(err, "%s", src);
    sl_buf b = {0}, s = {0}, m = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        sl_doc *d = &bt->docs[i];
        if (w) {
            sl_buf_clear(&s);
            put_scores(&s, &it[i], d, o, lc ? &lc[i] : NULL, 1);
            if ((rc = merged_meta(&m, d, &s, src, err)))
                break;
            sl_doc_set_meta(d, m.data, m.len);
            rc = sl_ts_write_doc(w, d, err);
        } else {
            sl_buf_clear(&b);
            sl_buf_puts(&b, "{\"id\":");
            sl_json_put_str(&b, d->id, d->id_len);
            if (bt->split[i])
                sl_buf_printf(&b, ",\"split\":\"%s\"", bt->split[i]);
            put_scores(&b, &it[i], d, o, lc ? &lc[i] : NULL, 0);
            sl_buf_puts(&b, "}\n");
            rc = sl_output_write(out, b.data, b.len, err);
        }
        sl_progress_add(pg, 1, d->n_tokens);
    }
    for (size_t i = 0; i < n; i++) {
        free(it[i].logp);
        if (with_ctx)
            free(with_ctx[i]);
    }
    free(with_ctx);
    free(it);
    free(lc);
    sl_buf_free(&b);
    sl_buf_free(&s);
    sl_buf_free(&m);
    bt->n = 0;
    bt->tokens = 0;
    return rc;
}

/* Scores the first m documents of the batch and keeps the rest (documents
 * still being reassembled) at its front. cur[] indices are shifted. */
static int flush_prefix(sl_mamba_run *run, batch *bt, size_t m, size_t *cur, size_t slots, const opts *o,
                        sl_output *out, const char *src, sl_progress *pg, sl_err *err)
{
    size_t n = bt->n;
    bt->n = m;
    int rc = score_and_write(run, bt, o, out, NULL, src, pg, err);
    for (size_t i = m; i < n; i++) { /* swap, so the scored slots' buffers are reused */
        sl_doc t = bt->docs[i - m];
        bt->docs[i - m] = bt->docs[i];
        bt->docs[i] = t;
        bt->split[i - m] = bt->split[i];
        bt->tokens += (int64_t)bt->docs[i - m].n_tokens;
    }
    bt->n = n - m;
    for (size_t i = 0; i < slots; i++)
        if (cur[i] != SIZE_MAX)
            cur[i] -= m;
    return rc;
}

/* Shard directories: documents are reassembled from their pieces. Rows of a
 * slot (the row itself in the sequential layout; row r - B in the recurrent
 * layout with batch B) continue each other, so a document is complete when
 * its piece ends inside a row, or when the next row of its slot starts
 * another document. */
static int score_shard_dir(sl_cli *cli, sl_mamba_run *run, const opts *oin, const char *dir, sl_err *err)
{
    sl_shard *sh = sl_shard_open(dir, 1, err);
    if (!sh)
        return -1;
    opts oo = *oin, *o = &oo;
    if (resolve_prepend(o, sl_shard_get_info(sh)->eos, dir, err) < 0) {
        sl_shard_close(sh);
        return -1;
    }
    int rc = 0;
    const sl_shard_info *info = sl_shard_get_info(sh);
    if (info->shuffle) {
        sl_shard_close(sh);
        return sl_errf(err,
                       "%s: shuffled shards cannot be reassembled into documents; score the token stream "
                       "they were made from",
                       dir);
    }
    sl_ts_header h;
    sl_ts_header_init(&h, info->modality, info->vocab_size);
    memcpy(h.fingerprint, info->fingerprint, sizeof h.fingerprint);
    memcpy(h.tokenizer, info->tokenizer, sizeof h.tokenizer);
    if (!o->force && check_vocab(&h, sl_mamba_cfg(sl_mamba_run_model(run)), o->model, dir, err) < 0) {
        sl_ts_header_free(&h);
        sl_shard_close(sh);
        return -1;
    }
    sl_ts_header_free(&h);
    size_t slots = info->layout == SL_LAYOUT_RECURRENT && info->batch ? info->batch : 1;
    sl_output *out = sl_output_open(cli->output, err);
    if (!out) {
        sl_shard_close(sh);
        return -1;
    }
    batch bt = {0};
    /* the document in flight per slot: index into bt.docs, or SIZE_MAX */
    size_t *cur = sl_xmalloc(slots * sizeof *cur);
    sl_progress *pg = sl_progress_start("score", "docs", cli->progress);
    for (int sp = 0; sp < SL_SPLIT_N && !rc; sp++) {
        if (!sl_shard_get_split(sh, sp)->present)
            continue;
        sl_shard_iter *it = sl_shard_iter_open(sh, sp, err);
        if (!it) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < slots; i++)
            cur[i] = SIZE_MAX;
        sl_row row;
        int k;
        /* Documents stay in the batch from their first piece on; the batch is
         * scored only when no document is in flight, so none is cut. */
        while (!rc && (k = sl_shard_iter_next(it, &row, err)) == 1) {
            size_t slot = (size_t)(row.index % slots), prev = cur[slot];
            cur[slot] = SIZE_MAX; /* the slot's document ends here unless this row continues it */
            for (size_t p = 0; p < row.n_pieces && !rc; p++) {
                const sl_piece *pc = &row.pieces[p];
                sl_doc *d;
                if (pc->doc_offset == 0) {
                    d = batch_slot(&bt);
                    size_t idl;
                    const char *id = sl_shard_doc_id(sh, pc->doc, &idl);
                    char tmp[32];
                    if (!id) {
                        idl = (size_t)snprintf(tmp, sizeof tmp, "doc%llu", (unsigned long long)pc->doc);
                        id = tmp;
                    }
                    sl_doc_set_id(d, id, idl);
                    bt.split[bt.n] = sl_shard_split_names[sp];
                    cur[slot] = bt.n++;
                } else if (p != 0 || prev == SIZE_MAX || bt.docs[prev].n_tokens != pc->doc_offset) {
                    rc = sl_errf(err,
                                 "%s: %s row %llu: the piece of document %llu at document offset %llu does not "
                                 "continue an earlier piece, so documents cannot be reassembled (score the "
                                 "token stream the shards were made from)",
                                 dir, sl_shard_split_names[sp], (unsigned long long)row.index,
                                 (unsigned long long)pc->doc, (unsigned long long)pc->doc_offset);
                    break;
                } else {
                    d = &bt.docs[prev];
                    cur[slot] = prev;
                }
                for (uint32_t t = 0; t < pc->length; t++)
                    sl_doc_push(d, row.tokens[pc->offset + t]);
                bt.tokens += pc->length;
                if ((uint64_t)pc->offset + pc->length < info->seq_len)
                    cur[slot] = SIZE_MAX; /* ends inside the row: complete */
            }
            /* documents before the oldest one in flight are complete */
            size_t m = bt.n;
            for (size_t i = 0; i < slots; i++)
                m = cur[i] < m ? cur[i] : m;
            if (!rc && m && (bt.tokens >= o->batch_tokens || m >= 4096))
                rc = flush_prefix(run, &bt, m, cur, slots, o, out, dir, pg, err);
        }
        if (!rc && k < 0)
            rc = -1;
        sl_shard_iter_close(it);
        if (!rc && bt.n)
            rc = score_and_write(run, &bt, o, out, NULL, dir, pg, err);
    }
    sl_progress_done(pg);
    free(cur);
    for (size_t i = 0; i < bt.cap; i++)
        sl_doc_free(&bt.docs[i]);
    free(bt.docs);
    free(bt.split);
    sl_shard_close(sh);
    if (rc) {
        sl_output_abort(out);
        return -1;
    }
    return sl_output_commit(out, err);
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_DEV = SL_OPT_FIRST_FREE, O_PER, O_MAX, O_LC, O_TS, O_FORCE, O_CHUNK, O_BATCH, O_PRE };
    static const struct option lo[] = {{"model", required_argument, 0, 'm'},
                                       {"device", required_argument, 0, O_DEV},
                                       {"per-token", no_argument, 0, O_PER},
                                       {"max-tokens", required_argument, 0, O_MAX},
                                       {"long-context", required_argument, 0, O_LC},
                                       {"to-stream", no_argument, 0, O_TS},
                                       {"force", no_argument, 0, O_FORCE},
                                       {"chunk", required_argument, 0, O_CHUNK},
                                       {"batch-tokens", required_argument, 0, O_BATCH},
                                       {"prepend", required_argument, 0, O_PRE},
                                       SL_CLI_COMMON_LONG,
                                       {0, 0, 0, 0}};
    opts o = {.device = "auto", .chunk = 2048, .batch_tokens = 16384, .prepend = -1};
    static const char *const devices[] = {"cpu", "cuda", "auto", NULL};
    int c;
    while ((c = getopt_long(argc, argv, "m:" SL_CLI_COMMON_SHORT, lo, NULL)) != -1) {
        switch (c) {
        case 'm': o.model = optarg; break;
        case O_DEV:
            /* cuda:N picks device N; the backend validates the number */
            o.device = strncmp(optarg, "cuda:", 5) ? devices[sl_cli_choice(cli, "--device", optarg, devices)] : optarg;
            break;
        case O_PER: o.per_token = 1; break;
        case O_MAX: o.max_tokens = sl_cli_int(cli, "--max-tokens", optarg, 1, INT64_MAX / 4); break;
        case O_LC: o.long_context = sl_cli_int(cli, "--long-context", optarg, 1, INT64_MAX / 4); break;
        case O_TS: o.to_stream = 1; break;
        case O_FORCE: o.force = 1; break;
        case O_CHUNK: o.chunk = sl_cli_int(cli, "--chunk", optarg, 1, 1 << 20); break;
        case O_BATCH: o.batch_tokens = sl_cli_int(cli, "--batch-tokens", optarg, 1, 1LL << 32); break;
        case O_PRE:
            o.prepend_arg = optarg;
            if (strcmp(optarg, "eos"))
                o.prepend = sl_cli_int(cli, "--prepend", optarg, 0, UINT32_MAX);
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!o.model)
        sl_cli_usage_error(cli, "-m MODEL_DIR is required");
    if (o.to_stream && o.per_token)
        sl_cli_usage_error(cli, "--per-token writes JSON Lines; it cannot be combined with --to-stream");
    const char *path = optind < argc ? argv[optind] : "-";
    int is_dir = argc - optind == 1 && sl_cli_is_shard_dir(path);
    for (int i = optind; argc - optind > 1 && i < argc; i++)
        if (sl_cli_is_shard_dir(argv[i]))
            sl_cli_usage_error(cli, "%s is a shard directory: one at a time (several inputs are token streams)",
                               argv[i]);
    if (is_dir && o.to_stream)
        sl_cli_usage_error(cli, "--to-stream needs a token stream, not a shard directory");

    sl_err err = {{0}};
    sl_backend *be = sl_backend_open(o.device, sl_cli_threads(cli), &err);
    if (!be)
        return sl_cli_fail(cli, &err);
    sl_mamba *m = sl_mamba_load(o.model, be, &err);
    sl_mamba_run *run = m ? sl_mamba_run_new(m, o.chunk, &err) : NULL;
    if (run && is_dir) {
        int src = score_shard_dir(cli, run, &o, path, &err);
        sl_mamba_run_free(run);
        sl_mamba_free(m);
        sl_backend_close(be);
        return src ? sl_cli_fail(cli, &err) : 0;
    }
    sl_ts_reader *r = run ? sl_ts_reader_open_paths(argv + optind, (size_t)(argc - optind), &err) : NULL;
    /* a name that stays valid while the reader moves from input to input */
    const char *src = r && sl_ts_reader_n_inputs(r) == 1 ? sl_input_name(sl_ts_reader_input(r)) : path;
    int rc = r ? 0 : -1;
    if (!rc && !o.force)
        rc = check_vocab(sl_ts_reader_header(r), sl_mamba_cfg(m), o.model, src, &err);
    if (!rc)
        rc = resolve_prepend(&o, sl_ts_reader_header(r)->eos, src, &err);
    sl_output *out = rc ? NULL : sl_output_open(cli->output, &err);
    sl_ts_writer *w = NULL;
    if (!out)
        rc = -1;
    else if (o.to_stream && !(w = sl_ts_writer_open(out, sl_ts_reader_header(r), &err)))
        rc = -1;
    batch bt = {0};
    sl_progress *pg = sl_progress_start("score", "docs", cli->progress);
    if (r)
        sl_cli_track(pg, r);
    int k = 0;
    while (!rc) {
        k = sl_ts_read_doc(r, batch_slot(&bt), &err);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (k == 1) {
            bt.tokens += (int64_t)bt.docs[bt.n].n_tokens;
            bt.n++;
        }
        if ((k == 0 && bt.n) || bt.tokens >= o.batch_tokens || bt.n >= 4096)
            rc = score_and_write(run, &bt, &o, out, w, src, pg, &err);
        if (k == 0)
            break;
    }
    sl_progress_done(pg);
    if (!rc && w) {
        rc = sl_ts_writer_finish(w, &err);
        w = NULL;
    }
    if (w)
        sl_ts_writer_abort(w);
    for (size_t i = 0; i < bt.cap; i++)
        sl_doc_free(&bt.docs[i]);
    free(bt.docs);
    free(bt.split);
    sl_ts_reader_close(r);
    sl_mamba_run_free(run);
    sl_mamba_free(m);
    sl_backend_close(be);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

const sl_command sl_cmd_score = {
    .name = "score",
    .summary = "score documents with a Mamba language model (nll, ppl, bpb)",
    .usage = "sluice score -m MODEL_DIR [options] [FILE...|DIR]",
    .help = help,
    .run = run,
};
