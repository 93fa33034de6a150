/* The Mamba forward pass against log-probabilities from independent
 * implementations (tests/model/gen_fixtures.py: HF transformers
 * MambaForCausalLM cross-checked with a float64 PyTorch reference written
 * from mamba_ssm's selective_scan_ref), on tiny random checkpoints of both
 * naming schemes, both config schemas, F32/BF16/F16, single and sharded.
 * Also: chunked == whole, packed == alone, thread-count independence, and
 * the long-context (reset every W tokens) variant. */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/support.h"

#include "kernels/kernels.h"
#include "model/mamba.h"
#include "model/model.h"
#include "model/safetensors.h"
#include "model/score.h"
#include "stream/io.h"
#include "base/json.h"

typedef struct doc {
    char id[16];
    uint32_t *tok;
    int64_t n;
    double *logp, *logp_reset;
    int64_t reset_every;
    double nll;
} doc;

static const char *fixture(const char *name)
{
    return sl_test_path("tests/data/model/%s", name);
}

static double *num_array(const sl_json *a, int64_t *n)
{
    assert_non_null(a);
    assert_int_equal(a->type, SL_JSON_ARRAY);
    double *p = malloc((a->n + 1) * sizeof *p);
    for (size_t i = 0; i < a->n; i++)
        p[i] = a->kids[i]->num;
    *n = (int64_t)a->n;
    return p;
}

static doc *read_expected(const char *name, size_t *ndocs)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/expected.jsonl", fixture(name));
    char *text;
    size_t len;
    sl_err err;
    assert_int_equal(sl_read_file(path, &text, &len, &err), 0);
    doc *docs = calloc(64, sizeof *docs);
    size_t n = 0;
    for (char *line = text, *nl; line < text + len && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        assert_non_null(jd);
        const sl_json *r = sl_json_root(jd);
        doc *d = &docs[n++];
        snprintf(d->id, sizeof d->id, "%s", sl_json_get_str(r, "id"));
        int64_t nt, nl2;
        double *t = num_array(sl_json_get(r, "tokens"), &nt);
        d->tok = malloc((size_t)(nt + 1) * sizeof *d->tok);
        for (int64_t i = 0; i < nt; i++)
            d->tok[i] = (uint32_t)t[i];
        free(t);
        d->n = nt;
        d->logp = num_array(sl_json_get(r, "logp"), &nl2);
        assert_int_equal(nl2, nt > 0 ? nt - 1 : 0);
        assert_int_equal(sl_json_get_num(r, "nll", &d->nll), 0);
        if (sl_json_get(r, "logp_reset")) {
            d->logp_reset = num_array(sl_json_get(r, "logp_reset"), &nl2);
            assert_int_equal(sl_json_get_int(r, "reset_every", &d->reset_every), 0);
        }
        sl_json_free(jd);
    }
    free(text);
    *ndocs = n;
    return docs;
}

static void free_docs(doc *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(d[i].tok), free(d[i].logp), free(d[i].logp_reset);
    free(d);
}

/* Scores docs with the given chunk size, packed (one batch) or alone. */
static float **score(sl_model *m, doc *docs, size_t n, int64_t chunk, int packed, int64_t reset_every, double *nll)
{
    sl_err err;
    sl_model_run *r = sl_model_run_new(m, chunk, &err);
    assert_non_null(r);
    float **lp = calloc(n, sizeof *lp);
    sl_score_item *it = calloc(n, sizeof *it);
    for (size_t i = 0; i < n; i++) {
        lp[i] = calloc((size_t)docs[i].n + 1, sizeof(float));
        it[i] = (sl_score_item){.id = docs[i].id, .tokens = docs[i].tok, .n = docs[i].n, .logp = lp[i]};
    }
    if (packed) {
        if (sl_score_batch(r, it, n, reset_every, &err) < 0)
            fail_msg("%s", err.msg);
    } else {
        for (size_t i = 0; i < n; i++)
            if (sl_score_batch(r, &it[i], 1, reset_every, &err) < 0)
                fail_msg("%s", err.msg);
    }
    for (size_t i = 0; i < n; i++) {
        nll[i] = it[i].nll;
        assert_int_equal(it[i].n_pred, docs[i].n > 1 ? docs[i].n - 1 : 0);
    }
    free(it);
    sl_model_run_free(r);
    return lp;
}

static void free_lp(float **lp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lp[i]);
    free(lp);
}

