/* `sluice cat`: any token stream (or shard directory) as JSON Lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/tokenizer.h"

static const char help[] =
    "Prints each document of a token stream as one JSON object per line:\n"
    "  {\"id\":..., \"ids\":[...], \"src_bytes\":N, <metadata fields>}\n"
    "(src_bytes only when known). Given a shard directory, prints every document\n"
    "piece of every row, one object per piece:\n"
    "  {\"id\":..., \"ids\":[...], \"stage\":S, \"row\":R, \"offset\":O, \"doc\":D,\n"
    "   \"doc_offset\":K, \"split\":..., \"meta\":{the document's metadata}}\n"
    "(see 'sluice help shard').\n\n"
    "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
    "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
    "options:\n"
    "  --text              add a \"text\" field decoded with --tokenizer\n"
    "  --tokenizer PATH    tokenizer for --text (tokenizer.json, or a vocab.json+merges.txt directory)\n"
    "  --no-ids            leave out the \"ids\" array (with --text: just the text)\n"
    "  --header            print the stream header as one JSON object and stop\n"
    "  --stage K           shard directory: print the rows of warmup stage K (0-based;\n"
    "                      default: the last stage, the stored rows)\n"
    "\nA truncated or corrupted stream is an error (exit 1) after the documents\n"
    "read so far; with -o FILE nothing is written in that case.\n";

static void put_header(sl_buf *b, const sl_ts_header *h, const char *name)
{
    sl_buf_puts(b, "{\"file\":");
    sl_json_put_cstr(b, name);
    sl_buf_printf(b, ",\"version\":%u,\"modality\":\"%s\",\"vocab_size\":%u,\"token_bytes\":%u", h->version,
                  sl_modality_name(h->modality), h->vocab_size, h->width);
    const char *names[] = {"eos", "bos", "pad", "unk"};
    const int64_t vals[] = {h->eos, h->bos, h->pad, h->unk};
    for (int i = 0; i < 4; i++) {
        sl_buf_printf(b, ",\"%s\":", names[i]);
        if (vals[i] == SL_TS_NO_ID)
            sl_buf_puts(b, "null");
        else
            sl_json_put_int(b, vals[i]);
    }
    sl_buf_puts(b, ",\"fingerprint\":");
    sl_json_put_cstr(b, h->fingerprint);
    sl_buf_puts(b, ",\"tokenizer\":");
    sl_json_put_cstr(b, h->tokenizer);
    sl_buf_puts(b, ",\"extra\":");
    sl_buf_puts(b, h->extra_json ? h->extra_json : "null");
    sl_buf_puts(b, "}\n");
}

/* Appends the fields of a metadata object (without braces) to b. */
static int put_meta(sl_buf *b, const sl_doc *d, const char *src, sl_err *err)
{
    if (!d->meta || !d->meta_len)
        return 0;
    char q[SL_QUOTE_MAX];
    sl_json_doc *jd = sl_json_parse(d->meta, d->meta_len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s: document '%s': metadata", src, sl_err_quote(d->id, d->id_len, q, sizeof q));
    sl_json *o = sl_json_root(jd);
    if (o->type != SL_JSON_OBJECT) {
        sl_json_free(jd);
        return sl_errf(err, "%s: document '%s': metadata is not a JSON object", src,
                       sl_err_quote(d->id, d->id_len, q, sizeof q));
    }
    for (size_t i = 0; i < o->n; i++) {
        sl_buf_putc(b, ',');
        sl_json_put_str(b, o->keys[i]->str, o->keys[i]->str_len);
        sl_buf_putc(b, ':');
        sl_json_put_value(b, o->kids[i]);
    }
    sl_json_free(jd);
    return 0;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_TEXT = SL_OPT_FIRST_FREE, O_TOK, O_NOIDS, O_HEADER, O_STAGE };
    static const struct option opts[] = {{"text", no_argument, 0, O_TEXT},
                                         {"tokenizer", required_argument, 0, O_TOK},
                                         {"no-ids", no_argument, 0, O_NOIDS},
                                         {"header", no_argument, 0, O_HEADER},
                                         {"stage", required_argument, 0, O_STAGE},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    int text = 0, noids = 0, header = 0;
    const char *stage = NULL;
    const char *tokp = NULL;
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_TEXT: text = 1; break;
        case O_TOK: tokp = optarg; break;
        case O_NOIDS: noids = 1; break;
        case O_HEADER: header = 1; break;
        case O_STAGE: stage = optarg; break; /* read again by sl_cat_shard_dir */
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (text && !tokp)
        sl_cli_usage_error(cli, "--text needs --tokenizer PATH");
    const char *path = optind < argc ? argv[optind] : "-";
    if (argc - optind == 1 && sl_cli_is_shard_dir(path))
        return sl_cat_shard_dir(cli, path, argc, argv);
    if (stage)
        sl_cli_usage_error(cli, "--stage applies to shard directories only");

    sl_err err = {{0}};
    sl_tokenizer *dt = NULL;
    if (text && !(dt = sl_tokenizer_load(tokp, NULL, &err)))
        return sl_cli_fail(cli, &err);
    sl_ts_reader *r = sl_ts_reader_open_paths(argv + optind, (size_t)(argc - optind), &err);
    sl_output *out = r ? sl_output_open(cli->output, &err) : NULL;
    int rc = out ? 0 : -1;
    sl_buf b = {0}, txt = {0};
    sl_doc d = {0};
    sl_progress *pg = sl_progress_start("cat", "docs", cli->progress);
    if (r)
        sl_cli_track(pg, r);
    if (!rc && header) {
        put_header(&b, sl_ts_reader_header(r), sl_input_name(sl_ts_reader_input(r)));
        rc = sl_output_write(out, b.data, b.len, &err);
    }
    int k = 0;
    while (!rc && !header && (k = sl_ts_read_doc(r, &d, &err)) == 1) {
        sl_buf_clear(&b);
        sl_buf_puts(&b, "{\"id\":");
        sl_json_put_str(&b, d.id, d.id_len);
        if (!noids) {
            sl_buf_puts(&b, ",\"ids\":[");
            for (size_t i = 0; i < d.n_tokens; i++) {
                if (i)
                    sl_buf_putc(&b, ',');
                sl_buf_printf(&b, "%u", d.tokens[i]);
            }
            sl_buf_putc(&b, ']');
        }
        if (d.src_bytes)
            sl_buf_printf(&b, ",\"src_bytes\":%llu", (unsigned long long)d.src_bytes);
        if (dt) {
            sl_buf_clear(&txt);
            if (sl_tokenizer_decode(dt, d.tokens, d.n_tokens, &txt, &err)) {
                char q[SL_QUOTE_MAX];
                sl_err_prefix(&err, "%s: document '%s'", sl_input_name(sl_ts_reader_input(r)),
                              sl_err_quote(d.id, d.id_len, q, sizeof q));
                rc = -1;
                break;
            }
            sl_buf_puts(&b, ",\"text\":");
            sl_json_put_str(&b, txt.data ? txt.data : "", txt.len);
        }
        if (put_meta(&b, &d, sl_input_name(sl_ts_reader_input(r)), &err)) {
            rc = -1;
            break;
        }
        sl_buf_puts(&b, "}\n");
        rc = sl_output_write(out, b.data, b.len, &err);
        sl_progress_add(pg, 1, b.len); /* bytes of JSON written */
    }
    if (k < 0)
        rc = -1;
    sl_progress_done(pg);
    sl_buf_free(&b);
    sl_buf_free(&txt);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_tokenizer_free(dt);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

const sl_command sl_cmd_cat = {
    .name = "cat",
    .summary = "print a token stream or shard directory as JSON Lines",
    .usage = "sluice cat [options] [FILE...|DIR]",
    .help = help,
    .run = run,
};
