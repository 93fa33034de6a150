/* `sluice dna species`: the HyenaDNA / Mamba species-classification set:
 * windows sampled from per-species genomes, label = species index. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "dna/emit.h"
#include "dna/seqfile.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/rng.h"
#include "stream/tokstream.h"

static const char species_help[] =
    "Samples windows of L bases from genomes, one argument per species: a genome\n"
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
    "                      bases of sequence)\n\n"
    "Random access: .2bit directly, uncompressed FASTA through its .fai (built when\n"
    "absent); a compressed FASTA is loaded into memory (decompress big genomes).\n\n"
    "example:\n"
    "  sluice dna species --window 32768 --samples 65536 --split train --seed 1 \\\n"
    "      species/human species/chimpanzee gorilla.2bit -o species_train.tok\n";

typedef struct chrom {
    dna_genome *g;
    size_t rec;
    char *name;     /* the name splits and ids use: the record's, or (directories) the file's */
    uint64_t len;
} chrom;

typedef struct species {
    char *name;
    dna_genome **files;
    size_t nfiles;
    chrom *chroms; /* in the split */
    size_t n;
    uint64_t total; /* bases in the split */
} species;

static int split_list(const char *s, char ***items)
{
    int n = 0;
    *items = NULL;
    while (s && *s) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len) {
            *items = sl_xrealloc(*items, (size_t)(n + 1) * sizeof **items);
            (*items)[n++] = sl_xstrndup(s, len);
        }
        s = c ? c + 1 : NULL;
    }
    return n;
}

static void free_list(char **items, int n)
{
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

static int in_list(const char *name, char **items, int n)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(name, items[i]))
            return 1;
        if (!strncmp(name, "chr", 3) && !strcmp(name + 3, items[i]))
            return 1;
    }
    return 0;
}

/* The file name without directories and sequence/compression extensions. */
static char *species_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *s = sl_xstrndup(path, n);
    char *b = strrchr(s, '/');
    if (b)
        memmove(s, b + 1, strlen(b + 1) + 1);
    static const char *const ext[] = {".gz", ".bgz", ".zst", ".xz", ".bz2", ".fa", ".fasta", ".fna", ".2bit", NULL};
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; ext[i]; i++) {
            size_t len = strlen(s), e = strlen(ext[i]);
            if (len > e && !strcmp(s + len - e, ext[i])) {
                s[len - e] = 0;
                again = 1;
            }
        }
    }
    return s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_chrom(species *s, dna_genome *g, size_t rec, const char *name, char **vl, int nv, char **tl, int nt,
                      int split)
{
    int which = in_list(name, tl, nt) ? 2 : in_list(name, vl, nv) ? 1 : 0;
    uint64_t len = dna_genome_length(g, rec);
    if (which != split || len == 0)
        return;
    s->chroms = sl_xrealloc(s->chroms, (s->n + 1) * sizeof *s->chroms);
    s->chroms[s->n++] = (chrom){g, rec, sl_xstrdup(name), len};
    s->total += len;
}

/* One species from a genome file (every record is a chromosome) or, as in
 * HyenaDNA's species_dir/<species>/chr<N>.fna layout, from a directory with
 * one file per chromosome (the file name without extensions names it; its
 * first record is used). */
static int open_species(species *s, const char *path, int quiet, char **vl, int nv, char **tl, int nt, int split,
                        sl_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return sl_errf(err, "%s: %s", path, strerror(errno));
        char **names = NULL;
        size_t nn = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            const char *n = e->d_name;
            size_t l = strlen(n);
            if (n[0] == '.' || (l > 4 && (!strcmp(n + l - 4, ".fai") || !strcmp(n + l - 4, ".gzi"))))
                continue;
            names = sl_xrealloc(names, (nn + 1) * sizeof *names);
            names[nn++] = sl_xstrdup(n);
        }
        closedir(d);
        /* sorted, so chr1.fna comes before chr1.fna.gz: the uncompressed copy
         * wins, as in HyenaDNA */
        qsort(names, nn, sizeof *names, cmp_str);
        int rc = 0;
        char *prev = NULL;
        for (size_t i = 0; i < nn && !rc; i++) {
            sl_buf fp = {0};
            sl_buf_printf(&fp, "%s/%s", path, names[i]);
            char *stem = species_name(names[i]);
            if (stat(fp.data, &st) == 0 && S_ISREG(st.st_mode) && !(prev && !strcmp(prev, stem))) {
                dna_genome *g = dna_genome_open(fp.data, quiet, err);
                if (!g) {
                    rc = -1;
                } else {
                    s->files = sl_xrealloc(s->files, (s->nfiles + 1) * sizeof *s->files);
                    s->files[s->nfiles++] = g;
                    if (dna_genome_count(g) > 0)
                        add_chrom(s, g, 0, stem, vl, nv, tl, nt, split);
                }
                free(prev);
                prev = stem;
            } else {
                free(stem);
            }
            sl_buf_free(&fp);
        }
        free(prev);
        for (size_t i = 0; i < nn; i++)
            free(names[i]);
        free(names);
        return rc;
    }
    dna_genome *g = dna_genome_open(path, quiet, err);
    if (!g)
        return -1;
    s->files = sl_xmalloc(sizeof *s->files);
    s->files[0] = g;
    s->nfiles = 1;
    for (size_t k = 0; k < dna_genome_count(g); k++)
        add_chrom(s, g, k, dna_genome_name(g, k), vl, nv, tl, nt, split);
    return 0;
}