static void check_against_reference_tol(const char *name, double chunk_tol)
{
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    assert_non_null(be);
    sl_model *m = sl_model_load(fixture(name), be, &err);
    if (!m)
        fail_msg("%s", err.msg);
    size_t n;
    doc *docs = read_expected(name, &n);
    double nll[64], nll2[64];
    float **lp = score(m, docs, n, 64, 1, 0, nll);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        for (int64_t t = 0; t + 1 < docs[i].n; t++) {
            double e = fabs(lp[i][t] - docs[i].logp[t]) / fmax(1.0, fabs(docs[i].logp[t]));
            worst = fmax(worst, e);
        }
        assert_true(fabs(nll[i] - docs[i].nll) <= 1e-4 * fmax(1.0, fabs(docs[i].nll)));
    }
    print_message("%s: %zu docs, worst per-token relative error vs reference %.2e\n", name, n, worst);
    assert_true(worst < 1e-4);

    /* chunked == whole (chunk 1, 7 and larger than every document), packed ==
     * alone. Equal up to fp32 rounding: OpenBLAS picks different kernels
     * (with different summation orders) for different matrix heights, and
     * the differences propagate through the layers. */
    int64_t chunks[] = {1, 7, 4096};
    double wchunk = 0;
    for (int c = 0; c < 3; c++) {
        for (int packed = 0; packed < 2; packed++) {
            float **lp2 = score(m, docs, n, chunks[c], packed, 0, nll2);
            for (size_t i = 0; i < n; i++)
                for (int64_t t = 0; t + 1 < docs[i].n; t++)
                    wchunk = fmax(wchunk, fabs(lp2[i][t] - lp[i][t]) / fmax(1.0, fabs(lp[i][t])));
            free_lp(lp2, n);
        }
    }
    print_message("%s: chunked/packed vs whole: worst relative difference %.2e\n", name, wchunk);
    assert_true(wchunk <= chunk_tol);
    /* thread count: 1 and 3 threads give the same bits (the CPU backend's
     * work split does not depend on the thread count) */
    for (int th = 1; th <= 3; th += 2) {
        omp_set_num_threads(th);
        float **lp2 = score(m, docs, n, 64, 1, 0, nll2);
        for (size_t i = 0; i < n; i++)
            for (int64_t t = 0; t + 1 < docs[i].n; t++)
                assert_true(lp2[i][t] == lp[i][t]);
        free_lp(lp2, n);
    }
    omp_set_num_threads(2);
    /* long context: state reset every W tokens */
    for (size_t i = 0; i < n; i++) {
        if (!docs[i].logp_reset)
            continue;
        float **lp2 = score(m, &docs[i], 1, 13, 1, docs[i].reset_every, nll2);
        for (int64_t t = 0; t + 1 < docs[i].n; t++)
            assert_true(fabs(lp2[0][t] - docs[i].logp_reset[t]) <= 1e-4 * fmax(1.0, fabs(docs[i].logp_reset[t])));
        free_lp(lp2, 1);
    }
    free_lp(lp, n);
    free_docs(docs, n);
    sl_model_free(m);
    sl_backend_close(be);
}

/* Mamba-1: chunked and packed runs agree with the whole to 1e-5. */
static void check_against_reference(const char *name)
{
    check_against_reference_tol(name, 1e-5);
}

static void test_hf_f32(void **st)
{
    (void)st;
    check_against_reference("hf_f32");
}
static void test_ssm_f32(void **st)
{
    (void)st;
    check_against_reference("ssm_f32");
}
static void test_hf_bf16(void **st)
{
    (void)st;
    check_against_reference("hf_bf16");
}
static void test_sharded_f16(void **st)
{
    (void)st;
    check_against_reference("sharded_f16");
}

/* Falcon-Mamba (transformers' FalconMambaForCausalLM): f32 tied with the
 * default mixer_rms_eps and a long-context reference; bf16 untied with
 * biases, dt rank 5 and mixer_rms_eps 1e-3. */
static void test_falcon_f32(void **st)
{
    (void)st;
    check_against_reference("falcon_f32");
}
static void test_falcon_bf16(void **st)
{
    (void)st;
    check_against_reference("falcon_bf16");
}

/* Mamba-2's chunked SSD cuts its chunks at the call's boundaries, so other
 * call lengths add and multiply in another order: 3e-5 instead of 1e-5. */
#define M2_CHUNK_TOL 3e-5

/* Mamba-2 (transformers' Mamba2ForCausalLM and a float64 recurrence written
 * from mamba_ssm's Mamba2): HF names and config, f32, tied, 4 heads, with a
 * long-context reference; mamba_ssm names and config (ssm_cfg.layer Mamba2),
 * bf16, untied, biases, 8 heads, vocab 77 padded to 80. */
static void test_mamba2_f32(void **st)
{
    (void)st;
    check_against_reference_tol("m2_f32", M2_CHUNK_TOL);
}
static void test_mamba2_ssm_bf16(void **st)
{
    (void)st;
    check_against_reference_tol("m2_ssm_bf16", M2_CHUNK_TOL);
}

