/* Batched, ordered tokenization of sequences: see emit.h.
 *
 * With more than one thread, a batch is tokenized and written by a worker
 * thread while the caller reads the next one (two batches, handed back and
 * forth): reading and writing are both serial, so this overlap is what a
 * second core can add. Batches are written in the order they were filled,
 * one at a time, so the output does not depend on the thread count. */
#include "dna/emit.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stream/rng.h"

/* A batch ends at 8 MB of bases or 256 documents: small enough that the
 * jobs' buffers stay in cache for short reads (4096 documents per batch
 * made 100 bp reads twice as slow), big enough to share among threads. */
#define BATCH_BASES (8u << 20)
#define BATCH_DOCS 256
#define PARALLEL_MIN_BASES (1u << 20)

typedef struct job {
    sl_buf id, seq, meta;
    uint64_t src_bytes;
    int rc; /* reverse-complement before tokenizing */
    sl_doc doc;
    dna_tokens tok;
} job;

typedef struct batch {
    job *jobs;
    size_t n, cap;
    size_t bases;
} batch;

struct dna_emitter {
    dna_emit_opts o;
    sl_ts_writer *w;
    sl_progress *pg;
    batch b[2];
    int fill;         /* the batch the caller fills; the other is the worker's */
    uint64_t ordinal; /* forward documents handed over so far (for rc_prob) */
    uint64_t written;
    int narrow;       /* character ids go to the stream as bytes (dna_tok_encode_bytes) */
    int enc_threads;  /* threads for tokenizing one batch */
    /* the worker thread (only with 2+ threads) */
    int async;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int busy; /* the worker holds a batch */
    int quit;
    int wrc;  /* the worker failed: its message is in werr, nothing more is written */
    sl_err werr;
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

static void *worker(void *arg);

dna_emitter *dna_emitter_new(const dna_emit_opts *o, sl_ts_writer *w, sl_progress *pg)
{
    dna_emitter *e = sl_xcalloc(1, sizeof *e);
    e->o = *o;
    e->w = w;
    e->pg = pg;
    e->narrow = !o->tok.kmer && sl_ts_writer_width(w) == 1;
    int threads = omp_get_max_threads();
    /* with a worker, the caller's thread reads and the worker's team tokenizes */
    e->enc_threads = threads > 2 ? threads - 1 : 1;
    if (threads > 1) {
        pthread_mutex_init(&e->mu, NULL);
        pthread_cond_init(&e->cv, NULL);
        e->async = pthread_create(&e->th, NULL, worker, e) == 0;
        if (!e->async) { /* no thread to be had: work in the caller's */
            pthread_mutex_destroy(&e->mu);
            pthread_cond_destroy(&e->cv);
            e->enc_threads = threads;
        }
    }
    return e;
}

static job *push(batch *b)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        b->jobs = sl_xrealloc(b->jobs, cap * sizeof *b->jobs);
        memset(b->jobs + b->cap, 0, (cap - b->cap) * sizeof *b->jobs);
        b->cap = cap;
    }
    job *j = &b->jobs[b->n++];
    sl_buf_clear(&j->id);
    sl_buf_clear(&j->seq);
    sl_buf_clear(&j->meta);
    return j;
}

static void set_meta(job *j, const char *fields, int rc_doc)
{
    if (fields && *fields)
        sl_buf_puts(&j->meta, fields);
    if (rc_doc)
        sl_buf_printf(&j->meta, "%s\"revcomp\":true", j->meta.len ? "," : "");
}

static int hand_over(dna_emitter *e, sl_err *err);

int dna_emit(dna_emitter *e, const char *id, sl_buf *seq, const char *meta_fields, uint64_t src_bytes, sl_err *err)
{
    batch *b = &e->b[e->fill];
    int rc_fwd = e->o.rc_prob > 0 && sl_rng_unit_at(e->o.seed, e->ordinal) < e->o.rc_prob;
    e->ordinal++;
    job *j = push(b);
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
    b->bases += j->seq.len;
    if (e->o.revcomp_extra) { /* (the CLI keeps this and rc_prob apart) */
        size_t fi = b->n - 1;
        job *r = push(b);
        const job *fwd = &b->jobs[fi]; /* after push, which may move the array */
        sl_buf_append(&r->id, fwd->id.data, fwd->id.len);
        sl_buf_puts(&r->id, "/rc");
        sl_buf_append(&r->seq, fwd->seq.data ? fwd->seq.data : "", fwd->seq.len);
        r->src_bytes = 0; /* the input bytes are counted once, by the forward document */
        r->rc = 1;
        set_meta(r, meta_fields, 1);
        b->bases += r->seq.len;
    }
    if (b->bases >= BATCH_BASES || b->n >= BATCH_DOCS)
        return hand_over(e, err);
    return 0;
}

