/* The whole model (model/mamba.c's forward pass and model/score.c's packed
 * scoring, unchanged) on a tested backend against the CPU backend: on the
 * committed fixtures (tests/data/model/: F32, BF16, sharded F16; both naming
 * schemes) also against their PyTorch log-probabilities, and on larger
 * random checkpoints written by random_model.h. Documents are scored packed
 * in one call (state reset at each start), alone, in small chunks (state
 * carried across calls), and with the long-context reset every W tokens.
 * Tolerances as mamba_ssm's tests: fp32 rtol 6e-4 / atol 2e-3; bf16 weights
 * or TF32 GEMMs rtol 3e-3 / atol 5e-3, widened where the GEMM inputs'
 * rounding alone costs more on the model at hand: the same forward pass
 * on the CPU with the projections' inputs rounded as the GPU rounds them
 * (round_backend.h) measures that cost, w_p (worst |diff|/tolerance
 * against the fp32 CPU and against PyTorch), and the tested backend may
 * deviate up to max(1, MC_SLACK w_p). Why that bound, and MC_SLACK = 2:
 * docs/cuda.md, "Tolerances".
 *
 * Shared by tests/cuda/test_cuda_model.c (CUDA, `make test-cuda`) and
 * tests/unit/test_kernels_cuda_emu_model.c (the host emulation, `make test`). */
#ifndef SLUICE_TESTS_CUDA_MODEL_CHECKS_H
#define SLUICE_TESTS_CUDA_MODEL_CHECKS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cuda/cuda_backend.h"
#include "model/model.h"
#include "model/score.h"
#include "stream/io.h"
#include "base/json.h"
#include "tests/cuda/random_model.h"
#include "tests/cuda/round_backend.h"

/* mc_rref: the CPU backend with the GPU's GEMM input rounding */
static sl_backend *mc_ref, *mc_dut, *mc_rref;
static int mc_quick;

/* A reduced-precision run may deviate from the fp32 reference up to
 * MC_SLACK times what the rounding of the GEMM inputs alone costs on the
 * CPU (docs/cuda.md, "Tolerances"). */
#define MC_SLACK 2.0

/* TF32 on or off on the tested backend: the CUDA switch, or the emulation's */
static int mc_set_tf32(sl_backend *b, int on)
{
    int r = sl_cuda_set_tf32(b, on);
    return r >= 0 ? r : rb_set_tf32(b, on);
}

typedef struct mc_doc {
    char id[16];
    uint32_t *tok;
    int64_t n;
    double *logp; /* PyTorch's, when from a fixture */
} mc_doc;

static double *mc_nums(const sl_json *a, int64_t *n)
{
    assert_non_null(a);
    assert_int_equal(a->type, SL_JSON_ARRAY);
    double *p = malloc((a->n + 1) * sizeof *p);
    for (size_t i = 0; i < a->n; i++)
        p[i] = a->kids[i]->num;
    *n = (int64_t)a->n;
    return p;
}

static mc_doc *mc_read_expected(const char *dir, size_t *nd)
{
    char path[4200], *text;
    size_t len, n = 0;
    sl_err err = {{0}};
    snprintf(path, sizeof path, "%s/expected.jsonl", dir);
    if (sl_read_file(path, &text, &len, &err) != 0)
        fail_msg("%s", err.msg);
    mc_doc *docs = calloc(64, sizeof *docs);
    for (char *line = text, *nl; line < text + len && *line && n < 64; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        if (!jd)
            fail_msg("%s: %s", path, err.msg);
        const sl_json *r = sl_json_root(jd);
        mc_doc *d = &docs[n++];
        snprintf(d->id, sizeof d->id, "%s", sl_json_get_str(r, "id"));
        int64_t nt, nl2;
        double *t = mc_nums(sl_json_get(r, "tokens"), &nt);
        d->tok = malloc((size_t)(nt + 1) * sizeof *d->tok);
        for (int64_t i = 0; i < nt; i++)
            d->tok[i] = (uint32_t)t[i];
        d->n = nt;
        free(t);
        d->logp = mc_nums(sl_json_get(r, "logp"), &nl2);
        assert_int_equal(nl2, nt > 0 ? nt - 1 : 0);
        sl_json_free(jd);
    }
    free(text);
    *nd = n;
    return docs;
}

