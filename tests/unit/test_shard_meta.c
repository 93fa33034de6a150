/* Metadata field selection (--keep-fields / --drop-fields) and the document
 * id set behind the duplicate-id check (shard/meta.h): selection keeps key
 * order and values exactly, an empty result writes nothing, bad metadata is
 * an error; the id set finds every repeat and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/meta.h"
#include "shard/pack.h"

static void sel_is(const char *list, int mode, const char *meta, const char *want)
{
    sl_meta_sel sel = {0};
    sl_err err = {{0}};
    if (list)
        assert_int_equal(sl_meta_sel_parse(&sel, mode, list, &err), 0);
    sl_buf b = {0};
    assert_int_equal(sl_meta_select(&sel, meta, strlen(meta), &b, &err), 0);
    if (strlen(want) != b.len || memcmp(want, b.data, b.len))
        fail_msg("select %s from %s: got '%.*s', want '%s'", list ? list : "all", meta, (int)b.len,
                 b.data ? b.data : "", want);
    sl_buf_free(&b);
    sl_meta_sel_free(&sel);
}

static void test_select(void **state)
{
    (void)state;
    const char *m = "{ \"label\" : 3, \"species\":\"hs\", \"x\":{\"a\":[1,2.50,null,true]}, \"n\":1e400 }";
    sel_is(NULL, SL_META_ALL, m, "{\"label\":3,\"species\":\"hs\",\"x\":{\"a\":[1,2.50,null,true]},\"n\":1e400}");
    sel_is("x,label", SL_META_KEEP, m, "{\"label\":3,\"x\":{\"a\":[1,2.50,null,true]}}");
    sel_is("label,species", SL_META_DROP, m, "{\"x\":{\"a\":[1,2.50,null,true]},\"n\":1e400}");
    sel_is("nothere", SL_META_KEEP, m, "");
    sel_is("label,species,x,n", SL_META_DROP, m, "");
    sel_is(NULL, SL_META_ALL, "{}", "");
    sel_is(NULL, SL_META_ALL, "", "");
    /* a name is matched whole (not as a prefix) */
    sel_is("lab", SL_META_KEEP, m, "");
    /* strings are re-escaped: control characters as \u, UTF-8 passed through */
    sel_is(NULL, SL_META_ALL, "{\"k\\u00e9\":\"a\\nb\\u0000\\\"\"}", "{\"k\xc3\xa9\":\"a\\nb\\u0000\\\"\"}");
    sl_meta_sel sel = {0};
    sl_err err = {{0}};
    sl_buf b = {0};
    assert_int_equal(sl_meta_select(&sel, "[1]", 3, &b, &err), -1);
    assert_non_null(strstr(err.msg, "metadata is not a JSON object"));
    assert_int_equal(sl_meta_select(&sel, "{\"a\":", 5, &b, &err), -1);
    assert_non_null(strstr(err.msg, "metadata"));
    assert_int_equal(sl_meta_sel_parse(&sel, SL_META_KEEP, "a,,b", &err), -1);
    assert_non_null(strstr(err.msg, "'a,,b': empty field name"));
    assert_int_equal(sl_meta_sel_parse(&sel, SL_META_KEEP, "", &err), -1);
    sl_buf_free(&b);
    sl_meta_sel_free(&sel);
}

static void test_doc_line(void **state)
{
    (void)state;
    sl_buf b = {0};
    sl_meta_doc_line(&b, 7, "a\"\n", 3, "val", SL_DOC_DROPPED, "{\"l\":1}", 7);
    sl_meta_doc_line(&b, 8, NULL, 0, "train", SL_DOC_PLACED, NULL, 0);
    const char *want = "{\"doc\":7,\"id\":\"a\\\"\\n\",\"split\":\"val\",\"long\":\"dropped\",\"meta\":{\"l\":1}}\n"
                       "{\"doc\":8,\"id\":\"\",\"split\":\"train\"}\n";
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    sl_buf_free(&b);
}

static void test_idset(void **state)
{
    (void)state;
    sl_idset *s = sl_idset_new();
    char id[32];
    /* 300k distinct ids (the table grows several times): no repeat reported */
    for (int i = 0; i < 300000; i++) {
        int n = snprintf(id, sizeof id, "doc-%d", i);
        assert_int_equal(sl_idset_add(s, id, (size_t)n), 0);
    }
    assert_int_equal(sl_idset_count(s), 300000);
    /* every seventh again is a repeat; a prefix, a longer id and the empty id are new */
    for (int i = 0; i < 300000; i += 7) {
        int n = snprintf(id, sizeof id, "doc-%d", i);
        assert_int_equal(sl_idset_add(s, id, (size_t)n), 1);
    }
    assert_int_equal(sl_idset_add(s, "doc-", 4), 0); /* a prefix of them all */
    assert_int_equal(sl_idset_add(s, "doc-1 ", 6), 0);
    assert_int_equal(sl_idset_add(s, "", 0), 0);
    assert_int_equal(sl_idset_add(s, "", 0), 1);
    assert_int_equal(sl_idset_add(s, "a\0b", 3), 0);
    assert_int_equal(sl_idset_add(s, "a\0c", 3), 0);
    assert_int_equal(sl_idset_add(s, "a\0b", 3), 1);
    sl_idset_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_doc_line),
        cmocka_unit_test(test_idset),
    };
    return cmocka_run_group_tests_name("shard_meta", tests, NULL, NULL);
}
