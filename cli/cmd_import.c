/* `sluice import megatron PREFIX`: a Megatron indexed dataset back to a
 * document token stream (one record per Megatron document). */
#include "cli/commands.h"
#include "shard/megatron_stage.h"

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
    static const sl_cli_field fields[] = {{"vocab_size", "--vocab-size"}, {"eos", "--eos"}, {NULL, NULL}};
    sl_import_megatron_opts o = SL_IMPORT_MEGATRON_OPTS_INIT;
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_EOS: o.eos = sl_cli_int(cli, "--eos", optarg, 0, INT32_MAX); break;
        case O_NODOCS: o.no_documents = 1; break;
        case O_VOCAB: o.vocab_size = sl_cli_int(cli, "--vocab-size", optarg, 1, UINT32_MAX); break;
        case O_MOD:
            o.modality = sl_modality_parse(optarg);
            if (o.modality < 0)
                sl_cli_usage_error(cli, "--modality: '%s' is not one of text|dna|audio|ids|unknown", optarg);
            break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        sl_cli_usage_error(cli, "needs exactly one PREFIX (got %d)", argc - optind);
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    o.progress = "import";
    o.progress_mode = cli->progress;
    sl_err err = {{0}};
    if (sl_import_megatron_run(&o, argv[optind], cli->output, &err)) {
        sl_cli_map_fields(&err, fields);
        return sl_cli_fail(cli, &err);
    }
    return 0;
}

static const sl_command import_megatron = {
    .name = "import megatron",
    .summary = "Megatron-LM / GPT-NeoX indexed dataset to a token stream",
    .usage = "sluice import megatron [options] PREFIX",
    .help = help,
    .run = run_megatron,
    .serial = 1, /* no parallel work */
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
