/* Batched, ordered tokenization of sequences: see emit.h. The batches,
 * their parallel encoding and the worker thread that overlaps reading with
 * tokenizing and writing are stream/batch.h's (async). */
#include "dna/emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/batch.h"
#include "base/byteorder.h"
#include "base/rng.h"

/* A batch ends at 8 MB of bases or 256 documents: small enough that the
 * jobs' buffers stay in cache for short reads (4096 documents per batch
 * made 100 bp reads twice as slow), big enough to share among threads. */
#define BATCH_BASES (8u << 20)
#define BATCH_DOCS 256
#define PARALLEL_MIN_BASES (1u << 20)

/* One document: its id, sequence and metadata, then its record. */
typedef struct part {
    sl_buf id, seq, meta;
    uint64_t src_bytes;
    int rc; /* reverse-complement before tokenizing */
    sl_doc doc;
    dna_tokens tok;
} part;

/* A slot of the batch: a document and, with revcomp_extra, its reverse
 * complement (copied from the forward sequence when encoded). */
typedef struct job {
    part p[2];
    int n;
} job;

struct dna_emitter {
    dna_emit_opts o;
    sl_ts_writer *w;
    sl_progress *pg;
    sl_batcher *bt;
    uint64_t ordinal; /* forward documents handed over so far (for rc_prob) */
    uint64_t written;
    int narrow; /* character ids go to the stream as bytes (dna_tok_encode_bytes) */
};

void dna_emit_header(const dna_tok_opts *o, sl_ts_header *h)
{
    sl_ts_header_init(h, SL_MOD_DNA, dna_tok_vocab_size(o));
    h->eos = dna_tok_eos_id(o);
    /* add_eos ends every window in [SEP] unless padding follows it (right
     * padding): recorded so that shard and export append no second one */
    if (o->add_eos && (!o->max_length || o->pad_left))
        h->doc_eos = h->eos;
    h->pad = dna_tok_pad_id(o);
    h->unk = dna_tok_unk_id(o);
    h->bos = o->kmer ? SL_TS_NO_ID : DNA_ID_BOS;
    dna_tok_name(o, h->tokenizer, sizeof h->tokenizer);
    sl_buf extra = {0};
    dna_tok_extra_json(o, &extra);
    sl_ts_header_set_extra(h, extra.data);
    sl_buf_free(&extra);
}

static void encode_job(void *ctx, int thread, void *slot);
static int write_job(void *ctx, void *slot, sl_err *err);
static void free_job(void *ctx, void *slot);

dna_emitter *dna_emitter_new(const dna_emit_opts *o, sl_ts_writer *w, sl_progress *pg)
{
    dna_emitter *e = sl_xcalloc(1, sizeof *e);
    e->o = *o;
    e->w = w;
    e->pg = pg;
    e->narrow = !o->tok.kmer && sl_ts_writer_width(w) == 1;
    static const sl_batch_ops ops = {sizeof(job), encode_job, write_job, free_job};
    sl_batch_opts bo = {.max_items = o->revcomp_extra ? BATCH_DOCS / 2 : BATCH_DOCS,
                        .max_cost = BATCH_BASES,
                        .parallel_min_cost = PARALLEL_MIN_BASES,
                        .async = 1};
    e->bt = sl_batcher_new(&ops, e, &bo);
    return e;
}

static void set_meta_buf(sl_buf *m, const char *fields, int rc_doc)
{
    sl_buf_clear(m);
    if (fields && *fields)
        sl_buf_puts(m, fields);
    if (rc_doc)
        sl_buf_printf(m, "%s\"revcomp\":true", m->len ? "," : "");
}

static void set_meta(part *j, const char *fields, int rc_doc)
{
    set_meta_buf(&j->meta, fields, rc_doc);
}

/* id v at position j of a token buffer of the given width (little-endian) */
static void put_id(unsigned char *out, size_t width, size_t j, uint32_t v)
{
    if (width == 1)
        out[j] = (unsigned char)v;
    else if (width == 2)
        sl_put_le16(out + 2 * j, (uint16_t)v);
    else
        sl_put_le32(out + 4 * j, v);
}

