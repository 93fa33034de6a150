/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_pack = {
    .name = "pack",
    .summary = "pack documents into fixed-length rows with boundary markers",
    .usage = "sluice pack --seq-len L [options] [FILE]",
    .help = "",
    .run = sl_cli_not_implemented,
};