static mc_doc *mc_random_docs(const int64_t *lens, size_t n, int64_t vocab)
{
    mc_doc *docs = calloc(n, sizeof *docs);
    for (size_t i = 0; i < n; i++) {
        snprintf(docs[i].id, sizeof docs[i].id, "r%zu", i);
        docs[i].n = lens[i];
        docs[i].tok = malloc((size_t)(lens[i] + 1) * sizeof(uint32_t));
        for (int64_t t = 0; t < lens[i]; t++)
            docs[i].tok[t] = (uint32_t)(rm_uniform() * (float)vocab) % (uint32_t)vocab;
    }
    return docs;
}

static void mc_free_docs(mc_doc *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(d[i].tok), free(d[i].logp);
    free(d);
}

/* Per-document log-probabilities: packed (one batch, resets at starts) or
 * each document alone; `chunk` tokens per forward call. */
static float **mc_score(sl_model *m, mc_doc *docs, size_t n, int64_t chunk, int packed, int64_t reset_every)
{
    sl_err err = {{0}};
    sl_model_run *r = sl_model_run_new(m, chunk, &err);
    if (!r)
        fail_msg("%s", err.msg);
    float **lp = calloc(n, sizeof *lp);
    sl_score_item *it = calloc(n, sizeof *it);
    for (size_t i = 0; i < n; i++) {
        lp[i] = calloc((size_t)docs[i].n + 1, sizeof(float));
        it[i] = (sl_score_item){.id = docs[i].id, .tokens = docs[i].tok, .n = docs[i].n, .logp = lp[i]};
    }
    for (size_t i = 0; i < (packed ? 1 : n); i++)
        if (sl_score_batch(r, packed ? it : &it[i], packed ? n : 1, reset_every, &err) < 0)
            fail_msg("%s: %s", sl_model_backend(m)->name, err.msg);
    free(it);
    sl_model_run_free(r);
    return lp;
}

static void mc_free_lp(float **lp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lp[i]);
    free(lp);
}

/* Largest |got - want| / (atol + rtol |want|) over all predictions. */
static double mc_worst(float **got, float **want, const mc_doc *docs, size_t n, double rtol, double atol)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        for (int64_t t = 0; t + 1 < docs[i].n; t++) {
            double w = want ? want[i][t] : docs[i].logp[t], e = fabs(got[i][t] - w) / (atol + rtol * fabs(w));
            worst = e != e ? INFINITY : fmax(worst, e);
        }
    return worst;
}

/* The bound for a reduced-precision run: max(1, MC_SLACK w_p), where w_p is
 * the rounding-only model's worst deviation from `want` (fp32 CPU) or,
 * want == NULL, from the fixture's PyTorch log-probabilities. */
static double mc_bound(float **rounded, float **want, const mc_doc *docs, size_t n, double rtol, double atol,
                       double *wp)
{
    *wp = mc_worst(rounded, want, docs, n, rtol, atol);
    return fmax(1.0, MC_SLACK * *wp);
}

