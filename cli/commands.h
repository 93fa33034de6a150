/* Every subcommand, one per cli/cmd_*.c file. */
#ifndef SLUICE_CLI_COMMANDS_H
#define SLUICE_CLI_COMMANDS_H

#include "cli/cli.h"

extern const sl_command sl_cmd_read;
extern const sl_command sl_cmd_tokenize;
extern const sl_command sl_cmd_tokenize_ids;
extern const sl_command sl_cmd_tokenize_bpe;
extern const sl_command sl_cmd_tokenize_text;
extern const sl_command sl_cmd_tokenize_char;
extern const sl_command sl_cmd_tokenize_dna;
extern const sl_command sl_cmd_tokenize_audio;
extern const sl_command sl_cmd_detokenize;
extern const sl_command sl_cmd_detokenize_text;
extern const sl_command sl_cmd_detokenize_audio;
extern const sl_command sl_cmd_cat;
extern const sl_command sl_cmd_head;
extern const sl_command sl_cmd_stats;
extern const sl_command sl_cmd_pack;
extern const sl_command sl_cmd_shard;
extern const sl_command sl_cmd_mix;
extern const sl_command sl_cmd_export;
extern const sl_command sl_cmd_import;
extern const sl_command sl_cmd_merge;
extern const sl_command sl_cmd_score;
extern const sl_command sl_cmd_filter;
extern const sl_command sl_cmd_classify;
extern const sl_command sl_cmd_dna;
extern const sl_command sl_cmd_dedup;
extern const sl_command sl_cmd_dedup_exact;
extern const sl_command sl_cmd_dedup_lines;
extern const sl_command sl_cmd_dedup_minhash;

#endif
