/* `sluice dna species`: the HyenaDNA / Mamba species-classification set:
 * windows sampled from per-species genomes, label = species index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "dna/emit.h"
#include "dna/rng.h"
#include "dna/seqfile.h"
#include "stream/io.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char species_help[] =
    "Samples windows of L bases from genome files, one file per species (FASTA,\n"
    "plain or compressed, or .2bit; the species' index is its position on the\n"
    "command line, its name the file name without extensions unless --names):\n"
    "for each sample, a species uniformly, then one of its chromosomes of the\n"
    "chosen split uniformly (or weighted by length), then a start uniformly in\n"
    "[0, length - L]. As in HyenaDNA's species_dataset.py bases are upper-cased\n"
    "and a chromosome shorter than L is left-padded with N. Each sample is a\n"
    "document with id SPECIES:CHROM:START-END and metadata {\"label\":INDEX,\n"
    "\"species\":NAME,\"chrom\":..,\"start\":..,\"end\":..}; the same inputs and --seed\n"
    "give the same stream. Chromosome splits are HyenaDNA's: a record belongs to\n"
    "a split when its name is an entry of the list or \"chr\" + an entry.\n\n"
    "options:\n"
    "  --window L          bases per sample (default 1024)\n"
    "  --samples N         number of samples (default 1024)\n"
    "  --split NAME        train|valid|test (default train); train = every record\n"
    "                      in neither list\n"
    "  --valid-chroms LIST comma-separated (default 1,3,12,13)\n"
    "  --test-chroms LIST  comma-separated (default 5,7,9,10,11)\n"
    "  --names LIST        comma-separated species names, one per file\n"
    "  --weights uniform|length   how a chromosome is picked (default uniform)\n"
    "  --seed N            random seed (default 0)\n"
    "  --add-eos           append [SEP] (HyenaDNA adds it, then drops the last id)\n"
    "  --n token|pad|drop  N bases (default token), as in 'sluice tokenize dna'\n"
    "  --case upper|keep   soft-masked bases (default upper)\n\n"
    "Not reproduced: HyenaDNA's quirk of truncating windows that start in the\n"
    "last 2L bases (min(end, right)); here every window has L bases.\n\n"
    "example:\n"
    "  sluice dna species --window 32768 --samples 65536 --split train --seed 1 \\\n"
    "      human.fa.gz chimp.fa.gz gorilla.2bit -o species_train.tok\n";

typedef struct species {
    char *name;
    dna_genome *g;
    size_t *chroms; /* records in the split */
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

static char *species_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char *s = sl_xstrdup(b);
    static const char *const ext[] = {".gz", ".bgz", ".zst", ".xz", ".bz2", ".fa", ".fasta", ".fna", ".2bit", NULL};
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; ext[i]; i++) {
            size_t n = strlen(s), e = strlen(ext[i]);
            if (n > e && !strcmp(s + n - e, ext[i])) {
                s[n - e] = 0;
                again = 1;
            }
        }
    }
    return s;
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
    };
    static const struct option lopts[] = {
        {"window", required_argument, 0, O_WINDOW},   {"samples", required_argument, 0, O_SAMPLES},
        {"split", required_argument, 0, O_SPLIT},     {"valid-chroms", required_argument, 0, O_VALID},
        {"test-chroms", required_argument, 0, O_TEST}, {"names", required_argument, 0, O_NAMES},
        {"weights", required_argument, 0, O_WEIGHTS}, {"seed", required_argument, 0, O_SEED},
        {"add-eos", no_argument, 0, O_EOS},           {"n", required_argument, 0, O_N},
        {"case", required_argument, 0, O_CASE},       SL_CLI_COMMON_LONG,
        {0, 0, 0, 0},
    };
    static const char *const splits[] = {"train", "valid", "test", NULL};
    static const char *const weights[] = {"uniform", "length", NULL};
    static const char *const ns[] = {"token", "pad", "drop", NULL};
    static const char *const cases[] = {"upper", "keep", NULL};
    uint64_t L = 1024, samples = 1024, seed = 0;
    int split = 0, by_length = 0;
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
        s->g = dna_genome_open(argv[optind + i], cli->quiet, &err);
        if (!s->g) {
            rc = -1;
            break;
        }
        size_t n = dna_genome_count(s->g);
        s->chroms = sl_xmalloc((n ? n : 1) * sizeof *s->chroms);
        for (size_t k = 0; k < n; k++) {
            const char *cn = dna_genome_name(s->g, k);
            int v = in_list(cn, vl, nv), t = in_list(cn, tl, nt);
            int which = t ? 2 : v ? 1 : 0;
            if (which == split && dna_genome_length(s->g, k) > 0) {
                s->chroms[s->n++] = k;
                s->total += dna_genome_length(s->g, k);
            }
        }
        if (s->n == 0)
            rc = sl_errf(&err, "%s: no non-empty record belongs to the %s split (records are matched as NAME or "
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
            species *s = &sp[dna_rng_below(&state, (uint64_t)nsp)];
            size_t ci;
            if (by_length) {
                uint64_t x = dna_rng_below(&state, s->total), acc = 0;
                ci = 0;
                while (ci + 1 < s->n && (acc += dna_genome_length(s->g, s->chroms[ci])) <= x)
                    ci++;
            } else {
                ci = (size_t)dna_rng_below(&state, s->n);
            }
            size_t rec = s->chroms[ci];
            uint64_t len = dna_genome_length(s->g, rec);
            uint64_t start = len > L ? dna_rng_below(&state, len - L + 1) : 0;
            uint64_t end = start + L < len ? start + L : len;
            uint64_t padn = L - (end - start);
            sl_buf_clear(&seq);
            sl_buf_reserve(&seq, (size_t)L);
            memset(seq.data, 'N', (size_t)padn); /* rjust(L, 'N') */
            if (dna_genome_fetch(s->g, rec, start, end, seq.data + padn, &err) < 0) {
                rc = -1;
                break;
            }
            seq.len = (size_t)L;
            seq.data[seq.len] = 0;
            const char *cn = dna_genome_name(s->g, rec);
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
        dna_genome_close(sp[i].g);
        free(sp[i].chroms);
    }
    free(sp);
    if (rc) {
        if (w)
            sl_ts_writer_abort(w);
        sl_output_abort(out);
        return sl_cli_fail(cli, &err);
    }
    if (sl_ts_writer_finish(w, &err) || sl_output_commit(out, &err))
        return sl_cli_fail(cli, &err);
    return 0;
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
