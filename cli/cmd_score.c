/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_score = {
    .name = "score",
    .summary = "score documents with a Mamba language model (nll, ppl, bpb)",
    .usage = "sluice score -m MODEL_DIR [options] [FILE|DIR]",
    .help = "",
    .run = sl_cli_not_implemented,
};
