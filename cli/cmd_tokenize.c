/* `sluice tokenize`: the tokenizer family, and `tokenize ids` for pre-tokenized data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "stream/docreader.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/source.h"
#include "stream/tokstream.h"

static const sl_command *const subs[] = {&sl_cmd_tokenize_bpe,   &sl_cmd_tokenize_char, &sl_cmd_tokenize_dna,
                                         &sl_cmd_tokenize_audio, &sl_cmd_tokenize_ids,  NULL};

const sl_command sl_cmd_tokenize = {
    .name = "tokenize",
    .summary = "turn documents into a token stream",
    .usage = "sluice tokenize {bpe|char|dna|audio|ids} [options] [FILES...]",
    .help = "Every tokenizer writes the token stream of docs/formats.md (to -o or stdout).\n"
            "See 'sluice help tokenize <kind>'.\n",
    .subs = subs,
};

/* ---- tokenize ids ---------------------------------------------------- */

static const char ids_help[] =
    "Reads JSON Lines objects with an integer array field (default \"ids\") and\n"
    "writes them as a token stream, keeping \"id\" (or naming documents\n"
    "<source>:<line>) and every other field as record metadata.\n\n"
    "options:\n"
    "  --vocab-size N      required: every id must be < N (checked; the token width\n"
    "                      is the smallest of u8/u16/u32 that holds N-1)\n"
    "  --field NAME        the array field (default: ids)\n"
    "  --eos ID / --bos ID / --pad ID   special ids recorded in the header\n"
    "  --modality NAME     text|dna|audio|ids|unknown (default: ids)\n"
    "  --tokenizer NAME    tokenizer name recorded in the header\n"
    "  --fingerprint FP    tokenizer fingerprint recorded in the header\n"
    "  --max-doc-bytes N   longest accepted input line (default 64M)\n"
    "  --part R/N|slurm    read only part R of N of the input files (parts 0..N-1\n"
    "                      read as one stream give exactly the output of one run;\n"
    "                      see docs/scale-out.md)\n"
    "  --skip-existing     do nothing when the output exists and verifies\n"
    "\nexample:\n"
    "  echo '{\"id\":\"a\",\"ids\":[1,2,3]}' | sluice tokenize ids --vocab-size 50277 | sluice cat\n";

static int ids_line(const char *src, uint64_t lineno, const char *line, size_t len, const char *field, sl_doc *d,
                    sl_buf *meta, sl_err *err)
{
    sl_json_doc *jd = sl_json_parse(line, len, NULL, err);
    if (!jd)
        return sl_err_prefix(err, "%s:%llu", src, (unsigned long long)lineno);
    sl_json *o = sl_json_root(jd);
    int rc = -1;
    if (o->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s:%llu: not a JSON object", src, (unsigned long long)lineno);
        goto out;
    }
    sl_json *arr = sl_json_get(o, field);
    if (!arr || arr->type != SL_JSON_ARRAY) {
        sl_errf(err, "%s:%llu: no \"%s\" array", src, (unsigned long long)lineno, field);
        goto out;
    }
    sl_doc_clear(d);
    sl_doc_reserve(d, arr->n);
    for (size_t i = 0; i < arr->n; i++) {
        int64_t v;
        if (!sl_json_is_int(arr->kids[i], &v) || v < 0 || v > UINT32_MAX) {
            sl_errf(err, "%s:%llu: \"%s\"[%zu] is not a token id (a non-negative integer < 2^32)", src,
                    (unsigned long long)lineno, field, i);
            goto out;
        }
        d->tokens[d->n_tokens++] = (uint32_t)v;
    }
    sl_json *id = sl_json_get(o, "id");
    if (id && id->type == SL_JSON_STRING)
        sl_doc_set_id(d, id->str, id->str_len);
    else if (id && id->type == SL_JSON_NUMBER)
        sl_doc_set_id(d, id->str, id->str_len);
    else {
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, ":%llu", (unsigned long long)lineno);
        sl_buf b = {0};
        sl_buf_puts(&b, src);
        sl_buf_append(&b, tmp, (size_t)n);
        sl_doc_set_id(d, b.data, b.len);
        sl_buf_free(&b);
    }
    int64_t sb;
    if (sl_json_get_int(o, "src_bytes", &sb) == 0 && sb >= 0)
        d->src_bytes = (uint64_t)sb;
    /* metadata: every other field */
    sl_buf_clear(meta);
    sl_buf_putc(meta, '{');
    int first = 1;
    for (size_t i = 0; i < o->n; i++) {
        const sl_json *k = o->keys[i];
        if (!strcmp(k->str, field) || !strcmp(k->str, "id") || !strcmp(k->str, "src_bytes"))
            continue;
        if (!first)
            sl_buf_putc(meta, ',');
        first = 0;
        sl_json_put_str(meta, k->str, k->str_len);
        sl_buf_putc(meta, ':');
        sl_json_put_value(meta, o->kids[i]);
    }
    sl_buf_putc(meta, '}');
    if (first)
        sl_doc_set_meta(d, "", 0);
    else
        sl_doc_set_meta(d, meta->data, meta->len);
    rc = 0;
