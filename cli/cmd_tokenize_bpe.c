/* `sluice tokenize bpe`: documents -> token stream with a byte-level BPE. */
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
#include "stream/tokstream.h"
#include "tokenize/bpe.h"
#include "tokenize/docpipe.h"

static const char help[] = "Reads documents (JSON Lines objects or plain text, see 'sluice help read'; any\n"
                           "compression or archive) and writes a token stream (docs/formats.md): modality\n"
                           "text, the tokenizer's vocab size and special ids, fingerprint sha256 of the\n"
                           "tokenizer file(s), and per document its id, other fields as metadata, the\n"
                           "UTF-8 byte count of its text and its token ids. The ids are exactly those of\n"
                           "Hugging Face tokenizers' encode(text, add_special_tokens=False).\n\n"
                           "options:\n"
                           "  -t, --tokenizer PATH  required: a Hugging Face tokenizer.json (byte-level\n"
                           "                        BPE), a directory holding tokenizer.json or\n"
                           "                        vocab.json + merges.txt (GPT-2), or such a vocab.json\n"
                           "      --special MODE    special tokens (e.g. <|endoftext|>) written literally in\n"
                           "                        the text: plain (default) encodes them as ordinary text,\n"
                           "                        parse turns them into their id (Hugging Face's default),\n"
                           "                        error stops with the document and byte offset. plain is\n"
                           "                        the default because in raw web data such a string is\n"
                           "                        text, not a document boundary; boundaries come from\n"
                           "                        --append-eos.\n"
                           "      --pretokenizer P  scan (default): a hand-written scanner for the GPT-2\n"
                           "                        pattern with HF's character classes (Unicode 16.0);\n"
                           "                        pcre2: the pattern through PCRE2 JIT, which knows\n"
                           "                        Unicode 14.0 only, so characters assigned later split\n"
                           "                        differently from HF. The scanner is also faster\n"
                           "      --append-eos[=ID] end every document with the end-of-text id (default:\n"
                           "                        the tokenizer's <|endoftext|>)\n"
                           "      --prepend-bos[=ID] start every document with a begin id (default: the\n"
                           "                        tokenizer's <|endoftext|>, as GPT-NeoX/Pythia use it)\n"
                           "  -f, --field NAME      JSON field that holds the text (default: text)\n"
                           "  -l, --lines           plain text: one document per line\n"
                           "      --invalid MODE    invalid UTF-8 in the input: replace (default, U+FFFD),\n"
                           "                        skip or error (see 'sluice help read')\n"
                           "      --on-error MODE   malformed JSON line: fail (default) or skip\n"
                           "      --max-doc-bytes N longest document (default 64M)\n"
                           "      --format KIND     auto (default: JSON Lines when a source starts with '{'),\n"
                           "                        jsonl or text: read every source as that kind\n"
                           "      --part R/N|slurm  tokenize only part R of N of the input, as 'sluice read\n"
                           "                        --part' reads it (docs/scale-out.md)\n"
                           "      --skip-existing   when the output exists and verifies (trailer, counts,\n"
                           "                        checksum), do nothing, without reading the input\n"
                           "\nText is NFC-normalized when the tokenizer says so (GPT-NeoX-20B does), so\n"
                           "decoding gives the NFC form of the input back.\n"
                           "\nexamples:\n"
                           "  sluice tokenize bpe -t neox/tokenizer.json --append-eos docs.jsonl -o d.tok\n"
                           "  sluice read corpus.tar.zst | sluice tokenize bpe -t gpt2/ | sluice cat\n";

typedef struct {
    const sl_bpe *bpe;
    sl_bpe_state **states;
    sl_special_mode mode;
} ctx;

static int encode(void *c, int thread, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    ctx *x = c;
    return sl_bpe_encode(x->bpe, x->states[thread], text, n, x->mode, out, err);
}

