/* The tensor source (model/tensors.h) on the fixture checkpoints
 * (tests/model/gen_fixtures.py, written with the `safetensors` library):
 * what it lists and finds matches the files and, for the sharded one, the
 * index's weight_map as parsed here; values read as fp32 match the raw
 * bytes decoded here (F32 copied, F16 decoded by hand from IEEE 754);
 * broken directories give messages naming the file and tensor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/support.h"

#include "model/safetensors.h"
#include "model/tensors.h"
#include "stream/io.h"
#include "base/json.h"

static const char *fixture(const char *name)
{
    return sl_test_path("tests/data/model/%s", name);
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* IEEE 754 binary16, little-endian, to float (written from the format). */
static float half_le(const unsigned char *p)
{
    unsigned h = p[0] | (unsigned)p[1] << 8;
    int sign = h >> 15, e = (h >> 10) & 31;
    unsigned m = h & 1023;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024.0 + m, e - 25);
    return (float)(sign ? -v : v);
}

static void test_single_file(void **st)
{
    (void)st;
    sl_err err;
    sl_tensors *ts = sl_tensors_open(fixture("hf_f32"), &err);
    if (!ts)
        fail_msg("%s", err.msg);
    assert_string_equal(sl_tensors_format(ts), "safetensors");
    assert_true(ends_with(sl_tensors_name(ts), "hf_f32/model.safetensors"));
    char p[4200];
    snprintf(p, sizeof p, "%s/model.safetensors", fixture("hf_f32"));
    sl_st_file *f = sl_st_open(p, &err);
    assert_non_null(f);
    assert_int_equal(sl_tensors_count(ts), sl_st_count(f));
    for (size_t i = 0; i < sl_st_count(f); i++) {
        const sl_st_tensor *t = sl_st_tensor_at(f, i);
        sl_tensor_info a, b;
        sl_tensors_at(ts, i, &a);
        assert_string_equal(a.name, t->name);
        assert_int_equal(sl_tensors_find(ts, t->name, &b), 1);
        assert_string_equal(b.name, t->name);
        assert_true(ends_with(b.file, "hf_f32/model.safetensors"));
        assert_int_equal(b.dtype, SL_TENSOR_F32);
        assert_string_equal(b.dtype_name, "F32");
        assert_int_equal(b.ndim, t->ndim);
        for (int d = 0; d < t->ndim; d++)
            assert_int_equal(b.shape[d], t->shape[d]);
        assert_int_equal(b.numel, t->numel);
        /* fp32 values: the stored little-endian bytes */
        float *got = malloc((t->numel + 1) * sizeof *got), *want = malloc((t->numel + 1) * sizeof *want);
        memcpy(want, t->data, t->numel * sizeof(float));
        assert_int_equal(sl_tensors_read_f32(ts, t->name, got, &err), 0);
        assert_memory_equal(got, want, t->numel * sizeof(float));
        free(got);
        free(want);
    }
    sl_tensor_info x;
    assert_int_equal(sl_tensors_find(ts, "lm_head.weight", &x), 0); /* tied: not stored */
    float v;
    assert_int_equal(sl_tensors_read_f32(ts, "no.such.tensor", &v, &err), -1);
    assert_non_null(strstr(err.msg, "model.safetensors: missing tensor 'no.such.tensor'"));
    sl_st_close(f);
    sl_tensors_close(ts);
}

/* Sharded: every weight_map entry is found in the file the index names, the
 * listing covers every tensor of every shard, F16 values decode as here. */