out:
    sl_json_free(jd);
    return rc;
}

static int run_ids(sl_cli *cli, int argc, char **argv)
{
    enum { O_VOCAB = SL_OPT_FIRST_FREE, O_FIELD, O_EOS, O_BOS, O_PAD, O_MOD, O_TOK, O_FP, O_MAXB };
    static const struct option opts[] = {{"vocab-size", required_argument, 0, O_VOCAB},
                                         {"field", required_argument, 0, O_FIELD},
                                         {"eos", required_argument, 0, O_EOS},
                                         {"bos", required_argument, 0, O_BOS},
                                         {"pad", required_argument, 0, O_PAD},
                                         {"modality", required_argument, 0, O_MOD},
                                         {"tokenizer", required_argument, 0, O_TOK},
                                         {"fingerprint", required_argument, 0, O_FP},
                                         {"max-doc-bytes", required_argument, 0, O_MAXB},
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    long long vocab = -1;
    const char *field = "ids", *tok = NULL, *fp = NULL;
    long long eos = SL_TS_NO_ID, bos = SL_TS_NO_ID, pad = SL_TS_NO_ID;
    int modality = SL_MOD_IDS;
    size_t maxb = 64u << 20;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_VOCAB: vocab = sl_cli_int(cli, "--vocab-size", optarg, 1, UINT32_MAX); break;
        case O_FIELD: field = optarg; break;
        case O_EOS: eos = sl_cli_int(cli, "--eos", optarg, 0, UINT32_MAX); break;
        case O_BOS: bos = sl_cli_int(cli, "--bos", optarg, 0, UINT32_MAX); break;
        case O_PAD: pad = sl_cli_int(cli, "--pad", optarg, 0, UINT32_MAX); break;
        case O_MOD:
            modality = sl_modality_parse(optarg);
            if (modality < 0)
                sl_cli_usage_error(cli, "--modality: '%s' is not one of text|dna|audio|ids|unknown", optarg);
            break;
        case O_TOK: tok = optarg; break;
        case O_FP: fp = optarg; break;
        case O_MAXB: maxb = (size_t)sl_cli_int(cli, "--max-doc-bytes", optarg, 1, 1LL << 40); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (vocab < 0)
        sl_cli_usage_error(cli, "--vocab-size is required");
    long long specials[3] = {eos, bos, pad};
    for (int i = 0; i < 3; i++)
        if (specials[i] != SL_TS_NO_ID && specials[i] >= vocab)
            sl_cli_usage_error(cli, "special id %lld is not below --vocab-size %lld", specials[i], vocab);

    sl_ts_header h;
    sl_ts_header_init(&h, modality, (uint32_t)vocab);
    h.eos = eos;
    h.bos = bos;
    h.pad = pad;
    if (tok)
        snprintf(h.tokenizer, sizeof h.tokenizer, "%s", tok);
    if (fp)
        snprintf(h.fingerprint, sizeof h.fingerprint, "%s", fp);

    sl_err err = {{0}};
    int nfiles = argc - optind;
    const char *const *files = (const char *const *)argv + optind;
    const char *stdin_only[] = {"-"};
    if (nfiles == 0) {
        files = stdin_only;
        nfiles = 1;
    }
    sl_part part;
    sl_slice *pieces = NULL; /* --part: this part's files and ranges of files */
    if (sl_cli_part(cli, &so, &part)) {
        size_t np;
        pieces = sl_cli_slices(cli, &part, files, (size_t)nfiles, sl_lines_cut, NULL, &np);
        nfiles = (int)np;
    }
    if (sl_cli_skip_existing(cli, &so, SL_SKIP_TOKENS)) {
        sl_slices_free(pieces, pieces ? (size_t)nfiles : 0);
        sl_ts_header_free(&h);
        return 0;
    }
    sl_output *out = sl_output_open(cli->output, &err);
    if (!out)
        return sl_cli_fail(cli, &err);
    sl_ts_writer *w = sl_ts_writer_open(out, &h, &err);
    if (!w) {
        sl_output_abort(out);
        return sl_cli_fail(cli, &err);
    }
    sl_progress *pg = sl_progress_start("tokenize ids", "docs", cli->progress);
    sl_doc d = {0};
    sl_buf meta = {0};
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (int f = 0; f < nfiles && !rc; f++) {
        const char *path = pieces ? pieces[f].path : files[f];
        sl_range *range = NULL;
        sl_input *in;
        if (pieces && !pieces[f].whole) {
            range = sl_range_open(path, pieces[f].begin, pieces[f].end, &err);
            in = range ? sl_range_input(range) : NULL;
        } else {
            in = sl_input_open(path, &err);
        }
        if (!in) {
            rc = -1;
            break;
        }
        sl_progress_track_input(pg, nfiles == 1 ? in : NULL); /* ETA only for a single input */
        uint64_t lineno = pieces ? pieces[f].line : 0;
        int r;
        while ((r = sl_input_getline(in, &line, &len, &cap, maxb, &err)) == 1) {
            lineno++;
            if (len && line[len - 1] == '\r')
                len--;
            size_t k = 0;
            while (k < len && (line[k] == ' ' || line[k] == '\t'))
                k++;
            if (k == len)
                continue; /* blank line */
            if (ids_line(sl_input_name(in), lineno, line, len, field, &d, &meta, &err)) {
                r = -1;
                break;
            }
            if (sl_ts_write_doc(w, &d, &err)) {
                sl_err_prefix(&err, "%s:%llu", sl_input_name(in), (unsigned long long)lineno);
                r = -1;
                break;
            }
            sl_progress_add(pg, 1, len + 1);
            sl_progress_add_tokens(pg, d.n_tokens);
        }
        if (r < 0)
            rc = -1;
        sl_progress_track_input(pg, NULL);
        if (range)
            sl_range_close(range);
        else
            sl_input_close(in);
    }
    sl_slices_free(pieces, pieces ? (size_t)nfiles : 0);
    free(line);
    sl_buf_free(&meta);
    sl_doc_free(&d);
    sl_progress_done(pg);
    sl_ts_header_free(&h);
    return sl_cli_finish(cli, out, w, rc, &err);
}

const sl_command sl_cmd_tokenize_ids = {
    .name = "tokenize ids",
    .summary = "pre-tokenized JSON Lines ({\"ids\":[...]}) to a token stream",
    .usage = "sluice tokenize ids --vocab-size N [options] [FILES...]",
    .help = ids_help,
    .run = run_ids,
};
