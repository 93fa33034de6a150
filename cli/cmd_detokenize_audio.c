/* `sluice detokenize audio`: an audio token stream back to WAV files, for listening. */
#include <string.h>

#include "audio/detokenize.h"
#include "audio/quantize.h"
#include "cli/commands.h"

static const char HELP[] =
    "Reads a token stream written by 'sluice tokenize audio' and writes one WAV file per document\n"
    "into the directory given with -o (created if missing), named '<index>-<id>.wav' with the id's\n"
    "audio extension dropped ('clip.flac@16000' -> '000002-clip@16000.wav') and its\n"
    "characters outside [A-Za-z0-9._@-] replaced by '_'. Each file is written atomically.\n"
    "The quantizer, bits and sample rate come from the stream header; the options below supply or\n"
    "override them. Codes are decoded as the quantizer's reference decoder does (mulaw-s4: SaShiMi's\n"
    "mu_law_decode, which does not undo the per-clip min-max scaling; g711: the G.711 table).\n"
    "\n"
    "options:\n"
    "  --quantizer Q   mulaw-s4|mulaw|linear|g711 (default: from the header)\n"
    "  --bits B        bits per code (default: from the header)\n"
    "  --rate HZ       sample rate written into the WAV files (default: from the header)\n"
    "  --float         write 32-bit float WAV (default: 16-bit PCM)\n"
    "  --keep-pad      keep padding tokens (default: cut each document to the 'samples' count in\n"
    "                  its metadata, which drops --pad-to padding)\n"
    "\n"
    "example:\n"
    "  sluice tokenize audio --pad-to 16000 sc09/ | sluice detokenize audio -o listen/\n";

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_QUANT = SL_OPT_FIRST_FREE, O_BITS, O_RATE, O_FLOAT, O_KEEPPAD };
    static const struct option longs[] = {
        {"quantizer", required_argument, 0, O_QUANT},
        {"bits", required_argument, 0, O_BITS},
        {"rate", required_argument, 0, O_RATE},
        {"float", no_argument, 0, O_FLOAT},
        {"keep-pad", no_argument, 0, O_KEEPPAD},
        SL_CLI_COMMON_LONG,
        {0, 0, 0, 0},
    };
    static const sl_cli_field fields[] = {
        {"quantizer", "--quantizer"}, {"bits", "--bits"}, {"rate", "--rate"}, {NULL, NULL}};
    sl_audio_detok_opts o = SL_AUDIO_DETOK_OPTS_INIT;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, longs, NULL)) != -1) {
        switch (opt) {
        case O_QUANT: o.quantizer = sl_cli_choice(cli, "--quantizer", optarg, sl_aq_names); break;
        case O_BITS: o.bits = (int)sl_cli_int(cli, "--bits", optarg, SL_AQ_MIN_BITS, SL_AQ_MAX_BITS); break;
        case O_RATE: o.rate = (int)sl_cli_int(cli, "--rate", optarg, 1, 1000000000); break;
        case O_FLOAT: o.float32 = 1; break;
        case O_KEEPPAD: o.keep_pad = 1; break;
        default: sl_cli_common(cli, opt, optarg);
        }
    }
    if (argc - optind > 1)
        sl_cli_usage_error(cli, "one input stream at most");
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs an output directory: -o DIR");
    sl_cli_check_output(cli, cli->output, SL_OUT_INTO, 0);
    o.progress = "detokenize audio";
    o.progress_mode = cli->progress;
    sl_err err = {{0}};
    if (sl_audio_detok_run(&o, optind < argc ? argv[optind] : "-", cli->output, NULL, &err)) {
        sl_cli_map_fields(&err, fields);
        return sl_cli_fail(cli, &err);
    }
    return 0;
}

const sl_command sl_cmd_detokenize_audio = {
    .name = "detokenize audio",
    .summary = "audio token stream back to WAV files",
    .usage = "sluice detokenize audio [options] [FILE] -o DIR",
    .help = HELP,
    .run = run,
};