int dna_emit(dna_emitter *e, const char *id, sl_buf *seq, const char *meta_fields, uint64_t src_bytes, sl_err *err)
{
    job *jb = sl_batcher_next(e->bt);
    int rc_fwd = e->o.rc_prob > 0 && sl_rng_unit_at(e->o.seed, e->ordinal) < e->o.rc_prob;
    e->ordinal++;
    part *j = &jb->p[0];
    sl_buf_clear(&j->id);
    sl_buf_puts(&j->id, id);
    if (rc_fwd)
        sl_buf_puts(&j->id, "/rc");
    /* take the sequence over: swap buffers, the caller gets our old (empty) one */
    sl_buf tmp = j->seq;
    j->seq = *seq;
    *seq = tmp;
    sl_buf_clear(seq);
    j->src_bytes = src_bytes;
    j->rc = rc_fwd;
    set_meta(j, meta_fields, rc_fwd);
    jb->n = 1;
    uint64_t bases = j->seq.len;
    if (e->o.revcomp_extra) { /* (the CLI keeps this and rc_prob apart) */
        part *r = &jb->p[1];
        sl_buf_clear(&r->id);
        sl_buf_append(&r->id, j->id.data, j->id.len);
        sl_buf_puts(&r->id, "/rc");
        r->src_bytes = 0; /* the input bytes are counted once, by the forward document */
        r->rc = 1;
        set_meta(r, meta_fields, 1);
        jb->n = 2;
        bases *= 2;
    }
    return sl_batcher_push(e->bt, bases, err);
}

static void encode_part(const dna_tok_opts *o, int narrow, part *j)
{
    if (j->rc)
        dna_revcomp(j->seq.data, j->seq.len);
    const char *seq = j->seq.data ? j->seq.data : "";
    sl_doc_clear(&j->doc);
    if (narrow) {
        /* the ids stay in j->tok.bytes; the record carries id and metadata */
        dna_tok_encode_bytes(o, seq, j->seq.len, &j->tok);
    } else {
        dna_tok_encode(o, seq, j->seq.len, &j->tok);
        /* hand the id array to the record instead of copying it: both are
         * malloc'd arrays of uint32 with a capacity in elements */
        uint32_t *ids = j->doc.tokens;
        size_t cap = j->doc.cap_tokens;
        j->doc.tokens = j->tok.ids;
        j->doc.cap_tokens = j->tok.cap;
        j->doc.n_tokens = j->tok.n;
        j->tok.ids = ids;
        j->tok.cap = cap;
    }
    sl_doc_set_id(&j->doc, j->id.data ? j->id.data : "", j->id.len);
    j->doc.src_bytes = j->src_bytes;
    if (o->case_mode == DNA_CASE_KEEP) {
        sl_buf_printf(&j->meta, "%s\"softmask\":", j->meta.len ? "," : "");
        dna_tokens_mask_json(&j->tok, &j->meta);
    }
    if (j->meta.len) {
        sl_buf m = {0};
        sl_buf_putc(&m, '{');
        sl_buf_append(&m, j->meta.data, j->meta.len);
        sl_buf_putc(&m, '}');
        sl_doc_set_meta(&j->doc, m.data, m.len);
        sl_buf_free(&m);
    } else {
        sl_doc_set_meta(&j->doc, "", 0);
    }
}

static void encode_job(void *ctx, int thread, void *slot)
{
    (void)thread;
    const dna_emitter *e = ctx;
    job *jb = slot;
    if (jb->n == 2) { /* the reverse complement's sequence, before the forward one is touched */
        sl_buf_clear(&jb->p[1].seq);
        sl_buf_append(&jb->p[1].seq, jb->p[0].seq.data ? jb->p[0].seq.data : "", jb->p[0].seq.len);
    }
    for (int k = 0; k < jb->n; k++)
        encode_part(&e->o.tok, e->narrow, &jb->p[k]);
}

