/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_detokenize_text = {
    .name = "detokenize text",
    .summary = "token stream back to text with a tokenizer",
    .usage = "sluice detokenize text --tokenizer PATH [FILE]",
    .help = "",
    .run = sl_cli_not_implemented,
};
