/* `sluice tokenize char`: documents -> UTF-8 byte or code point tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "stream/docreader.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"
#include "tokenize/chartok.h"
#include "tokenize/docpipe.h"
#include "tokenize/sha256.h"

static const char help[] = "Reads documents (JSON Lines or plain text, see 'sluice help read') and writes a\n"
                           "token stream of characters. The vocabulary is written into the stream header\n"
                           "(\"extra\"), so 'sluice detokenize' and 'sluice cat' need no other file.\n\n"
                           "units:\n"
                           "  byte       (default) each UTF-8 byte is its id 0..255; 256 = <|endoftext|>,\n"
                           "             257 = <|bos|> (vocab size 258)\n"
                           "  codepoint  each Unicode code point is one id from a vocabulary: the code\n"
                           "             points sorted ascending, then <|endoftext|>, <|bos|>, <|unk|>;\n"
                           "             a code point missing from a given vocabulary becomes <|unk|>\n\n"
                           "options:\n"
                           "      --unit UNIT       byte or codepoint (codepoint needs --build-vocab or\n"
                           "                        --vocab)\n"
                           "      --build-vocab     build the code point vocabulary from the input (reads\n"
                           "                        the FILES twice, so standard input is not accepted)\n"
                           "      --vocab FILE      use a vocabulary file written by --save-vocab\n"
                           "      --save-vocab FILE also write the vocabulary (JSON) to FILE\n"
                           "      --append-eos      end every document with <|endoftext|>\n"
                           "      --prepend-bos     start every document with <|bos|>\n"
                           "  -f, --field NAME      JSON field that holds the text (default: text)\n"
                           "  -l, --lines           plain text: one document per line\n"
                           "      --invalid MODE    invalid UTF-8: replace (default, U+FFFD), skip or error\n"
                           "      --on-error MODE   malformed JSON line: fail (default) or skip\n"
                           "      --max-doc-bytes N longest document (default 64M)\n"
                           "      --format KIND     auto (default: JSON Lines when a source starts with '{'),\n"
                           "                        jsonl or text: read every source as that kind\n"
                           "\nexamples:\n"
                           "  sluice tokenize char --append-eos docs.jsonl -o bytes.tok\n"
                           "  sluice tokenize char --build-vocab --save-vocab v.json docs.jsonl -o c.tok\n";

static int encode(void *c, int thread, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    (void)thread, (void)err;
    sl_charvocab_encode(c, text, n, &out->v, &out->n, &out->cap);
    return 0;
}

static sl_charvocab *build_vocab(char **files, int n, const sl_docreader_opts *ro, sl_err *err)
{
    sl_docreader *r = sl_docreader_open((const char *const *)files, n, ro, err);
    if (!r)
        return NULL;
    uint8_t *present = sl_xcalloc(0x110000, 1);
    sl_textdoc d = {0};
    int rc;
    while ((rc = sl_docreader_next(r, &d, err)) == 1) {
        const char *t = d.text.data;
        for (size_t i = 0; i < d.text.len;) {
            uint32_t cp = 0;
            /* docreader text is valid UTF-8 */
            uint8_t c0 = (uint8_t)t[i];
            size_t k = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
            if (i + k > d.text.len)
                break;
            cp = k == 1 ? c0 : (uint32_t)(c0 & (0x7F >> k));
            for (size_t j = 1; j < k; j++)
                cp = cp << 6 | ((uint8_t)t[i + j] & 0x3F);
            if (cp < 0x110000)
                present[cp] = 1;
            i += k;
        }
    }
    sl_textdoc_free(&d);
    sl_docreader_close(r);
    sl_charvocab *v = rc < 0 ? NULL : sl_charvocab_from_set(present);
    free(present);
    return v;
}

