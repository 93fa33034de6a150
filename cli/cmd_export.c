/* `sluice export megatron`: a document token stream to the Megatron-LM /
 * GPT-NeoX indexed dataset (PREFIX.bin + PREFIX.idx), as
 * tools/preprocess_data.py --append-eod writes it (docs/shards.md section 5). */
#include <string.h>

#include "cli/commands.h"
#include "cli/pack_opts.h"
#include "shard/megatron_stage.h"

static const char help[] = "Writes PREFIX.bin and PREFIX.idx: one sequence per document ending in one\n"
                           "EOS, counted (as Megatron's preprocess_data.py --append-eod), empty\n"
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
                           "  --eos ID            end-of-document token (default: the stream's eos); a\n"
                           "                      document that ends in it already (the header says so:\n"
                           "                      `tokenize --append-eos`) gets no second one\n"
                           "  --eos append|keep   append to every document / to none\n"
                           "  --no-eos, --eos none  append nothing (required when the stream has no eos\n"
                           "                      and no --eos is given)\n"
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
    static const sl_cli_field fields[] = {{"eos", "--eos"}, {"no_eos", "--no-eos"}, {NULL, NULL}};
    sl_export_megatron_opts o = SL_EXPORT_MEGATRON_OPTS_INIT;
    sl_meta_sel keep = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_fields_option(cli, c, &keep))
            continue;
        switch (c) {
        case O_NODOCS: o.no_documents = 1; break;
        case O_EOS: {
            int mode = -1;
            sl_cli_eos_option(cli, optarg, &o.eos, &mode);
            if (mode == SL_PACK_EOS_NONE)
                o.no_eos = 1;
            else if (mode >= 0)
                o.eos_mode = mode;
            if (o.eos > INT32_MAX)
                sl_cli_usage_error(cli, "--eos: %lld is out of range [0, %d]", (long long)o.eos, INT32_MAX);
            break;
        }
        case O_NOEOS: o.no_eos = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o PREFIX (writes PREFIX.bin and PREFIX.idx)");
    if (o.no_eos && (o.eos >= 0 || o.eos_mode >= 0))
        sl_cli_usage_error(cli, "--eos and --no-eos (--eos none) exclude each other");
    if (o.no_documents && keep.mode != SL_META_ALL)
        sl_cli_usage_error(cli, "--keep-fields/--drop-fields choose what PREFIX.documents.jsonl holds: not with "
                                "--no-documents");
    sl_cli_check_output(cli, cli->output, SL_OUT_PREFIX, 0);
    o.keep = &keep;
    o.progress = "export";
    o.progress_mode = cli->progress;
    sl_err err = {{0}};
    int rc = sl_export_megatron_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), cli->output, &err);
    sl_meta_sel_free(&keep);
    sl_cli_map_fields(&err, fields);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

static const sl_command export_megatron = {
    .name = "export megatron",
    .summary = "Megatron-LM / GPT-NeoX indexed dataset (.bin + .idx)",
    .usage = "sluice export megatron [options] [FILE...] -o PREFIX",
    .help = help,
    .run = run_megatron,
    .serial = 1, /* no parallel work */
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
