/* `sluice tokenize`: the tokenizer family, and `tokenize ids` for pre-tokenized data. */
#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "stream/tokstream.h"
#include "tokenize/ids.h"

static const sl_command *const subs[] = {&sl_cmd_tokenize_text,
                                         &sl_cmd_tokenize_bpe,
                                         &sl_cmd_tokenize_char,
                                         &sl_cmd_tokenize_dna,
                                         &sl_cmd_tokenize_audio,
                                         &sl_cmd_tokenize_ids,
                                         NULL};

const sl_command sl_cmd_tokenize = {
    .name = "tokenize",
    .summary = "turn documents into a token stream",
    .usage = "sluice tokenize {text|bpe|char|dna|audio|ids} [options] [FILES...]",
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
    "  --ends-with-eos     every document's ids already end in the --eos id (checked):\n"
    "                      recorded in the header, so pack, shard and export megatron\n"
    "                      append no second one\n"
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

static int run_ids(sl_cli *cli, int argc, char **argv)
{
    enum { O_VOCAB = SL_OPT_FIRST_FREE, O_FIELD, O_EOS, O_BOS, O_PAD, O_MOD, O_TOK, O_FP, O_MAXB, O_ENDS };
    static const struct option opts[] = {{"vocab-size", required_argument, 0, O_VOCAB},
                                         {"field", required_argument, 0, O_FIELD},
                                         {"eos", required_argument, 0, O_EOS},
                                         {"bos", required_argument, 0, O_BOS},
                                         {"pad", required_argument, 0, O_PAD},
                                         {"modality", required_argument, 0, O_MOD},
                                         {"tokenizer", required_argument, 0, O_TOK},
                                         {"fingerprint", required_argument, 0, O_FP},
                                         {"max-doc-bytes", required_argument, 0, O_MAXB},
                                         {"ends-with-eos", no_argument, 0, O_ENDS},
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const sl_cli_field fields[] = {
        {"vocab_size", "--vocab-size"}, {"ends_with_eos", "--ends-with-eos"}, {"eos", "--eos"}, {NULL, NULL}};
    long long vocab = -1;
    const char *field = "ids", *tok = NULL, *fp = NULL;
    long long eos = SL_TS_NO_ID, bos = SL_TS_NO_ID, pad = SL_TS_NO_ID;
    int modality = SL_MOD_IDS, ends = 0;
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
        case O_ENDS: ends = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (vocab < 0)
        sl_cli_usage_error(cli, "--vocab-size is required");
    sl_ids_opts o = {.vocab_size = (uint32_t)vocab,
                     .field = field,
                     .eos = eos,
                     .bos = bos,
                     .pad = pad,
                     .modality = modality,
                     .tokenizer = tok,
                     .fingerprint = fp,
                     .max_doc_bytes = maxb,
                     .progress = "tokenize ids",
                     .progress_mode = cli->progress,
                     .ends_with_eos = ends};
    sl_err err = {{0}};
    if (sl_ids_opts_check(&o, &err)) {
        sl_cli_map_fields(&err, fields);
        sl_cli_usage_error(cli, "%s", err.msg);
    }
    /* --part: this part's files and line ranges of files */
    const char *stdin_only[] = {"-"};
    const char *const *files = argc > optind ? (const char *const *)argv + optind : stdin_only;
    size_t nfiles = argc > optind ? (size_t)(argc - optind) : 1;
    sl_part part;
    sl_slice *pieces = NULL;
    if (sl_cli_part(cli, &so, &part)) {
        pieces = sl_cli_slices(cli, &part, files, nfiles, sl_lines_cut, NULL, &o.n_slices);
        o.slices = pieces;
    }
    int rc = 0;
    if (!sl_cli_skip_existing(cli, &so, SL_VERIFY_TOKENS) && (sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0), 1))
        rc = sl_ids_run(&o, files, nfiles, cli->output, &err);
    sl_slices_free(pieces, o.n_slices);
    if (rc)
        sl_cli_map_fields(&err, fields);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_tokenize_ids = {
    .name = "tokenize ids",
    .summary = "pre-tokenized JSON Lines ({\"ids\":[...]}) to a token stream",
    .usage = "sluice tokenize ids --vocab-size N [options] [FILES...]",
    .help = ids_help,
    .run = run_ids,
    .serial = 1, /* no parallel work */
};
