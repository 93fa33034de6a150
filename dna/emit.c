/* Batched, ordered tokenization of sequences: see emit.h. The batches,
 * their parallel encoding and the worker thread that overlaps reading with
 * tokenizing and writing are stream/batch.h's (async). */
#include "dna/emit.h"

#include <stdlib.h>
#include <string.h>

#include "stream/batch.h"
#include "stream/rng.h"

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
                        .chunk = o->revcomp_extra ? 2 : 4,
                        .async = 1};
    e->bt = sl_batcher_new(&ops, e, &bo);
    return e;
}

static void set_meta(part *j, const char *fields, int rc_doc)
{
    sl_buf_clear(&j->meta);
    if (fields && *fields)
        sl_buf_puts(&j->meta, fields);
    if (rc_doc)
        sl_buf_printf(&j->meta, "%s\"revcomp\":true", j->meta.len ? "," : "");
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
            if (e->pg)
                sl_progress_add(e->pg, 1, j->src_bytes);
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
