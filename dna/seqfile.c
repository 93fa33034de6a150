/* Sequence files by content: see seqfile.h. */
#include "dna/seqfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dna/bgzf.h"
#include "dna/faidx.h"
#include "dna/fastx.h"
#include "dna/twobit.h"
#include "stream/io.h"
#include "base/log.h"

static long input_read(void *ctx, void *buf, size_t n, sl_err *err)
{
    return sl_input_read(ctx, buf, n, err);
}

/* Reads what is left of `in` into memory. */
static int slurp(sl_input *in, char **data, size_t *len, sl_err *err)
{
    size_t cap = 1 << 16, n = 0;
    char *p = sl_xmalloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            p = sl_xrealloc(p, cap);
        }
        long r = sl_input_read(in, p + n, cap - n, err);
        if (r < 0) {
            free(p);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *data = p;
    *len = n;
    return 0;
}

/* Opens path as .2bit when it is one: 1 = *tb set, 0 = not .2bit (*in is
 * the open input, positioned at the start), -1 = error. A plain regular
 * file is read with pread; a compressed one or stdin is loaded. */
static int open_any(const char *path, sl_input **in, dna_2bit **tb, char **mem, sl_err *err)
{
    *in = sl_input_open(path, err);
    if (!*in)
        return -1;
    unsigned char h[4];
    long n = sl_input_peek(*in, h, 4, err);
    if (n < 0) {
        sl_input_close(*in);
        *in = NULL;
        return -1;
    }
    if (!dna_2bit_sniff(h, (size_t)n))
        return 0;
    struct stat st;
    if (sl_input_compression(*in) == SL_COMP_NONE && strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        sl_input_close(*in);
        *in = NULL;
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            return sl_errf(err, "%s: %s", path, strerror(errno));
        *tb = dna_2bit_open_fd(fd, path, err);
        return *tb ? 1 : -1;
    }
    size_t len;
    int rc = slurp(*in, mem, &len, err);
    sl_input_close(*in);
    *in = NULL;
    if (rc < 0)
        return -1;
    *tb = dna_2bit_open_mem(*mem, len, path, err);
    return *tb ? 1 : -1;
}

/* ---- sequential reader ------------------------------------------------- */

struct dna_reader {
    sl_input *in;
    dna_fx *fx;
    dna_2bit *tb;
    char *mem;
    size_t idx;   /* 2bit: 1 + index of the current record (0 before the first) */
    uint64_t pos; /* 2bit: next base of the current record */
};

dna_reader *dna_reader_open(const char *path, sl_err *err)
{
    dna_reader *r = sl_xcalloc(1, sizeof *r);
    int rc = open_any(path, &r->in, &r->tb, &r->mem, err);
    if (rc < 0) {
        free(r->mem);
        free(r);
        return NULL;
    }
    if (rc == 0)
        r->fx = dna_fx_open(input_read, r->in, sl_input_name(r->in));
    return r;
}

dna_reader *dna_reader_open_input(sl_input *in)
{
    dna_reader *r = sl_xcalloc(1, sizeof *r);
    r->fx = dna_fx_open(input_read, in, sl_input_name(in)); /* r->in stays NULL: not ours to close */
    return r;
}

int dna_reader_next(dna_reader *r, sl_err *err)
{
    if (r->fx)
        return dna_fx_next(r->fx, err);
    if (r->idx >= dna_2bit_count(r->tb))
        return 0;
    r->idx++;
    r->pos = 0;
    return 1;
}

const char *dna_reader_name(const dna_reader *r)
{
    return r->fx ? dna_fx_name(r->fx) : dna_2bit_name(r->tb, r->idx - 1);
}

const char *dna_reader_desc(const dna_reader *r)
{
    return r->fx ? dna_fx_desc(r->fx) : "";
}

const char *dna_reader_format(const dna_reader *r)
{
    if (r->tb)
        return "2bit";
    return dna_fx_format(r->fx) == DNA_FMT_FASTQ ? "fastq" : "fasta";
}

long dna_reader_read(dna_reader *r, char *buf, size_t n, sl_err *err)
{
    if (r->fx)
        return dna_fx_read(r->fx, buf, n, err);
    if (r->idx == 0)
        return 0;
    uint64_t len = dna_2bit_length(r->tb, r->idx - 1);
    uint64_t k = len - r->pos < n ? len - r->pos : n;
    if (k && dna_2bit_fetch(r->tb, r->idx - 1, r->pos, r->pos + k, buf, err) < 0)
        return -1;
    r->pos += k;
    return (long)k;
}