static void test_sharded(void **st)
{
    (void)st;
    sl_err err;
    sl_tensors *ts = sl_tensors_open(fixture("sharded_f16"), &err);
    if (!ts)
        fail_msg("%s", err.msg);
    char p[8192];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", fixture("sharded_f16"));
    char *text;
    size_t len;
    assert_int_equal(sl_read_file(p, &text, &len, &err), 0);
    sl_json_doc *jd = sl_json_parse(text, len, NULL, &err);
    assert_non_null(jd);
    const sl_json *wm = sl_json_get(sl_json_root(jd), "weight_map");
    assert_non_null(wm);
    assert_true(wm->n > 4);
    size_t total = 0, nfiles = 0;
    char files[8][300];
    for (size_t i = 0; i < wm->n; i++) {
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)wm->keys[i]->str_len, wm->keys[i]->str);
        char tail[300];
        snprintf(tail, sizeof tail, "/%.*s", (int)wm->kids[i]->str_len, wm->kids[i]->str);
        sl_tensor_info info;
        assert_int_equal(sl_tensors_find(ts, name, &info), 1);
        if (!ends_with(info.file, tail))
            fail_msg("%s: found in %s, index says %s", name, info.file, tail);
        size_t f = 0;
        while (f < nfiles && strcmp(files[f], tail))
            f++;
        if (f == nfiles) {
            assert_true(nfiles < 8);
            snprintf(files[nfiles++], sizeof files[0], "%s", tail);
        }
        /* F16 decoded here from the shard's bytes */
        assert_int_equal(info.dtype, SL_TENSOR_F16);
        snprintf(p, sizeof p, "%s%.299s", fixture("sharded_f16"), tail);
        sl_st_file *sf = sl_st_open(p, &err);
        assert_non_null(sf);
        const sl_st_tensor *t = sl_st_find(sf, name);
        assert_non_null(t);
        float *got = malloc((t->numel + 1) * sizeof *got);
        assert_int_equal(sl_tensors_read_f32(ts, name, got, &err), 0);
        for (uint64_t k = 0; k < t->numel; k++)
            assert_true(got[k] == half_le((const unsigned char *)t->data + 2 * k));
        free(got);
        sl_st_close(sf);
    }
    assert_true(nfiles >= 2);
    for (size_t f = 0; f < nfiles; f++) {
        snprintf(p, sizeof p, "%s%.299s", fixture("sharded_f16"), files[f]);
        sl_st_file *sf = sl_st_open(p, &err);
        assert_non_null(sf);
        total += sl_st_count(sf);
        sl_st_close(sf);
    }
    assert_int_equal(sl_tensors_count(ts), total);
    /* the listing: every name once */
    for (size_t i = 0; i < sl_tensors_count(ts); i++) {
        sl_tensor_info a;
        sl_tensors_at(ts, i, &a);
        assert_non_null(sl_json_get(wm, a.name));
        for (size_t j = 0; j < i; j++) {
            sl_tensor_info b;
            sl_tensors_at(ts, j, &b);
            assert_string_not_equal(a.name, b.name);
        }
    }
    sl_json_free(jd);
    free(text);
    sl_tensors_close(ts);
}

static void test_errors(void **st)
{
    (void)st;
    sl_err err;
    char d[4200];
    snprintf(d, sizeof d, "%s", fixture("bad/no_weights"));
    assert_null(sl_tensors_open(d, &err));
    assert_non_null(strstr(err.msg, "bad/no_weights: no model.safetensors or model.safetensors.index.json"));
    assert_null(sl_tensors_open(fixture("bad/index_wrong_file"), &err));
    assert_non_null(strstr(err.msg, "model.safetensors.index.json: weight_map puts"));
    assert_non_null(strstr(err.msg, "which does not contain it"));
    /* an integer tensor is listed with its dtype, and not read as fp32 */
    sl_tensors *ts = sl_tensors_open(fixture("bad/int_dtype"), &err);
    assert_non_null(ts);
    int seen = 0;
    for (size_t i = 0; i < sl_tensors_count(ts); i++) {
        sl_tensor_info a;
        sl_tensors_at(ts, i, &a);
        if (a.dtype != SL_TENSOR_OTHER)
            continue;
        seen++;
        assert_string_equal(a.dtype_name, "I32");
        float *buf = malloc((a.numel + 1) * sizeof *buf);
        assert_int_equal(sl_tensors_read_f32(ts, a.name, buf, &err), -1);
        assert_non_null(strstr(err.msg, "has dtype I32; F32, F16 or BF16 expected"));
        assert_non_null(strstr(err.msg, a.name));
        free(buf);
    }
    assert_int_equal(seen, 1);
    sl_tensors_close(ts);
}

/* PyTorch checkpoints (tests/model/gen_pt_fixtures.py: torch.save of the
 * safetensors fixtures' tensors): every tensor reads bit for bit as the
 * safetensors file (written by the safetensors library) has it, through a
 * shared storage (tied lm_head), a column-major view and a storage offset;
 * sharded through pytorch_model.bin.index.json. */
