/* The ordered parallel batches of stream/batch.h in pull mode
 * (sl_batcher_run), with 1 to 4 threads and batch limits by count and by
 * cost: every item is filled once, encoded once and written once, in input
 * order, whatever the thread count; no more items are in flight than one
 * push-mode batch holds; a failed fill or write stops the run with its
 * message and nothing after it is written; an empty input writes nothing. */
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
} item;

typedef struct {
    uint64_t n_items, next, written;
    uint64_t fail_fill, fail_write; /* the item whose fill / write fails; UINT64_MAX: none */
    int order_ok, twice;
    long in_flight, max_in_flight;
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
    (void)thread;
    item *it = slot;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