static void mc_compare(const char *label, const char *dir, mc_doc *docs, size_t n, int bf16, int64_t small_chunk)
{
    sl_err err = {{0}};
    sl_model *mr = sl_model_load(dir, mc_ref, &err);
    if (!mr)
        fail_msg("cpu: %s", err.msg);
    sl_model *mq = sl_model_load(dir, mc_rref, &err);
    if (!mq)
        fail_msg("cpu (rounded GEMM inputs): %s", err.msg);
    sl_model *md = sl_model_load(dir, mc_dut, &err);
    if (!md)
        fail_msg("%s: %s", mc_dut->name, err.msg);
    float **want = mc_score(mr, docs, n, 4096, 1, 0);
    for (int tf32 = 0; tf32 < 2; tf32++) {
        if (mc_set_tf32(mc_dut, tf32) < 0 && tf32)
            break; /* no TF32 switch */
        rb_set_tf32(mc_rref, tf32);
        int loose = bf16 || tf32;
        double rtol = loose ? 3e-3 : 6e-4, atol = loose ? 5e-3 : 2e-3;
        const char *prec = bf16 ? "bf16" : tf32 ? "tf32" : "fp32";
        double bound = 1.0, bound_pt = 1.0;
        if (loose) {
            float **q = mc_score(mq, docs, n, 4096, 1, 0);
            double wp, wpp = 0;
            bound = mc_bound(q, want, docs, n, rtol, atol, &wp);
            if (docs[0].logp)
                bound_pt = mc_bound(q, NULL, docs, n, rtol, atol, &wpp);
            print_message("  %-22s rounding  %s: the same rounding on the cpu costs %.2e vs cpu, %.2e vs PyTorch: "
                          "bounds %.2f, %.2f\n",
                          label, prec, wp, wpp, bound, bound_pt);
            mc_free_lp(q, n);
        }
        struct {
            const char *how;
            int64_t chunk;
            int packed;
        } runs[] = {{"packed", 4096, 1}, {"alone", 4096, 0}, {"chunked", small_chunk, 1}};
        for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
            float **got = mc_score(md, docs, n, runs[k].chunk, runs[k].packed, 0);
            double w = mc_worst(got, want, docs, n, rtol, atol);
            print_message("  %-22s %-8s %s: worst |diff|/tolerance vs cpu %.2e", label, runs[k].how, prec, w);
            double wr = docs[0].logp ? mc_worst(got, NULL, docs, n, rtol, atol) : 0;
            if (docs[0].logp)
                print_message(", vs PyTorch %.2e", wr);
            print_message("\n");
            assert_true(w <= bound);
            assert_true(wr <= bound_pt);
            mc_free_lp(got, n);
        }
    }
    mc_set_tf32(mc_dut, 1);
    rb_set_tf32(mc_rref, 1);
    /* long-context variant: state reset every 13 tokens */
    float **wr13 = mc_score(mr, docs, n, 4096, 1, 13), **got13 = mc_score(md, docs, n, 4096, 1, 13);
    float **q13 = mc_score(mq, docs, n, 4096, 1, 13);
    double wp13, bound13 = mc_bound(q13, wr13, docs, n, 3e-3, 5e-3, &wp13);
    double w = mc_worst(got13, wr13, docs, n, 3e-3, 5e-3);
    print_message("  %-22s reset-13 worst |diff|/tolerance vs cpu %.2e (rounding alone %.2e: bound %.2f)\n", label, w,
                  wp13, bound13);
    assert_true(w <= bound13);
    mc_free_lp(wr13, n), mc_free_lp(got13, n), mc_free_lp(q13, n), mc_free_lp(want, n);
    sl_model_free(md);
    sl_model_free(mq);
    sl_model_free(mr);
}

static void mc_fixture(const char *name, int bf16)
{
    const char *src = getenv("SLUICE_SRC");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/model/%s", src ? src : ".", name);
    size_t n;
    mc_doc *docs = mc_read_expected(dir, &n);
    mc_compare(name, dir, docs, n, bf16, 7);
    mc_free_docs(docs, n);
}

static void test_fixture_hf_f32(void **st)
{
    (void)st;
    mc_fixture("hf_f32", 0);
}
static void test_fixture_ssm_f32(void **st)
{
    (void)st;
    mc_fixture("ssm_f32", 0);
}
static void test_fixture_hf_bf16(void **st)
{
    (void)st;
    mc_fixture("hf_bf16", 1);
}
static void test_fixture_sharded_f16(void **st)
{
    (void)st;
    mc_fixture("sharded_f16", 0);
}

