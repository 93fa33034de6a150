/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_tokenize_audio = {
    .name = "tokenize audio",
    .summary = "audio files to 8-bit mu-law (SaShiMi) or linear codes",
    .usage = "sluice tokenize audio [options] [FILES...]",
    .help = "",
    .run = sl_cli_not_implemented,
};
