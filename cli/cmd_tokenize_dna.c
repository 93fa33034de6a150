/* `sluice tokenize dna`: FASTA/FASTQ/2bit records (or windows, or BED
 * intervals) to a token stream with HyenaDNA's character vocabulary or
 * DNABERT k-mers. The work is in dna/; this file wires options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "dna/bed.h"
#include "dna/tokenize.h"
#include "dna/window.h"
#include "stream/io.h"

static const char help[] = "Reads DNA records from FASTA or FASTQ (plain, gzip, BGZF, zstd, xz, bzip2; by\n"
                           "content) and UCSC .2bit files, and writes one token-stream document per\n"
                           "record (id = record name, metadata \"desc\" = the header's description), or\n"
                           "per window or BED interval when asked.\n\n"
                           "Vocabulary (default, HyenaDNA's CharacterTokenizer): [CLS]=0 [SEP]=1 [BOS]=2\n"
                           "[MASK]=3 [PAD]=4 [RESERVED]=5 [UNK]=6 A=7 C=8 G=9 T=10 N=11 (vocab 12); any\n"
                           "other character (IUPAC codes, '.', '-') is [UNK]. The header's extra object\n"
                           "lists the vocabulary.\n\n"
                           "options:\n"
                           "  --case upper|keep|mask-as-unk\n"
                           "                      soft-masked (lower-case) bases: upper-case them (default,\n"
                           "                      as pyfaidx sequence_always_upper); keep: upper-case the\n"
                           "                      tokens and record the mask as metadata \"softmask\": runs\n"
                           "                      [start,end) of token positions; mask-as-unk: no folding,\n"
                           "                      lower case becomes [UNK] (HyenaDNA's hg38 loader exactly)\n"
                           "  --n token|pad|drop  N bases: keep as N=11 (default), replace by [PAD]=4\n"
                           "                      (HyenaDNA replace_N_token, Caduceus), or leave out\n"
                           "  --add-eos           append [SEP]=1 to every document\n"
                           "  --max-length L      exactly L tokens per document: truncate (keeping L-1 bases\n"
                           "                      plus [SEP] with --add-eos) and pad with [PAD]\n"
                           "  --padding-side left|right   where padding goes (default left, as HyenaDNA)\n"
                           "  --kmer K            DNABERT k-mer tokens (K = 1..12): [PAD]=0 [UNK]=1 [CLS]=2\n"
                           "                      [SEP]=3 [MASK]=4, k-mers from 5 in A<T<C<G order; a k-mer\n"
                           "                      with a non-ACGT base is [UNK] (--n pad: [PAD], drop: left\n"
                           "                      out); --add-eos appends [SEP]=3\n"
                           "  --kmer-stride S     step between k-mers (default 1, overlapping as DNABERT)\n"
                           "  --window L          cut each record into windows of L bases (document id\n"
                           "                      NAME:START-END, 0-based half-open; metadata chrom, start,\n"
                           "                      end)\n"
                           "  --stride S          window step (default L); without --window, the k-mer step\n"
                           "  --drop-last         with --window: no shorter final window\n"
                           "  --in-memory N       without --window, records up to N bases (default 64M; k, M,\n"
                           "                      G suffixes) are held in memory; a longer one is copied to\n"
                           "                      a temporary file in $TMPDIR and tokenized from there in\n"
                           "                      pieces (same output, bounded memory)\n"
                           "  --bed FILE          one document per BED interval (chrom start end [name]\n"
                           "                      [score] [strand]; 0-based half-open; strand '-' gives the\n"
                           "                      reverse complement), from the one genome FILE given;\n"
                           "                      with --window L each interval becomes L bases the\n"
                           "                      HyenaDNA way: a shorter one is extended evenly on both\n"
                           "                      sides, a longer one keeps its first L bases, both clipped\n"
                           "                      at the chromosome ends (so the result may be shorter;\n"
                           "                      --max-length L then pads it)\n"
                           "  --bed-windows hyena|mamba|caduceus\n"
                           "                      with --bed and --window L, how intervals become windows:\n"
                           "                      hyena (default) as above, one per interval; mamba (the\n"
                           "                      Mamba paper's hg38 setup): an interval of length >= L is\n"
                           "                      split into length/L non-overlapping pieces, a shorter one\n"
                           "                      gives two windows, one from its start and one to its end;\n"
                           "                      caduceus: each interval re-extended to start + 2^20 and\n"
                           "                      split into 2^20/L pieces (L must divide 2^20). mamba and\n"
                           "                      caduceus windows are moved inside the chromosome, keeping\n"
                           "                      L bases; metadata \"piece\" numbers them\n"
                           "  --split NAME        with --bed: keep the intervals of this split only\n"
                           "  --split-column N    the BED column holding the split (default 4, as in\n"
                           "                      HyenaDNA's sequences_human.bed)\n"
                           "  --split-file FILE   instead: a file of 'chrom split' lines\n"
                           "  --revcomp           also emit the reverse complement of every document (id\n"
                           "                      suffix /rc, metadata \"revcomp\":true)\n"
                           "  --revcomp-prob P    replace each document by its reverse complement with\n"
                           "                      probability P (HyenaDNA rc_aug uses 0.5), chosen from\n"
                           "                      --seed and the document's ordinal\n"
                           "  --seed N            seed for --revcomp-prob (default 0)\n"
                           "  --part R/N|slurm    tokenize only part R of N of the input (by size: whole\n"
                           "                      files; plain FASTA and 4-line FASTQ cut between records,\n"
                           "                      so one genome file is shared by all parts); parts\n"
                           "                      0..N-1 read as one stream give exactly the output of one\n"
                           "                      run; not with --bed or --revcomp-prob (docs/scale-out.md)\n"
                           "  --skip-existing     do nothing when the output exists and verifies\n"
                           "Reverse complement swaps A/T and C/G in both cases and leaves every other\n"
                           "character (N, IUPAC codes) unchanged, as HyenaDNA does.\n\n"
                           "Random access (--bed) reads .2bit directly, an uncompressed FASTA through its\n"
                           ".fai (built in memory when absent), and loads anything else into memory.\n"
                           "Memory: one batch of records (8M bases; up to two with -@ 2 or more: one is read\n"
                           "while the other is tokenized and written); 1 byte per token for characters, 4 for\n"
                           "k-mers; without --window about 2 bytes per base of the longest record (5 with\n"
                           "k-mers) up to --in-memory, then --in-memory bytes plus pieces of 4M bases (16 MB,\n"
                           "32 MB with k-mers) whatever the record length, and the record in a temporary file;\n"
                           "with --window one window plus a 1 MB read buffer, whatever the record length; the\n"
                           "genome for --bed on a compressed FASTA.\n\n"
                           "examples:\n"
                           "  sluice tokenize dna hg38.fa.gz -o hg38.tok\n"
                           "  sluice tokenize dna --bed human-sequences.bed --split train --window 32768 \\\n"
                           "      --max-length 32768 --add-eos --n pad hg38.ml.fa \\\n"
                           "    | sluice shard --seq-len 32768 --no-eos --warmup double:1024..32768 -o hg38/\n"
                           "  sluice tokenize dna --kmer 6 --window 512 reads.fq.gz\n";

enum {
    O_CASE = SL_OPT_FIRST_FREE,
    O_N,
    O_EOS,
    O_MAXLEN,
    O_PADSIDE,
    O_KMER,
    O_KSTRIDE,
    O_WINDOW,
    O_INMEM,
    O_STRIDE,
    O_DROPLAST,
    O_BED,
    O_SPLIT,
    O_SPLITCOL,
    O_SPLITFILE,
    O_RC,
    O_RCPROB,
    O_SEED,
    O_BEDWIN,
};
static const struct option lopts[] = {
    {"case", required_argument, 0, O_CASE},
    {"n", required_argument, 0, O_N},
    {"add-eos", no_argument, 0, O_EOS},
    {"max-length", required_argument, 0, O_MAXLEN},
    {"padding-side", required_argument, 0, O_PADSIDE},
    {"kmer", required_argument, 0, O_KMER},
    {"kmer-stride", required_argument, 0, O_KSTRIDE},
    {"window", required_argument, 0, O_WINDOW},
    {"in-memory", required_argument, 0, O_INMEM},
    {"stride", required_argument, 0, O_STRIDE},
    {"drop-last", no_argument, 0, O_DROPLAST},
    {"bed", required_argument, 0, O_BED},
    {"split", required_argument, 0, O_SPLIT},
    {"split-column", required_argument, 0, O_SPLITCOL},
    {"split-file", required_argument, 0, O_SPLITFILE},
    {"revcomp", no_argument, 0, O_RC},
    {"revcomp-prob", required_argument, 0, O_RCPROB},
    {"seed", required_argument, 0, O_SEED},
    {"bed-windows", required_argument, 0, O_BEDWIN},
    SL_PART_LONG_OPT,
    SL_SKIP_LONG_OPT,
    SL_CLI_COMMON_LONG,
    {0, 0, 0, 0},
};

/* Option combinations that make no sense: usage errors (exit 2). */
static void check_combinations(const sl_cli *cli, dna_tokenize_opts *o, uint64_t stride)
{
    /* --stride: the window step with --window, else the k-mer step (`--kmer K --stride S`). */
    if (o->stride_set && !o->window) {
        if (!o->em.tok.kmer)
            sl_cli_usage_error(cli, "--stride needs --window or --kmer");
        if (o->kstride_set)
            sl_cli_usage_error(cli, "give the k-mer step once (--stride or --kmer-stride)");
        if (stride > (1 << 20))
            sl_cli_usage_error(cli, "--stride: %llu is too large for a k-mer step", (unsigned long long)stride);
        o->em.tok.kmer_stride = (int)stride;
    }
    o->stride = o->stride_set && o->window ? stride : o->window;
    if (o->em.revcomp_extra && o->em.rc_prob > 0)
        sl_cli_usage_error(cli, "--revcomp and --revcomp-prob exclude each other");
    if (o->drop_last && !o->window)
        sl_cli_usage_error(cli, "--drop-last needs --window");
    if ((o->split || o->split_col || o->split_file) && !o->bed)
        sl_cli_usage_error(cli, "--split, --split-column and --split-file need --bed");
    if (o->bed_mode != DNA_BED_HYENA && (!o->bed || !o->window))
        sl_cli_usage_error(cli, "--bed-windows needs --bed and --window");
    if (o->bed_mode == DNA_BED_CADUCEUS && (o->window > DNA_CADUCEUS_SPAN || DNA_CADUCEUS_SPAN % o->window))
        sl_cli_usage_error(cli, "--bed-windows caduceus: --window must divide 2^20 (got %llu)",
                           (unsigned long long)o->window);
    if (o->split_col && o->split_file)
        sl_cli_usage_error(cli, "give the split as a column or as a file, not both");
    if (o->em.tok.max_length && o->em.tok.add_eos && o->em.tok.max_length < 2)
        sl_cli_usage_error(cli, "--max-length must be at least 2 with --add-eos");
}