static int run_species(sl_cli *cli, int argc, char **argv)
{
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
        {"window", required_argument, 0, O_WINDOW},   {"samples", required_argument, 0, O_SAMPLES},
        {"split", required_argument, 0, O_SPLIT},     {"valid-chroms", required_argument, 0, O_VALID},
        {"test-chroms", required_argument, 0, O_TEST}, {"names", required_argument, 0, O_NAMES},
        {"weights", required_argument, 0, O_WEIGHTS}, {"seed", required_argument, 0, O_SEED},
        {"add-eos", no_argument, 0, O_EOS},           {"n", required_argument, 0, O_N},
        {"case", required_argument, 0, O_CASE},       {"hyena-tail-quirk", no_argument, 0, O_QUIRK},
        SL_CLI_COMMON_LONG,
        {0, 0, 0, 0},
    };
    static const char *const splits[] = {"train", "valid", "test", NULL};
    static const char *const weights[] = {"uniform", "length", NULL};
    static const char *const ns[] = {"token", "pad", "drop", NULL};
    static const char *const cases[] = {"upper", "keep", NULL};
    uint64_t L = 1024, samples = 1024, seed = 0;
    int split = 0, by_length = 0, tail_quirk = 0;
    const char *valid = "1,3,12,13", *test = "5,7,9,10,11", *names = NULL;
    dna_emit_opts eo = {0};
    dna_tok_opts_default(&eo.tok);
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, lopts, NULL)) != -1) {
        switch (c) {
        case O_WINDOW: L = (uint64_t)sl_cli_int(cli, "--window", optarg, 1, 1LL << 32); break;
        case O_SAMPLES: samples = (uint64_t)sl_cli_int(cli, "--samples", optarg, 0, 1LL << 40); break;
        case O_SPLIT: split = sl_cli_choice(cli, "--split", optarg, splits); break;
        case O_VALID: valid = optarg; break;
        case O_TEST: test = optarg; break;
        case O_NAMES: names = optarg; break;
        case O_WEIGHTS: by_length = sl_cli_choice(cli, "--weights", optarg, weights); break;
        case O_SEED: seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_EOS: eo.tok.add_eos = 1; break;
        case O_N: eo.tok.n_mode = sl_cli_choice(cli, "--n", optarg, ns); break;
        case O_CASE: eo.tok.case_mode = sl_cli_choice(cli, "--case", optarg, cases); break;
        case O_QUIRK: tail_quirk = 1; break;
        default: sl_cli_common(cli, c, optarg ? optarg : argv[optind - 1]);
        }
    }
    int nsp = argc - optind;
    if (nsp < 1)
        sl_cli_usage_error(cli, "give one genome file per species");
    char **vl, **tl, **nl = NULL;
    int nv = split_list(valid, &vl), nt = split_list(test, &tl), nn = names ? split_list(names, &nl) : 0;
    if (names && nn != nsp)
        sl_cli_usage_error(cli, "--names lists %d names for %d files", nn, nsp);

    sl_err err = {{0}};
    species *sp = sl_xcalloc((size_t)nsp, sizeof *sp);
    int rc = 0;
    for (int i = 0; i < nsp && !rc; i++) {
        species *s = &sp[i];
        s->name = nl ? sl_xstrdup(nl[i]) : species_name(argv[optind + i]);
        if (open_species(s, argv[optind + i], cli->quiet, vl, nv, tl, nt, split, &err) < 0) {
            rc = -1;
            break;
        }
        if (s->n == 0)
            rc = sl_errf(&err, "%s: no non-empty chromosome belongs to the %s split (chromosomes are matched as NAME or "
                               "chrNAME against --valid-chroms/--test-chroms)",
                         argv[optind + i], splits[split]);
    }
    free_list(vl, nv);
    free_list(tl, nt);
    free_list(nl, nn);

    sl_output *out = NULL;
    sl_ts_writer *w = NULL;
    dna_emitter *em = NULL;
    sl_progress *pg = NULL;
    if (!rc) {
        sl_ts_header h;
        dna_emit_header(&eo.tok, &h);
        /* the header's extra object: the tokenizer's, plus the class names and split */
        sl_buf x = {0};
        dna_tok_extra_json(&eo.tok, &x);
        x.data[--x.len] = 0; /* drop the closing brace */
        sl_buf_puts(&x, ",\"task\":\"species\",\"species\":[");
        for (int i = 0; i < nsp; i++) {
            if (i)
                sl_buf_putc(&x, ',');
            sl_json_put_cstr(&x, sp[i].name);
        }
        sl_buf_printf(&x, "],\"split\":\"%s\",\"window\":%llu,\"seed\":%llu}", splits[split], (unsigned long long)L,
                      (unsigned long long)seed);
        sl_ts_header_set_extra(&h, x.data);
        sl_buf_free(&x);
        out = sl_output_open(cli->output, &err);
        if (out)
            w = sl_ts_writer_open(out, &h, &err);
        sl_ts_header_free(&h);
        if (!w)
            rc = -1;
    }
    if (!rc) {
        pg = sl_progress_start("dna species", "samples", cli->progress);
        em = dna_emitter_new(&eo, w, pg);
        uint64_t state = seed;
        sl_buf seq = {0}, id = {0}, meta = {0};
        for (uint64_t k = 0; k < samples && !rc; k++) {
            species *s = &sp[sl_rng_below(&state, (uint64_t)nsp)];
            size_t ci;
            if (by_length) {
                uint64_t x = sl_rng_below(&state, s->total), acc = 0;
                ci = 0;
                while (ci + 1 < s->n && (acc += s->chroms[ci].len) <= x)
                    ci++;
            } else {
                ci = (size_t)sl_rng_below(&state, s->n);
            }
            const chrom *ch = &s->chroms[ci];
            uint64_t len = ch->len;
            uint64_t start = len > L ? sl_rng_below(&state, len - L + 1) : 0;
            uint64_t end = start + L < len ? start + L : len;
            if (tail_quirk && len > L && end > len - L)
                end = start < len - L ? len - L : start; /* HyenaDNA: fasta[start:min(end, right)] */
            uint64_t padn = L - (end - start);
            sl_buf_clear(&seq);
            sl_buf_reserve(&seq, (size_t)L);
            memset(seq.data, 'N', (size_t)padn); /* rjust(L, 'N') */
            if (dna_genome_fetch(ch->g, ch->rec, start, end, seq.data + padn, &err) < 0) {
                rc = -1;
                break;
            }
            seq.len = (size_t)L;
            seq.data[seq.len] = 0;
            const char *cn = ch->name;
            sl_buf_clear(&id);
            sl_buf_printf(&id, "%s:%s:%llu-%llu", s->name, cn, (unsigned long long)start, (unsigned long long)end);
            sl_buf_clear(&meta);
            sl_buf_printf(&meta, "\"label\":%d,\"species\":", (int)(s - sp));
            sl_json_put_cstr(&meta, s->name);
            sl_buf_puts(&meta, ",\"chrom\":");
            sl_json_put_cstr(&meta, cn);
            sl_buf_printf(&meta, ",\"start\":%llu,\"end\":%llu", (unsigned long long)start, (unsigned long long)end);
            if (dna_emit(em, id.data, &seq, meta.data, end - start, &err) < 0)
                rc = -1;
        }
        if (!rc)
            rc = dna_emit_flush(em, &err);
        sl_buf_free(&seq);
        sl_buf_free(&id);
        sl_buf_free(&meta);
        dna_emitter_free(em);
        sl_progress_done(pg);
    }
    for (int i = 0; i < nsp; i++) {
        free(sp[i].name);
        for (size_t k = 0; k < sp[i].n; k++)
            free(sp[i].chroms[k].name);
        free(sp[i].chroms);
        for (size_t k = 0; k < sp[i].nfiles; k++)
            dna_genome_close(sp[i].files[k]);
        free(sp[i].files);
    }
    free(sp);
    return sl_cli_finish(cli, out, w, rc, &err);
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