static void same_as_safetensors(const char *pt, const char *st, int extra_tied)
{
    sl_err err;
    sl_tensors *a = sl_tensors_open(fixture(pt), &err);
    if (!a)
        fail_msg("%s", err.msg);
    assert_string_equal(sl_tensors_format(a), "pytorch");
    sl_tensors *b = sl_tensors_open(fixture(st), &err);
    assert_non_null(b);
    assert_string_equal(sl_tensors_format(b), "safetensors");
    assert_int_equal(sl_tensors_count(a), sl_tensors_count(b) + (size_t)extra_tied);
    for (size_t i = 0; i < sl_tensors_count(b); i++) {
        sl_tensor_info tb, ta;
        sl_tensors_at(b, i, &tb);
        if (!sl_tensors_find(a, tb.name, &ta))
            fail_msg("%s: no tensor '%s'", pt, tb.name);
        assert_true(ends_with(ta.file, ".bin"));
        assert_int_equal(ta.dtype, tb.dtype);
        assert_string_equal(ta.dtype_name, tb.dtype_name);
        assert_int_equal(ta.ndim, tb.ndim);
        assert_memory_equal(ta.shape, tb.shape, sizeof ta.shape);
        assert_int_equal(ta.numel, tb.numel);
        float *x = malloc((ta.numel + 1) * sizeof *x), *y = malloc((tb.numel + 1) * sizeof *y);
        assert_int_equal(sl_tensors_read_f32(a, tb.name, x, &err), 0);
        assert_int_equal(sl_tensors_read_f32(b, tb.name, y, &err), 0);
        assert_memory_equal(x, y, ta.numel * sizeof *x);
        free(x);
        free(y);
    }
    sl_tensors_close(a);
    sl_tensors_close(b);
}

static void test_pytorch(void **st)
{
    (void)st;
    same_as_safetensors("pt_f32", "hf_f32", 1);
    same_as_safetensors("pt_sharded_bf16", "hf_bf16", 0);
    /* the tied head: the embedding's values */
    sl_err err;
    sl_tensors *a = sl_tensors_open(fixture("pt_f32"), &err);
    sl_tensor_info e, h;
    assert_int_equal(sl_tensors_find(a, "backbone.embeddings.weight", &e), 1);
    assert_int_equal(sl_tensors_find(a, "lm_head.weight", &h), 1);
    float *x = malloc(e.numel * sizeof *x), *y = malloc(h.numel * sizeof *y);
    assert_int_equal(e.numel, h.numel);
    assert_int_equal(sl_tensors_read_f32(a, "backbone.embeddings.weight", x, &err), 0);
    assert_int_equal(sl_tensors_read_f32(a, "lm_head.weight", y, &err), 0);
    assert_memory_equal(x, y, e.numel * sizeof *x);
    free(x);
    free(y);
    sl_tensors_close(a);
    /* the shards: each tensor in the file the index names */
    a = sl_tensors_open(fixture("pt_sharded_bf16"), &err);
    assert_non_null(a);
    assert_int_equal(sl_tensors_find(a, "backbone.embeddings.weight", &e), 1);
    assert_true(ends_with(e.file, "pytorch_model-00001-of-00002.bin"));
    assert_int_equal(sl_tensors_find(a, "lm_head.weight", &e), 1);
    assert_true(ends_with(e.file, "pytorch_model-00002-of-00002.bin"));
    sl_tensors_close(a);
}

/* Broken or hostile PyTorch files: one-line errors naming the file. */
static void test_pytorch_errors(void **st)
{
    (void)st;
    static const struct {
        const char *dir, *msg;
    } cases[] = {
        {"bad/pt_code", "pytorch_model.bin: data.pkl offset 169: global 'posix.system' is not allowed"},
        {"bad/pt_short_storage", "storage '0': 6 F32 elements need more than its 4 bytes"},
        {"bad/pt_truncated", "pytorch_model.bin: no zip end-of-central-directory record"},
        {"bad/pt_not_state_dict", "data.pkl is not a dict of tensors"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_err err;
        sl_tensors *t = sl_tensors_open(fixture(cases[i].dir), &err);
        if (t)
            fail_msg("%s: opened", cases[i].dir);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("%s: '%s' does not contain '%s'", cases[i].dir, err.msg, cases[i].msg);
        assert_null(strchr(err.msg, '\n'));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_file), cmocka_unit_test(test_sharded),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_pytorch),     cmocka_unit_test(test_pytorch_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