int dna_reader_read_all(dna_reader *r, sl_buf *seq, sl_err *err)
{
    if (r->fx)
        return dna_fx_read_all(r->fx, seq, err);
    if (r->idx == 0)
        return 0;
    uint64_t len = dna_2bit_length(r->tb, r->idx - 1);
    size_t k = (size_t)(len - r->pos);
    sl_buf_reserve(seq, k);
    if (dna_reader_read(r, seq->data + seq->len, k, err) < 0)
        return -1;
    seq->len += k;
    seq->data[seq->len] = 0;
    return 0;
}

void dna_reader_close(dna_reader *r)
{
    if (!r)
        return;
    dna_fx_close(r->fx);
    if (r->in)
        sl_input_close(r->in);
    dna_2bit_close(r->tb);
    free(r->mem);
    free(r);
}

/* ---- random access ------------------------------------------------------ */

struct dna_genome {
    char *path;
    dna_2bit *tb; /* .2bit */
    char *mem;
    dna_fai fai;  /* indexed FASTA: plain (fd) or BGZF (bgzf) */
    int fai_file; /* fai was read from "<path>.fai" (not built) */
    int fd;
    dna_bgzf *bgzf;
    char **names; /* in-memory sequences */
    sl_buf *seqs;
    size_t n;
};

/* Loads every record of `in` (a FASTA/FASTQ stream at its start; closed here). */
static int load_memory(dna_genome *g, sl_input *in, int quiet, sl_err *err)
{
    if (!quiet)
        sl_log(SL_LOG_NOTE, NULL,
               "%s has no usable index (compressed without .gzi, or irregular lines): loading it into memory", g->path);
    dna_fx *r = dna_fx_open(input_read, in, sl_input_name(in));
    int rc;
    size_t cap = 0;
    while ((rc = dna_fx_next(r, err)) == 1) {
        if (g->n == cap) {
            cap = cap ? cap * 2 : 16;
            g->names = sl_xrealloc(g->names, cap * sizeof *g->names);
            g->seqs = sl_xrealloc(g->seqs, cap * sizeof *g->seqs);
        }
        g->names[g->n] = sl_xstrdup(dna_fx_name(r));
        memset(&g->seqs[g->n], 0, sizeof g->seqs[g->n]);
        g->n++;
        if (dna_fx_read_all(r, &g->seqs[g->n - 1], err) < 0) {
            rc = -1;
            break;
        }
    }
    dna_fx_close(r);
    sl_input_close(in);
    return rc;
}

dna_genome *dna_genome_open(const char *path, int quiet, sl_err *err)
{
    dna_genome *g = sl_xcalloc(1, sizeof *g);
    g->path = sl_xstrdup(path);
    g->fd = -1;
    sl_input *in = NULL;
    int rc = open_any(path, &in, &g->tb, &g->mem, err);
    if (rc < 0)
        goto fail;
    if (rc == 1)
        return g;
    struct stat st;
    int regular = strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    int plain = regular && sl_input_compression(in) == SL_COMP_NONE;
    sl_buf gzi_path = {0};
    sl_buf_printf(&gzi_path, "%s.gzi", path);
    int bgzf = regular && sl_input_compression(in) == SL_COMP_GZIP && access(gzi_path.data, R_OK) == 0;
    if (bgzf) {
        /* a bgzipped FASTA with its .gzi: random access by block (a file
         * that is not BGZF after all falls back to memory) */
        sl_err e2;
        g->bgzf = dna_bgzf_open(path, gzi_path.data, &e2);
        bgzf = g->bgzf != NULL;
        if (!bgzf && !quiet)
            sl_log(SL_LOG_NOTE, NULL, "ignoring the BGZF index: %s", e2.msg);
    }
    sl_buf_free(&gzi_path);
    if (plain || bgzf) {
        sl_buf fai_path = {0};
        sl_buf_printf(&fai_path, "%s.fai", path);
        int have = access(fai_path.data, R_OK) == 0;
        sl_err e2;
        if (have) {
            char *text;
            size_t len;
            rc = sl_read_file(fai_path.data, &text, &len, err);
            if (rc == 0) {
                rc = dna_fai_parse(text, len, fai_path.data, &g->fai, err);
                free(text);
                g->fai_file = rc == 0;
            }
        } else {
            dna_fx *fx = dna_fx_open(input_read, in, path);
            rc = dna_fai_build(fx, &g->fai, &e2);
            dna_fx_close(fx);
        }
        sl_buf_free(&fai_path);
        if (rc < 0 && have)
            goto fail;
        if (rc == 0) {
            sl_input_close(in);
            if (bgzf)
                return g;
            g->fd = open(path, O_RDONLY);
            if (g->fd < 0) {
                sl_errf(err, "%s: %s", path, strerror(errno));
                goto fail_closed;
            }
            return g;
        }
        /* not indexable: fall through to memory (a real parse error shows again there) */
        dna_bgzf_close(g->bgzf);
        g->bgzf = NULL;
    }
    dna_fai_free(&g->fai);
    if (plain || bgzf) {
        /* the index attempt consumed the stream: start again (a regular file) */
        sl_input_close(in);
        in = sl_input_open(path, err);
        if (!in)
            goto fail_closed;
    }
    if (load_memory(g, in, quiet, err) < 0)
        goto fail_closed;
    return g;
fail:
    if (in)
        sl_input_close(in);
fail_closed:
    dna_genome_close(g);
    return NULL;
}

