/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_export = {
    .name = "export",
    .summary = "export to other formats (megatron)",
    .usage = "sluice export megatron SRC -o PREFIX",
    .help = "",
    .run = sl_cli_not_implemented,
};
