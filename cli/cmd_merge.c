/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_merge = {
    .name = "merge",
    .summary = "concatenate shard directories or Megatron datasets",
    .usage = "sluice merge SRC... -o DST",
    .help = "",
    .run = sl_cli_not_implemented,
};