static void encode_job(const dna_tok_opts *o, int narrow, job *j)
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

/* Tokenizes and writes a batch, then empties it. */
static int process(dna_emitter *e, batch *b, sl_err *err)
{
    const dna_tok_opts *o = &e->o.tok;
    long n = (long)b->n;
    /* Documents are tokenized one per task, when the batch is worth waking
     * the threads for: a region per batch of short reads costs more than it
     * saves (idle OpenMP threads spin), and one record is one task anyway. */
    if (n == 1 || b->bases < PARALLEL_MIN_BASES || e->enc_threads < 2) {
        for (long i = 0; i < n; i++)
            encode_job(o, e->narrow, &b->jobs[i]);
    } else {
#pragma omp parallel for schedule(dynamic, 4) num_threads(e->enc_threads)
        for (long i = 0; i < n; i++)
            encode_job(o, e->narrow, &b->jobs[i]);
    }
    int rc = 0;
    for (long i = 0; i < n; i++) {
        job *j = &b->jobs[i];
        if (!rc && (e->narrow ? sl_ts_write_doc_raw(e->w, &j->doc, j->tok.bytes, j->tok.n, DNA_CHAR_VOCAB - 1, err)
                              : sl_ts_write_doc(e->w, &j->doc, err)) < 0)
            rc = -1;
        if (!rc) {
            e->written++;
            if (e->pg)
                sl_progress_add(e->pg, 1, j->src_bytes);
        }
        /* release big buffers so one huge record does not pin its memory */
        if (j->seq.cap > (64u << 20))
            sl_buf_free(&j->seq);
        if (j->tok.cap > (16u << 20) || j->tok.bytes_cap > (64u << 20))
            dna_tokens_free(&j->tok);
        if (j->doc.cap_tokens > (16u << 20))
            sl_doc_free(&j->doc);
    }
    b->n = 0;
    b->bases = 0;
    return rc;
}

static void *worker(void *arg)
{
    dna_emitter *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->busy && !e->quit)
            pthread_cond_wait(&e->cv, &e->mu);
        if (!e->busy)
            break;
        batch *b = &e->b[!e->fill];
        pthread_mutex_unlock(&e->mu);
        sl_err err = {{0}};
        int rc = process(e, b, &err);
        pthread_mutex_lock(&e->mu);
        if (rc) {
            e->wrc = -1;
            e->werr = err;
        }
        e->busy = 0;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* Waits until the worker is idle; -1 with its message if it failed. */
static int wait_idle(dna_emitter *e, sl_err *err)
{
    pthread_mutex_lock(&e->mu);
    while (e->busy)
        pthread_cond_wait(&e->cv, &e->mu);
    int rc = e->wrc;
    if (rc && err)
        *err = e->werr;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* The filled batch goes to the worker (after it finished the previous one)
 * and the caller fills the other. Without a worker, or for a small batch, it
 * is processed here: waking the worker and moving the data to its core cost
 * more than the overlap saves on less than PARALLEL_MIN_BASES (measured:
 * 100 bp reads, 256 per batch, took 0.13 s instead of 0.10 s for 65 MB). */
static int hand_over(dna_emitter *e, sl_err *err)
{
    batch *b = &e->b[e->fill];
    if (!e->async || b->bases < PARALLEL_MIN_BASES) {
        if (e->async && wait_idle(e, err)) /* the batch before goes first */
            return -1;
        return process(e, b, err);
    }
    if (wait_idle(e, err))
        return -1;
    pthread_mutex_lock(&e->mu);
    e->fill = !e->fill;
    e->busy = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return 0;
}

int dna_emit_flush(dna_emitter *e, sl_err *err)
{
    if (e->b[e->fill].n && hand_over(e, err))
        return -1;
    return e->async ? wait_idle(e, err) : 0;
}

uint64_t dna_emitter_docs(const dna_emitter *e) { return e->written; }

void dna_emitter_free(dna_emitter *e)
{
    if (!e)
        return;
    if (e->async) {
        pthread_mutex_lock(&e->mu);
        e->quit = 1;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->th, NULL);
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->cv);
    }
    for (int k = 0; k < 2; k++) {
        batch *b = &e->b[k];
        for (size_t i = 0; i < b->cap; i++) {
            sl_buf_free(&b->jobs[i].id);
            sl_buf_free(&b->jobs[i].seq);
            sl_buf_free(&b->jobs[i].meta);
            sl_doc_free(&b->jobs[i].doc);
            dna_tokens_free(&b->jobs[i].tok);
        }
        free(b->jobs);
    }
    free(e);
}