static int run(sl_cli *cli, int argc, char **argv)
{
    static const sl_cli_field fields[] = {{"in_memory", "--in-memory"}, {NULL, NULL}};
    static const char *const cases[] = {"upper", "keep", "mask-as-unk", NULL};
    static const char *const ns[] = {"token", "pad", "drop", NULL};
    static const char *const sides[] = {"left", "right", NULL};
    static const char *const bedmodes[] = {"hyena", "mamba", "caduceus", NULL};
    dna_tokenize_opts o;
    dna_tokenize_opts_default(&o);
    uint64_t stride = 0;
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, lopts, NULL)) != -1) {
        if (sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_CASE: o.em.tok.case_mode = sl_cli_choice(cli, "--case", optarg, cases); break;
        case O_N: o.em.tok.n_mode = sl_cli_choice(cli, "--n", optarg, ns); break;
        case O_EOS: o.em.tok.add_eos = 1; break;
        case O_MAXLEN: o.em.tok.max_length = (uint64_t)sl_cli_int(cli, "--max-length", optarg, 1, 1LL << 32); break;
        case O_PADSIDE: o.em.tok.pad_left = sl_cli_choice(cli, "--padding-side", optarg, sides) == 0; break;
        case O_KMER: o.em.tok.kmer = (int)sl_cli_int(cli, "--kmer", optarg, 1, DNA_MAX_KMER); break;
        case O_KSTRIDE:
            o.em.tok.kmer_stride = (int)sl_cli_int(cli, "--kmer-stride", optarg, 1, 1 << 20);
            o.kstride_set = 1;
            break;
        case O_WINDOW: o.window = (uint64_t)sl_cli_int(cli, "--window", optarg, 1, 1LL << 32); break;
        case O_INMEM: o.in_memory = (uint64_t)sl_cli_int(cli, "--in-memory", optarg, 1, 1LL << 40); break;
        case O_STRIDE:
            stride = (uint64_t)sl_cli_int(cli, "--stride", optarg, 1, 1LL << 40);
            o.stride_set = 1;
            break;
        case O_DROPLAST: o.drop_last = 1; break;
        case O_BED: o.bed = optarg; break;
        case O_SPLIT: o.split = optarg; break;
        case O_SPLITCOL: o.split_col = (int)sl_cli_int(cli, "--split-column", optarg, 4, 1000); break;
        case O_SPLITFILE: o.split_file = optarg; break;
        case O_RC: o.em.revcomp_extra = 1; break;
        case O_RCPROB: o.em.rc_prob = sl_cli_double(cli, "--revcomp-prob", optarg, 0, 1); break;
        case O_SEED: o.em.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_BEDWIN: o.bed_mode = sl_cli_choice(cli, "--bed-windows", optarg, bedmodes); break;
        default: sl_cli_common(cli, c, optarg ? optarg : argv[optind - 1]);
        }
    }
    check_combinations(cli, &o, stride);
    int nfiles = argc - optind;
    const char *const *files = (const char *const *)argv + optind;
    const char *stdin_only[] = {"-"};
    if (nfiles == 0) {
        files = stdin_only;
        nfiles = 1;
    }
    if (o.bed && nfiles != 1)
        sl_cli_usage_error(cli, "--bed needs exactly one genome file (FASTA or .2bit)");
    if (o.bed && o.bed[0] == '-' && !o.bed[1] && !strcmp(files[0], "-"))
        sl_cli_usage_error(cli, "the BED file and the genome cannot both be standard input");
    sl_part part;
    sl_slice *pieces = NULL; /* --part: this part's files */
    size_t npieces = 0;
    const char **pf = NULL; /* their paths */
    if (sl_cli_part(cli, &so, &part)) {
        if (o.bed || o.em.rc_prob > 0)
            sl_cli_usage_error(cli, "--part: %s depends on the whole input (run it as one process)",
                               o.bed ? "--bed" : "--revcomp-prob (its draws follow the document ordinal)");
        pieces = sl_cli_slices(cli, &part, files, (size_t)nfiles, sl_fastq_cut, NULL, &npieces);
        pf = sl_xcalloc(npieces + 1, sizeof *pf);
        for (size_t i = 0; i < npieces; i++)
            pf[i] = pieces[i].path;
        files = pf;
        nfiles = (int)npieces;
        o.slices = pieces;
    }
    int skip = sl_cli_skip_existing(cli, &so, SL_VERIFY_TOKENS);
    if (!skip)
        sl_cli_check_output(cli, cli->output, SL_OUT_FILE, 0);

    o.quiet = cli->quiet;
    o.progress = cli->progress;
    sl_err err = {{0}};
    sl_output *out = skip ? NULL : sl_output_open(cli->output, &err);
    int rc = !skip && (!out || dna_tokenize_run(&o, files, nfiles, out, &err) || sl_output_commit(out, &err));
    free(pf);
    sl_slices_free(pieces, npieces);
    if (rc) {
        sl_output_abort(out);
        sl_cli_map_fields(&err, fields);
        return sl_cli_fail(cli, &err);
    }
    return 0;
}

const sl_command sl_cmd_tokenize_dna = {
    .name = "tokenize dna",
    .summary = "FASTA/FASTQ/2bit to HyenaDNA character (or DNABERT k-mer) tokens",
    .usage = "sluice tokenize dna [options] [FILES...]",
    .help = help,
    .run = run,
};