/* After a slot is written, buffers that grew for a long sequence are
 * released: the slots (two batches of BATCH_DOCS) keep at most KEEP_BYTES
 * each, so memory is bounded by the batches in flight and the longest
 * sequence, not by the longest sequence each slot ever held. */
#define KEEP_BYTES ((size_t)64 << 10)

static void release_big(part *j)
{
    if (j->seq.cap > KEEP_BYTES)
        sl_buf_free(&j->seq);
    if (j->meta.cap > KEEP_BYTES)
        sl_buf_free(&j->meta);
    if (j->tok.cap * sizeof *j->tok.ids > KEEP_BYTES || j->tok.bytes_cap > KEEP_BYTES || j->tok.mask_cap > KEEP_BYTES)
        dna_tokens_free(&j->tok);
    if (j->doc.cap_tokens * sizeof *j->doc.tokens > KEEP_BYTES || j->doc.cap_meta > KEEP_BYTES)
        sl_doc_free(&j->doc);
}

/* Writes a slot's records in order. */
static int write_job(void *ctx, void *slot, sl_err *err)
{
    dna_emitter *e = ctx;
    job *jb = slot;
    int rc = 0;
    for (int k = 0; k < jb->n; k++) {
        part *j = &jb->p[k];
        if (!rc && (e->narrow ? sl_ts_write_doc_raw(e->w, &j->doc, j->tok.bytes, j->tok.n, DNA_CHAR_VOCAB - 1, err)
                              : sl_ts_write_doc(e->w, &j->doc, err)) < 0)
            rc = -1;
        if (!rc) {
            e->written++;
            if (e->pg) {
                sl_progress_add(e->pg, 1, j->src_bytes);
                sl_progress_add_tokens(e->pg, j->tok.n);
            }
        }
        release_big(j);
    }
    return rc;
}

static void free_job(void *ctx, void *slot)
{
    (void)ctx;
    job *jb = slot;
    for (int k = 0; k < 2; k++) {
        sl_buf_free(&jb->p[k].id);
        sl_buf_free(&jb->p[k].seq);
        sl_buf_free(&jb->p[k].meta);
        sl_doc_free(&jb->p[k].doc);
        dna_tokens_free(&jb->p[k].tok);
    }
}

/* ---- spooled sequences ----------------------------------------------------
 * The whole-sequence tokenization of dna_tok_encode, in pieces: character
 * ids depend on one base each and the k-mer at position p on bases
 * [p, p + k), so the positions [p0, p0 + P) (p0 and P multiples of the
 * stride) come from bases [p0, p0 + P + k - 1) alone. The reverse
 * complement's base i is the complement of base len - 1 - i, so its pieces
 * are read from the end of the spool and reverse-complemented. add_eos,
 * truncation and padding (dna/nuctok.c, finish) are applied around the
 * pieces, and the soft-mask runs are merged across them. */

#define PIECE_BASES ((size_t)4 << 20)

typedef struct spooled {
    const dna_emitter *e;
    int fd;
    uint64_t len;
    int rc;
    dna_tok_opts raw; /* the options without add_eos and max_length */
    size_t step;      /* token positions per piece (a multiple of the stride) */
    char *bases;
    dna_tokens tok;
    uint64_t n_piece; /* pieces */
} spooled;

