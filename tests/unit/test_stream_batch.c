/* The ordered parallel batches of stream/batch.h in pull mode
 * (sl_batcher_run), with 1 to 4 threads and batch limits by count and by
 * cost: every item is filled once, encoded once and written once, in input
 * order, whatever the thread count; no more items are in flight than one
 * push-mode batch holds; a failed fill or write stops the run with its
 * message and nothing after it is written; an empty input writes nothing;
 * each thread encodes runs of neighbouring items; a team smaller than asked
 * for (nested in another) still encodes everything; and push mode, with and
 * without its worker thread, keeps the same promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/batch.h"

typedef struct {
    uint64_t in, out;
    int encoded;
    int thread; /* the team member that encoded it */
} item;

typedef struct {
    uint64_t n_items, next, written;
    uint64_t fail_fill, fail_write; /* the item whose fill / write fails; UINT64_MAX: none */
    int order_ok, twice;
    long in_flight, max_in_flight;
    int last_thread;
    uint64_t switches; /* items encoded by another thread than the item before */
    uint64_t rng;
} run_ctx;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ULL;
    return x ^ (x >> 29);
}

static int fill(void *ctx, void *slot, uint64_t *cost, sl_err *err)
{
    run_ctx *c = ctx;
    if (c->next == c->n_items)
        return 0;
    if (c->next == c->fail_fill)
        return sl_errf(err, "fill failed at %llu", (unsigned long long)c->next);
    item *it = slot;
    it->in = c->next++;
    it->encoded = 0;
    *cost = mix(it->in) % 1000;
#pragma omp atomic
    c->in_flight++;
    long f;
#pragma omp atomic read
    f = c->in_flight;
    if (f > c->max_in_flight)
        c->max_in_flight = f; /* (only fill raises it, one thread at a time) */
    return 1;
}

static void encode(void *ctx, int thread, void *slot)
{
    (void)ctx;
    item *it = slot;
    it->thread = thread;
    uint64_t x = it->in;
    for (int k = 0; k < (int)(mix(x) % 2000); k++) /* uneven work */
        x = mix(x);
    it->out = mix(it->in) ^ 0x5555;
    it->encoded++;
    (void)x;
}

static int write_item(void *ctx, void *slot, sl_err *err)
{
    run_ctx *c = ctx;
    item *it = slot;
    if (it->in == c->fail_write)
        return sl_errf(err, "write failed at %llu", (unsigned long long)it->in);
    if (it->in != c->written || it->out != (mix(it->in) ^ 0x5555) || it->encoded != 1)
        c->order_ok = 0;
    if (c->written && it->thread != c->last_thread)
        c->switches++;
    c->last_thread = it->thread;
    c->written++;
#pragma omp atomic
    c->in_flight--;
    return 0;
}

static int run(run_ctx *c, int threads, size_t max_items, uint64_t max_cost, sl_err *err)
{
    static const sl_batch_ops ops = {sizeof(item), encode, write_item, NULL};
    sl_batch_opts o = {.max_items = max_items, .max_cost = max_cost, .parallel_min_cost = 500, .threads = threads};
    sl_batcher *b = sl_batcher_new(&ops, c, &o);
    int rc = sl_batcher_run(b, fill, err);
    sl_batcher_free(b);
    return rc;
}

static run_ctx ctx_of(uint64_t n)
{
    return (run_ctx){.n_items = n, .fail_fill = UINT64_MAX, .fail_write = UINT64_MAX, .order_ok = 1};
}

static void test_order(void **state)
{
    (void)state;
    static const size_t items[] = {1, 2, 3, 7, 64, 4096};
    static const uint64_t costs[] = {0, 1, 999, 20000};
    static const uint64_t ns[] = {0, 1, 2, 5, 100, 3001};
    for (int threads = 1; threads <= 4; threads++)
        for (size_t a = 0; a < sizeof items / sizeof *items; a++)
            for (size_t k = 0; k < sizeof costs / sizeof *costs; k++)
                for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
                    if (ns[i] / items[a] > 200)
                        continue; /* (thousands of tiny batches: slow, nothing new) */
                    run_ctx c = ctx_of(ns[i]);
                    sl_err e = {{0}};
                    assert_int_equal(run(&c, threads, items[a], costs[k], &e), 0);
                    assert_int_equal(c.written, ns[i]);
                    assert_true(c.order_ok);
                    /* in flight: at most what one push-mode batch holds
                     * (three batches of a third, rounded up) */
                    size_t third = (items[a] + 2) / 3;
                    assert_true((size_t)c.max_in_flight <= (threads > 1 ? 3 * third : items[a]));
                }
}

static void test_failures(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 3; threads++)
        for (uint64_t at = 0; at < 300; at += 37) {
            run_ctx c = ctx_of(300);
            c.fail_fill = at;
            sl_err e = {{0}};
            assert_int_equal(run(&c, threads, 16, 0, &e), -1);
            char want[64];
            snprintf(want, sizeof want, "fill failed at %llu", (unsigned long long)at);
            assert_string_equal(e.msg, want);
            assert_true(c.order_ok);
            assert_true(c.written <= at); /* nothing from the failed fill on */

            c = ctx_of(300);
            c.fail_write = at;
            e = (sl_err){{0}};
            assert_int_equal(run(&c, threads, 16, 0, &e), -1);
            snprintf(want, sizeof want, "write failed at %llu", (unsigned long long)at);
            assert_string_equal(e.msg, want);
            assert_true(c.order_ok);
            assert_int_equal(c.written, at); /* everything before it, nothing after */
        }
}

