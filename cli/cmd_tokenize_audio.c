/* `sluice tokenize audio`: options for audio/tokenize.h (audio files to a
 * token stream of quantized samples). */
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/clips.h"
#include "audio/decode.h"
#include "audio/quantize.h"
#include "audio/tokenize.h"
#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "stream/io.h"

static const char HELP[] =
    "Decodes each input (WAV PCM 8/16/24/32-bit, float, WAVE_FORMAT_EXTENSIBLE, G.711 WAV, FLAC,\n"
    "Ogg Vorbis, and whatever else libsndfile reads), averages the channels to mono, resamples to\n"
    "--rate with libsoxr, cuts clips and quantizes each clip to codes 0..2^bits-1. One document per\n"
    "clip, id '<file>@<first sample>', metadata {file, offset, samples, sample_rate[, split]}.\n"
    "A directory argument means every audio file below it (natural sort). No FILES: standard input.\n"
    "\n"
    "options:\n"
    "  --quantizer Q       mulaw-s4 (default): SaShiMi (state-spaces/s4) mu-law: each clip min-max\n"
    "                      scaled to [-1,1], mu=2^bits-1, floor(v*(2^bits-0.01)+0.005);\n"
    "                      mulaw: WaveNet/torchaudio mu-law on the raw amplitude;\n"
    "                      linear: SaShiMi linear (clip min-max scaled to [0,1]);\n"
    "                      g711: ITU-T G.711 mu-law bytes (not amplitude-ordered; interop only)\n"
    "  --bits B            bits per code, vocabulary 2^B (default 8; 2..16; g711: 8 only)\n"
    "  --rate HZ           output sample rate (default 16000); files at another rate are\n"
    "                      resampled with libsoxr\n"
    "  --resample-quality Q  libsoxr recipe: quick|low|medium|high|very-high (default high)\n"
    "  --clip-len N        clip length in samples at --rate (default 0: one clip per file);\n"
    "                      YouTubeMix in SaShiMi: 131072\n"
    "  --overlap M         samples shared by consecutive clips (default 0; < --clip-len)\n"
    "  --drop-last         drop each file's final clip when it is shorter than --clip-len\n"
    "                      (SaShiMi's drop_last; default keeps it)\n"
    "  --pad-to N          pad every clip to exactly N tokens with --pad-id (SC09: 16000); implies\n"
    "                      --clip-len N when --clip-len is not given\n"
    "  --pad-id K          padding token (default 2^(bits-1) = 128, SaShiMi's q_zero); recorded as\n"
    "                      the stream's pad id\n"
    "  --split A:B:C       assign whole files to train/valid/test with these weights (YouTubeMix:\n"
    "                      88:6:6); each document's metadata gets \"split\"\n"
    "  --split-by M        index (default): by position among all input files in natural order,\n"
    "                      train = [0, int(n*A/(A+B+C))), valid next, test the rest (SaShiMi);\n"
    "                      hash: by XXH64 of the file path with --seed\n"
    "  --seed S            seed for --split-by hash (default 0)\n"
    "  --valid-list F, --test-list F\n"
    "                      split by lists instead, as SC09 (Speech Commands) does: F has one path\n"
    "                      per line ('zero/0a2b400e_nohash_0.wav'), matched against the end of each\n"
    "                      input path; listed files are valid/test, all others train\n"
    "  --part P            keep only the files of one part: train|valid|test (needs a split)\n"
    "  --part R/N|slurm    (also, told apart by its form) tokenize only part R of N of the\n"
    "                      files (whole files by size; splits are still drawn over all inputs):\n"
    "                      parts 0..N-1 read as one stream give exactly the output of one run\n"
    "                      (docs/scale-out.md); both may be given: --part train --part 3/8\n"
    "  --skip-existing     do nothing when the output exists and verifies\n"
    "  --skip-bad          warn about undecodable files and go on (default: stop with an error)\n"
    "\n"
    "The stream header says modality audio, vocab 2^bits and, in 'extra', sample_rate, quantizer,\n"
    "bits and start_token (2^(bits-1): SaShiMi's autoregressive start code; not added to the data).\n"
    "Each document's source byte count is its sample count times the code size in bytes, so\n"
    "bits per byte from 'sluice score' is SaShiMi's bits per sample.\n"
    "\n"
    "examples:\n"
    "  sluice tokenize audio --clip-len 131072 --drop-last --split 88:6:6 --part train \\\n"
    "      youtube_mix/ -o ytmix-train.tok\n"
    "  sluice tokenize audio --pad-to 16000 sc09/ -o sc09.tok\n";

enum {
    O_QUANT = SL_OPT_FIRST_FREE,
    O_BITS,
    O_RATE,
    O_RQ,
    O_CLIP,
    O_OVERLAP,
    O_DROP,
    O_PADTO,
    O_PADID,
    O_SPLIT,
    O_SPLITBY,
    O_SEED,
    O_PART,
    O_SKIP,
    O_VLIST,
    O_TLIST,
};

static void warn(void *ctx, const char *msg)
{
    sl_cli_warn(ctx, "%s", msg);
}

