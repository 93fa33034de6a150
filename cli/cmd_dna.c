/* `sluice dna species`: options for dna/species.h, the HyenaDNA / Mamba
 * species-classification set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "dna/species.h"
#include "stream/io.h"

static const char species_help[] = "Samples windows of L bases from genomes, one argument per species: a genome\n"
                                   "file (FASTA, plain or compressed, or .2bit; every record is a chromosome), or\n"
                                   "a directory with one file per chromosome as in HyenaDNA's species_dir/<species>/\n"
                                   "chr<N>.fna[.gz] layout (the file name without extensions names the\n"
                                   "chromosome; its first record is used; an uncompressed copy wins over a .gz).\n"
                                   "The species' label is its position on the command line, its name the file or\n"
                                   "directory name without extensions unless --names. For each sample: a species\n"
                                   "uniformly, then one of its chromosomes of the chosen split uniformly (or\n"
                                   "weighted by length), then a start uniformly in [0, length - L]. As in\n"
                                   "HyenaDNA's species_dataset.py bases are upper-cased and a chromosome shorter\n"
                                   "than L is left-padded with N. Each sample is a document with id\n"
                                   "SPECIES:CHROM:START-END and metadata {\"label\":INDEX,\"species\":NAME,\n"
                                   "\"chrom\":..,\"start\":..,\"end\":..}; the header's extra object lists the\n"
                                   "species. The same inputs and --seed give the same stream, for any -@.\n"
                                   "Chromosome splits are HyenaDNA's: a chromosome belongs to a split when its\n"
                                   "name is an entry of the list or \"chr\" + an entry; train is the rest.\n\n"
                                   "options:\n"
                                   "  --window L          bases per sample (default 1024)\n"
                                   "  --samples N         number of samples (default 1024)\n"
                                   "  --split NAME        train|valid|test (default train)\n"
                                   "  --valid-chroms LIST comma-separated (default 1,3,12,13)\n"
                                   "  --test-chroms LIST  comma-separated (default 5,7,9,10,11)\n"
                                   "  --names LIST        comma-separated species names, one per argument\n"
                                   "  --weights uniform|length   how a chromosome is picked (default uniform)\n"
                                   "  --seed N            random seed (default 0)\n"
                                   "  --add-eos           append [SEP] (HyenaDNA adds it, then drops the last id)\n"
                                   "  --n token|pad|drop  N bases (default token), as in 'sluice tokenize dna'\n"
                                   "  --case upper|keep   soft-masked bases (default upper)\n"
                                   "  --hyena-tail-quirk  reproduce HyenaDNA's fasta[start:min(end, length - L)]:\n"
                                   "                      a window starting in the last 2L bases is cut short and\n"
                                   "                      left-padded with N (off by default: every window has L\n"
                                   "                      bases of sequence)\n"
                                   "  --part R/N|slurm    write only samples [floor(S*R/N), floor(S*(R+1)/N)) of the\n"
                                   "                      S samples (the draws of the others are made, not their\n"
                                   "                      sequences): parts 0..N-1 read as one stream give exactly\n"
                                   "                      the output of one run (docs/scale-out.md)\n"
                                   "  --skip-existing     do nothing when the output exists and verifies\n\n"
                                   "Random access: .2bit directly, uncompressed FASTA through its .fai (built when\n"
                                   "absent); a compressed FASTA is loaded into memory (decompress big genomes).\n\n"
                                   "example:\n"
                                   "  sluice dna species --window 32768 --samples 65536 --split train --seed 1 \\\n"
                                   "      species/human species/chimpanzee gorilla.2bit -o species_train.tok\n";

enum {
    O_WINDOW = SL_OPT_FIRST_FREE,
    O_SAMPLES,
    O_SPLIT,
    O_VALID,
    O_TEST,
    O_NAMES,
    O_WEIGHTS,
    O_SEED,
    O_EOS,
    O_N,
    O_CASE,
    O_QUIRK,
};
static const struct option lopts[] = {
    {"window", required_argument, 0, O_WINDOW},
    {"samples", required_argument, 0, O_SAMPLES},
    {"split", required_argument, 0, O_SPLIT},
    {"valid-chroms", required_argument, 0, O_VALID},
    {"test-chroms", required_argument, 0, O_TEST},
    {"names", required_argument, 0, O_NAMES},
    {"weights", required_argument, 0, O_WEIGHTS},
    {"seed", required_argument, 0, O_SEED},
    {"add-eos", no_argument, 0, O_EOS},
    {"n", required_argument, 0, O_N},
    {"case", required_argument, 0, O_CASE},
    {"hyena-tail-quirk", no_argument, 0, O_QUIRK},
    SL_PART_LONG_OPT,
    SL_SKIP_LONG_OPT,
    SL_CLI_COMMON_LONG,
    {0, 0, 0, 0},
};

static int run_species(sl_cli *cli, int argc, char **argv)
{
    static const char *const weights[] = {"uniform", "length", NULL};
    static const char *const ns[] = {"token", "pad", "drop", NULL};
    static const char *const cases[] = {"upper", "keep", NULL};
    static const char *const splits[] = {"train", "valid", "test", NULL};
    dna_species_opts o;
    dna_species_opts_default(&o);
    const char *names = NULL;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, lopts, NULL)) != -1) {
        if (sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_WINDOW: o.window = (uint64_t)sl_cli_int(cli, "--window", optarg, 1, 1LL << 32); break;
        case O_SAMPLES: o.samples = (uint64_t)sl_cli_int(cli, "--samples", optarg, 0, 1LL << 40); break;
        case O_SPLIT: o.split = sl_cli_choice(cli, "--split", optarg, splits); break;
        case O_VALID: o.valid_chroms = optarg; break;
        case O_TEST: o.test_chroms = optarg; break;
        case O_NAMES: names = optarg; break;
        case O_WEIGHTS: o.by_length = sl_cli_choice(cli, "--weights", optarg, weights); break;
        case O_SEED: o.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_EOS: o.tok.add_eos = 1; break;
        case O_N: o.tok.n_mode = sl_cli_choice(cli, "--n", optarg, ns); break;
        case O_CASE: o.tok.case_mode = sl_cli_choice(cli, "--case", optarg, cases); break;
        case O_QUIRK: o.tail_quirk = 1; break;
        default: sl_cli_common(cli, c, optarg ? optarg : argv[optind - 1]);
        }
    }
    int nsp = argc - optind, nn = 0;
    if (nsp < 1)
        sl_cli_usage_error(cli, "give one genome file per species");
    char **nl = NULL;
    if (names && (nn = (int)sl_list_split(names, 0, &nl)) != nsp)
        sl_cli_usage_error(cli, "--names lists %d names for %d files", nn, nsp);
    o.names = (const char *const *)nl;
    o.quiet = cli->quiet;
    o.progress = cli->progress;
    sl_part part;
    if (sl_cli_part(cli, &so, &part))
        sl_part_range(&part, o.samples, &o.first, &o.end);
    if (sl_cli_skip_existing(cli, &so, SL_VERIFY_TOKENS)) {
        for (int i = 0; i < nn; i++)
            free(nl[i]);
        free(nl);
        return 0;
    }
    sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);
    sl_err err = {{0}};
    sl_output *out = sl_output_open(cli->output, &err);
    int rc = !out || dna_species_run(&o, (const char *const *)argv + optind, (size_t)nsp, out, &err) < 0;
    sl_list_free(nl, (size_t)nn);
    static const sl_cli_field fields[] = {
        {"valid_chroms", "--valid-chroms"}, {"test_chroms", "--test-chroms"}, {NULL, NULL}};
    sl_cli_map_fields(&err, fields);
    return sl_cli_finish(cli, out, NULL, rc, &err);
}

static const sl_command sl_cmd_dna_species = {
    .name = "dna species",
    .summary = "species-classification windows (HyenaDNA/Mamba) from per-species genomes",
    .usage = "sluice dna species [options] GENOME...",
    .help = species_help,
    .run = run_species,
};

static const sl_command *const subs[] = {&sl_cmd_dna_species, NULL};

const sl_command sl_cmd_dna = {
    .name = "dna",
    .summary = "DNA datasets (species classification)",
    .usage = "sluice dna species [options] GENOME...",
    .help = "See 'sluice help dna species'.\n",
    .subs = subs,
};
