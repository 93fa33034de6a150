/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_dna = {
    .name = "dna",
    .summary = "DNA datasets (species classification)",
    .usage = "sluice dna species [options] FASTA...",
    .help = "",
    .run = sl_cli_not_implemented,
};
