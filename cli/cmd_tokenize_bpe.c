/* Placeholder until the subcommand lands (see its issue). */
#include "cli/commands.h"

const sl_command sl_cmd_tokenize_bpe = {
    .name = "tokenize bpe",
    .summary = "byte-level BPE (Hugging Face tokenizer.json, GPT-2 vocab.json+merges.txt)",
    .usage = "sluice tokenize bpe --tokenizer PATH [options] [FILES...]",
    .help = "",
    .run = sl_cli_not_implemented,
};