static int indexed(const dna_genome *g)
{
    return g->fd >= 0 || g->bgzf;
}

size_t dna_genome_count(const dna_genome *g)
{
    return g->tb ? dna_2bit_count(g->tb) : indexed(g) ? g->fai.n : g->n;
}

const char *dna_genome_name(const dna_genome *g, size_t i)
{
    return g->tb ? dna_2bit_name(g->tb, i) : indexed(g) ? g->fai.rec[i].name : g->names[i];
}

uint64_t dna_genome_length(const dna_genome *g, size_t i)
{
    return g->tb ? dna_2bit_length(g->tb, i) : indexed(g) ? g->fai.rec[i].length : g->seqs[i].len;
}

const char *dna_genome_backend(const dna_genome *g)
{
    return g->tb ? "2bit" : g->bgzf ? "bgzf+fai" : g->fd >= 0 ? "fai" : "memory";
}

static int bgzf_read_at(const void *ctx, uint64_t off, void *buf, size_t n, sl_err *err)
{
    return dna_bgzf_read_at(ctx, off, buf, n, err);
}

long dna_genome_find(const dna_genome *g, const char *name)
{
    size_t n = dna_genome_count(g);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(dna_genome_name(g, i), name))
            return (long)i;
    return -1;
}

const char *dna_genome_path(const dna_genome *g)
{
    return g->path;
}

int dna_genome_fetch(const dna_genome *g, size_t i, uint64_t start, uint64_t end, char *out, sl_err *err)
{
    if (g->tb)
        return dna_2bit_fetch(g->tb, i, start, end, out, err);
    if (g->fd >= 0)
        return dna_fai_fetch(g->fd, g->path, &g->fai.rec[i], start, end, out, err);
    if (g->bgzf)
        return dna_fai_fetch_with(bgzf_read_at, g->bgzf, g->path, &g->fai.rec[i], start, end, out, err);
    if (start > end || end > g->seqs[i].len)
        return sl_errf(err, "%s: %s:%llu-%llu is outside the sequence (%zu bases)", g->path, g->names[i],
                       (unsigned long long)start, (unsigned long long)end, g->seqs[i].len);
    if (end > start)
        memcpy(out, g->seqs[i].data + start, (size_t)(end - start));
    return 0;
}

int dna_genome_fai_file(const dna_genome *g)
{
    return !g->tb && indexed(g) && g->fai_file;
}

void dna_genome_close(dna_genome *g)
{
    if (!g)
        return;
    dna_2bit_close(g->tb);
    free(g->mem);
    dna_fai_free(&g->fai);
    dna_bgzf_close(g->bgzf);
    if (g->fd >= 0)
        close(g->fd);
    for (size_t i = 0; i < g->n; i++) {
        free(g->names[i]);
        sl_buf_free(&g->seqs[i]);
    }
    free(g->names);
    free(g->seqs);
    free(g->path);
    free(g);
}