/* Mamba-2 beyond what transformers computes (tests/model/gen_m2_fixtures.py:
 * float64 recurrence and ssd_minimal-style chunked references): 8 heads in
 * 2 groups, f16, time_step_limit [0, 0.6], long-context reference; mamba_ssm
 * names with gated-MLP blocks (d_intermediate 40 -> 128), 4 groups, bf16,
 * untied, biases. Documents of 1, 2, 5, 37, 64 and 300 tokens: one and
 * several SSD chunks, lengths that are and are not multiples of the chunk. */
static void test_mamba2_groups_f16(void **st)
{
    (void)st;
    check_against_reference_tol("m2g_f16", M2_CHUNK_TOL);
}
static void test_mamba2_mlp_bf16(void **st)
{
    (void)st;
    check_against_reference_tol("m2_mlp_bf16", M2_CHUNK_TOL);
}

/* A backend without the chunked SSD operator (CUDA today) runs Mamba-2 on
 * the selective scan: the same reference values for n_groups 1; n_groups >
 * 1, dt limits and MLP blocks are refused naming the feature. */
static void test_mamba2_scan_fallback(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    assert_non_null(be);
    int (*ssd)(sl_backend *, const sl_ssd_args *, sl_err *) = be->ssd_chunked;
    be->ssd_chunked = NULL;
    be->mul_silu = NULL;
    const char *ok[] = {"m2_f32", "m2_ssm_bf16"};
    for (int f = 0; f < 2; f++) {
        sl_model *m = sl_model_load(fixture(ok[f]), be, &err);
        if (!m)
            fail_msg("%s", err.msg);
        size_t n;
        doc *docs = read_expected(ok[f], &n);
        double nll[64];
        float **lp = score(m, docs, n, 64, 1, 0, nll);
        for (size_t i = 0; i < n; i++)
            for (int64_t t = 0; t + 1 < docs[i].n; t++)
                assert_true(fabs(lp[i][t] - docs[i].logp[t]) <= 1e-4 * fmax(1.0, fabs(docs[i].logp[t])));
        free_lp(lp, n);
        free_docs(docs, n);
        sl_model_free(m);
    }
    const char *bad[][2] = {{"m2g_f16", "Mamba-2 with n_groups/ngroups > 1 is not implemented on the cpu backend"},
                            {"m2_mlp_bf16", "n_groups/ngroups > 1"}};
    for (int f = 0; f < 2; f++) {
        assert_null(sl_model_load(fixture(bad[f][0]), be, &err));
        if (!strstr(err.msg, bad[f][1]))
            fail_msg("'%s' does not contain '%s'", err.msg, bad[f][1]);
    }
    be->ssd_chunked = ssd; /* the SSD but no x * silu(z) */
    assert_null(sl_model_load(fixture("m2_mlp_bf16"), be, &err));
    assert_non_null(strstr(err.msg, "d_intermediate > 0 (gated-MLP blocks) is not implemented on the cpu backend"));
    sl_backend_close(be);
}

/* Config values as read, and the parameter count equal to the tensors' total. */
static void test_config_and_params(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    sl_model *mm = sl_model_load(fixture("ssm_f32"), be, &err);
    assert_non_null(mm);
    const sl_mamba *m = sl_mamba_of(mm);
    assert_non_null(m);
    const sl_mamba_config *c = sl_mamba_cfg(m);
    assert_int_equal(c->d_model, 48);
    assert_int_equal(c->n_layer, 3);
    assert_int_equal(c->vocab_size, 77);
    assert_int_equal(c->vocab, 80); /* padded to a multiple of 8 */
    assert_int_equal(c->d_inner, 96);
    assert_int_equal(c->dt_rank, 3);
    assert_int_equal(c->d_state, 16);
    assert_true(fabs(c->eps - 1e-6) < 1e-12);
    /* the architecture-neutral facts: the same numbers (mamba_ssm's config has no eos) */
    const sl_model_info *mi = sl_model_get_info(mm);
    assert_string_equal(mi->arch, "mamba");
    assert_int_equal(mi->vocab_size, 77);
    assert_int_equal(mi->vocab, 80);
    assert_int_equal(mi->pad_multiple, 8);
    assert_int_equal(mi->eos, -1);
    assert_ptr_equal(sl_model_backend(mm), be);
    char p[4200];
    snprintf(p, sizeof p, "%s/model.safetensors", fixture("ssm_f32"));
    sl_st_file *f = sl_st_open(p, &err);
    assert_non_null(f);
    int64_t total = 0;
    for (size_t i = 0; i < sl_st_count(f); i++)
        total += (int64_t)sl_st_tensor_at(f, i)->numel;
    assert_int_equal(sl_mamba_params(m), total);
    assert_int_equal(sl_model_params(mm), total);
    assert_true(sl_model_flops_per_token(mm) == sl_mamba_flops_per_token(m));
    sl_st_close(f);
    sl_model_free(mm);
    mm = sl_model_load(fixture("hf_bf16"), be, &err);
    assert_non_null(mm);
    c = sl_mamba_cfg(sl_mamba_of(mm));
    assert_int_equal(c->dt_rank, 5);
    assert_int_equal(c->d_conv, 3);
    assert_int_equal(c->d_state, 4);
    assert_true(c->use_bias);
    sl_model_free(mm);
    /* the HF config's eos_token_id */
    mm = sl_model_load(fixture("hf_f32"), be, &err);
    assert_non_null(mm);
    assert_int_equal(sl_model_get_info(mm)->eos, 0);
    assert_int_equal(sl_model_get_info(mm)->vocab, 64);
    sl_model_free(mm);
    sl_backend_close(be);
}

