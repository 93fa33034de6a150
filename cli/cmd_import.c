/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_import = {
    .name = "import",
    .summary = "import from other formats (megatron)",
    .usage = "sluice import megatron PREFIX",
    .help = "",
    .run = sl_cli_not_implemented,
};
