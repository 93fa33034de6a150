/* `sluice detokenize text`: token stream -> JSON Lines documents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/bpe.h"
#include "tokenize/chartok.h"
#include "tokenize/sha256.h"

static const char help[] = "Reads a token stream (FILE, '-' or none: standard input) and writes one JSON\n"
                           "object per document: {\"id\":...,\"text\":...,<metadata fields>}, the form\n"
                           "'sluice read' writes, so read | tokenize | detokenize gives the documents back\n"
                           "(text after the tokenizer's normalization, e.g. NFC for GPT-NeoX-20B).\n"
                           "Byte sequences that are not valid UTF-8 (possible only for ids that end inside\n"
                           "a character) are written as U+FFFD and counted in a warning.\n\n"
                           "options:\n"
                           "  -t, --tokenizer PATH  the tokenizer: tokenizer.json, a vocab.json + merges.txt\n"
                           "                        directory, or a character vocabulary file. Not needed\n"
                           "                        for streams written by 'tokenize char' (the\n"
                           "                        vocabulary is in the header)\n"
                           "      --skip-special    leave out the stream's eos/bos/pad ids\n"
                           "      --force           decode even when the tokenizer's fingerprint differs\n"
                           "                        from the one recorded in the stream (default: error)\n"
                           "\nexample:\n"
                           "  sluice detokenize -t gpt-neox-20b/tokenizer.json docs.tok | jq -r .text\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_SKIP = SL_OPT_FIRST_FREE, O_FORCE };
    static const struct option opts[] = {{"tokenizer", required_argument, 0, 't'},
                                         {"skip-special", no_argument, 0, O_SKIP},
                                         {"force", no_argument, 0, O_FORCE},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    const char *tokp = NULL;
    int skip = 0, force = 0, c;
    while ((c = getopt_long(argc, argv, "t:" SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case 't': tokp = optarg; break;
        case O_SKIP: skip = 1; break;
        case O_FORCE: force = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        sl_cli_usage_error(cli, "one input stream at most");
    const char *inp = optind < argc ? argv[optind] : "-";

    sl_err err = {{0}};
    sl_input *in = sl_input_open(inp, &err);
    if (!in)
        return sl_cli_fail(cli, &err);
    sl_ts_reader *r = sl_ts_reader_open(in, &err);
    if (!r) {
        sl_input_close(in);
        return sl_cli_fail(cli, &err);
    }
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_bpe *bpe = NULL;
    sl_charvocab *cv = NULL;
    const char *fp = NULL;
    char cfp[72];
    int rc = -1;
    if (tokp && sl_charvocab_is_file(tokp)) {
        cv = sl_charvocab_load(tokp, &err);
    } else if (tokp) {
        bpe = sl_bpe_load(tokp, &err);
        if (bpe)
            fp = sl_bpe_fingerprint(bpe);
    } else if (h->extra_json && strstr(h->extra_json, "\"type\":\"char\"")) {
        /* the header JSON re-serializes extra; parse it back */
        cv = sl_charvocab_parse(h->extra_json, strlen(h->extra_json), inp, &err);
    } else {
        sl_errf(&err, "%s: the stream has no character vocabulary in its header; give --tokenizer PATH", inp);
    }
    if (cv) {
        const char *j = sl_charvocab_json(cv);
        sl_sha256_fingerprint(j, strlen(j), cfp);
        fp = cfp;
    }
    if (!bpe && !cv)
        goto done;
    if (!force && h->fingerprint[0] && strcmp(h->fingerprint, fp)) {
        sl_errf(&err, "%s: the stream was made with tokenizer %s, but %s is %s (--force decodes anyway)", inp,
                h->fingerprint, tokp ? tokp : "the header's vocabulary", fp);
        goto done;
    }
    sl_output *out = sl_output_open(cli->output, &err);
    if (!out)
        goto done;
    sl_progress *pg = sl_progress_start("detokenize", "docs", cli->progress);
    sl_progress_track_input(pg, in);
    sl_doc d = {0};
    sl_buf raw = {0}, text = {0}, line = {0};
    uint64_t repaired = 0;
    int got;
    while ((got = sl_ts_read_doc(r, &d, &err)) == 1) {
        if (skip) {
            size_t k = 0;
            for (size_t i = 0; i < d.n_tokens; i++) {
                int64_t t = d.tokens[i];
                if (t != h->eos && t != h->bos && t != h->pad)
                    d.tokens[k++] = d.tokens[i];
            }
            d.n_tokens = k;
        }
        sl_buf_clear(&raw);
        if ((bpe ? sl_bpe_decode(bpe, d.tokens, d.n_tokens, &raw, &err)
                 : sl_charvocab_decode(cv, d.tokens, d.n_tokens, &raw, &err))) {
            sl_err_prefix(&err, "%s: document '%.*s'", inp, (int)d.id_len, d.id ? d.id : "");
            got = -1;
            break;
        }
        sl_buf_clear(&text);
        repaired += sl_utf8_repair(&text, raw.data ? raw.data : "", raw.len, SL_UTF8_REPLACE);
        sl_buf_puts(&line, "{\"id\":");
        sl_json_put_str(&line, d.id ? d.id : "", d.id_len);
        sl_buf_puts(&line, ",\"text\":");
        sl_json_put_str(&line, text.data ? text.data : "", text.len);
        if (d.meta && d.meta_len > 2 && d.meta[0] == '{') {
            sl_buf_putc(&line, ',');
            sl_buf_append(&line, d.meta + 1, d.meta_len - 2);
        }
        sl_buf_puts(&line, "}\n");
        if (line.len >= (1u << 20)) {
            if (sl_output_write(out, line.data, line.len, &err) < 0) {
                got = -1;
                break;
            }
            sl_buf_clear(&line);
        }
        sl_progress_add(pg, 1, raw.len);
    }
    if (got == 0 && line.len && sl_output_write(out, line.data, line.len, &err) < 0)
        got = -1;
    sl_progress_done(pg);
    sl_doc_free(&d);
    sl_buf_free(&raw);
    sl_buf_free(&text);
    sl_buf_free(&line);
    if (got < 0) {
        sl_output_abort(out);
        goto done;
    }
    if (sl_output_commit(out, &err))
        goto done;
    if (repaired)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) in decoded text written as U+FFFD",
                    (unsigned long long)repaired);
    rc = 0;
done:
    sl_ts_reader_close(r);
    sl_input_close(in);
    sl_bpe_free(bpe);
    sl_charvocab_free(cv);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_detokenize_text = {
    .name = "detokenize text",
    .summary = "token stream back to text with a tokenizer",
    .usage = "sluice detokenize text [--tokenizer PATH] [options] [FILE]",
    .help = help,
    .run = run,
};