/* Token ids outside the vocabulary are rejected with the document named. */
static void test_ids_out_of_vocab(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    sl_model *m = sl_model_load(fixture("hf_f32"), be, &err);
    assert_non_null(m);
    sl_model_run *r = sl_model_run_new(m, 8, &err);
    assert_int_equal(sl_model_run_chunk(r), 8);
    assert_ptr_equal(sl_model_run_model(r), m);
    uint32_t toks[3] = {1, 64, 2};
    sl_score_item it = {.id = "doc7", .tokens = toks, .n = 3};
    assert_int_equal(sl_score_batch(r, &it, 1, 0, &err), -1);
    assert_non_null(strstr(err.msg, "doc7"));
    assert_non_null(strstr(err.msg, "64"));
    sl_model_run_free(r);
    sl_model_free(m);
    sl_backend_close(be);
}

/* The model interface runs exactly the Mamba-1 forward pass: sl_model_forward
 * and sl_mamba_forward give the same bits, and a run's state carries across
 * calls until sl_model_run_reset. */
static void test_interface_is_mamba(void **st)
{
    (void)st;
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    sl_model *mm = sl_model_load(fixture("hf_f32"), be, &err);
    sl_mamba *m = sl_mamba_load(fixture("hf_f32"), be, &err);
    assert_non_null(mm);
    assert_non_null(m);
    sl_model_run *r = sl_model_run_new(mm, 16, &err);
    sl_mamba_run *rm = sl_mamba_run_new(m, 16, &err);
    assert_non_null(r);
    assert_non_null(rm);
    int32_t ids[12], tg[12];
    uint8_t rs[12] = {1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, rs_later[12] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    for (int t = 0; t < 12; t++)
        ids[t] = (t * 7 + 3) % 64, tg[t] = (t * 5 + 1) % 64;
    float a[12], b[12], c[12];
    assert_int_equal(sl_model_forward(r, ids, rs, tg, 12, a, &err), 0);
    assert_int_equal(sl_mamba_forward(rm, ids, rs, tg, 12, b, &err), 0);
    assert_memory_equal(a, b, sizeof a);
    /* without a reset at 0 the second call continues the first one's state ... */
    assert_int_equal(sl_model_forward(r, ids, rs_later, tg, 12, c, &err), 0);
    assert_true(memcmp(a, c, 6 * sizeof *a) != 0);
    assert_memory_equal(a + 6, c + 6, 6 * sizeof *a);
    /* ... and after sl_model_run_reset it is the first call again */
    assert_int_equal(sl_model_run_reset(r, &err), 0);
    assert_int_equal(sl_model_forward(r, ids, rs_later, tg, 12, c, &err), 0);
    assert_memory_equal(a, c, sizeof a);
    sl_mamba_run_free(rm);
    sl_mamba_free(m);
    sl_model_run_free(r);
    sl_model_free(mm);
    sl_backend_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hf_f32),           cmocka_unit_test(test_interface_is_mamba),
        cmocka_unit_test(test_ssm_f32),          cmocka_unit_test(test_hf_bf16),
        cmocka_unit_test(test_sharded_f16),      cmocka_unit_test(test_config_and_params),
        cmocka_unit_test(test_ids_out_of_vocab), cmocka_unit_test(test_falcon_f32),
        cmocka_unit_test(test_falcon_bf16),      cmocka_unit_test(test_mamba2_f32),
        cmocka_unit_test(test_mamba2_ssm_bf16),  cmocka_unit_test(test_mamba2_groups_f16),
        cmocka_unit_test(test_mamba2_mlp_bf16),  cmocka_unit_test(test_mamba2_scan_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
