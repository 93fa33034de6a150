/* `sluice export megatron`: a document token stream to the Megatron-LM /
 * GPT-NeoX indexed dataset (PREFIX.bin + PREFIX.idx), as
 * tools/preprocess_data.py --append-eod writes it (docs/shards.md section 5). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/pack_opts.h"
#include "shard/megatron.h"
#include "shard/meta.h"
#include "shard/packed.h"
#include "stream/io.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] = "Writes PREFIX.bin and PREFIX.idx: one sequence per document with the EOS\n"
                           "appended and counted (as Megatron's preprocess_data.py --append-eod), empty\n"
                           "documents dropped, token dtype uint16 (code 8) when the vocab is below 65500,\n"
                           "else int32 (code 4), as megatron-core's DType.optimal_dtype picks.\n\n"
                           "Megatron's files cannot hold document ids or metadata, so they go to a\n"
                           "sidecar PREFIX.documents.jsonl: line k is Megatron document k,\n"
                           "{\"doc\":k,\"id\":\"...\",\"split\":\"train\",\"meta\":{...}} as in a shard directory's\n"
                           "documents.jsonl (\"meta\" only when the document has metadata). Megatron\n"
                           "ignores it; `sluice import megatron` reads it back.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
                           "options:\n"
                           "  -o PREFIX           output prefix (required)\n"
                           "  --eos ID            end-of-document token (default: the stream's eos)\n"
                           "  --no-eos            append nothing (required when the stream has no eos and\n"
                           "                      no --eos is given)\n"
                           "  --keep-fields LIST  keep only these metadata fields in the sidecar\n"
                           "  --drop-fields LIST  drop these metadata fields\n"
                           "  --no-documents      write no PREFIX.documents.jsonl (and remove an old one)\n\n"
                           "example:\n"
                           "  sluice export megatron tokens.tok -o data/my_text_document\n"
                           "  # train with --data-path data/my_text_document\n";

static int run_megatron(sl_cli *cli, int argc, char **argv)
{
    enum { O_EOS = SL_PO_END, O_NOEOS, O_NODOCS };
    static const struct option opts[] = {{"eos", required_argument, 0, O_EOS},
                                         {"no-eos", no_argument, 0, O_NOEOS},
                                         {"no-documents", no_argument, 0, O_NODOCS},
                                         SL_META_LONG_OPTS,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    long long eos = -1;
    int no_eos = 0, no_docs = 0, c;
    sl_cli_meta meta = {0};
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_meta_option(cli, c, &meta))
            continue;
        switch (c) {
        case O_NODOCS: no_docs = 1; break;
        case O_EOS: eos = sl_cli_int(cli, "--eos", optarg, 0, INT32_MAX); break;
        case O_NOEOS: no_eos = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o PREFIX (writes PREFIX.bin and PREFIX.idx)");
    if (no_eos && eos >= 0)
        sl_cli_usage_error(cli, "--eos and --no-eos exclude each other");
    if (no_docs && meta.sel.mode != SL_META_ALL)
        sl_cli_usage_error(cli, "--keep-fields/--drop-fields choose what PREFIX.documents.jsonl holds: not with "
                                "--no-documents");
    const char *path = optind < argc ? argv[optind] : "-";
    sl_err err = {{0}};
    sl_ts_reader *r = sl_ts_reader_open_paths(argv + optind, (size_t)(argc - optind), &err);
    sl_mega_writer *w = NULL;
    sl_output *side = NULL;
    sl_buf line = {0};
    sl_doc d = {0};
    sl_progress *pg = NULL;
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    char *wu = NULL;
    int packed = sl_packed_detect(h, &po, &wu, &err);
    free(wu);
    if (packed) {
        if (packed > 0)
            sl_errf(&err, "%s: a packed stream (rows of %u tokens): export needs a document stream",
                    sl_cli_src(r, path), po.seq_len);
        goto done;
    }
    int64_t e = no_eos ? SL_TS_NO_ID : eos >= 0 ? eos : h->eos;
    if (!no_eos && e == SL_TS_NO_ID) {
        sl_errf(&err, "%s: the stream has no eos: give --eos ID (or --no-eos)", sl_cli_src(r, path));
        goto done;
    }
    if (e != SL_TS_NO_ID && (uint64_t)e >= h->vocab_size) {
        sl_errf(&err, "--eos %lld: not below the vocab size %u", (long long)e, h->vocab_size);
        goto done;
    }
    if (h->vocab_size > (uint64_t)INT32_MAX + 1) {
        sl_errf(&err, "%s: vocab size %u does not fit Megatron's int32 tokens", sl_cli_src(r, path), h->vocab_size);
        goto done;
    }
    w = sl_mega_writer_open(cli->output, sl_mega_dtype_for_vocab(h->vocab_size), &err);
    if (!w)
        goto done;
    if (!no_docs) {
        char *sp = sl_mega_docs_path(cli->output);
        side = sl_output_open(sp, &err);
        free(sp);
        if (!side)
            goto done;
    }
    pg = sl_progress_start("export", "docs", cli->progress);
    sl_cli_track(pg, r);
    int k;
    while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
        if (d.n_tokens == 0)
            continue; /* Megatron drops empty documents (and gives them no EOD) */
        if (side) {
            sl_buf_clear(&line);
            if (sl_cli_meta_select(&meta, d.meta, d.meta_len, sl_cli_src(r, path), d.id, d.id_len, &err))
                goto done;
            sl_meta_doc_line(&line, sl_mega_writer_docs(w), d.id, d.id_len, "train", SL_DOC_PLACED, meta.buf.data,
                             meta.buf.len);
            if (sl_output_write(side, line.data, line.len, &err))
                goto done;
        }
        if (e != SL_TS_NO_ID)
            sl_doc_push(&d, (uint32_t)e);
        if (sl_mega_add_doc(w, d.tokens, d.n_tokens, &err)) {
            sl_err_prefix(&err, "%s: document '%s'", sl_cli_src(r, path), d.id);
            goto done;
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    if (k < 0)
        goto done;
    rc = sl_mega_writer_finish(w, &err);
    w = NULL;
    if (!rc && side) {
        rc = sl_output_commit(side, &err);
        side = NULL;
    } else if (!rc) { /* a sidecar of an earlier export would describe other documents */
        char *sp = sl_mega_docs_path(cli->output);
        unlink(sp);
        free(sp);
    }
done:
    sl_progress_done(pg);
    sl_mega_writer_abort(w);
    sl_output_abort(side);
    sl_buf_free(&line);
    sl_cli_meta_free(&meta);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

static const sl_command export_megatron = {
    .name = "export megatron",
    .summary = "Megatron-LM / GPT-NeoX indexed dataset (.bin + .idx)",
    .usage = "sluice export megatron [options] [FILE...] -o PREFIX",
    .help = help,
    .run = run_megatron,
};

static const sl_command *const subs[] = {&export_megatron, NULL};

const sl_command sl_cmd_export = {
    .name = "export",
    .summary = "export to other formats (megatron)",
    .usage = "sluice export megatron [options] [FILE...] -o PREFIX",
    .help = "",
    .run = NULL,
    .subs = subs,
};
