/* `sluice pack`: a document token stream in, a packed stream (one record per
 * row, pieces in the metadata) out. Format: docs/shards.md section 2. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/pack_opts.h"
#include "shard/stage.h"
#include "stream/io.h"

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
    "  --eos ID            the end-of-document token (default: the stream's eos),\n"
    "                      appended to each document that does not end in it when\n"
    "                      the stream's header says documents end in it (`tokenize\n"
    "                      --append-eos`), else to every document: one EOS each\n"
    "  --eos append|keep|none  append to every document, to none (they end in it\n"
    "                      already; still recorded), or none and record none\n"
    "  --no-eos            append no EOS (= --eos none)\n"
    "  --bos ID            token put before every document (default: none)\n"
    "  --pad ID            padding token (default: the stream's pad, else the EOS)\n"
    "  --no-split          a document that does not fit in the rest of a row starts a\n"
    "                      fresh row (default: documents continue in the next row)\n"
    "  --long MODE         with --no-split, documents longer than a row:\n"
    "                      truncate (default), drop, or split (continue on new rows)\n"
    "  --layout LAYOUT     sequential (default) or recurrent: rows in steps of --batch,\n"
    "                      row b of step t+1 continues row b of step t\n"
    "  --batch B           rows per step for --layout recurrent\n"
    "  --memory-tokens K   with --layout recurrent: K memory positions (token\n"
    "                      --memory-id ID) at the start of every row, RMT's read\n"
    "                      memory; documents fill the rest (docs/longctx.md)\n"
    "  --memory-id ID      the token id of a memory position\n"
    "  --memory-write      also K memory positions at the end of every row (RMT's\n"
    "                      write memory)\n"
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

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        SL_PACK_LONG_OPTS, SL_META_LONG_OPTS, SL_IDS_LONG_OPTS, SL_CLI_COMMON_LONG, {0, 0, 0, 0}};
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1)
        if (!sl_cli_stage_option(cli, c, &o))
            sl_cli_common(cli, c, argv[optind - 1]);
    sl_cli_stage_check(cli, &o);
    o.progress = cli->progress;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);

    sl_err err = {{0}};
    sl_stage_stats st;
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = out ? sl_pack_run(&o, (const char *const *)argv + optind, (size_t)(argc - optind), out, &st, &err) : -1;
    sl_meta_sel_free(&o.fields);
    if (!rc && (rc = sl_output_commit(out, &err)) == 0)
        out = NULL;
    sl_output_abort(out);
    if (rc)
        return sl_cli_stage_fail(cli, &err, rc);
    if (st.truncated || st.dropped)
        sl_cli_warn(cli, "%llu document(s) truncated, %llu dropped (%llu tokens cut)", (unsigned long long)st.truncated,
                    (unsigned long long)st.dropped, (unsigned long long)st.cut_tokens);
    sl_cli_stage_report(cli, &st);
    return 0;
}

const sl_command sl_cmd_pack = {
    .name = "pack",
    .summary = "pack documents into fixed-length rows with boundary markers",
    .usage = "sluice pack --seq-len L [options] [FILE...]",
    .help = help,
    .run = run,
    .serial = 1, /* no parallel work */
};
