/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_filter = {
    .name = "filter",
    .summary = "keep documents by perplexity thresholds, percentiles or CCNet buckets",
    .usage = "sluice filter [options] [FILE]",
    .help = "",
    .run = sl_cli_not_implemented,
};
