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
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"

static const char help[] = "Reads each FILE ('-' or none: standard input) and writes one JSON object per\n"
                           "document: {\"id\":...,\"text\":...,<the other fields>}.\n\n"
                           "Inputs are recognised by content, not by name: plain, zstd, gzip, xz or bzip2\n"
                           "data; an archive (tar, zip, 7z, rar, cpio, ar; also compressed, e.g. tar.zst)\n"
                           "yields each regular member as a source named ARCHIVE:MEMBER. A source whose\n"
                           "first non-blank byte is '{' is JSON Lines: each object keeps its fields, \"id\"\n"
                           "(a string, or a number kept as written) or else ID = SOURCE:N (N-th document\n"
                           "of the source). Other sources are plain text: one document per file, or per\n"
                           "non-blank line with --lines. An empty source gives no documents (a warning).\n"
                           "Plain text with a NUL byte is rejected as binary data.\n\n"
                           "options:\n"
                           "  -f, --field NAME        JSON field that holds the text (default: text); it is\n"
                           "                          written as \"text\" (an input field \"text\" is then dropped)\n"
                           "  -l, --lines             plain text: one document per line (blank lines skipped)\n"
                           "      --invalid MODE      invalid UTF-8: replace (default; each maximal invalid\n"
                           "                          sequence becomes U+FFFD), skip (drop those bytes) or\n"
                           "                          error (stop); repairs are counted and reported\n"
                           "      --on-error MODE     malformed JSON line, or one without a string text field:\n"
                           "                          fail (default: stop with FILE:LINE) or skip (warn, count)\n"
                           "      --format KIND       auto (default: JSON Lines when the first non-blank byte\n"
                           "                          is '{'), jsonl or text: treat every source as that kind\n"
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
                           "  zcat part-*.jsonl.gz | sluice read --field content --on-error skip\n"
                           "  sluice read --lines notes.txt.xz | sluice tokenize bpe --tokenizer tokenizer.json\n";

/* With --field NAME, an input field called "text" would clash with the
 * output's "text": it is dropped from the metadata (with one warning). */
static void drop_text_field(const sl_cli *cli, sl_textdoc *d, sl_buf *tmp, int *warned)
{
    if (!strstr(d->meta.data, "\"text\""))
        return;
    sl_json_doc *jd = sl_json_parse(d->meta.data, d->meta.len, NULL, NULL);
    if (!jd)
        return;
    const sl_json *o = sl_json_root(jd);
    sl_buf_clear(tmp);
    sl_buf_putc(tmp, '{');
    int dropped = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (o->keys[i]->str_len == 4 && !memcmp(o->keys[i]->str, "text", 4)) {
            dropped = 1;
            continue;
        }
        if (tmp->len > 1)
            sl_buf_putc(tmp, ',');
        sl_json_put_str(tmp, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(tmp, ':');
        sl_json_put_value(tmp, o->kids[i]);
    }
    sl_buf_putc(tmp, '}');
    sl_json_free(jd);
    if (!dropped)
        return;
    sl_buf_clear(&d->meta);
    sl_buf_append(&d->meta, tmp->data, tmp->len);
    if (!*warned)
        sl_cli_warn(cli, "%s:%llu: input field \"text\" dropped: \"text\" is the --field value", d->source,
                    (unsigned long long)d->line);
    *warned = 1;
}

/* Readies b for about `need` bytes: a buffer that grew for an earlier,
 * larger document (more than twice `need`, and over 4 KiB) is released. */
static void fit_buf(sl_buf *b, size_t need)
{
    if (b->cap > ((size_t)4 << 10) && b->cap / 2 > need) {
        sl_buf_free(b);
        return;
    }
    sl_buf_clear(b);
}

/* Appends one output line for d. */
static void put_doc(sl_buf *b, const sl_textdoc *d)
{
    sl_buf_puts(b, "{\"id\":");
    if (d->id_is_string)
        sl_json_put_str(b, d->id.data, d->id.len);
    else
        sl_buf_append(b, d->id.data, d->id.len);
    sl_buf_puts(b, ",\"text\":");
    sl_json_put_str(b, d->text.data ? d->text.data : "", d->text.len);
    if (d->meta.len > 2) { /* "{...}" with fields: splice them in */
        sl_buf_putc(b, ',');
        sl_buf_append(b, d->meta.data + 1, d->meta.len - 2);
    }
    sl_buf_puts(b, "}\n");
}

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
    if (sl_cli_skip_existing(cli, &so, SL_SKIP_LINES))
        return 0;

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
    sl_progress *pg = sl_progress_start("read", "docs", cli->progress);
    /* Documents are formatted in batches by OpenMP threads (escaping the
     * text is a fifth of the work) and written in order. A batch holds a
     * quarter of the memory budget in documents (the reader's batch holds
     * another quarter, the formatted lines about one more). */
    enum { BATCH = 1024 };
    size_t batch_limit = o.mem_budget / 4;
    sl_textdoc *docs = sl_xcalloc(BATCH, sizeof *docs);
    sl_buf *lines = sl_xcalloc(BATCH, sizeof *lines);
    sl_buf tmp = {0};
    uint64_t bytes_seen = 0;
    int rc = 1, warned = 0, rename = strcmp(o.field, "text") != 0;
    while (rc == 1) {
        int n = 0;
        size_t batch_bytes = 0;
        while (n < BATCH && batch_bytes < batch_limit && (rc = sl_docreader_next(r, &docs[n], &err)) == 1) {
            if (rename)
                drop_text_field(cli, &docs[n], &tmp, &warned);
            batch_bytes += docs[n].text.len;
            n++;
        }
#pragma omp parallel for schedule(dynamic, 4) if (n > 16)
        for (int i = 0; i < n; i++) {
            const sl_textdoc *d = &docs[i];
            fit_buf(&lines[i], d->id.len + d->text.len + d->meta.len + 16);
            put_doc(&lines[i], d);
        }
        /* the documents before a read error are written too: on standard
         * output they are what a stream consumer has seen */
        for (int i = 0; i < n; i++)
            if (sl_output_write(out, lines[i].data, lines[i].len, &err) < 0) {
                rc = -1;
                break;
            }
        /* Buffers that grew for a large document are released: the slots
         * keep about the batch, not the largest document each ever held. */
        for (int i = 0; i < BATCH; i++) {
            fit_buf(&docs[i].id, 0);
            fit_buf(&docs[i].text, 0);
            fit_buf(&docs[i].meta, 0);
            if (i >= n)
                fit_buf(&lines[i], 0);
        }
        const sl_docreader_stats *st = sl_docreader_stats_get(r);
        sl_progress_add(pg, (uint64_t)n, st->bytes - bytes_seen);
        bytes_seen = st->bytes;
    }
    sl_progress_done(pg);
    for (int i = 0; i < BATCH; i++) {
        sl_textdoc_free(&docs[i]);
        sl_buf_free(&lines[i]);
    }
    free(docs);
    free(lines);
    sl_buf_free(&tmp);
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
    .summary = "decode corpora (plain, zstd, gzip, xz, bzip2, tar, zip) into JSON Lines documents",
    .usage = "sluice read [options] [FILES...]",
    .help = help,
    .run = run,
};
