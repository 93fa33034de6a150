/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_tokenize_char = {
    .name = "tokenize char",
    .summary = "UTF-8 byte or Unicode code point tokens",
    .usage = "sluice tokenize char [options] [FILES...]",
    .help = "",
    .run = sl_cli_not_implemented,
};
