/* Warmup SPEC parsing and resolution (docs/shards.md section 3). Expected
 * stages are worked out by hand from the published schedules: the Mamba DNA
 * doubling with constant tokens per step, DeepSpeed's fixed_linear
 * (min + (max-min)*s/N, rounded down to a multiple of 8) and fixed_root
 * (min + (max-min)*(s/N)^(1/degree)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/warmup.h"

static void test_double(void **state)
{
    (void)state;
    sl_warmup w;
    sl_err err = {{0}};
    assert_int_equal(sl_warmup_parse("double:1024..8192,epochs=2,batch=4", &w, &err), 0);
    assert_int_equal(w.n, 4);
    assert_int_equal(w.max_len, 8192);
    const uint32_t len[4] = {1024, 2048, 4096, 8192};
    const uint64_t batch[4] = {32, 16, 8, 4};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(w.stages[i].seq_len, len[i]);
        assert_int_equal(w.stages[i].batch, batch[i]);
        assert_int_equal(w.stages[i].tokens_per_step, 32768); /* constant */
    }
    /* 2 epochs of D = 100000 tokens at 32768 tokens/step: ceil(200000/32768) = 7 steps each */
    assert_int_equal(sl_warmup_resolve(&w, 100000, &err), 0);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(w.stages[i].steps, 7);
        assert_int_equal(w.stages[i].start_token, i * 7 * 32768);
    }
    sl_warmup_free(&w);
    /* tps=, steps=, and the Mamba paper's 2^24 tokens per step from 1024 */
    assert_int_equal(sl_warmup_parse("double:1024..131072,steps=10,tps=16777216", &w, &err), 0);
    assert_int_equal(w.n, 8);
    for (size_t i = 0; i < w.n; i++) {
        assert_int_equal(w.stages[i].tokens_per_step, 1u << 24);
        assert_int_equal(w.stages[i].batch, (1u << 24) / w.stages[i].seq_len);
    }
    assert_int_equal(w.stages[0].batch, 16384);
    assert_int_equal(w.stages[7].batch, 128);
    assert_int_equal(sl_warmup_resolve(&w, 5, &err), 0);
    assert_int_equal(w.stages[3].steps, 10);
    assert_int_equal(w.stages[3].start_token, 30ull << 24);
    sl_warmup_free(&w);
}

static void test_linear(void **state)
{
    (void)state;
    sl_warmup w;
    sl_err err = {{0}};
    /* s=0..4 of N=5: 64 + 64*s/5 = 64, 76.8, 89.6, 102.4, 115.2 -> 64, 72, 88, 96, 112 */
    assert_int_equal(sl_warmup_parse("linear:64..128,steps=5,batch=2", &w, &err), 0);
    const uint32_t len[6] = {64, 72, 88, 96, 112, 128};
    assert_int_equal(w.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(w.stages[i].seq_len, len[i]);
        assert_int_equal(w.stages[i].batch, 256 / len[i]);
    }
    assert_int_equal(sl_warmup_resolve(&w, 1000, &err), 0);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(w.stages[i].steps, 1);
    assert_int_equal(w.stages[5].steps, -1); /* open-ended */
    /* tokens per step: exact when the length divides 256, within one row otherwise */
    assert_int_equal(w.stages[0].tokens_per_step, 256);
    assert_int_equal(w.stages[1].tokens_per_step, 216); /* 3 x 72 */
    for (size_t i = 0; i < 6; i++)
        assert_true(w.stages[i].tokens_per_step > 256 - w.stages[i].seq_len);
    sl_warmup_free(&w);
    /* consecutive equal lengths merge: 8..16 over 4 steps = 8, 10, 12, 14 -> 8 x4 steps */
    assert_int_equal(sl_warmup_parse("linear:8..16,steps=4", &w, &err), 0);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.stages[0].seq_len, 8);
    assert_int_equal(w.stages[0].amount, 4);
    sl_warmup_free(&w);
}

static void test_root(void **state)
{
    (void)state;
    sl_warmup w;
    sl_err err = {{0}};
    /* 64 + 960*sqrt(s/4): s=0 64; s=1 544; s=2 742.8->736; s=3 895.4->888 */
    assert_int_equal(sl_warmup_parse("root:64..1024,steps=4", &w, &err), 0);
    const uint32_t len[5] = {64, 544, 736, 888, 1024};
    assert_int_equal(w.n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(w.stages[i].seq_len, len[i]);
    sl_warmup_free(&w);
    assert_int_equal(sl_warmup_parse("root:64..1024,steps=4,degree=1", &w, &err), 0);
    assert_int_equal(w.stages[1].seq_len, 304); /* same as linear: 64 + 240 */
    sl_warmup_free(&w);
}

static void test_stages(void **state)
{
    (void)state;
    sl_warmup w;
    sl_err err = {{0}};
    /* HyenaDNA-like: epochs per stage, batch halving */
    assert_int_equal(sl_warmup_parse("stages:1024x256@2epochs,2048x128@1000steps,4096x64@1e6tokens", &w, &err), 0);
    assert_int_equal(w.n, 3);
    assert_int_equal(w.max_len, 4096);
    assert_int_equal(sl_warmup_resolve(&w, 1u << 20, &err), 0);
    assert_int_equal(w.stages[0].steps, 8); /* 2 * 2^20 / 2^18 */
    assert_int_equal(w.stages[1].steps, 1000);
    assert_int_equal(w.stages[2].steps, 4); /* ceil(1e6 / 262144) */
    assert_int_equal(w.stages[2].start_token, 8ull * 262144 + 1000ull * 262144);
    sl_warmup_free(&w);
}

static void test_single(void **state)
{
    (void)state;
    sl_warmup w;
    sl_err err = {{0}};
    sl_warmup_single(&w, 2048, 4);
    assert_int_equal(sl_warmup_resolve(&w, 2048 * 40, &err), 0);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.stages[0].steps, 10);
    sl_warmup_free(&w);
}

static void expect_bad(const char *spec, const char *msg)
{
    sl_warmup w;
    sl_err err = {{0}};
    if (sl_warmup_parse(spec, &w, &err) != -1)
        fail_msg("'%s' was accepted", spec);
    if (!strstr(err.msg, msg))
        fail_msg("'%s': message '%s' lacks '%s'", spec, err.msg, msg);
    assert_null(w.stages);
}

static void test_errors(void **state)
{
    (void)state;
    expect_bad("double:1020..8160", "multiple of 8");
    expect_bad("double:1024..3072", "power of two");
    expect_bad("double:2048..1024", "larger than MAX");
    expect_bad("cosine:8..16", "must start with");
    expect_bad("double:8..16,foo=1", "unknown key");
    expect_bad("double:8..16,tps=12", "multiple of MAX");
    expect_bad("double:8..16,batch=0", "bad value");
    expect_bad("linear:8..16", "steps=N");
    expect_bad("linear:8..16,epochs=1", "steps=N");
    expect_bad("double:8", "MIN..MAX");
    expect_bad("stages:1024x0@1steps", "batch");
    expect_bad("stages:1020x2@1steps", "multiple of 8");
    expect_bad("stages:1024x2@1days", "steps, tokens or epochs");
    expect_bad("stages:1024x2@1steps;2048x1@1steps", "','");
    expect_bad("double:8..16,epochs=-1", "bad value");
    expect_bad("", "must start with");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double), cmocka_unit_test(test_linear), cmocka_unit_test(test_root),
        cmocka_unit_test(test_stages), cmocka_unit_test(test_single), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("shard_warmup", tests, NULL, NULL);
}
