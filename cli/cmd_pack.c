/* `sluice pack`: a document token stream in, a packed stream (one record per
 * row, pieces in the metadata) out. Format: docs/shards.md section 2. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/pack_opts.h"
#include "shard/packed.h"
#include "stream/io.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] =
    "Packs the documents of a token stream into rows of --seq-len tokens and\n"
    "writes a packed stream: a token stream with one record per row whose\n"
    "metadata lists the document pieces in the row (offset, length, document\n"
    "ordinal, offset in the document, id) and carries each document's id and\n"
    "metadata (the input's metadata fields, e.g. label, source, scores) for\n"
    "`sluice shard`. See docs/shards.md.\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "options:\n"
    "  --seq-len L         row length, a positive multiple of 8 (required unless --warmup)\n"
    "  --eos ID            token appended to every document (default: the stream's eos)\n"
    "  --no-eos            append no EOS\n"
    "  --bos ID            token put before every document (default: none)\n"
    "  --pad ID            padding token (default: the stream's pad, else the EOS)\n"
    "  --no-split          a document that does not fit in the rest of a row starts a\n"
    "                      fresh row (default: documents continue in the next row)\n"
    "  --long MODE         with --no-split, documents longer than a row:\n"
    "                      truncate (default), drop, or split (continue on new rows)\n"
    "  --layout LAYOUT     sequential (default) or recurrent: rows in steps of --batch,\n"
    "                      row b of step t+1 continues row b of step t\n"
    "  --batch B           rows per step for --layout recurrent\n"
    "  --warmup SPEC       sequence-length warmup: rows are cut at the longest stage\n"
    "                      length and SPEC is recorded for `sluice shard` (grammar in\n"
    "                      docs/shards.md: double:MIN..MAX[,epochs=E][,batch=B],\n"
    "                      linear:MIN..MAX,steps=N, root:..., stages:LxB@N(steps|tokens|epochs),...)\n"
    "  --keep-fields LIST  keep only these metadata fields (comma-separated)\n"
    "  --drop-fields LIST  drop these metadata fields\n"
    "  --unique-ids        a repeated document id is an error (default: a warning\n"
    "                      naming the first one; ids are checked by pack and shard,\n"
    "                      with a 128-bit hash per document, 32 bytes of memory each)\n\n"
    "example:\n"
    "  sluice tokenize bpe --tokenizer tok.json docs.jsonl | sluice pack --seq-len 2048 -o rows.tok\n";

/* Options shared with `sluice shard` (kept in step with cmd_shard.c). */

/* Rows are written one row late: a row carries the records of the documents
 * added before it is written (so a record never comes after its document's
 * first piece), and the last row also those of documents after it (dropped or
 * empty ones that have no piece). */
typedef struct {
    sl_ts_writer *w;
    sl_doc *d; /* the held row */
    int held;
    sl_buf *b;
    sl_buf recs; /* records not yet written */
    uint32_t L;
} pack_ctx;

static int flush_held(pack_ctx *ctx, sl_err *e)
{
    if (!ctx->held)
        return 0;
    sl_packed_add_docs(ctx->d, ctx->recs.data ? ctx->recs.data : "", ctx->recs.len, ctx->b);
    sl_buf_clear(&ctx->recs);
    ctx->held = 0;
    return sl_ts_write_doc(ctx->w, ctx->d, e);
}

