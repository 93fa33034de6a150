/* Ordered parallel batches: "encode items in parallel, write them in input
 * order", the loop behind every tokenizing stage (text documents in
 * tokenize/docpipe.c, DNA sequences in dna/emit.c, audio files in audio/)
 * and the `read` stage's JSON Lines (stream/read.c).
 *
 * The caller fills items one at a time into slots of a batch
 * (sl_batcher_next, then sl_batcher_push). When the batch is full (max_items,
 * or max_cost reached), its items are encoded in parallel (OpenMP: each
 * thread a run of neighbouring items, then what is left of the others')
 * and then written one by one in the order they were pushed, so
 * the output never depends on the thread count. With `async` and 2+
 * threads, a worker thread encodes and writes a batch while the caller fills
 * the next (two batches, handed back and forth): what a second core adds
 * when reading and writing are serial.
 *
 * Slots are the caller's structs (slot_size bytes, zeroed at first use) and
 * keep their buffers from batch to batch; `encode` runs on several threads at
 * once (on different slots), `write` runs on one thread at a time, in order.
 * A slot's encode failure is the caller's to record in the slot and report
 * from `write`. */
#ifndef SLUICE_STREAM_BATCH_H
#define SLUICE_STREAM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_batch_ops {
    size_t slot_size;
    /* Encodes one slot; thread is the OpenMP thread number (0 when serial). */
    void (*encode)(void *ctx, int thread, void *slot);
    /* Writes one slot, in input order; -1 with err stops everything. */
    int (*write)(void *ctx, void *slot, sl_err *err);
    /* Frees a slot's buffers (when the batcher is freed); NULL = nothing. */
    void (*free_slot)(void *ctx, void *slot);
} sl_batch_ops;

typedef struct sl_batch_opts {
    size_t max_items;           /* items per batch (> 0) */
    uint64_t max_cost;          /* a batch is full when the pushed costs reach this; 0 = only max_items */
    uint64_t parallel_min_cost; /* a batch of less cost (or of one item) is encoded serially in the
                                   thread that writes it: cheaper than waking a team; 0 = always a team */
    int threads;                /* encoding threads; 0 = omp_get_max_threads() */
    int async;                  /* with 2+ threads: a worker thread encodes and writes while the caller fills;
                                   it takes one of the threads, and only batches of parallel_min_cost or
                                   more go to it (the others are done by the caller, in order) */
} sl_batch_opts;

typedef struct sl_batcher sl_batcher;

sl_batcher *sl_batcher_new(const sl_batch_ops *ops, void *ctx, const sl_batch_opts *o);
/* The next slot to fill (valid until sl_batcher_push). */
void *sl_batcher_next(sl_batcher *b);
/* The slot from sl_batcher_next is filled; cost counts toward max_cost.
 * Encodes and writes the batch when it is full. -1 reports a failed write
 * (of this batch or, async, of an earlier one). */
int sl_batcher_push(sl_batcher *b, uint64_t cost, sl_err *err);
/* Encodes and writes what is pushed, and waits until it is written. */
int sl_batcher_flush(sl_batcher *b, sl_err *err);
/* Pull mode, the batcher reads too: fill(ctx, slot, &cost, err) puts the
 * next item into slot and returns 1, or 0 when there are no more, or -1
 * with err. Batches are filled, encoded and written in order as with push,
 * but with 2+ threads one thread of the team writes the batch before and
 * fills the next one while the others encode this one, then joins them:
 * reading (JSON parsing, decompression) and writing no longer hold the
 * encoding up. The three batches in flight get a third of max_items and
 * max_cost each, so memory stays that of one batch. With one thread each
 * item is encoded and written as soon as it is filled (one slot, still in
 * cache). Not with async. 0, or -1 with err from a failed fill or write
 * (nothing after it is written). */
typedef int (*sl_batch_fill_fn)(void *ctx, void *slot, uint64_t *cost, sl_err *err);
int sl_batcher_run(sl_batcher *b, sl_batch_fill_fn fill, sl_err *err);
/* Stops the worker and frees every slot (what was not flushed is dropped). */
void sl_batcher_free(sl_batcher *b);

/* What the idle slots of a stage keep between uses, so that memory stays
 * bounded by the batch: a slot gives its buffers back after a document much
 * larger than the typical one (more than 8 times the mean text so far, and
 * more than big bytes), and when the idle slots together would keep more
 * than keep bytes (documents of mixed sizes would otherwise leave each slot
 * with the capacity of the largest document it ever held). */
typedef struct sl_slot_keep {
    size_t keep, big; /* the limits */
    unsigned copies;  /* a slot holding copies of the text (0: one) may hold this many times "much larger" */
    size_t kept;      /* what the idle slots keep now */
    uint64_t docs, bytes;
} sl_slot_keep;
/* A slot's write is done: it held *held bytes of buffers after its last
 * write and holds now bytes, for a document of text_bytes. Returns 1 when
 * the slot must give its buffers back (the caller frees them); *held is
 * what it keeps. */
int sl_slot_keep_settle(sl_slot_keep *k, size_t *held, size_t now, uint64_t text_bytes);

#ifdef __cplusplus
}
#endif

#endif
