/* safetensors reader and model loader on valid and broken inputs.
 * Files are built byte by byte here from the format description (u64 LE
 * header length, JSON header, data buffer); broken model directories come
 * from tests/model/gen_fixtures.py (bad_models). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/mamba.h"
#include "model/model.h"
#include "model/safetensors.h"

static unsigned char buf[4096];

/* header JSON + data bytes -> buf; returns the total length. hl_override
 * (when nonzero) replaces the stored header length. */
static size_t build(const char *json, const void *data, size_t dlen, uint64_t hl_override)
{
    uint64_t hl = strlen(json);
    uint64_t stored = hl_override ? hl_override : hl;
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(stored >> (8 * i));
    memcpy(buf + 8, json, hl);
    if (dlen)
        memcpy(buf + 8 + hl, data, dlen);
    return 8 + hl + dlen;
}

static void expect_error(size_t len, const char *substr)
{
    sl_err err;
    sl_st_file *f = sl_st_parse(buf, len, "t.safetensors", &err);
    if (f)
        fail_msg("accepted a bad file; expected an error containing '%s'", substr);
    if (!strstr(err.msg, substr))
        fail_msg("error '%s' does not contain '%s'", err.msg, substr);
    assert_non_null(strstr(err.msg, "t.safetensors"));
}

static void test_valid(void **st)
{
    (void)st;
    float data[3] = {1.5f, -2.0f, 0.25f};
    unsigned char all[12 + 4];
    memcpy(all, data, 12);
    all[12] = 0x00, all[13] = 0x3c; /* F16 1.0 */
    all[14] = 0x40, all[15] = 0xc0; /* BF16 -3.0 */
    size_t len = build("{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[12,14]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[3,1],\"data_offsets\":[0,12]},"
                       "\"c\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[14,16]},"
                       "\"e\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[16,16]}}    ",
                       all, sizeof all, 0);
    sl_err err;
    sl_st_file *f = sl_st_parse(buf, len, "ok.safetensors", &err);
    if (!f)
        fail_msg("%s", err.msg);
    assert_int_equal(sl_st_count(f), 4);
    const sl_st_tensor *a = sl_st_find(f, "a"), *b = sl_st_find(f, "b"), *c = sl_st_find(f, "c");
    assert_non_null(a);
    assert_null(sl_st_find(f, "__metadata__"));
    assert_null(sl_st_find(f, "zz"));
    assert_int_equal(a->ndim, 2);
    assert_int_equal(a->shape[0], 3);
    assert_int_equal(c->ndim, 0);
    assert_int_equal(c->numel, 1);
    assert_int_equal(sl_st_find(f, "e")->numel, 0);
    float out[3];
    assert_int_equal(sl_st_to_f32(f, a, out, &err), 0);
    assert_memory_equal(out, data, 12);
    assert_int_equal(sl_st_to_f32(f, b, out, &err), 0);
    assert_true(out[0] == 1.0f);
    assert_int_equal(sl_st_to_f32(f, c, out, &err), 0);
    assert_true(out[0] == -3.0f);
    sl_st_close(f);
}

static void test_f16_values(void **st)
{
    (void)st;
    /* bit patterns from IEEE 754 binary16: max, min subnormal, min normal, inf, -0, 1/3 */
    const uint16_t bits[] = {0x7bff, 0x0001, 0x0400, 0x7c00, 0x8000, 0x3555, 0x03ff};
    const double want[] = {65504.0, 5.960464477539063e-08, 6.103515625e-05,      INFINITY,
                           -0.0,    0.333251953125,        6.097555160522461e-05};
    unsigned char d[14];
    for (int i = 0; i < 7; i++)
        d[2 * i] = bits[i] & 0xff, d[2 * i + 1] = bits[i] >> 8;
    size_t len = build("{\"h\":{\"dtype\":\"F16\",\"shape\":[7],\"data_offsets\":[0,14]}}", d, 14, 0);
    sl_err err;
    sl_st_file *f = sl_st_parse(buf, len, "h", &err);
    assert_non_null(f);
    float out[7];
    assert_int_equal(sl_st_to_f32(f, sl_st_find(f, "h"), out, &err), 0);
    for (int i = 0; i < 7; i++)
        assert_true((double)out[i] == want[i]);
    assert_true(signbit(out[4]));
    sl_st_close(f);
}