/* Row callback: one record per row. */
static int on_row(void *vc, const sl_row *row, sl_err *e)
{
    pack_ctx *ctx = vc;
    if (flush_held(ctx, e))
        return -1;
    sl_packed_encode(row, ctx->L, ctx->d, ctx->b);
    ctx->held = 1;
    return 0;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        SL_PACK_LONG_OPTS, SL_META_LONG_OPTS, SL_IDS_LONG_OPTS, SL_CLI_COMMON_LONG, {0, 0, 0, 0}};
    sl_pack_user u = SL_PACK_USER_INIT;
    sl_cli_meta meta = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1)
        if (!sl_cli_pack_option(cli, c, &u) && !sl_cli_meta_option(cli, c, &meta))
            sl_cli_common(cli, c, argv[optind - 1]);
    sl_cli_pack_check(cli, &u);
    const char *path = optind < argc ? argv[optind] : "-";

    sl_err err = {{0}};
    sl_ts_reader *r = sl_ts_reader_open_paths(argv + optind, (size_t)(argc - optind), &err);
    sl_ts_header oh = {0};
    sl_ts_writer *w = NULL;
    sl_output *out = NULL;
    sl_packer *pk = NULL;
    sl_doc d = {0}, rowdoc = {0};
    sl_buf scratch = {0};
    sl_progress *pg = NULL;
    pack_ctx ctx = {0};
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    char *prev_warmup = NULL;
    int packed = sl_packed_detect(h, &po, &prev_warmup, &err);
    free(prev_warmup);
    if (packed) {
        if (packed > 0)
            sl_errf(&err, "%s: the stream is already packed (rows of %u tokens)", sl_cli_src(r, path), po.seq_len);
        else
            sl_err_prefix(&err, "%s", sl_cli_src(r, path));
        goto done;
    }
    sl_cli_pack_need_len(cli, &u);
    if (sl_pack_resolve(&u, h, &po, &err))
        goto done;
    sl_packed_header(h, &po, u.warmup, &oh);
    out = sl_output_open(cli->output, &err);
    w = out ? sl_ts_writer_open(out, &oh, &err) : NULL;
    if (!w)
        goto done;
    ctx = (pack_ctx){.w = w, .d = &rowdoc, .b = &scratch, .L = po.seq_len};
    pk = sl_packer_new(&po, on_row, &ctx, &err);
    if (!pk)
        goto done;
    pg = sl_progress_start("pack", "docs", cli->progress);
    sl_cli_track(pg, r);
    uint64_t ord = 0;
    int k;
    while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
        const char *src = sl_cli_src(r, path);
        if (sl_cli_meta_id(&meta, d.id, d.id_len, ord, src, &err) ||
            sl_cli_meta_select(&meta, d.meta, d.meta_len, src, d.id, d.id_len, &err))
            goto done;
        int st = sl_pack_doc_status(&po, d.n_tokens);
        sl_packed_put_docrec(&ctx.recs, ord, d.id, d.id_len, st, meta.buf.data, meta.buf.len);
        if (sl_packer_add(pk, ord++, d.id, d.id_len, d.tokens, d.n_tokens, NULL, &err)) {
            sl_err_prefix(&err, "%s: document '%s'", src, d.id);
            goto done;
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (k < 0 || sl_packer_finish(pk, &err) || flush_held(&ctx, &err) || sl_ts_writer_finish(w, &err))
        goto done;
    w = NULL;
    rc = sl_output_commit(out, &err);
    out = NULL;
    if (!rc) {
        const sl_pack_stats *st = sl_packer_stats(pk);
        if (st->truncated || st->dropped)
            sl_cli_warn(cli, "%llu document(s) truncated, %llu dropped (%llu tokens cut)",
                        (unsigned long long)st->truncated, (unsigned long long)st->dropped,
                        (unsigned long long)st->cut_tokens);
        sl_cli_meta_report(cli, &meta);
    }
done:
    sl_progress_done(pg);
    sl_packer_free(pk);
    sl_ts_writer_abort(w);
    sl_output_abort(out);
    sl_ts_header_free(&oh);
    sl_doc_free(&d);
    sl_doc_free(&rowdoc);
    sl_buf_free(&scratch);
    sl_buf_free(&ctx.recs);
    sl_cli_meta_free(&meta);
    sl_ts_reader_close(r);
    if (rc)
        sl_cli_map_fields(&err, sl_cli_pack_fields);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_pack = {
    .name = "pack",
    .summary = "pack documents into fixed-length rows with boundary markers",
    .usage = "sluice pack --seq-len L [options] [FILE...]",
    .help = help,
    .run = run,
};
