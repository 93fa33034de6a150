/* `sluice read`: corpora in, JSON Lines documents out. The work is in
 * stream/source.c (archives, compression) and stream/docreader.c (JSON
 * Lines, plain text, UTF-8 repair); this file wires options to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "cli/scale_opts.h"
#include "stream/docreader.h"
#include "stream/read.h"
#include "stream/io.h"

static const char help[] =
    "Reads each FILE ('-' or none: standard input) and writes one JSON object per\n"
    "document: {\"id\":...,\"text\":...,<the other fields>}.\n\n"
    "Inputs are recognised by content, not by name: plain, zstd, gzip, xz or bzip2\n"
    "data; an archive (tar, zip, 7z, rar, cpio, ar; also compressed, e.g. tar.zst)\n"
    "yields each regular member as a source named ARCHIVE:MEMBER. A source whose\n"
    "first non-blank byte is '{' is JSON Lines: each object keeps its fields, \"id\"\n"
    "(a string, or a number kept as written) or else ID = SOURCE:N (N-th document\n"
    "of the source). A JSON array of objects ('[' then '{'), and objects\n"
    "pretty-printed one after another (jq . output), read as the JSON Lines of\n"
    "their objects. Other sources are plain text: one document per file, or per\n"
    "non-blank line with --lines. An empty source gives no documents (a warning).\n"
    "Plain text with a NUL byte is rejected as binary data.\n"
    "A Parquet file (PAR1) gives one document per row: the text from the --field\n"
    "column (a dotted path reaches into a struct), the id from a column \"id\" (else\n"
    "FILE:ROW), every other column as a field with the value pyarrow's to_pylist()\n"
    "gives, as json.dumps writes it (docs/read.md). A row whose text is null is a\n"
    "bad line (--on-error).\n"
    "An Arrow IPC file (ARROW1) or stream (Feather v2, datasets' .arrow files,\n"
    "polars' write_ipc) reads the same way, record batch by record batch (a file\n"
    "by its footer, as pyarrow reads it); a folder written by Hugging Face\n"
    "datasets' save_to_disk (state.json, data-*.arrow; or dataset_dict.json and its\n"
    "splits) is read as its data files in order.\n"
    "Any other folder is read as the files under it, as pyarrow.dataset finds them:\n"
    "recursively, in byte order of their paths, names starting with '.' or '_' left\n"
    "out (.cache, _SUCCESS); a plain-text file beside files of other kinds (a\n"
    "README.md beside Parquet files) is an error, not a document.\n\n"
    "options:\n"
    "  -f, --field NAME        JSON field that holds the text (default: text); it is\n"
    "                          written as \"text\" (an input field \"text\" is then dropped);\n"
    "                          a dotted path (meta.content) reaches into objects, structs\n"
    "  -l, --lines             plain text: one document per line (blank lines skipped)\n"
    "      --invalid MODE      invalid UTF-8: replace (default; each maximal invalid\n"
    "                          sequence becomes U+FFFD), skip (drop those bytes) or\n"
    "                          error (stop); repairs are counted and reported\n"
    "      --on-error MODE     malformed JSON line, or one without a string text field:\n"
    "                          fail (default: stop with FILE:LINE) or skip (warn, count)\n"
    "      --format KIND       auto (default: JSON Lines when the first non-blank byte\n"
    "                          is '{', a JSON array when it is '[' before '{'), jsonl\n"
    "                          or text: treat every source as that kind\n"
    "      --max-doc-bytes N   longest line / plain-text document (default 64M; k, M, G\n"
    "                          suffixes); longer input is an error\n"
    "      --mem-budget SIZE   memory for batches of documents (default 64M; at least\n"
    "                          1M): peak memory is about SIZE plus 8 times the longest\n"
    "                          document, whatever the input's length\n"
    "      --part R/N|slurm    read only part R of N of the input (parts 0..N-1 in\n"
    "                          order give exactly the output of one run; 'slurm': R, N\n"
    "                          from the job array; see docs/scale-out.md)\n"
    "      --skip-existing     do nothing when the output file exists and is whole\n"
    "\nexamples:\n"
    "  sluice read corpus.tar.zst -o docs.jsonl\n"
    "  sluice read train-00000-of-00099.parquet | sluice tokenize bpe --tokenizer tokenizer.json\n"
    "  sluice read ~/my_dataset --field content      # datasets.save_to_disk folder\n"
    "  sluice read fineweb/sample/10BT/ -o docs.jsonl # every Parquet file under it\n"
    "  zcat part-*.jsonl.gz | sluice read --field content --on-error skip\n"
    "  sluice read --lines notes.txt.xz | sluice tokenize bpe --tokenizer tokenizer.json\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        SL_DOC_LONG_OPTS, SL_PART_LONG_OPT, SL_SKIP_LONG_OPT, SL_CLI_COMMON_LONG, {0, 0, 0, 0}};
    sl_scale_opts so = {0};
    sl_part part;
    sl_docreader_opts o = SL_DOCREADER_OPTS_INIT;
    o.mem_budget = SL_DOCS_DEFAULT_MEM_BUDGET;
    int c;
    while ((c = getopt_long(argc, argv, SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (!sl_cli_doc_option(cli, c, &o) && !sl_cli_scale_option(&so, c, optarg))
            sl_cli_common(cli, c, argv[optind - 1]);
    }
    o.quiet = cli->quiet;
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_LINES))
        return 0;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);

    sl_err err = {{0}};
    sl_docreader *r;
    if (sl_cli_part(cli, &so, &part)) { /* this part's files and ranges of files */
        size_t np;
        sl_slice *pc = sl_cli_slices(cli, &part, (const char *const *)argv + optind, (size_t)(argc - optind),
                                     sl_docreader_cut, &o, &np);
        r = sl_docreader_open_slices(pc, np, &o, &err);
        sl_slices_free(pc, np);
    } else {
        r = sl_docreader_open((const char *const *)argv + optind, argc - optind, &o, &err);
    }
    if (!r)
        return sl_cli_doc_fail(cli, &err);
    sl_output *out = sl_output_open(cli->output, &err);
    if (!out) {
        sl_docreader_close(r);
        return sl_cli_doc_fail(cli, &err);
    }
    int rc = sl_read_run(r, &o, out, cli->progress, &err);
    sl_docreader_stats st = *sl_docreader_stats_get(r);
    sl_docreader_close(r);
    if (rc < 0 || sl_output_commit(out, &err) < 0) {
        if (rc < 0)
            sl_output_abort(out);
        return sl_cli_doc_fail(cli, &err);
    }
    if (st.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)st.invalid_utf8,
                    o.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (st.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)st.skipped_lines);
    return 0;
}

const sl_command sl_cmd_read = {
    .name = "read",
    .summary = "decode corpora (plain, zstd, gzip, xz, bzip2, tar, zip, Parquet, Arrow) into JSON Lines documents",
    .usage = "sluice read [options] [FILES...]",
    .help = help,
    .run = run,
    .serial = 1,
};