static int read_bases(spooled *s, uint64_t start, size_t n, sl_err *err)
{
    uint64_t at = s->rc ? s->len - start - n : start;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(s->fd, s->bases + got, n - got, (off_t)(at + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sl_errf(err, "temporary file of a long sequence: %s", k < 0 ? strerror(errno) : "short read");
        got += (size_t)k;
    }
    if (s->rc)
        dna_revcomp(s->bases, n);
    return 0;
}

/* Raw tokens (no eos, truncation or padding) of piece i into s->tok. */
static int piece(spooled *s, uint64_t i, sl_err *err)
{
    int k = s->raw.kmer ? s->raw.kmer : 1;
    uint64_t p0 = i * s->step;
    uint64_t end = p0 + s->step + (uint64_t)k - 1;
    if (end > s->len)
        end = s->len;
    size_t n = p0 < end ? (size_t)(end - p0) : 0;
    if (read_bases(s, p0, n, err) < 0)
        return -1;
    if (!s->raw.kmer)
        dna_tok_encode_bytes(&s->raw, s->bases, n, &s->tok);
    else
        dna_tok_encode(&s->raw, s->bases, n, &s->tok);
    return 0;
}

/* Soft-mask runs [a, b) of token positions, merged across pieces. */
typedef struct runs {
    uint64_t *v; /* pairs */
    size_t n, cap;
} runs;

static void add_run(runs *r, uint64_t a, uint64_t b)
{
    if (r->n && r->v[2 * r->n - 1] == a) {
        r->v[2 * r->n - 1] = b;
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->v = sl_xrealloc(r->v, r->cap * 2 * sizeof *r->v);
    }
    r->v[2 * r->n] = a;
    r->v[2 * r->n + 1] = b;
    r->n++;
}

/* Writes one document (forward or reverse complement) of the spooled sequence. */
static int write_spooled(dna_emitter *e, spooled *s, const char *id, size_t id_len, const char *fields, int rc_doc,
                         uint64_t src_bytes, sl_err *err)
{
    const dna_tok_opts *o = &e->o.tok;
    int keep = o->case_mode == DNA_CASE_KEEP;
    s->rc = rc_doc;
    /* pass 1: the raw token count and, with --case keep, the mask runs */
    uint64_t T = 0;
    runs mr = {0};
    for (uint64_t i = 0; i < s->n_piece; i++) {
        if (piece(s, i, err) < 0) {
            free(mr.v);
            return -1;
        }
        if (keep)
            for (size_t j = 0; j < s->tok.n;) {
                if (!s->tok.mask[j]) {
                    j++;
                    continue;
                }
                size_t m = j;
                while (m < s->tok.n && s->tok.mask[m])
                    m++;
                add_run(&mr, T + j, T + m);
                j = m;
            }
        T += s->tok.n;
    }
    /* the record's layout, as dna/nuctok.c's finish() makes it */
    uint64_t L = o->max_length, body = T, n, padl = 0, padr = 0;
    int eos = o->add_eos;
    if (L && (T || eos)) {
        if (body > L - (uint64_t)eos)
            body = L - (uint64_t)eos;
        uint64_t padn = L - body - (uint64_t)eos;
        if (o->pad_left)
            padl = padn;
        else
            padr = padn;
    }
    n = padl + body + (uint64_t)eos + padr;
    /* metadata as encode_part() writes it */
    sl_buf meta = {0};
    set_meta_buf(&meta, fields, rc_doc);
    if (keep) {
        sl_buf_printf(&meta, "%s\"softmask\":[", meta.len ? "," : "");
        /* runs past the truncation are cut, and moved by left padding */
        for (size_t i = 0; i < mr.n && mr.v[2 * i] < body; i++) {
            uint64_t a = mr.v[2 * i], b = mr.v[2 * i + 1] < body ? mr.v[2 * i + 1] : body;
            sl_buf_printf(&meta, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)(a + padl),
                          (unsigned long long)(b + padl));
        }
        sl_buf_putc(&meta, ']');
    }
    free(mr.v);
    sl_doc d = {0};
    sl_doc_set_id(&d, id, id_len);
    d.src_bytes = src_bytes;
    if (meta.len) {
        sl_buf m = {0};
        sl_buf_putc(&m, '{');
        sl_buf_append(&m, meta.data, meta.len);
        sl_buf_putc(&m, '}');
        sl_doc_set_meta(&d, m.data, m.len);
        sl_buf_free(&m);
    } else {
        sl_doc_set_meta(&d, "", 0);
    }
    sl_buf_free(&meta);
    uint32_t vocab = dna_tok_vocab_size(o);
    int rc = sl_ts_write_doc_begin(e->w, &d, n, vocab - 1, err);
    sl_doc_free(&d);
    if (rc < 0)
        return -1;
    /* pass 2: the tokens, in the stream's width */
    size_t width = sl_ts_writer_width(e->w);
    unsigned char *out = sl_xmalloc((s->step + 1) * width);
    uint32_t pad = (uint32_t)dna_tok_pad_id(o), eos_id = (uint32_t)dna_tok_eos_id(o);
#define PUT_SAME(count, v)                                                                                             \
    for (uint64_t left_ = (count); !rc && left_;) {                                                                    \
        size_t k_ = left_ < s->step ? (size_t)left_ : s->step;                                                         \
        for (size_t j_ = 0; j_ < k_; j_++)                                                                             \
            put_id(out, width, j_, (v));                                                                               \
        rc = sl_ts_write_doc_part(e->w, out, k_, err);                                                                 \
        left_ -= k_;                                                                                                   \
    }
    PUT_SAME(padl, pad)
    uint64_t done = 0;
    for (uint64_t i = 0; !rc && i < s->n_piece && done < body; i++) {
        if (piece(s, i, err) < 0) {
            rc = -1;
            break;
        }
        size_t k = s->tok.n;
        if (k > body - done)
            k = (size_t)(body - done);
        for (size_t j = 0; j < k; j++)
            put_id(out, width, j, o->kmer ? s->tok.ids[j] : s->tok.bytes[j]);
        rc = sl_ts_write_doc_part(e->w, out, k, err);
        done += k;
    }
    if (eos)
        PUT_SAME(1, eos_id)
    PUT_SAME(padr, pad)
#undef PUT_SAME
    free(out);
    if (rc)
        return -1;
    e->written++;
    if (e->pg)
        sl_progress_add(e->pg, 1, src_bytes);
    return 0;
}

