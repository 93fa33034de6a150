/* The document-reading options shared by read, tokenize bpe and tokenize char. */
#include "cli/doc_opts.h"

const sl_cli_field sl_cli_doc_fields[] = {
    {"field", "--field"},           {"lines", "--lines"},     {"invalid_utf8", "--invalid"},
    {"on_error", "--on-error"},     {"format", "--format"},   {"max_doc_bytes", "--max-doc-bytes"},
    {"mem_budget", "--mem-budget"}, {"special", "--special"}, {NULL, NULL},
};

int sl_cli_doc_fail(const sl_cli *cli, sl_err *err)
{
    sl_cli_map_fields(err, sl_cli_doc_fields);
    return sl_cli_fail(cli, err);
}

int sl_cli_doc_option(const sl_cli *cli, int opt, sl_docreader_opts *o)
{
    /* the words are listed in the order of SL_UTF8_* and SL_DOCS_* */
    static const char *const invalid_modes[] = {"replace", "skip", "error", NULL};
    static const char *const error_modes[] = {"fail", "skip", NULL};
    static const char *const formats[] = {"auto", "jsonl", "text", NULL};
    switch (opt) {
    case 'f':
        if (!optarg[0])
            sl_cli_usage_error(cli, "--field needs a non-empty name");
        o->field = optarg;
        return 1;
    case 'l': o->lines = 1; return 1;
    case SL_DO_INVALID: o->invalid_utf8 = sl_cli_choice(cli, "--invalid", optarg, invalid_modes); return 1;
    case SL_DO_ON_ERROR: o->skip_bad_json = sl_cli_choice(cli, "--on-error", optarg, error_modes); return 1;
    case SL_DO_MAXB: o->max_doc_bytes = (size_t)sl_cli_int(cli, "--max-doc-bytes", optarg, 1, 1LL << 40); return 1;
    case SL_DO_FORMAT: o->format = sl_cli_choice(cli, "--format", optarg, formats); return 1;
    case SL_DO_MEM: o->mem_budget = (size_t)sl_cli_int(cli, "--mem-budget", optarg, 1 << 20, 1LL << 40); return 1;
    default: return 0;
    }
}
