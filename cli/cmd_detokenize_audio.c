/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_detokenize_audio = {
    .name = "detokenize audio",
    .summary = "audio token stream back to WAV files",
    .usage = "sluice detokenize audio [options] [FILE] -o DIR",
    .help = "",
    .run = sl_cli_not_implemented,
};
