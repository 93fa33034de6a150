/* `sluice detokenize`: dispatches to `detokenize text` (the default) and `detokenize audio`. */
#include "cli/commands.h"

static const sl_command *const subs[] = {&sl_cmd_detokenize_text, &sl_cmd_detokenize_audio, NULL};

static int run_default(sl_cli *cli, int argc, char **argv)
{
    cli->cmd = &sl_cmd_detokenize_text;
    return sl_cmd_detokenize_text.run(cli, argc, argv);
}

const sl_command sl_cmd_detokenize = {
    .name = "detokenize",
    .summary = "token stream back to text (default) or audio",
    .usage = "sluice detokenize [text|audio] [options] [FILE]",
    .help = "Without a subcommand, 'detokenize' means 'detokenize text'.\n",
    .run = run_default,
    .subs = subs,
};
