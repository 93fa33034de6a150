/* config.json as Python's json writes it: Infinity, -Infinity and NaN, and
 * transformers 5's {"__float__": "Infinity"} form, are accepted by the
 * config parsers (sl_json_opts.nonfinite), nowhere else.
 * The texts below are json.dumps output (Python 3.11), pasted. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/support.h"

#include "model/mamba.h"
#include "model/model.h"
#include "stream/io.h"
#include "base/json.h"

/* json.dumps({"a": float("inf"), "b": float("-inf"), "c": float("nan"), "d": [0.0, float("inf")]}) */
static const char py[] = "{\"a\": Infinity, \"b\": -Infinity, \"c\": NaN, \"d\": [0.0, Infinity]}";

static void test_json_option(void **st)
{
    (void)st;
    sl_err e;
    sl_json_opts o = {.nonfinite = 1};
    sl_json_doc *d = sl_json_parse(py, strlen(py), &o, &e);
    if (!d)
        fail_msg("%s", e.msg);
    const sl_json *r = sl_json_root(d), *a = sl_json_get(r, "a"), *b = sl_json_get(r, "b"), *c = sl_json_get(r, "c");
    const sl_json *dd = sl_json_get(r, "d");
    assert_int_equal(a->type, SL_JSON_NUMBER);
    assert_true(isinf(a->num) && a->num > 0);
    assert_true(isinf(b->num) && b->num < 0);
    assert_true(isnan(c->num));
    assert_int_equal(dd->n, 2);
    assert_true(dd->kids[0]->num == 0.0 && isinf(dd->kids[1]->num));
    assert_int_equal(a->str_len, 8);
    assert_memory_equal(a->str, "Infinity", 8);
    assert_int_equal(b->offset, strlen("{\"a\": Infinity, \"b\": "));
    int64_t i;
    assert_false(sl_json_is_int(a, &i));
    assert_false(sl_json_is_int(c, &i));
    sl_json_free(d);
    /* off (the default, and every other caller): strict JSON */
    assert_null(sl_json_parse(py, strlen(py), NULL, &e));
    assert_non_null(strstr(e.msg, "offset 6: invalid JSON value"));
    o.nonfinite = 0;
    assert_null(sl_json_parse(py, strlen(py), &o, &e));
    /* only the exact words */
    o.nonfinite = 1;
    const char *bad[] = {"infinity", "Inf", "nan", "-NaN", "+Infinity", "Infinityx", "[NaN1]", "-Infinit"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        if (sl_json_parse(bad[k], strlen(bad[k]), &o, &e))
            fail_msg("accepted %s", bad[k]);
    /* negative numbers still parse */
    d = sl_json_parse("[-1.5, -0]", 10, &o, &e);
    assert_non_null(d);
    assert_true(sl_json_root(d)->kids[0]->num == -1.5);
    sl_json_free(d);
}

/* transformers 5's form, as PreTrainedConfig._encode_special_floats writes
 * it (json.dumps of its output, pasted): an object whose only key is
 * "__float__" with one of the three words is that number, anywhere;
 * everything else that _decode_special_floats leaves alone stays an object. */
static const char tf5[] = "{\"a\": {\"__float__\": \"Infinity\"}, \"b\": {\"__float__\": \"-Infinity\"}, \"c\": "
                          "{\"__float__\": \"NaN\"}, \"d\": [0.0, {\"__float__\": \"Infinity\"}], \"e\": {\"f\": "
                          "{\"__float__\": \"NaN\"}}}";

static void test_json_tagged_floats(void **st)
{
    (void)st;
    sl_err e;
    sl_json_opts o = {.nonfinite = 1};
    sl_json_doc *d = sl_json_parse(tf5, strlen(tf5), &o, &e);
    if (!d)
        fail_msg("%s", e.msg);
    const sl_json *r = sl_json_root(d), *a = sl_json_get(r, "a"), *b = sl_json_get(r, "b"), *c = sl_json_get(r, "c");
    const sl_json *dd = sl_json_get(r, "d"), *f = sl_json_get(sl_json_get(r, "e"), "f");
    assert_int_equal(a->type, SL_JSON_NUMBER);
    assert_true(isinf(a->num) && a->num > 0);
    assert_int_equal(b->type, SL_JSON_NUMBER);
    assert_true(isinf(b->num) && b->num < 0);
    assert_int_equal(c->type, SL_JSON_NUMBER);
    assert_true(isnan(c->num));
    assert_int_equal(dd->kids[1]->type, SL_JSON_NUMBER);
    assert_true(isinf(dd->kids[1]->num));
    assert_int_equal(f->type, SL_JSON_NUMBER);
    assert_true(isnan(f->num));
    assert_int_equal(a->n, 0);
    assert_int_equal(a->offset, strlen("{\"a\": ")); /* the object's */
    assert_int_equal(b->str_len, 9);
    assert_memory_equal(b->str, "-Infinity", 9);
    int64_t i;
    assert_false(sl_json_is_int(a, &i));
    double v;
    assert_int_equal(sl_json_get_num(r, "b", &v), 0);
    assert_true(isinf(v) && v < 0);
    /* written back as its word (as Python's json writes the number) */
    sl_buf w = {0};
    sl_json_put_value(&w, dd);
    assert_int_equal(w.len, strlen("[0.0,Infinity]"));
    assert_memory_equal(w.data, "[0.0,Infinity]", w.len);
    sl_buf_free(&w);
    sl_json_free(d);
    /* a repeated key: the last value, as a Python dict keeps it */
    const char *dup = "{\"__float__\": \"x\", \"__float__\": \"NaN\"}";
    d = sl_json_parse(dup, strlen(dup), &o, &e);
    assert_non_null(d);
    assert_int_equal(sl_json_root(d)->type, SL_JSON_NUMBER);
    sl_json_free(d);
    /* not the form: objects as they are */
    const char *objs[] = {"{\"__float__\": \"infinity\"}",
                          "{\"__float__\": \"Inf\"}",
                          "{\"__float__\": Infinity}",
                          "{\"__float__\": 1.5}",
                          "{\"__float__\": \"NaN\", \"x\": 1}",
                          "{\"x\": \"NaN\"}",
                          "{\"__float\": \"NaN\"}",
                          "{\"__float__\": \"NaN \"}",
                          "{\"__float__\": \"NaN\\u0000\"}",
                          "{\"__float__\": \"NaN\", \"__float__\": \"y\"}",
                          "{}"};
    for (size_t k = 0; k < sizeof objs / sizeof *objs; k++) {
        d = sl_json_parse(objs[k], strlen(objs[k]), &o, &e);
        if (!d)
            fail_msg("%s: %s", objs[k], e.msg);
        if (sl_json_root(d)->type != SL_JSON_OBJECT)
            fail_msg("%s is not an object", objs[k]);
        sl_json_free(d);
    }
    /* off (every caller but the config readers): an object */
    o.nonfinite = 0;
    d = sl_json_parse(tf5, strlen(tf5), &o, &e);
    assert_non_null(d);
    assert_int_equal(sl_json_get(sl_json_root(d), "a")->type, SL_JSON_OBJECT);
    sl_json_free(d);
}

static const char *fixture_config(const char *name)
{
    return sl_test_path("tests/data/model/%s/config.json", name);
}

/* The HF fixture config with Python's non-finite values added parses to the
 * same configuration; a non-finite value where a number is needed is named. */
static void test_config(void **st)
{
    (void)st;
    char *text;
    size_t len;
    sl_err e;
    assert_int_equal(sl_read_file(fixture_config("hf_f32"), &text, &len, &e), 0);
    sl_mamba_config want, got;
    assert_int_equal(sl_mamba_config_parse(text, len, "config.json", &want, &e), 0);
    char *p = strrchr(text, '}');
    assert_non_null(p);
    *p = 0;
    char buf[8192];
    snprintf(buf, sizeof buf, "%s, \"time_step_limit\": [0.0, Infinity], \"x\": NaN, \"y\": -Infinity}", text);
    if (sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e) < 0)
        fail_msg("%s", e.msg);
    assert_memory_equal(&got, &want, sizeof got);
    /* transformers 5's spelling */
    snprintf(buf, sizeof buf,
             "%s, \"time_step_limit\": [0.0, {\"__float__\": \"Infinity\"}], \"x\": {\"__float__\": \"NaN\"}, "
             "\"time_step_floor\": {\"__float__\": \"-Infinity\"}}",
             text);
    if (sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e) < 0)
        fail_msg("%s", e.msg);
    assert_memory_equal(&got, &want, sizeof got);
    snprintf(buf, sizeof buf, "%s, \"layer_norm_epsilon\": {\"__float__\": \"NaN\"}}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), -1);
    assert_non_null(strstr(e.msg, "\"layer_norm_epsilon\" is not a number in (0, 1]"));
    snprintf(buf, sizeof buf, "%s, \"state_size\": {\"__float__\": \"Infinity\"}}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), -1);
    assert_non_null(strstr(e.msg, "\"state_size\" is not an integer"));
    snprintf(buf, sizeof buf, "%s, \"layer_norm_epsilon\": Infinity}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), -1);
    assert_non_null(strstr(e.msg, "\"layer_norm_epsilon\" is not a number in (0, 1]"));
    snprintf(buf, sizeof buf, "%s, \"layer_norm_epsilon\": NaN}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), -1);
    assert_non_null(strstr(e.msg, "\"layer_norm_epsilon\" is not a number in (0, 1]"));
    snprintf(buf, sizeof buf, "%s, \"state_size\": Infinity}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), -1);
    assert_non_null(strstr(e.msg, "\"state_size\" is not an integer"));
    snprintf(buf, sizeof buf, "%s, \"eos_token_id\": NaN}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &got, &e), 0);
    assert_int_equal(got.eos, -1);
    free(text);
}

/* Falcon-Mamba's config: model_type falcon_mamba and mixer_rms_eps (as the
 * fixture's config.json, written by transformers' FalconMambaConfig). */
static void test_falcon_config(void **st)
{
    (void)st;
    char *text;
    size_t len;
    sl_err e;
    sl_mamba_config c;
    assert_int_equal(sl_read_file(fixture_config("falcon_bf16"), &text, &len, &e), 0);
    if (sl_mamba_config_parse(text, len, "config.json", &c, &e) < 0)
        fail_msg("%s", e.msg);
    assert_true(c.falcon);
    assert_true(c.mixer_rms_eps == 1e-3);
    assert_int_equal(c.dt_rank, 5);
    free(text);
    assert_int_equal(sl_read_file(fixture_config("falcon_f32"), &text, &len, &e), 0);
    assert_int_equal(sl_mamba_config_parse(text, len, "config.json", &c, &e), 0);
    assert_true(c.falcon);
    assert_true(c.mixer_rms_eps == 1e-6);
    char *p = strrchr(text, '}');
    *p = 0;
    char buf[8192];
    snprintf(buf, sizeof buf, "%s, \"mixer_rms_eps\": 0}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &c, &e), -1);
    assert_non_null(strstr(e.msg, "\"mixer_rms_eps\" is not a number in (0, 1]"));
    free(text);
    /* transformers 5.24's configs of the same models parse to the same */
    const char *pairs[2][2] = {{"falcon_f32", "falcon_tf5"}, {"hf_f32", "hf_tf5"}};
    for (int k = 0; k < 2; k++) {
        sl_mamba_config c4, c5;
        char *t4, *t5;
        size_t l4, l5;
        assert_int_equal(sl_read_file(fixture_config(pairs[k][0]), &t4, &l4, &e), 0);
        assert_int_equal(sl_read_file(fixture_config(pairs[k][1]), &t5, &l5, &e), 0);
        assert_int_equal(sl_mamba_config_parse(t4, l4, "config.json", &c4, &e), 0);
        if (sl_mamba_config_parse(t5, l5, "config.json", &c5, &e))
            fail_msg("%s: %s", pairs[k][1], e.msg);
        assert_memory_equal(&c4, &c5, sizeof c4);
        free(t4);
        free(t5);
    }
    /* a Mamba-1 config: no norms, whatever mixer_rms_eps says */
    assert_int_equal(sl_read_file(fixture_config("hf_f32"), &text, &len, &e), 0);
    p = strrchr(text, '}');
    *p = 0;
    snprintf(buf, sizeof buf, "%s, \"mixer_rms_eps\": 0}", text);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &c, &e), 0);
    assert_false(c.falcon);
    /* other model types are named */
    char *mt = strstr(text, "\"mamba\"");
    assert_non_null(mt);
    snprintf(buf, sizeof buf, "%.*s\"jamba\"%s}", (int)(mt - text), text, mt + 7);
    assert_int_equal(sl_mamba_config_parse(buf, strlen(buf), "config.json", &c, &e), -1);
    assert_non_null(strstr(e.msg, "model_type is \"jamba\": only Mamba-1 (\"mamba\"), Falcon-Mamba"));
    free(text);
}

/* Mamba-2 configs outside what is supported are refused naming the field
 * (n_groups > 1, dt limits and d_intermediate > 0 are supported);
 * the fixture configs load (transformers' with "time_step_limit": [0.0,
 * Infinity], mamba_ssm's by ssm_cfg.layer). */
static void m2_expect(const char *fixture, const char *from, const char *to, const char *msg)
{
    char *text;
    size_t len;
    sl_err e;
    assert_int_equal(sl_read_file(fixture_config(fixture), &text, &len, &e), 0);
    char buf[16384];
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("%s: no '%s'", fixture, from);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    free(text);
    char dir[] = "/tmp/sluice-m2cfg-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    fputs(buf, f);
    fclose(f);
    sl_backend *be = sl_backend_open("cpu", 1, &e);
    sl_model *m = sl_model_load(dir, be, &e);
    if (msg) {
        if (m)
            fail_msg("%s: loaded with %s", fixture, to);
        if (!strstr(e.msg, msg))
            fail_msg("'%s' does not contain '%s'", e.msg, msg);
    } else if (m || !strstr(e.msg, "no model.safetensors")) { /* the config passed; no weights here */
        fail_msg("%s: %s", fixture, m ? "loaded" : e.msg);
    }
    sl_model_free(m);
    sl_backend_close(be);
    unlink(path);
    rmdir(dir);
}

static void test_mamba2_config(void **st)
{
    (void)st;
    m2_expect("m2_f32", "\"n_groups\": 1", "\"n_groups\": 1", NULL);
    m2_expect("m2_f32", "\"n_groups\": 1", "\"n_groups\": 2", NULL); /* 4 heads in 2 groups */
    m2_expect("m2_f32", "\"n_groups\": 1", "\"n_groups\": 3", "n_groups/ngroups does not divide the number of heads");
    m2_expect("m2_f32", "Infinity", "1.0", NULL); /* dt clamped to [0, 1] */
    /* saved by transformers 5.24: [0.0, {"__float__": "Infinity"}] */
    m2_expect("m2_tf5", "\"n_groups\": 1", "\"n_groups\": 1", NULL);
    m2_expect("m2_tf5", "\"Infinity\"", "\"NaN\"", "time_step_limit/dt_limit is not [min, max]");
    m2_expect("m2_tf5", "\"Infinity\"", "\"-Infinity\"", "time_step_limit/dt_limit is not [min, max]");
    m2_expect("m2_tf5", "\"layer_norm_epsilon\": 1e-05", "\"layer_norm_epsilon\": {\"__float__\": \"Infinity\"}",
              "\"layer_norm_epsilon\" is not a number in (0, 1]");
    m2_expect("m2_f32", "Infinity", "-1.0", "time_step_limit/dt_limit is not [min, max] with 0 <= min <= max");
    m2_expect("m2_f32", "\"time_step_limit\": [", "\"time_step_limit\": [3, ", "is not [min, max]");
    m2_expect("m2_f32", "\"num_heads\": 4", "\"num_heads\": 3", "num_heads x head_dim does not equal");
    m2_expect("m2_ssm_bf16", "\"ngroups\": 1", "\"ngroups\": 1", NULL);
    m2_expect("m2_ssm_bf16", "\"attn_layer_idx\": []", "\"attn_layer_idx\": [1]", "attention layers");
    m2_expect("m2_ssm_bf16", "\"d_intermediate\": 0", "\"d_intermediate\": 64", NULL);
    m2_expect("m2_ssm_bf16", "\"d_intermediate\": 0", "\"d_intermediate\": -1",
              "d_intermediate = -1 is outside [0, 1048576]");
    m2_expect("m2_ssm_bf16", "\"layer\": \"Mamba2\"", "\"layer\": \"Mamba3\"",
              "ssm_cfg.layer is \"Mamba3\": only Mamba-1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_option),   cmocka_unit_test(test_json_tagged_floats), cmocka_unit_test(test_config),
        cmocka_unit_test(test_falcon_config), cmocka_unit_test(test_mamba2_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
