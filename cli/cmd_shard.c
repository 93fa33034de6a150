/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_shard = {
    .name = "shard",
    .summary = "write a shard directory (manifest, token files, boundary index), with warmup",
    .usage = "sluice shard [options] [FILE] -o DIR",
    .help = "",
    .run = sl_cli_not_implemented,
};