int dna_emit_spooled(dna_emitter *e, const char *id, int fd, uint64_t len, const char *meta_fields, uint64_t src_bytes,
                     sl_err *err)
{
    if (dna_emit_flush(e, err) < 0)
        return -1;
    int rc_fwd = e->o.rc_prob > 0 && sl_rng_unit_at(e->o.seed, e->ordinal) < e->o.rc_prob;
    e->ordinal++;
    spooled s = {.e = e, .fd = fd, .len = len, .raw = e->o.tok};
    s.raw.add_eos = 0;
    s.raw.max_length = 0;
    size_t stride = s.raw.kmer ? (size_t)(s.raw.kmer_stride > 0 ? s.raw.kmer_stride : 1) : 1;
    s.step = PIECE_BASES / stride * stride;
    if (!s.step)
        s.step = stride;
    s.n_piece = len ? (len + s.step - 1) / s.step : 1;
    s.bases = sl_xmalloc(s.step + DNA_MAX_KMER);
    sl_buf fid = {0};
    sl_buf_puts(&fid, id);
    if (rc_fwd)
        sl_buf_puts(&fid, "/rc");
    int rc = write_spooled(e, &s, fid.data, fid.len, meta_fields, rc_fwd, src_bytes, err);
    if (!rc && e->o.revcomp_extra) {
        sl_buf_puts(&fid, "/rc");
        rc = write_spooled(e, &s, fid.data, fid.len, meta_fields, 1, 0, err);
    }
    sl_buf_free(&fid);
    free(s.bases);
    dna_tokens_free(&s.tok);
    return rc;
}

int dna_emit_flush(dna_emitter *e, sl_err *err)
{
    return sl_batcher_flush(e->bt, err);
}

uint64_t dna_emitter_docs(const dna_emitter *e)
{
    return e->written;
}

void dna_emitter_free(dna_emitter *e)
{
    if (!e)
        return;
    sl_batcher_free(e->bt);
    free(e);
}
