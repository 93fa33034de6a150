/* The `tokenize dna` stage (dna/tokenize.h). */
#include "dna/tokenize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dna/bed.h"
#include "dna/seqfile.h"
#include "dna/window.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

void dna_tokenize_opts_default(dna_tokenize_opts *o)
{
    memset(o, 0, sizeof *o);
    dna_tok_opts_default(&o->em.tok);
    o->in_memory = (uint64_t)64 << 20;
    o->progress = -1;
}

static void meta_region(sl_buf *m, const char *chrom, uint64_t a, uint64_t b, const char *extra)
{
    sl_buf_clear(m);
    sl_buf_puts(m, "\"chrom\":");
    sl_json_put_cstr(m, chrom);
    sl_buf_printf(m, ",\"start\":%llu,\"end\":%llu", (unsigned long long)a, (unsigned long long)b);
    if (extra)
        sl_buf_puts(m, extra);
}

static void region_id(sl_buf *id, const char *chrom, uint64_t a, uint64_t b)
{
    sl_buf_clear(id);
    sl_buf_printf(id, "%s:%llu-%llu", chrom, (unsigned long long)a, (unsigned long long)b);
}

static int emit_window(dna_emitter *em, const char *name, const char *base, uint64_t a, uint64_t b, sl_buf *win,
                       sl_buf *id, sl_buf *meta, sl_err *err)
{
    sl_buf_clear(win);
    sl_buf_append(win, base, (size_t)(b - a));
    region_id(id, name, a, b);
    meta_region(meta, name, a, b, NULL);
    return dna_emit(em, id->data, win, meta->data, b - a, err);
}

/* Windows over the current record, streaming: the buffer holds at most one
 * window plus one read chunk, whatever the record's length. Emits the same
 * windows as dna_window_count describes. */
