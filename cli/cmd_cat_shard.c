/* Placeholder: `sluice cat DIR` for shard directories lands with the shard issue. */
#include <stdio.h>

#include "cli/commands.h"

int sl_cat_shard_dir(sl_cli *cli, const char *dir, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "sluice: %s: %s: shard directories are not supported yet\n", cli->cmd->name, dir);
    return 2;
}
