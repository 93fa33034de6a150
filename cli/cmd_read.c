/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_read = {
    .name = "read",
    .summary = "decode corpora (plain, zstd, gzip, xz, bzip2, tar, zip) into JSON Lines documents",
    .usage = "sluice read [options] [FILES...]",
    .help = "",
    .run = sl_cli_not_implemented,
};