static int stream_windows(const dna_tokenize_opts *o, dna_emitter *em, dna_reader *r, sl_buf *buf, sl_buf *win,
                          sl_buf *id, sl_buf *meta, sl_err *err)
{
    const size_t chunk = 1u << 20;
    char *name = sl_xstrdup(dna_reader_name(r));
    uint64_t bufstart = 0, next = 0; /* stream position of buf[0]; start of the next window */
    int rc = 0;
    sl_buf_clear(buf);
    for (;;) {
        uint64_t have = bufstart + buf->len;
        while (!rc && next + o->window <= have) {
            rc = emit_window(em, name, buf->data + (next - bufstart), next, next + o->window, win, id, meta, err);
            next += o->stride;
        }
        if (rc)
            break;
        /* drop what no later window needs */
        uint64_t keep_from = next < have ? next : have;
        size_t drop = (size_t)(keep_from - bufstart);
        if (drop) {
            memmove(buf->data, buf->data + drop, buf->len - drop);
            buf->len -= drop;
            bufstart += drop;
        }
        sl_buf_reserve(buf, chunk);
        long n = dna_reader_read(r, buf->data + buf->len, chunk, err);
        if (n < 0) {
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        /* bases before `next` (when the stride skips some) are never needed */
        size_t got = (size_t)n;
        if (bufstart + buf->len < next) {
            uint64_t skip = next - (bufstart + buf->len);
            size_t k = skip < got ? (size_t)skip : got;
            memmove(buf->data + buf->len, buf->data + buf->len + k, got - k);
            got -= k;
            bufstart += k;
        }
        buf->len += got;
    }
    uint64_t len = bufstart + buf->len;
    uint64_t emitted = next / o->stride, covered = emitted ? (emitted - 1) * o->stride + o->window : 0;
    if (!rc && !o->drop_last && covered < len && next < len)
        rc = emit_window(em, name, buf->data + (next - bufstart), next, len, win, id, meta, err);
    free(name);
    return rc;
}

/* An unnamed temporary file in $TMPDIR (else /tmp) for a long record. */
static int open_spool(sl_err *err)
{
    const char *td = getenv("TMPDIR");
    td = td && *td ? td : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/sluice-record-XXXXXX", td);
    int fd = mkstemp(path);
    if (fd < 0)
        return sl_errf(err, "%s: cannot create a temporary file for a long record (`in_memory`): %s", td,
                       strerror(errno));
    unlink(path);
    return fd;
}

/* A failure names the record and how far into it (file, record name, base). */
static int write_all(int fd, const char *p, size_t n, const char *src, const char *rec, uint64_t at, sl_err *err)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            char q[SL_QUOTE_MAX];
            return sl_errf(err, "%s: record '%s', base %llu: cannot spool the long record to $TMPDIR: %s", src,
                           sl_err_quote(rec, strlen(rec), q, sizeof q), (unsigned long long)at,
                           k < 0 ? strerror(errno) : "no space");
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Whole records or windows over them, file by file. */
static int run_records(const dna_tokenize_opts *o, dna_emitter *em, const char *const *files, size_t nfiles,
                       sl_err *err)
{
    sl_buf seq = {0}, win = {0}, id = {0}, meta = {0};
    int rc = 0;
    const sl_slice *slices = o->slices;
    for (size_t f = 0; f < nfiles && !rc; f++) {
        sl_range *range = NULL; /* --part: a range of a FASTQ file */
        dna_reader *r;
        if (slices && !slices[f].whole) {
            range = sl_range_open(slices[f].path, slices[f].begin, slices[f].end, err);
            r = range ? dna_reader_open_input(sl_range_input(range)) : NULL;
        } else {
            r = dna_reader_open(files[f], err);
        }
        if (!r) {
            sl_range_close(range);
            rc = -1;
            break;
        }
        int k;
        while (!rc && (k = dna_reader_next(r, err)) == 1) {
            if (o->window) {
                rc = stream_windows(o, em, r, &seq, &win, &id, &meta, err);
                continue;
            }
            /* A record up to --in-memory bases is held and queued; a longer
             * one goes to a temporary file and is tokenized from there. */
            sl_buf_clear(&seq);
            int spool = -1;
            uint64_t spooled = 0;
            long got;
            for (;;) {
                sl_buf_reserve(&seq, (size_t)1 << 20);
                got = dna_reader_read(r, seq.data + seq.len, (size_t)1 << 20, err);
                if (got <= 0)
                    break;
                seq.len += (size_t)got;
                seq.data[seq.len] = 0;
                if (spool < 0 && seq.len > o->in_memory && (spool = open_spool(err)) < 0) {
                    got = -1;
                    break;
                }
                if (spool >= 0) {
                    if (write_all(spool, seq.data, seq.len, files[f], dna_reader_name(r), spooled, err) < 0) {
                        got = -1;
                        break;
                    }
                    spooled += seq.len;
                    if (seq.cap > ((size_t)4 << 20))
                        sl_buf_free(&seq); /* from now on it holds one read */
                    sl_buf_clear(&seq);
                }
            }
            if (got >= 0) {
                sl_buf_clear(&meta);
                const char *desc = dna_reader_desc(r);
                if (*desc) {
                    sl_buf_puts(&meta, "\"desc\":");
                    sl_json_put_cstr(&meta, desc);
                }
                if (spool >= 0) {
                    got = dna_emit_spooled(em, dna_reader_name(r), spool, spooled, meta.data, spooled, err);
                } else {
                    uint64_t n = seq.len;
                    got = dna_emit(em, dna_reader_name(r), &seq, meta.data, n, err);
                }
            }
            if (spool >= 0)
                close(spool);
            if (got < 0)
                rc = -1;
        }
        if (!rc && k < 0)
            rc = -1;
        dna_reader_close(r);
        sl_range_close(range);
    }
    sl_buf_free(&seq);
    sl_buf_free(&win);
    sl_buf_free(&id);
    sl_buf_free(&meta);
    return rc;
}

/* One document per BED interval, HyenaDNA-style with --window. */
static int run_bed(const dna_tokenize_opts *o, dna_emitter *em, const char *genome_path, sl_err *err)
{
    dna_bed bed = {0};
    dna_split_map map = {0};
    int split_col = o->split_col ? o->split_col : (o->split && !o->split_file ? 4 : 0);
    if (dna_bed_load(o->bed, split_col, &bed, err) < 0)
        return -1;
    if (o->split_file && dna_split_map_load(o->split_file, &map, err) < 0) {
        dna_bed_free(&bed);
        return -1;
    }
    dna_genome *g = dna_genome_open(genome_path, o->quiet, err);
    if (!g) {
        dna_bed_free(&bed);
        dna_split_map_free(&map);
        return -1;
    }
    sl_buf seq = {0}, id = {0}, meta = {0}, extra = {0};
    int rc = 0;
    for (size_t i = 0; i < bed.n && !rc; i++) {
        const dna_bed_rec *b = &bed.rec[i];
        const char *split = o->split_file ? dna_split_map_get(&map, b->chrom) : b->split;
        if (o->split && (!split || strcmp(split, o->split)))
            continue;
        long ci = dna_genome_find(g, b->chrom);
        if (ci < 0) {
            if (dna_genome_fai_file(g)) /* (an empty record is not in samtools' index) */
                rc = sl_errf(err,
                             "%s:%llu: chromosome '%s' is not in %s (its index %s.fai, which samtools faidx writes "
                             "without empty records)",
                             o->bed, (unsigned long long)b->line, b->chrom, genome_path, genome_path);
            else
                rc = sl_errf(err, "%s:%llu: chromosome '%s' is not in %s", o->bed, (unsigned long long)b->line,
                             b->chrom, genome_path);
            break;
        }
        uint64_t clen = dna_genome_length(g, (size_t)ci);
        if (!o->window && b->end > clen) {
            rc = sl_errf(err, "%s:%llu: interval %s:%llu-%llu runs past the chromosome end (%llu)", o->bed,
                         (unsigned long long)b->line, b->chrom, (unsigned long long)b->start,
                         (unsigned long long)b->end, (unsigned long long)clen);
            break;
        }
        uint64_t pieces = o->window ? dna_bed_window_count(o->bed_mode, b->start, b->end, o->window) : 1;
        for (uint64_t k = 0; k < pieces && !rc; k++) {
            uint64_t a = b->start, e = b->end;
            if (o->window)
                dna_bed_window(o->bed_mode, clen, b->start, b->end, o->window, k, &a, &e);
            sl_buf_clear(&seq);
            sl_buf_reserve(&seq, (size_t)(e - a));
            if (dna_genome_fetch(g, (size_t)ci, a, e, seq.data, err) < 0) {
                rc = -1;
                break;
            }
            seq.len = (size_t)(e - a);
            seq.data[seq.len] = 0;
            if (b->strand == '-')
                dna_revcomp(seq.data, seq.len);
            sl_buf_clear(&extra);
            if (b->name) {
                sl_buf_puts(&extra, ",\"name\":");
                sl_json_put_cstr(&extra, b->name);
            }
            if (split) {
                sl_buf_puts(&extra, ",\"split\":");
                sl_json_put_cstr(&extra, split);
            }
            if (b->strand != '.')
                sl_buf_printf(&extra, ",\"strand\":\"%c\"", b->strand);
            sl_buf_printf(&extra, ",\"bed_line\":%llu", (unsigned long long)b->line);
            if (o->bed_mode != DNA_BED_HYENA)
                sl_buf_printf(&extra, ",\"piece\":%llu", (unsigned long long)k);
            region_id(&id, b->chrom, a, e);
            meta_region(&meta, b->chrom, a, e, extra.data);
            if (dna_emit(em, id.data, &seq, meta.data, e - a, err) < 0)
                rc = -1;
        }
    }
    sl_buf_free(&seq);
    sl_buf_free(&id);
    sl_buf_free(&meta);
    sl_buf_free(&extra);
    dna_genome_close(g);
    dna_bed_free(&bed);
    dna_split_map_free(&map);
    return rc;
}

int dna_tokenize_run(const dna_tokenize_opts *o, const char *const *files, size_t nfiles, sl_output *out, sl_err *err)
{
    sl_ts_header h;
    dna_emit_header(&o->em.tok, &h);
    sl_ts_writer *w = sl_ts_writer_open(out, &h, err);
    sl_ts_header_free(&h);
    if (!w)
        return -1;
    sl_progress *pg = sl_progress_start("tokenize dna", "docs", o->progress);
    dna_emitter *em = dna_emitter_new(&o->em, w, pg);
    int rc = o->bed ? run_bed(o, em, files[0], err) : run_records(o, em, files, nfiles, err);
    if (!rc)
        rc = dna_emit_flush(em, err);
    dna_emitter_free(em);
    sl_progress_done(pg);
    if (rc) {
        sl_ts_writer_abort(w);
        return -1;
    }
    return sl_ts_writer_finish(w, err);
}
