/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_stats = {
    .name = "stats",
    .summary = "rows, documents, tokens and length histograms of a stream or shard directory",
    .usage = "sluice stats [FILE|DIR]",
    .help = "",
    .run = sl_cli_not_implemented,
};