static int save_vocab(const char *path, const sl_charvocab *v, sl_err *err)
{
    sl_output *o = sl_output_open(path, err);
    if (!o)
        return -1;
    const char *j = sl_charvocab_json(v);
    if (sl_output_write(o, j, strlen(j), err) || sl_output_write(o, "\n", 1, err)) {
        sl_output_abort(o);
        return -1;
    }
    return sl_output_commit(o, err);
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_UNIT = SL_DO_END, O_BUILD, O_VOCAB, O_SAVE, O_EOS, O_BOS };
    static const struct option opts[] = {{"unit", required_argument, 0, O_UNIT},
                                         {"build-vocab", no_argument, 0, O_BUILD},
                                         {"vocab", required_argument, 0, O_VOCAB},
                                         {"save-vocab", required_argument, 0, O_SAVE},
                                         {"append-eos", no_argument, 0, O_EOS},
                                         {"prepend-bos", no_argument, 0, O_BOS},
                                         SL_DOC_LONG_OPTS,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const units[] = {"byte", "codepoint", NULL};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    int unit = -1, build = 0, eos = 0, bos = 0;
    const char *vocab_path = NULL, *save = NULL;
    int c;
    while ((c = getopt_long(argc, argv, SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro))
            continue;
        switch (c) {
        case O_UNIT: unit = sl_cli_choice(cli, "--unit", optarg, units); break;
        case O_BUILD: build = 1; break;
        case O_VOCAB: vocab_path = optarg; break;
        case O_SAVE: save = optarg; break;
        case O_EOS: eos = 1; break;
        case O_BOS: bos = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    ro.quiet = cli->quiet;
    int nfiles = argc - optind;
    char **files = argv + optind;
    if (build && vocab_path)
        sl_cli_usage_error(cli, "--build-vocab and --vocab exclude each other");
    if (build && unit == 0)
        sl_cli_usage_error(cli, "--build-vocab builds a codepoint vocabulary (not --unit byte)");
    if (unit == 1 && !build && !vocab_path)
        sl_cli_usage_error(cli, "--unit codepoint needs --build-vocab or --vocab FILE");
    if (build) {
        if (nfiles == 0)
            sl_cli_usage_error(cli, "--build-vocab reads the input twice: give FILES (not standard input)");
        for (int i = 0; i < nfiles; i++)
            if (!strcmp(files[i], "-"))
                sl_cli_usage_error(cli, "--build-vocab reads the input twice: '-' (standard input) is not allowed");
    }

    sl_err err = {{0}};
    sl_charvocab *v = build        ? build_vocab(files, nfiles, &ro, &err)
                      : vocab_path ? sl_charvocab_load(vocab_path, &err)
                                   : sl_charvocab_bytes();
    if (!v)
        return sl_cli_fail(cli, &err);
    if (unit >= 0 && sl_charvocab_unit(v) != unit) {
        sl_charvocab_free(v);
        sl_cli_usage_error(cli, "--unit %s does not match the vocabulary's unit", units[unit]);
    }
    if (save && save_vocab(save, v, &err)) {
        sl_charvocab_free(v);
        return sl_cli_fail(cli, &err);
    }
    sl_docpipe_opts po = {.prepend = bos ? sl_charvocab_special(v, SL_CHAR_BOS) : -1,
                          .append = eos ? sl_charvocab_special(v, SL_CHAR_EOS) : -1};
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_TEXT, sl_charvocab_size(v));
    h.eos = sl_charvocab_special(v, SL_CHAR_EOS);
    h.bos = sl_charvocab_special(v, SL_CHAR_BOS);
    int64_t unk = sl_charvocab_special(v, SL_CHAR_UNK);
    h.unk = unk >= 0 ? unk : SL_TS_NO_ID;
    const char *json = sl_charvocab_json(v);
    sl_sha256_fingerprint(json, strlen(json), h.fingerprint);
    snprintf(h.tokenizer, sizeof h.tokenizer, "char:%s", units[sl_charvocab_unit(v)]);
    sl_ts_header_set_extra(&h, json);

    int rc = -1;
    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    sl_docreader *r = sl_docreader_open((const char *const *)files, nfiles, &ro, &err);
    if (r && (out = sl_output_open(cli->output, &err)) && (w = sl_ts_writer_open(out, &h, &err))) {
        sl_progress *pg = sl_progress_start("tokenize char", "docs", cli->progress);
        rc = sl_docpipe_run(r, w, encode, v, &po, pg, &err);
        sl_progress_done(pg);
        if (rc == 0) {
            rc = sl_ts_writer_finish(w, &err);
            w = NULL;
            if (rc == 0) {
                rc = sl_output_commit(out, &err);
                out = NULL;
            }
        }
    }
    if (w)
        sl_ts_writer_abort(w);
    if (out)
        sl_output_abort(out);
    sl_docreader_close(r);
    sl_ts_header_free(&h);
    sl_charvocab_free(v);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_tokenize_char = {
    .name = "tokenize char",
    .summary = "UTF-8 byte or Unicode code point tokens",
    .usage = "sluice tokenize char [options] [FILES...]",
    .help = help,
    .run = run,
};
