/* `sluice import megatron PREFIX`: a Megatron indexed dataset back to a
 * document token stream (one record per Megatron document). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "shard/megatron.h"
#include "stream/io.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] = "Reads PREFIX.idx and PREFIX.bin (checking the index: magic, version, dtype,\n"
                           "sizes, pointers, document indices, .bin size) and writes a token stream with\n"
                           "one document per Megatron document (its sequences concatenated). Document ids\n"
                           "are the document numbers 0, 1, ..., unless PREFIX.documents.jsonl (the sidecar\n"
                           "`sluice export megatron` writes) exists: then each document gets its id and\n"
                           "metadata back from line k (checked: one line per document, \"doc\" = k).\n\n"
                           "options:\n"
                           "  --eos ID            record ID as the stream's eos and remove it from the end\n"
                           "                      of each document that ends with it (the EOD that\n"
                           "                      --append-eod added)\n"
                           "  --vocab-size N      the stream's vocab size (default: largest id + 1)\n"
                           "  --modality NAME     text|dna|audio|ids|unknown (default: ids)\n"
                           "  --no-documents      ignore PREFIX.documents.jsonl\n"
                           "  -o FILE             output token stream (default: standard output)\n\n"
                           "example:\n"
                           "  sluice import megatron data/my_text_document --eos 0 | sluice stats\n";

static int run_megatron(sl_cli *cli, int argc, char **argv)
{
    enum { O_EOS = SL_OPT_FIRST_FREE, O_VOCAB, O_MOD, O_NODOCS };
    static const struct option opts[] = {{"eos", required_argument, 0, O_EOS},
                                         {"no-documents", no_argument, 0, O_NODOCS},
                                         {"vocab-size", required_argument, 0, O_VOCAB},
                                         {"modality", required_argument, 0, O_MOD},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    long long eos = -1, vocab = -1;
    int modality = SL_MOD_IDS, no_docs = 0, c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_EOS: eos = sl_cli_int(cli, "--eos", optarg, 0, INT32_MAX); break;
        case O_NODOCS: no_docs = 1; break;
        case O_VOCAB: vocab = sl_cli_int(cli, "--vocab-size", optarg, 1, UINT32_MAX); break;
        case O_MOD:
            modality = sl_modality_parse(optarg);
            if (modality < 0)
                sl_cli_usage_error(cli, "--modality: '%s' is not one of text|dna|audio|ids|unknown", optarg);
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        sl_cli_usage_error(cli, "needs exactly one PREFIX (got %d)", argc - optind);
    const char *prefix = argv[optind];
    sl_err err = {{0}};
    sl_mega_reader *r = sl_mega_open(prefix, &err);
    if (!r)
        return sl_cli_fail(cli, &err);
    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    sl_ts_header h;
    sl_doc d = {0};
    sl_mega_docs *docs = NULL;
    int rc = -1;
    uint32_t mx = 0;
    if (sl_mega_max_token(r, &mx, &err))
        goto done;
    if (!no_docs && sl_mega_docs_open(prefix, sl_mega_n_docs(r), &docs, &err) < 0)
        goto done;
    if (vocab < 0)
        vocab = (long long)mx + 1;
    if (eos >= vocab)
        vocab = eos + 1 > vocab ? eos + 1 : vocab;
    if ((long long)mx >= vocab) {
        sl_errf(&err, "%s.bin: token id %u is not below --vocab-size %lld", prefix, mx, vocab);
        goto done;
    }
    sl_ts_header_init(&h, modality, (uint32_t)vocab);
    if (eos >= 0)
        h.eos = eos;
    snprintf(h.tokenizer, sizeof h.tokenizer, "megatron:%s", prefix);
    out = sl_output_open(cli->output, &err);
    w = out ? sl_ts_writer_open(out, &h, &err) : NULL;
    if (!w)
        goto done;
    sl_progress *pg = sl_progress_start("import", "docs", cli->progress);
    uint64_t n = sl_mega_n_docs(r);
    for (uint64_t k = 0; k < n; k++) {
        if (docs) {
            const char *id, *meta;
            size_t il, ml;
            sl_mega_docs_get(docs, k, &id, &il, &meta, &ml);
            sl_doc_set_id(&d, id, il);
            sl_doc_set_meta(&d, meta, ml);
        } else {
            char id[24];
            sl_doc_set_id(&d, id, (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)k));
        }
        int bad = sl_mega_read_doc(r, k, &d.tokens, &d.n_tokens, &d.cap_tokens, &err);
        if (!bad && eos >= 0 && d.n_tokens && d.tokens[d.n_tokens - 1] == (uint32_t)eos)
            d.n_tokens--; /* the EOD appended by --append-eod */
        if (bad || sl_ts_write_doc(w, &d, &err)) {
            sl_progress_done(pg);
            goto done;
        }
        sl_progress_add(pg, 1, 0);
        sl_progress_add_tokens(pg, d.n_tokens);
    }
    sl_progress_done(pg);
    rc = sl_ts_writer_finish(w, &err);
    w = NULL;
    if (!rc) {
        rc = sl_output_commit(out, &err);
        out = NULL;
    }
done:
    sl_ts_writer_abort(w);
    sl_output_abort(out);
    sl_doc_free(&d);
    sl_mega_docs_close(docs);
    sl_mega_close(r);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

static const sl_command import_megatron = {
    .name = "import megatron",
    .summary = "Megatron-LM / GPT-NeoX indexed dataset to a token stream",
    .usage = "sluice import megatron [options] PREFIX",
    .help = help,
    .run = run_megatron,
};

static const sl_command *const subs[] = {&import_megatron, NULL};

const sl_command sl_cmd_import = {
    .name = "import",
    .summary = "import from other formats (megatron)",
    .usage = "sluice import megatron [options] PREFIX",
    .help = "",
    .run = NULL,
    .subs = subs,
};