/* Each thread encodes runs of neighbouring items: its own part of a batch
 * from the front, then the back half of what another has left, so along
 * the input the encoding thread changes a few times per batch (dealt an
 * item at a time, as a dynamic schedule does, it would change about every
 * other item: some 1500 times here). */
static void test_runs(void **state)
{
    (void)state;
    for (int threads = 2; threads <= 4; threads++)
        for (int rep = 0; rep < 5; rep++) {
            run_ctx c = ctx_of(3001);
            sl_err e = {{0}};
            assert_int_equal(run(&c, threads, 4096, 0, &e), 0); /* batches of 1366 (a third) */
            assert_int_equal(c.written, 3001);
            assert_true(c.order_ok);
            /* a steal takes half of what is left: about log2(1366) = 11
             * per thread and batch at most */
            assert_true(c.switches <= (uint64_t)(3 * threads * 12));
        }
}

/* Called from a thread of an outer OpenMP team (nested teams off), the
 * batcher gets a team of one: that thread must encode every run, the
 * absent threads' included. */
static void test_nested(void **state)
{
    (void)state;
    int ok = 1;
#pragma omp parallel num_threads(2) reduction(&& : ok)
    {
        run_ctx c = ctx_of(1000);
        sl_err e = {{0}};
        ok = run(&c, 3, 90, 0, &e) == 0 && c.written == 1000 && c.order_ok;
    }
    assert_true(ok);
}

/* Push mode (sl_batcher_push/flush, DNA and audio), with and without the
 * worker thread: every item encoded once, written once, in order. */
static void test_push(void **state)
{
    (void)state;
    static const sl_batch_ops ops = {sizeof(item), encode, write_item, NULL};
    for (int threads = 1; threads <= 4; threads++)
        for (int async = 0; async <= 1; async++) {
            run_ctx c = ctx_of(2500);
            sl_batch_opts o = {.max_items = 300, .parallel_min_cost = 500, .threads = threads, .async = async};
            sl_batcher *b = sl_batcher_new(&ops, &c, &o);
            sl_err e = {{0}};
            for (uint64_t i = 0; i < c.n_items; i++) {
                item *it = sl_batcher_next(b);
                it->in = i;
                it->encoded = 0;
#pragma omp atomic
                c.in_flight++;
                assert_int_equal(sl_batcher_push(b, mix(i) % 1000, &e), 0);
            }
            assert_int_equal(sl_batcher_flush(b, &e), 0);
            sl_batcher_free(b);
            assert_int_equal(c.written, c.n_items);
            assert_true(c.order_ok);
        }
}

/* The idle slots' memory rule: a slot keeps its buffers until a document
 * much larger than the typical one (8x the mean text, at least big; copies
 * times that for a slot holding the text several times), or until the idle
 * slots together would keep more than keep bytes. */
static void test_slot_keep(void **state)
{
    (void)state;
    sl_slot_keep k = {.keep = 10000, .big = 1000};
    size_t a = 0, b = 0, c = 0;
    /* documents of 100 bytes: buffers of 500 bytes kept (500 <= max(1000, 800)) */
    assert_int_equal(sl_slot_keep_settle(&k, &a, 500, 100), 0);
    assert_int_equal(a, 500);
    assert_int_equal(k.kept, 500);
    /* a slot of 1,200 bytes after a 100-byte document is released (> 1000 and > 8 x 100) */
    assert_int_equal(sl_slot_keep_settle(&k, &b, 1200, 100), 1);
    assert_int_equal(b, 0);
    assert_int_equal(k.kept, 500);
    /* a slot's own earlier buffers are not counted twice */
    assert_int_equal(sl_slot_keep_settle(&k, &a, 900, 100), 0);
    assert_int_equal(k.kept, 900);
    /* the idle slots together: 900 + 950 + ... up to keep */
    for (int i = 0; i < 9; i++) {
        size_t h = 0;
        assert_int_equal(sl_slot_keep_settle(&k, &h, 950, 100), 0);
    }
    assert_int_equal(k.kept, 900 + 9 * 950);
    assert_int_equal(sl_slot_keep_settle(&k, &c, 950, 100), 1); /* 10,400 would be over 10,000 */
    assert_int_equal(k.kept, 900 + 9 * 950);
    /* as the typical document grows, "much larger" does too: 8 x the mean */
    sl_slot_keep g = {.keep = 1 << 30, .big = 10};
    size_t h = 0;
    for (int i = 0; i < 100; i++)
        sl_slot_keep_settle(&g, &h, 100, 1000);
    assert_int_equal(sl_slot_keep_settle(&g, &h, 7999, 1000), 0);
    assert_int_equal(sl_slot_keep_settle(&g, &h, 8500, 1000), 1);
    /* three copies of the text: three times as much */
    sl_slot_keep t = {.keep = 1 << 30, .big = 1000, .copies = 3};
    h = 0;
    assert_int_equal(sl_slot_keep_settle(&t, &h, 2900, 10), 0);
    assert_int_equal(sl_slot_keep_settle(&t, &h, 3100, 10), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),  cmocka_unit_test(test_failures), cmocka_unit_test(test_runs),
        cmocka_unit_test(test_nested), cmocka_unit_test(test_push),     cmocka_unit_test(test_slot_keep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
