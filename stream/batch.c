/* Ordered parallel batches (see batch.h). */
#include "stream/batch.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch {
    unsigned char *slots; /* max_items slots of slot_size bytes */
    size_t n;
    size_t used; /* slots handed out so far (those after are still calloc's zeros: not freed one by one) */
    uint64_t cost;
} batch;

/* One team member's run of a batch's items: its front | its end << 32, on a
 * cache line of its own. */
typedef struct run {
    _Alignas(64) uint64_t fb;
} run;

struct sl_batcher {
    sl_batch_ops ops;
    void *ctx;
    sl_batch_opts o;
    batch b[3];      /* push: b[0] (and b[1] async); pull: all three in turn */
    int fill;        /* the batch the caller fills; the other is the worker's */
    int enc_threads; /* threads for encoding one batch */
    run *runs;       /* enc_threads of them */
    /* the worker thread (async only) */
    int async;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int busy; /* the worker holds a batch */
    int quit;
    int wrc; /* the worker failed: its message is in werr, nothing more is written */
    sl_err werr;
};

static void *worker(void *arg);

sl_batcher *sl_batcher_new(const sl_batch_ops *ops, void *ctx, const sl_batch_opts *o)
{
    sl_batcher *b = sl_xcalloc(1, sizeof *b);
    b->ops = *ops;
    b->ctx = ctx;
    b->o = *o;
    if (!b->o.max_items)
        b->o.max_items = 1;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    b->enc_threads = threads;
    b->runs = sl_xzalloc_touched((size_t)threads, sizeof *b->runs);
    b->b[0].slots = sl_xcalloc(b->o.max_items, ops->slot_size);
    if (o->async && threads > 1) {
        /* with a worker, the caller's thread fills and the worker's team encodes */
        b->enc_threads = threads > 2 ? threads - 1 : 1;
        pthread_mutex_init(&b->mu, NULL);
        pthread_cond_init(&b->cv, NULL);
        b->async = pthread_create(&b->th, NULL, worker, b) == 0;
        if (!b->async) { /* no thread to be had: work in the caller's */
            pthread_mutex_destroy(&b->mu);
            pthread_cond_destroy(&b->cv);
            b->enc_threads = threads;
        } else {
            b->b[1].slots = sl_xcalloc(b->o.max_items, ops->slot_size);
        }
    }
    return b;
}

static void *slot(const sl_batcher *b, const batch *t, size_t i)
{
    return t->slots + i * b->ops.slot_size;
}

/* Slot i of t, to be filled */
static void *slot_out(const sl_batcher *b, batch *t, size_t i)
{
    if (i >= t->used)
        t->used = i + 1;
    return slot(b, t, i);
}

/* Cuts t's items into one run per encoding thread (before the team starts). */
static void split_runs(sl_batcher *b, const batch *t)
{
    uint64_t n = t->n, k = (uint64_t)b->enc_threads;
    for (uint64_t r = 0; r < k; r++)
        b->runs[r].fb = n * r / k | (n * (r + 1) / k) << 32;
}

/* The next item of a run, from its front: its index, or -1 when the run is
 * used up. */