static const struct option longs[] = {
    {"quantizer", required_argument, 0, O_QUANT},
    {"bits", required_argument, 0, O_BITS},
    {"rate", required_argument, 0, O_RATE},
    {"resample-quality", required_argument, 0, O_RQ},
    {"clip-len", required_argument, 0, O_CLIP},
    {"overlap", required_argument, 0, O_OVERLAP},
    {"drop-last", no_argument, 0, O_DROP},
    {"pad-to", required_argument, 0, O_PADTO},
    {"pad-id", required_argument, 0, O_PADID},
    {"split", required_argument, 0, O_SPLIT},
    {"split-by", required_argument, 0, O_SPLITBY},
    {"seed", required_argument, 0, O_SEED},
    {"part", required_argument, 0, O_PART},
    {"skip-bad", no_argument, 0, O_SKIP},
    {"valid-list", required_argument, 0, O_VLIST},
    {"test-list", required_argument, 0, O_TLIST},
    SL_SKIP_LONG_OPT,
    SL_CLI_COMMON_LONG,
    {0, 0, 0, 0},
};

static int run(sl_cli *cli, int argc, char **argv)
{
    static const char *const rq_names[] = {"quick", "low", "medium", "high", "very-high", NULL};
    static const unsigned long rq_vals[] = {SOXR_QQ, SOXR_LQ, SOXR_MQ, SOXR_HQ, SOXR_VHQ};
    static const char *const split_by[] = {"index", "hash", NULL};
    sl_audio_tok_opts o;
    sl_audio_tok_opts_default(&o);
    sl_scale_opts so = {0};
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, longs, NULL)) != -1) {
        if (sl_cli_scale_option(&so, opt, optarg))
            continue;
        switch (opt) {
        case O_QUANT: o.quant = sl_cli_choice(cli, "--quantizer", optarg, sl_aq_names); break;
        case O_BITS: o.bits = (int)sl_cli_int(cli, "--bits", optarg, SL_AQ_MIN_BITS, SL_AQ_MAX_BITS); break;
        case O_RATE: o.rate = (int)sl_cli_int(cli, "--rate", optarg, SL_AUDIO_MIN_RATE, SL_AUDIO_MAX_RATE); break;
        case O_RQ: o.quality = (int)rq_vals[sl_cli_choice(cli, "--resample-quality", optarg, rq_names)]; break;
        case O_CLIP: o.clip_len = (size_t)sl_cli_int(cli, "--clip-len", optarg, 0, 1LL << 31); break;
        case O_OVERLAP: o.overlap = (size_t)sl_cli_int(cli, "--overlap", optarg, 0, 1LL << 31); break;
        case O_DROP: o.drop_last = 1; break;
        case O_PADTO: o.pad_to = (size_t)sl_cli_int(cli, "--pad-to", optarg, 1, 1LL << 31); break;
        case O_PADID: o.pad_id = sl_cli_int(cli, "--pad-id", optarg, 0, (1LL << SL_AQ_MAX_BITS) - 1); break;
        case O_SPLIT:
            if (sl_audio_split_parse(optarg, o.w) < 0)
                sl_cli_usage_error(cli, "--split: '%s' is not A:B:C with non-negative weights", optarg);
            o.split = 1;
            break;
        case O_SPLITBY: o.split_by_hash = sl_cli_choice(cli, "--split-by", optarg, split_by); break;
        case O_SEED: o.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_PART: /* a split (a word) or a part of the work (R/N, slurm) */
            if (strchr(optarg, '/') || !strcmp(optarg, "slurm"))
                so.part = optarg;
            else
                o.part = sl_cli_choice(cli, "--part", optarg, sl_audio_split_names);
            break;
        case O_SKIP: o.skip_bad = 1; break;
        case O_VLIST: o.valid_list = optarg; break;
        case O_TLIST: o.test_list = optarg; break;
        default: sl_cli_common(cli, opt, optarg);
        }
    }
    if (sl_aq_bits_ok(o.quant, o.bits))
        sl_cli_usage_error(cli, "--bits %d is not valid for --quantizer %s", o.bits, sl_aq_name(o.quant));
    size_t clip = o.pad_to && !o.clip_len ? o.pad_to : o.clip_len;
    if (o.pad_to && clip > o.pad_to)
        sl_cli_usage_error(cli, "--clip-len %zu is longer than --pad-to %zu", clip, o.pad_to);
    if (o.overlap && o.overlap >= clip)
        sl_cli_usage_error(cli, "--overlap must be smaller than --clip-len");
    int by_list = o.valid_list || o.test_list;
    if (by_list && o.split)
        sl_cli_usage_error(cli, "--split and --valid-list/--test-list exclude each other");
    if (o.part >= 0 && !o.split && !by_list)
        sl_cli_usage_error(cli, "--part needs --split or --valid-list/--test-list");
    uint32_t pad_id = o.pad_id >= 0 ? (uint32_t)o.pad_id : sl_aq_zero(o.bits);
    if (pad_id >= (1u << o.bits))
        sl_cli_usage_error(cli, "--pad-id %u is outside the vocabulary 0..%u", pad_id, (1u << o.bits) - 1);
    o.threads = sl_cli_threads(cli);
    o.progress = cli->progress;
    o.warn = warn;
    o.warn_ctx = cli;

    sl_cli_part(cli, &so, &o.scale); /* o.scale stays {0, 0} without --part R/N */
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_TOKENS))
        return 0;
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    char **paths = NULL;
    size_t np = 0;
    if (sl_audio_list_inputs((const char *const *)argv + optind, (size_t)(argc - optind), &paths, &np, &err) < 0)
        return sl_cli_fail(cli, &err);
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = !out || sl_audio_tokenize_run(&o, paths, np, out, &err) < 0;
    sl_audio_paths_free(paths, np);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

const sl_command sl_cmd_tokenize_audio = {
    .name = "tokenize audio",
    .summary = "audio files to 8-bit mu-law (SaShiMi) or linear codes",
    .usage = "sluice tokenize audio [options] [FILES|DIRS...]",
    .help = HELP,
    .run = run,
};
