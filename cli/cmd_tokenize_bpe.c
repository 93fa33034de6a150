/* `sluice tokenize bpe`: documents -> token stream with a byte-level BPE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/doc_opts.h"
#include "cli/scale_opts.h"
#include "stream/docreader.h"
#include "tokenize/docpipe.h"
#include "tokenize/tokenizer.h"

static const char help[] = "Reads documents as 'sluice read' does (JSON Lines, JSON arrays, Parquet, Arrow,\n"
                           "plain text; any compression or archive; folders of them) and writes a token\n"
                           "stream (docs/formats.md): modality text, the tokenizer's vocab size and\n"
                           "special ids, fingerprint sha256 of the tokenizer file(s), and per document\n"
                           "its id, other fields as metadata, the UTF-8 byte count of its text and its\n"
                           "token ids. The ids are exactly those of Hugging Face tokenizers'\n"
                           "encode(text, add_special_tokens=False), or =True\n"
                           "with --add-special-tokens, with a special token written in the text (e.g.\n"
                           "<|endoftext|>) encoded as text unless --special parse (below); for tiktoken\n"
                           "and tekken files those of tiktoken's encode_ordinary; for a SentencePiece\n"
                           ".model those of sentencepiece's encode(text) (which never parses control\n"
                           "tokens such as <s>: --special does not apply).\n\n"
                           "options:\n"
                           "  -t, --tokenizer PATH  required: a Hugging Face tokenizer.json (byte-level\n"
                           "                        BPE as GPT-2/GPT-NeoX, Llama-3, Qwen2, tekken,\n"
                           "                        DeepSeek or CLIP: any pre-tokenizer Sequence with\n"
                           "                        a ByteLevel step; SentencePiece-style BPE\n"
                           "                        with byte fallback as Llama-2, Mistral-7B v0.1 and\n"
                           "                        Codestral Mamba; Unigram as T5/ALBERT-style files\n"
                           "                        converted by transformers; WordPiece or WordLevel as\n"
                           "                        BERT), a SentencePiece .model file (BPE or Unigram;\n"
                           "                        ids equal to the sentencepiece library's encode), a\n"
                           "                        directory holding tokenizer.json or vocab.json +\n"
                           "                        merges.txt (GPT-2), or such a vocab.json; a tiktoken\n"
                           "                        rank file (.tiktoken, with --pattern) or Mistral's\n"
                           "                        tekken JSON. A file may be compressed (zstd, gzip,\n"
                           "                        xz, bzip2): it is read decoded\n"
                           "      --pattern P       tiktoken rank files: the pattern that splits the text,\n"
                           "                        gpt2, cl100k, llama3 (= cl100k), qwen2, o200k, tekken,\n"
                           "                        or a regex (tiktoken's syntax, run by PCRE2). Needed\n"
                           "                        unless the file is OpenAI's r50k/p50k/cl100k/o200k_base\n"
                           "      --special NAME=ID[,...]  a tiktoken rank file's special tokens (an\n"
                           "                        argument with '='; a MODE may be given as well)\n"
                           "      --special MODE    special tokens (e.g. <|endoftext|>) written literally in\n"
                           "                        the text: plain (default) encodes them as ordinary text,\n"
                           "                        parse turns them into their id (Hugging Face's default,\n"
                           "                        as Megatron-LM's preprocess_data.py and datatrove do),\n"
                           "                        error stops with the document and byte offset. plain is\n"
                           "                        the default because in raw web data such a string is\n"
                           "                        text, not a document boundary; boundaries come from\n"
                           "                        --append-eos. With plain, a warning at the end counts\n"
                           "                        the documents where parse would give other ids\n"
                           "                        (those holding a special token's text)\n"
                           "      --pretokenizer P  scan (default): hand-written scanners for the GPT-2,\n"
                           "                        Llama-3, Qwen2, o200k and tekken patterns with HF's and\n"
                           "                        tiktoken's character classes (Unicode 16.0); pcre2:\n"
                           "                        the pattern through PCRE2 JIT, which knows Unicode\n"
                           "                        14.0 only, so characters assigned later split\n"
                           "                        differently from HF and tiktoken. The scanner is also\n"
                           "                        faster\n"
                           "      --add-special-tokens  put the special tokens of the tokenizer.json\n"
                           "                        post_processor around each document's ids (BERT's\n"
                           "                        [CLS] ... [SEP], Llama's <s> ...), as HF's\n"
                           "                        encode(text, add_special_tokens=True)\n"
                           "      --append-eos[=ID] end every document with the end-of-text id (default:\n"
                           "                        the tokenizer's <|endoftext|>, Llama-3's\n"
                           "                        <|end_of_text|>, or </s> of SentencePiece-style and\n"
                           "                        tekken ones; a .model's eos_id)\n"
                           "      --prepend-bos[=ID] start every document with a begin id (default:\n"
                           "                        Llama-3's <|begin_of_text|> or <s> (a .model's bos_id),\n"
                           "                        else\n"
                           "                        <|endoftext|> as GPT-NeoX/Pythia use it)\n"
                           "  -f, --field NAME      JSON field that holds the text (default: text)\n"
                           "  -l, --lines           plain text: one document per line\n"
                           "      --invalid MODE    invalid UTF-8 in the input: replace (default, U+FFFD),\n"
                           "                        skip or error (see 'sluice help read')\n"
                           "      --on-error MODE   malformed JSON line: fail (default) or skip\n"
                           "      --max-doc-bytes N longest document (default 64M)\n"
                           "      --mem-budget SIZE memory for batches (default 64M; at least 1M): a quarter\n"
                           "                        for the reader's batches, an eighth for the text encoded\n"
                           "                        at a time; peak memory is about SIZE + 8 x the longest doc\n"
                           "      --format KIND     auto (default: JSON Lines when a source starts with '{'),\n"
                           "                        jsonl or text: read every source as that kind\n"
                           "      --part R/N|slurm  tokenize only part R of N of the input files (the part\n"
                           "                        files in order read as one stream are the output of one\n"
                           "                        run; 'slurm': R, N from the job array; see\n"
                           "                        docs/scale-out.md)\n"
                           "      --skip-existing   when the output exists and verifies (trailer, counts,\n"
                           "                        checksum), do nothing, without reading the input\n"
                           "\nText is NFC-normalized when the tokenizer says so (GPT-NeoX-20B does), so\n"
                           "decoding gives the NFC form of the input back.\n"
                           "\nexamples:\n"
                           "  sluice tokenize bpe -t neox/tokenizer.json --append-eos docs.jsonl -o d.tok\n"
                           "  sluice read corpus.tar.zst | sluice tokenize bpe -t gpt2/ | sluice cat\n"
                           "  sluice tokenize bpe -t o200k_base.tiktoken docs.jsonl -o d.tok\n"
                           "  sluice tokenize bpe -t my.tiktoken --pattern cl100k \\\n"
                           "      --special '<|endoftext|>=100257' docs.jsonl -o d.tok\n";

static int64_t special_id(const sl_cli *cli, const sl_tokenizer *t, const char *opt, const char *arg)
{
    if (arg)
        return sl_cli_int(cli, opt, arg, 0, (long long)sl_tokenizer_vocab_size(t) - 1);
    int64_t id = sl_tokenizer_special(t, SL_TOK_EOS); /* <|endoftext|> or <|end_of_text|> */
    if (id < 0)
        sl_cli_usage_error(cli, "%s: the tokenizer has no <|endoftext|>; give the id (%s=ID)", opt, opt);
    return id;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_SPECIAL = SL_DO_END, O_EOS, O_BOS, O_PRETOK, O_PATTERN, O_ADD_SPECIAL };
    static const struct option opts[] = {{"tokenizer", required_argument, 0, 't'},
                                         {"special", required_argument, 0, O_SPECIAL},
                                         {"append-eos", optional_argument, 0, O_EOS},
                                         {"prepend-bos", optional_argument, 0, O_BOS},
                                         {"pretokenizer", required_argument, 0, O_PRETOK},
                                         {"pattern", required_argument, 0, O_PATTERN},
                                         {"add-special-tokens", no_argument, 0, O_ADD_SPECIAL},
                                         SL_DOC_LONG_OPTS,
                                         SL_PART_LONG_OPT,
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const special_modes[] = {"plain", "parse", "error", NULL}; /* sl_special_mode order */
    static const char *const pretoks[] = {"pcre2", "scan", NULL};
    sl_docreader_opts ro = SL_DOCREADER_OPTS_INIT;
    sl_tokenizer_opts to = SL_TOKENIZER_OPTS_INIT;
    const char *tokp = NULL, *eos_arg = NULL, *bos_arg = NULL;
    int want_eos = 0, want_bos = 0;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, "t:" SL_DOC_SHORT SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_doc_option(cli, c, &ro) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case 't': tokp = optarg; break;
        case O_SPECIAL:
            if (strchr(optarg, '=')) /* NAME=ID,...: a rank file's special tokens */
                to.specials = optarg;
            else
                to.special = (sl_special_mode)sl_cli_choice(cli, "--special", optarg, special_modes);
            break;
        case O_PATTERN: to.pattern = optarg; break;
        case O_EOS: want_eos = 1, eos_arg = optarg; break;
        case O_BOS: want_bos = 1, bos_arg = optarg; break;
        case O_PRETOK: to.pcre2 = sl_cli_choice(cli, "--pretokenizer", optarg, pretoks) == 0; break;
        case O_ADD_SPECIAL: to.add_special = 1; break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!tokp)
        sl_cli_usage_error(cli, "--tokenizer PATH is required");
    ro.quiet = cli->quiet;
    sl_part part;
    int parted = sl_cli_part(cli, &so, &part);
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_TOKENS))
        return 0;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);

    sl_err err = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tokp, &to, &err);
    if (!t)
        return sl_cli_fail(cli, &err);
    if ((to.pattern || to.specials) && strcmp(sl_tokenizer_family(t), "tiktoken")) {
        sl_tokenizer_free(t);
        sl_cli_usage_error(cli, "--pattern and --special NAME=ID are for tiktoken rank files; %s is not one", tokp);
    }
    if (!strcmp(sl_tokenizer_family(t), "char")) {
        sl_tokenizer_free(t);
        sl_cli_usage_error(cli, "%s is a character vocabulary: use 'sluice tokenize char --vocab %s'", tokp, tokp);
    }
    sl_docpipe_opts po = SL_DOCPIPE_OPTS_INIT;
    po.threads = sl_cli_threads(cli);
    po.batch_bytes = sl_mem_budget_split(ro.mem_budget).work_batch; /* 8 MiB at the default budget */
    po.progress = "tokenize bpe";
    po.progress_mode = cli->progress;
    sl_docpipe_specials sp = {0};
    if (to.special == SL_SPECIAL_PLAIN) /* to say at the end how many documents parse would change */
        po.specials = &sp;
    if (want_eos)
        po.append = special_id(cli, t, "--append-eos", eos_arg);
    if (want_bos && !bos_arg && sl_tokenizer_special(t, SL_TOK_BOS) >= 0)
        po.prepend = sl_tokenizer_special(t, SL_TOK_BOS); /* Llama-3's <|begin_of_text|> */
    else if (want_bos)                                    /* else <|endoftext|>, as GPT-NeoX/Pythia use it */
        po.prepend = special_id(cli, t, "--prepend-bos", bos_arg);
    sl_docreader_stats st;
    const char *const *files = (const char *const *)argv + optind;
    int rc;
    if (parted) { /* this part's files and ranges of files */
        size_t np;
        sl_slice *pc = sl_cli_slices(cli, &part, files, (size_t)(argc - optind), sl_docreader_cut, &ro, &np);
        rc = sl_tokenize_slices(t, pc, np, &ro, &po, cli->output, &st, &err);
        sl_slices_free(pc, np);
    } else {
        rc = sl_tokenize_text(t, files, argc - optind, &ro, &po, cli->output, &st, &err);
    }
    sl_tokenizer_free(t);
    if (rc)
        return sl_cli_doc_fail(cli, &err);
    if (st.invalid_utf8)
        sl_cli_warn(cli, "%llu invalid UTF-8 sequence(s) %s", (unsigned long long)st.invalid_utf8,
                    ro.invalid_utf8 == SL_UTF8_SKIP ? "dropped" : "replaced by U+FFFD");
    if (st.skipped_lines)
        sl_cli_warn(cli, "%llu malformed line(s) skipped", (unsigned long long)st.skipped_lines);
    if (sp.docs) {
        char line[32] = "";
        if (sp.line)
            snprintf(line, sizeof line, ":%llu", (unsigned long long)sp.line);
        sl_cli_warn(cli,
                    "%llu document(s) contain a special token's text, encoded as ordinary text (--special plain, "
                    "the default; first: '%s' in %s%s at byte %zu); --special parse gives the token's id there, as "
                    "Hugging Face tokenizers, Megatron-LM and datatrove do",
                    (unsigned long long)sp.docs, sp.token, sp.source, line, sp.at);
    }
    return 0;
}

/* `tokenize text` is the name; `tokenize bpe`, the older one, stays for the
 * pipelines that use it. Both run the same command. */
const sl_command sl_cmd_tokenize_text = {
    .name = "tokenize text",
    .summary = "text with a tokenizer file (tokenizer.json, SentencePiece .model, tiktoken, tekken)",
    .usage = "sluice tokenize text --tokenizer PATH [options] [FILES...]   (alias: tokenize bpe)",
    .help = help,
    .run = run,
};

const sl_command sl_cmd_tokenize_bpe = {
    .name = "tokenize bpe",
    .summary = "the same as 'tokenize text' (its older name)",
    .usage = "sluice tokenize bpe --tokenizer PATH [options] [FILES...]   (= tokenize text)",
    .help = help,
    .run = run,
};