static int64_t special_id(const sl_cli *cli, const sl_bpe *b, const char *opt, const char *arg)
{
    if (arg)
        return sl_cli_int(cli, opt, arg, 0, (long long)sl_bpe_vocab_size(b) - 1);
    int64_t id = sl_bpe_token_id(b, "<|endoftext|>");
    if (id < 0)
        sl_cli_usage_error(cli, "%s: the tokenizer has no <|endoftext|>; give the id (%s=ID)", opt, opt);
    return id;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_SPECIAL = SL_DO_END, O_EOS, O_BOS, O_PRETOK };
    static const struct option opts[] = {{"tokenizer", required_argument, 0, 't'},
                                         {"special", required_argument, 0, O_SPECIAL},
                                         {"append-eos", optional_argument, 0, O_EOS},
                                         {"prepend-bos", optional_argument, 0, O_BOS},
                                         {"pretokenizer", required_argument, 0, O_PRETOK},
                                         SL_DOC_LONG_OPTS,
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const special_modes[] = {"plain", "parse", "error", NULL}; /* sl_special_mode order */
    static const char *const pretoks[] = {"pcre2", "scan", NULL};
    int scan = 1;
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    const char *tokp = NULL, *eos_arg = NULL, *bos_arg = NULL;
    int want_eos = 0, want_bos = 0;
    sl_special_mode mode = SL_SPECIAL_PLAIN;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, "t:" SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case 't': tokp = optarg; break;
        case O_SPECIAL: mode = (sl_special_mode)sl_cli_choice(cli, "--special", optarg, special_modes); break;
        case O_EOS: want_eos = 1, eos_arg = optarg; break;
        case O_BOS: want_bos = 1, bos_arg = optarg; break;
        case O_PRETOK: scan = sl_cli_choice(cli, "--pretokenizer", optarg, pretoks); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!tokp)
        sl_cli_usage_error(cli, "--tokenizer PATH is required");
    ro.quiet = cli->quiet;
    if (sl_cli_skip_existing(cli, &so, SL_SKIP_TOKENS))
        return 0;

    sl_err err = {{0}};
    sl_bpe *b = sl_bpe_load(tokp, &err);
    if (!b)
        return sl_cli_fail(cli, &err);
    sl_bpe_set_scanner(b, scan);
    sl_docpipe_opts po = {.prepend = -1, .append = -1};
    if (want_eos)
        po.append = special_id(cli, b, "--append-eos", eos_arg);
    if (want_bos)
        po.prepend = special_id(cli, b, "--prepend-bos", bos_arg);

    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_TEXT, sl_bpe_vocab_size(b));
    int64_t eot = sl_bpe_token_id(b, "<|endoftext|>"), pad = sl_bpe_token_id(b, "<|padding|>");
    h.eos = po.append >= 0 ? po.append : eot >= 0 ? eot : SL_TS_NO_ID;
    h.bos = po.prepend >= 0 ? po.prepend : SL_TS_NO_ID;
    h.pad = pad >= 0 ? pad : SL_TS_NO_ID;
    snprintf(h.fingerprint, sizeof h.fingerprint, "%s", sl_bpe_fingerprint(b));
    const char *base = strrchr(tokp, '/');
    snprintf(h.tokenizer, sizeof h.tokenizer, "bpe:%s", base && base[1] ? base + 1 : tokp);

    int nt = sl_cli_threads(cli);
    ctx x = {.bpe = b, .mode = mode, .states = sl_xcalloc((size_t)nt, sizeof(sl_bpe_state *))};
    for (int i = 0; i < nt; i++)
        x.states[i] = sl_bpe_state_new(b);

    int rc = -1;
    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    sl_docreader *r;
    sl_part part;
    if (sl_cli_part(cli, &so, &part)) { /* this part's files and ranges of files */
        size_t np;
        sl_slice *pc = sl_cli_slices(cli, &part, (const char *const *)argv + optind, (size_t)(argc - optind),
                                     sl_docreader_cut, &ro, &np);
        r = sl_docreader_open_slices(pc, np, &ro, &err);
        sl_slices_free(pc, np);
    } else {
        r = sl_docreader_open((const char *const *)argv + optind, argc - optind, &ro, &err);
    }
    if (r && (out = sl_output_open(cli->output, &err)) && (w = sl_ts_writer_open(out, &h, &err))) {
        sl_progress *pg = sl_progress_start("tokenize bpe", "docs", cli->progress);
        rc = sl_docpipe_run(r, w, encode, &x, &po, pg, &err);
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
    sl_docreader_stats st = {0};
    if (r)
        st = *sl_docreader_stats_get(r);
    if (w)
        sl_ts_writer_abort(w);
    if (out)
        sl_output_abort(out);
    sl_docreader_close(r);
    for (int i = 0; i < nt; i++)
        sl_bpe_state_free(x.states[i]);
    free(x.states);
    sl_ts_header_free(&h);
    sl_bpe_free(b);
    if (rc)
        return sl_cli_fail(cli, &err);
    if (st.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)st.invalid_utf8,
                    ro.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (st.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)st.skipped_lines);
    return 0;
}

const sl_command sl_cmd_tokenize_bpe = {
    .name = "tokenize bpe",
    .summary = "byte-level BPE (Hugging Face tokenizer.json, GPT-2 vocab.json+merges.txt)",
    .usage = "sluice tokenize bpe --tokenizer PATH [options] [FILES...]",
    .help = help,
    .run = run,
};
