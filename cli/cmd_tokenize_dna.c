/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_tokenize_dna = {
    .name = "tokenize dna",
    .summary = "FASTA/FASTQ/2bit to HyenaDNA character tokens",
    .usage = "sluice tokenize dna [options] [FILES...]",
    .help = "",
    .run = sl_cli_not_implemented,
};
