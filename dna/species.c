/* The species-classification set (see species.h). */
#include "dna/species.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dna/emit.h"
#include "dna/seqfile.h"
#include "base/json.h"
#include "stream/progress.h"
#include "base/rng.h"
#include "stream/tokstream.h"

const char *const dna_split_names[3] = {"train", "valid", "test"};

void dna_species_opts_default(dna_species_opts *o)
{
    *o = (dna_species_opts){.window = 1024,
                            .samples = 1024,
                            .valid_chroms = "1,3,12,13",
                            .test_chroms = "5,7,9,10,11",
                            .progress = 0,
                            .end = UINT64_MAX};
    dna_tok_opts_default(&o->tok);
}

typedef struct chrom {
    dna_genome *g;
    size_t rec;
    char *name; /* the name splits and ids use: the record's, or (directories) the file's */
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

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

int dna_species_run(const dna_species_opts *o, const char *const *genomes, size_t nsp, sl_output *out, sl_err *err)
{
    const uint64_t L = o->window, samples = o->samples, seed = o->seed;
    const int split = o->split, by_length = o->by_length, tail_quirk = o->tail_quirk;
    if (!nsp)
        return sl_errf(err, "no genome: give one genome file per species");
    if (L < 1)
        return sl_errf(err, "window must be >= 1");
    if (split < 0 || split > 2)
        return sl_errf(err, "split: %d is not train (0), valid (1) or test (2)", split);
    char **vl, **tl;
    int nv = (int)sl_list_split(o->valid_chroms, 0, &vl), nt = (int)sl_list_split(o->test_chroms, 0, &tl);
    dna_emit_opts eo = {.tok = o->tok};
    species *sp = sl_xcalloc(nsp, sizeof *sp);
    int rc = 0;
    for (size_t i = 0; i < nsp && !rc; i++) {
        species *s = &sp[i];
        s->name = o->names ? sl_xstrdup(o->names[i]) : species_name(genomes[i]);
        if (open_species(s, genomes[i], o->quiet, vl, nv, tl, nt, split, err) < 0) {
            rc = -1;
            break;
        }
        if (s->n == 0)
            rc = sl_err_set(err, SL_E_MISMATCH, NULL,
                            "%s: no non-empty chromosome belongs to the %s split (chromosomes are matched as NAME or "
                            "chrNAME against `valid_chroms`/`test_chroms`)",
                            genomes[i], dna_split_names[split]);
    }
    sl_list_free(vl, (size_t)nv);
    sl_list_free(tl, (size_t)nt);

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
        for (size_t i = 0; i < nsp; i++) {
            if (i)
                sl_buf_putc(&x, ',');
            sl_json_put_cstr(&x, sp[i].name);
        }
        sl_buf_printf(&x, "],\"split\":\"%s\",\"window\":%llu,\"seed\":%llu}", dna_split_names[split],
                      (unsigned long long)L, (unsigned long long)seed);
        sl_ts_header_set_extra(&h, x.data);
        sl_buf_free(&x);
        w = sl_ts_writer_open(out, &h, err);
        sl_ts_header_free(&h);
        if (!w)
            rc = -1;
    }
    if (!rc) {
        pg = sl_progress_start("dna species", "samples", o->progress);
        em = dna_emitter_new(&eo, w, pg);
        uint64_t state = seed;
        sl_buf seq = {0}, id = {0}, meta = {0};
        for (uint64_t k = 0; k < samples && k < o->end && !rc; k++) {
            species *s = &sp[sl_rng_below(&state, nsp)];
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
            if (k < o->first)
                continue; /* another part's sample: drawn, not written */
            sl_buf_clear(&seq);
            sl_buf_reserve(&seq, (size_t)L);
            memset(seq.data, 'N', (size_t)padn); /* rjust(L, 'N') */
            if (dna_genome_fetch(ch->g, ch->rec, start, end, seq.data + padn, err) < 0) {
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
            if (dna_emit(em, id.data, &seq, meta.data, end - start, err) < 0)
                rc = -1;
        }
        if (!rc)
            rc = dna_emit_flush(em, err);
        sl_buf_free(&seq);
        sl_buf_free(&id);
        sl_buf_free(&meta);
        dna_emitter_free(em);
        sl_progress_done(pg);
    }
    for (size_t i = 0; i < nsp; i++) {
        free(sp[i].name);
        for (size_t k = 0; k < sp[i].n; k++)
            free(sp[i].chroms[k].name);
        free(sp[i].chroms);
        for (size_t k = 0; k < sp[i].nfiles; k++)
            dna_genome_close(sp[i].files[k]);
        free(sp[i].files);
    }
    free(sp);
    if (w) {
        if (rc)
            sl_ts_writer_abort(w);
        else
            rc = sl_ts_writer_finish(w, err);
    }
    return rc;
}