static long take(run *r)
{
    uint64_t v = __atomic_load_n(&r->fb, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t f = (uint32_t)v, e = (uint32_t)(v >> 32);
        if (f >= e)
            return -1;
        if (__atomic_compare_exchange_n(&r->fb, &v, v + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return (long)f;
    }
}

/* The back half of what is left of another thread's run, moved to thief's
 * own (used up) run: 1, or 0 when every run is used up. */
static int steal(sl_batcher *b, int me)
{
    int k = b->enc_threads;
    for (int d = 1; d < k; d++) {
        run *r = &b->runs[(me + d) % k];
        uint64_t v = __atomic_load_n(&r->fb, __ATOMIC_RELAXED);
        for (;;) {
            uint64_t f = (uint32_t)v, e = v >> 32;
            if (f >= e)
                break;
            uint64_t m = f + (e - f) / 2; /* the owner keeps [f, m), the thief takes [m, e) */
            if (__atomic_compare_exchange_n(&r->fb, &v, f | m << 32, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                __atomic_store_n(&b->runs[me].fb, m | e << 32, __ATOMIC_RELAXED);
                return 1;
            }
        }
    }
    return 0;
}

/* Run by each thread of the team: its own run of t's items from the front,
 * then, as long as any is left, the back half of another's run as its own.
 * So a thread encodes neighbouring items (documents next to each other in
 * the input share their words: dealt alternately to two threads, the words
 * one thread had just put in the shared stretch cache were fetched at once
 * from the other core's, and a harness over 64 MB of text spent 2-11% more
 * CPU than with each thread on one half of the documents), and no thread
 * waits while items are left. An item is taken by one thread only: a run's
 * front and end move under compare-and-swap, and a stolen range is its
 * thief's alone until others steal from it in turn. */
static void encode_team(sl_batcher *b, batch *t)
{
    int me = omp_get_thread_num();
    long i;
    do {
        while ((i = take(&b->runs[me])) >= 0)
            b->ops.encode(b->ctx, me, slot(b, t, (size_t)i));
    } while (steal(b, me));
}

/* Encodes and writes a batch, then empties it. */
static int process(sl_batcher *b, batch *t, sl_err *err)
{
    long n = (long)t->n;
    if (n == 1 || t->cost < b->o.parallel_min_cost || b->enc_threads < 2) {
        for (long i = 0; i < n; i++)
            b->ops.encode(b->ctx, 0, slot(b, t, (size_t)i));
    } else {
        split_runs(b, t);
#pragma omp parallel num_threads(b->enc_threads)
        encode_team(b, t);
    }
    int rc = 0;
    for (long i = 0; i < n && !rc; i++)
        rc = b->ops.write(b->ctx, slot(b, t, (size_t)i), err) < 0 ? -1 : 0;
    t->n = 0;
    t->cost = 0;
    return rc;
}

static void *worker(void *arg)
{
    sl_batcher *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->busy && !b->quit)
            pthread_cond_wait(&b->cv, &b->mu);
        if (!b->busy)
            break;
        batch *t = &b->b[!b->fill];
        pthread_mutex_unlock(&b->mu);
        sl_err err = {{0}};
        int rc = b->wrc ? 0 : process(b, t, &err); /* after a failure nothing more is written */
        pthread_mutex_lock(&b->mu);
        if (rc) {
            b->wrc = -1;
            b->werr = err;
        }
        b->busy = 0;
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Waits until the worker is idle; -1 with its message if it failed. */
static int wait_idle(sl_batcher *b, sl_err *err)
{
    pthread_mutex_lock(&b->mu);
    while (b->busy)
        pthread_cond_wait(&b->cv, &b->mu);
    int rc = b->wrc;
    if (rc && err)
        *err = b->werr;
    pthread_mutex_unlock(&b->mu);
    return rc;
}

/* The filled batch goes to the worker (after it finished the previous one)
 * and the caller fills the other. Without a worker, or for a small batch, it
 * is processed here: waking the worker and moving the data to its core cost
 * more than the overlap saves on a batch below parallel_min_cost. */
static int hand_over(sl_batcher *b, sl_err *err)
{
    batch *t = &b->b[b->fill];
    if (!b->async || t->cost < b->o.parallel_min_cost) {
        if (b->async && wait_idle(b, err)) /* the batch before goes first */
            return -1;
        return process(b, t, err);
    }
    if (wait_idle(b, err))
        return -1;
    pthread_mutex_lock(&b->mu);
    b->fill = !b->fill;
    b->busy = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return 0;
}

void *sl_batcher_next(sl_batcher *b)
{
    batch *t = &b->b[b->fill];
    return slot_out(b, t, t->n);
}

int sl_batcher_push(sl_batcher *b, uint64_t cost, sl_err *err)
{
    batch *t = &b->b[b->fill];
    t->n++;
    t->cost += cost;
    if (t->n >= b->o.max_items || (b->o.max_cost && t->cost >= b->o.max_cost))
        return hand_over(b, err);
    return 0;
}

int sl_batcher_flush(sl_batcher *b, sl_err *err)
{
    if (b->b[b->fill].n && hand_over(b, err))
        return -1;
    return b->async ? wait_idle(b, err) : 0;
}

/* Fills t until it is full (max_items, max_cost) or the items run out
 * (*done). */
static int fill_batch(sl_batcher *b, batch *t, sl_batch_fill_fn fill, int *done, sl_err *err)
{
    while (!*done && t->n < b->o.max_items && !(b->o.max_cost && t->cost >= b->o.max_cost)) {
        uint64_t cost = 0;
        int got = fill(b->ctx, slot_out(b, t, t->n), &cost, err);
        if (got < 0)
            return -1;
        if (got == 0)
            *done = 1;
        else
            t->n++, t->cost += cost;
    }
    return 0;
}

/* Writes t in order and empties it. */
static int write_batch(sl_batcher *b, batch *t, sl_err *err)
{
    for (size_t i = 0; i < t->n; i++)
        if (b->ops.write(b->ctx, slot(b, t, i), err) < 0)
            return -1;
    t->n = 0;
    t->cost = 0;
    return 0;
}

int sl_batcher_run(sl_batcher *b, sl_batch_fill_fn fill, sl_err *err)
{
    int cur = 0, done = 0, rc = 0;
    if (b->enc_threads < 2) {
        /* one thread: each item is encoded and written as soon as it is
         * filled, in one slot, while its text and ids are still in cache
         * (a batch only serves the threads of a team) */
        void *s = slot_out(b, &b->b[0], 0);
        uint64_t cost;
        int got;
        while ((got = fill(b->ctx, s, &cost, err)) > 0) {
            b->ops.encode(b->ctx, 0, s);
            if (b->ops.write(b->ctx, s, err) < 0)
                return -1;
        }
        return got;
    }
    for (int k = 1; k < 3; k++)
        if (!b->b[k].slots)
            b->b[k].slots = sl_xcalloc(b->o.max_items, b->ops.slot_size);
    /* three batches in flight hold what one did in push mode */
    b->o.max_cost = b->o.max_cost ? (b->o.max_cost + 2) / 3 : 0;
    b->o.max_items = (b->o.max_items + 2) / 3;
    /* batch k is encoded while k - 1 is written and k + 1 filled */
    batch *prev = NULL;
    if (fill_batch(b, &b->b[0], fill, &done, err))
        return -1;
    while (b->b[cur].n) {
        batch *t = &b->b[cur], *next = &b->b[(cur + 1) % 3];
        long n = (long)t->n;
        int wrc = 0, frc = 0;
        sl_err werr = {{0}}, ferr = {{0}};
        if (done && !prev && (n == 1 || t->cost < b->o.parallel_min_cost)) {
            /* the only batch, and small: nothing to write or fill beside it */
            for (long i = 0; i < n; i++)
                b->ops.encode(b->ctx, 0, slot(b, t, (size_t)i));
        } else {
            split_runs(b, t);
#pragma omp parallel num_threads(b->enc_threads)
            {
                /* the caller's thread (its malloc arena holds the
                 * documents' buffers, as in push mode) */
#pragma omp master
                {
                    wrc = prev ? write_batch(b, prev, &werr) : 0;
                    frc = wrc ? 0 : fill_batch(b, next, fill, &done, &ferr);
                }
                encode_team(b, t);
            }
        }
        if (wrc || frc) {
            *err = wrc ? werr : ferr;
            return -1;
        }
        prev = t;
        cur = (cur + 1) % 3;
    }
    if (prev)
        rc = write_batch(b, prev, err);
    return rc;
}

void sl_batcher_free(sl_batcher *b)
{
    if (!b)
        return;
    if (b->async) {
        pthread_mutex_lock(&b->mu);
        b->quit = 1;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->th, NULL);
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->cv);
    }
    for (int k = 0; k < 3; k++) {
        if (b->ops.free_slot && b->b[k].slots)
            for (size_t i = 0; i < b->b[k].used; i++)
                b->ops.free_slot(b->ctx, slot(b, &b->b[k], i));
        free(b->b[k].slots);
    }
    free(b->runs);
    free(b);
}

int sl_slot_keep_settle(sl_slot_keep *k, size_t *held, size_t now, uint64_t text_bytes)
{
    k->docs++;
    k->bytes += text_bytes;
    k->kept -= *held;
    uint64_t typical = k->bytes / k->docs;
    size_t big = k->big > 8 * typical ? k->big : (size_t)(8 * typical);
    int release = now > (k->copies ? k->copies : 1) * big || k->kept + now > k->keep;
    *held = release ? 0 : now;
    k->kept += *held;
    return release;
}
