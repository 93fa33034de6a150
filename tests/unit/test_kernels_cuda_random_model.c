/* tests/cuda/random_model.h, which the GPU tests and bench-cuda use to write
 * checkpoints with random weights, at the depth bench-cuda writes
 * (mamba-130m's 24 layers) but a tiny width: every tensor is written and
 * the checkpoint loads and scores on the CPU backend. Its tensor table once
 * held 4 + 9 entries per layer for the 2 + 10 per layer it writes, so from 3
 * layers on it wrote past its heap block: bench_cuda aborted in malloc() on
 * its first GPU run, while the tests (2 layers) fitted by one entry. Under
 * `make check-asan` an overflow is reported here at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernels/backend.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/score.h"
#include "tests/cuda/random_model.h"

static void write_and_score(int64_t layers)
{
    char dir[] = "/tmp/sluice-random-model-XXXXXX";
    assert_non_null(mkdtemp(dir));
    rm_shape s = {.d_model = 8,
                  .n_layer = layers,
                  .vocab = 16,
                  .d_state = 4,
                  .d_conv = 4,
                  .expand = 2,
                  .dt_rank = 2,
                  .bf16 = 0,
                  .seed = 3};
    assert_int_equal(rm_write(dir, &s), 0);
    sl_err err = {{0}};
    sl_backend *cpu = sl_backend_cpu(1, &err);
    assert_non_null(cpu);
    sl_model *m = sl_model_load(dir, cpu, &err);
    if (!m)
        fail_msg("%s", err.msg);
    /* every layer's tensors were written: embedding 16x8, final norm 8, and per
     * layer norm 8, in_proj 32x8, conv 16x4 + 16, x_proj 10x16, dt_proj 16x2
     * + 16, A_log 16x4, D 16, out_proj 8x16 = 760 */
    assert_int_equal(sl_model_params(m), 16 * 8 + 8 + 760 * layers);
    sl_model_run *r = sl_model_run_new(m, 64, &err);
    assert_non_null(r);
    uint32_t tok[5] = {1, 2, 3, 15, 0};
    float logp[5] = {0};
    sl_score_item it = {.id = "d", .tokens = tok, .n = 5, .logp = logp};
    assert_true(sl_score_batch(r, &it, 1, 0, &err) >= 0);
    for (int i = 0; i < 4; i++) /* log-probabilities of 16 classes from random weights */
        assert_true(logp[i] < 0 && logp[i] > -20);
    sl_model_run_free(r);
    sl_model_free(m);
    sl_backend_close(cpu);
    rm_remove(dir);
}

static void test_two_layers(void **st)
{
    (void)st;
    write_and_score(2);
}

static void test_bench_depth(void **st)
{
    (void)st;
    write_and_score(24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_two_layers), cmocka_unit_test(test_bench_depth)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