/* Falcon-Mamba: the weightless norms of dt, B and C on the tested backend */
static void test_fixture_falcon_f32(void **st)
{
    (void)st;
    mc_fixture("falcon_f32", 0);
}
static void test_fixture_falcon_bf16(void **st)
{
    (void)st;
    mc_fixture("falcon_bf16", 1);
}

/* Mamba-2: the chunked SSD (or, on a backend without it, the scan with
 * per-head dt and A repeated over the head's channels); m2g: n_groups > 1
 * and a dt limit; m2_mlp: gated-MLP blocks */
static void test_fixture_m2_f32(void **st)
{
    (void)st;
    mc_fixture("m2_f32", 0);
}
static void test_fixture_m2_ssm_bf16(void **st)
{
    (void)st;
    mc_fixture("m2_ssm_bf16", 1);
}

static void test_fixture_m2g_f16(void **st)
{
    (void)st;
    mc_fixture("m2g_f16", 0);
}
static void test_fixture_m2_mlp_bf16(void **st)
{
    (void)st;
    mc_fixture("m2_mlp_bf16", 1);
}

static void mc_random(int bf16)
{
    char dir[] = "/tmp/sluice-cuda-model-XXXXXX";
    assert_non_null(mkdtemp(dir));
    rm_shape s = {.d_model = mc_quick ? 64 : 256,
                  .n_layer = 2,
                  .vocab = mc_quick ? 256 : 2048,
                  .d_state = 16,
                  .d_conv = 4,
                  .expand = 2,
                  .dt_rank = mc_quick ? 4 : 16,
                  .bf16 = bf16,
                  .seed = 7};
    assert_int_equal(rm_write(dir, &s), 0);
    /* lengths around the scan kernel's chunks (128, 512, 1024 tokens) */
    const int64_t full[] = {1, 2, 33, 129, 700, 1500, 5}, quick[] = {1, 2, 33, 129, 300, 5};
    size_t n = mc_quick ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
    rm_rng = 99;
    mc_doc *docs = mc_random_docs(mc_quick ? quick : full, n, s.vocab);
    mc_compare(bf16 ? "random bf16" : "random f32", dir, docs, n, bf16, 100);
    mc_free_docs(docs, n);
    rm_remove(dir);
}

static void test_random_f32(void **st)
{
    (void)st;
    mc_random(0);
}
static void test_random_bf16(void **st)
{
    (void)st;
    mc_random(1);
}

static int run_model_checks(sl_backend *reference, sl_backend *tested, int quick_shapes)
{
    sl_err err = {{0}};
    mc_rref = rb_wrap(sl_backend_cpu(1, &err), rb_mode_from_env());
    if (!mc_rref)
        return fprintf(stderr, "cpu backend: %s\n", err.msg), 1;
    mc_ref = reference, mc_dut = tested, mc_quick = quick_shapes;
    printf("whole model on %s (%s) against the CPU backend%s\n", tested->name, sl_cuda_describe(tested),
           quick_shapes ? " (small shapes)" : "");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_hf_f32),     cmocka_unit_test(test_fixture_ssm_f32),
        cmocka_unit_test(test_fixture_hf_bf16),    cmocka_unit_test(test_fixture_sharded_f16),
        cmocka_unit_test(test_fixture_falcon_f32), cmocka_unit_test(test_fixture_falcon_bf16),
        cmocka_unit_test(test_fixture_m2_f32),     cmocka_unit_test(test_fixture_m2_ssm_bf16),
        cmocka_unit_test(test_fixture_m2g_f16),    cmocka_unit_test(test_fixture_m2_mlp_bf16),
        cmocka_unit_test(test_random_f32),         cmocka_unit_test(test_random_bf16),
    };
    int rc = cmocka_run_group_tests_name(tested->name, tests, NULL, NULL);
    rb_forget(mc_rref);
    sl_backend_close(mc_rref);
    return rc;
}

#endif
