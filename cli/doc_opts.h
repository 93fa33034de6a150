/* The document-reading options shared by `sluice read`, `tokenize bpe` and
 * `tokenize char` (--field, --lines, --invalid, --on-error, --max-doc-bytes,
 * --format, --mem-budget): one option table and one parser for stream/docreader.h. */
#ifndef SLUICE_CLI_DOC_OPTS_H
#define SLUICE_CLI_DOC_OPTS_H

#include "cli/cli.h"
#include "stream/docreader.h"
#include "base/json.h"

enum {
    SL_DO_INVALID = SL_OPT_FIRST_FREE,
    SL_DO_ON_ERROR,
    SL_DO_MAXB,
    SL_DO_FORMAT,
    SL_DO_MEM,
    SL_DO_END /* a command's own options start here */
};

#define SL_DOC_SHORT "f:l"
#define SL_DOC_LONG_OPTS                                                                                               \
    {"field", required_argument, 0, 'f'}, {"lines", no_argument, 0, 'l'},                                              \
        {"invalid", required_argument, 0, SL_DO_INVALID}, {"on-error", required_argument, 0, SL_DO_ON_ERROR},          \
        {"max-doc-bytes", required_argument, 0, SL_DO_MAXB}, {"format", required_argument, 0, SL_DO_FORMAT},           \
    {                                                                                                                  \
        "mem-budget", required_argument, 0, SL_DO_MEM                                                                  \
    }

#define SL_DOCREADER_OPTS_INIT                                                                                         \
    {                                                                                                                  \
        .field = "text", .invalid_utf8 = SL_UTF8_REPLACE, .max_doc_bytes = 64u << 20                                   \
    }

/* The document-reading and tokenizing fields of library messages as flags. */
extern const sl_cli_field sl_cli_doc_fields[];

/* sl_cli_fail with the fields above said as flags. */
int sl_cli_doc_fail(const sl_cli *cli, sl_err *err);

/* Handles one document-reading option (value in optarg): 1 when it was one. */
int sl_cli_doc_option(const sl_cli *cli, int opt, sl_docreader_opts *o);

#endif
