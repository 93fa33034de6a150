/* shard/mix.h: the option checks and the length-target parser, with the
 * library's messages (fields in backquotes, never a command-line flag). The
 * selection itself is re-derived from docs/longctx.md by
 * python/test_sluice_mix.py (tests/cli/mix.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "shard/mix.h"

static void test_target_parse(void **state)
{
    (void)state;
    sl_err err = {{0}};
    sl_mix_bin *b = NULL;
    size_t n = 0;
    const char *ok = "{\"bins\":[{\"lo\":0,\"hi\":4096,\"share\":2},{\"lo\":4096,\"hi\":null,\"share\":1}]}";
    assert_int_equal(sl_mix_parse_target(ok, strlen(ok), "t.json", &b, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(b[0].lo, 0);
    assert_int_equal(b[0].hi, 4096);
    assert_true(b[0].share == 2.0);
    assert_int_equal(b[1].lo, 4096);
    assert_true(b[1].hi == UINT64_MAX);
    free(b);
    const char *bad[] = {
        "{\"bins\":[]}",
        "{\"bins\":[{\"lo\":10,\"hi\":5,\"share\":1}]}",
        "{\"bins\":[{\"lo\":0,\"hi\":10,\"share\":1},{\"lo\":5,\"hi\":20,\"share\":1}]}",
        "{\"bins\":[{\"lo\":0,\"hi\":10,\"share\":-1}]}",
        "{\"bins\":[{\"lo\":0,\"hi\":10}]}",
        "[1,2]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(sl_mix_parse_target(bad[i], strlen(bad[i]), "t.json", &b, &n, &err), -1);
        assert_non_null(strstr(err.msg, "t.json"));
        assert_null(b);
    }
    assert_int_equal(sl_mix_parse_target("{", 1, "t.json", &b, &n, &err), -1);
}

static void test_options(void **state)
{
    (void)state;
    sl_err err = {{0}};
    sl_mix_source s[2] = {{"a", "a.tok", 1}, {"b", "b.tok", 2}};
    sl_mix_opts o = {.tokens = 100, .max_epochs = 4};
    sl_mix *m = sl_mix_new(&o, s, 2, &err);
    assert_non_null(m);
    sl_mix_free(m);
    o.tokens = 0;
    assert_null(sl_mix_new(&o, s, 2, &err));
    assert_string_equal(err.msg, "`tokens` 0: the budget must be positive");
    o.tokens = 100;
    o.max_epochs = 0;
    assert_null(sl_mix_new(&o, s, 2, &err));
    assert_string_equal(err.msg, "`max_epochs` 0: must be in (0, 65535]");
    o.max_epochs = 4;
    o.policy = SL_MIX_UPSAMPLE;
    o.long_len = 10;
    o.factor = 0;
    assert_null(sl_mix_new(&o, s, 2, &err));
    assert_string_equal(err.msg, "`factor` 0: must be positive");
    o.factor = 2;
    s[1].weight = -1;
    assert_null(sl_mix_new(&o, s, 2, &err));
    assert_string_equal(err.msg, "source 'b': `weight` -1 must be positive");
    s[1].weight = 1;
    s[1].name = "a";
    assert_null(sl_mix_new(&o, s, 2, &err));
    assert_string_equal(err.msg, "source 'a' is given twice");
    assert_null(sl_mix_new(&o, s, 0, &err));
    /* a missing input: the message names the source */
    s[1].name = "b";
    s[0].path = "/nonexistent/a.tok";
    m = sl_mix_new(&o, s, 2, &err);
    assert_non_null(m);
    assert_int_equal(sl_mix_plan(m, &err), -1);
    assert_non_null(strstr(err.msg, "source 'a'"));
    assert_non_null(strstr(err.msg, "/nonexistent/a.tok"));
    assert_null(strstr(err.msg, "--"));
    sl_mix_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_target_parse), cmocka_unit_test(test_options)};
    return cmocka_run_group_tests_name("shard_mix", tests, NULL, NULL);
}