static void test_bad_files(void **st)
{
    (void)st;
    unsigned char z[64] = {0};
    memcpy(buf, "\x05\x00\x00", 3);
    expect_error(3, "too short");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 1000),
                 "runs past the end");
    expect_error(build("{}", NULL, 0, 200000000ull), "larger than the limit");
    expect_error(build("[1,2]", NULL, 0, 0), "not a JSON object");
    expect_error(build("{\"a\":", NULL, 0, 0), "header JSON");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", z, 8, 0),
                 "end past the data buffer");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                       z, 12, 0),
                 "overlaps");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", z, 8, 0), "hole");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 8, 0), "tensors cover 4");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", z, 8, 0), "need 12");
    expect_error(build("{\"a\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", z, 1, 0),
                 "unsupported dtype \"F4\"");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                       z, 8, 0),
                 "listed twice");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", z, 4, 0), "shape[0]");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", z, 4, 0), "shape[0]");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", z, 4, 0),
                 "end before begin");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", z, 4, 0), "data_offsets");
    expect_error(build("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 0), "dtype");
    expect_error(build("{\"a\":[1]}", z, 0, 0), "not an object");
    expect_error(build("{\"__metadata__\":{\"k\":1}}", z, 0, 0), "__metadata__");
    expect_error(build("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                       "\"data_offsets\":[0,4]}}",
                       z, 4, 0),
                 "overflows");
    /* an I32 tensor parses, but is not a float tensor */
    size_t len = build("{\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 0);
    sl_err err;
    sl_st_file *f = sl_st_parse(buf, len, "i", &err);
    assert_non_null(f);
    float out[1];
    assert_int_equal(sl_st_to_f32(f, sl_st_find(f, "a"), out, &err), -1);
    assert_non_null(strstr(err.msg, "dtype I32"));
    sl_st_close(f);
    /* a file that does not exist */
    assert_null(sl_st_open("/nonexistent/x.safetensors", &err));
    assert_non_null(strstr(err.msg, "/nonexistent/x.safetensors"));
}

static void expect_load_error(const char *name, const char *substr)
{
    char dir[4096];
    const char *src = getenv("SLUICE_SRC");
    snprintf(dir, sizeof dir, "%s/tests/data/model/bad/%s", src ? src : ".", name);
    sl_err err;
    sl_backend *be = sl_backend_open("cpu", 0, &err);
    sl_mamba *m = sl_mamba_load(dir, be, &err);
    if (m)
        fail_msg("%s: loaded a broken model", name);
    if (!strstr(err.msg, substr))
        fail_msg("%s: error '%s' does not contain '%s'", name, err.msg, substr);
    /* through the model interface: the same message */
    sl_err err2;
    sl_model *mm = sl_model_load(dir, be, &err2);
    if (mm)
        fail_msg("%s: sl_model_load loaded a broken model", name);
    assert_string_equal(err2.msg, err.msg);
    sl_backend_close(be);
}

static void test_bad_models(void **st)
{
    (void)st;
    expect_load_error("missing_tensor", "missing tensor 'backbone.layers.1.mixer.D'");
    expect_load_error("more_layers_in_config", "missing tensor 'backbone.layers.2.norm.weight'");
    expect_load_error("fewer_layers_in_config", "for layer 1 but config.json has n_layer = 1");
    expect_load_error("state_size_mismatch", "x_proj.weight' has shape [9,16] but config.json implies [17,16]");
    expect_load_error("int_dtype", "dtype I32");
    expect_load_error("mamba2_tensor", "Mamba-2");
    expect_load_error("no_weights", "no model.safetensors");
    expect_load_error("bad_config_json", "config.json");
    expect_load_error("config_missing_width", "missing \"hidden_size\"");
    expect_load_error("vocab_mismatch", "backbone.embeddings.weight' has shape [20,8] but config.json implies [16,8]");
    expect_load_error("index_wrong_file", "which does not contain it");
    expect_load_error("does_not_exist", "config.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_f16_values),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_bad_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
