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
    if (strlen(want) != b.len || (b.len && memcmp(want, b.data, b.len)))
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
    /* strings are re-escaped when a field is selected: control characters as \u,
     * UTF-8 passed through; without a selection a compact object stays as it is */
    sel_is("zz", SL_META_DROP, "{\"k\\u00e9\":\"a\\nb\\u0000\\\"\"}", "{\"k\xc3\xa9\":\"a\\nb\\u0000\\\"\"}");
    sel_is(NULL, SL_META_ALL, "{\"k\\u00e9\":\"a\\nb\\u0000\\\"\"}", "{\"k\\u00e9\":\"a\\nb\\u0000\\\"\"}");
    /* not compact, a lone surrogate escape, invalid UTF-8: through the parser */
    sel_is(NULL, SL_META_ALL, "{\"a\": 1}", "{\"a\":1}");
    sel_is(NULL, SL_META_ALL, "{\"a\":\"\\ud800\"}", "{\"a\":\"\xef\xbf\xbd\"}");
    sel_is(NULL, SL_META_ALL, "{\"a\":\"\xff\"}", "{\"a\":\"\xef\xbf\xbd\"}");
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

/* Random JSON objects, then random damage: whenever the copy-as-is path takes
 * a text (the output equals the input), the parser must accept it too and
 * mean the same (its re-serialization equals the parser path's output); a
 * text the parser rejects must be an error on both paths. */
static uint64_t rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static void rand_value(sl_buf *b, int depth)
{
    static const char *const atoms[] = {"0",
                                        "-0",
                                        "12",
                                        "-3.25",
                                        "1e5",
                                        "2.5E-3",
                                        "1e400",
                                        "123456789012345678901234",
                                        "true",
                                        "false",
                                        "null",
                                        "\"\"",
                                        "\"a\\\"b\"",
                                        "\"\\u00e9\\n\\t\\/\"",
                                        "\"\\ud83d\\ude00\"",
                                        "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"",
                                        "\"\\u0000x\"",
                                        "\"\\\\\""};
    unsigned k = rnd(depth > 3 ? 1 : 4);
    if (k == 0) {
        sl_buf_puts(b, atoms[rnd(sizeof atoms / sizeof *atoms)]);
    } else if (k == 1) {
        sl_buf_putc(b, '[');
        for (unsigned i = 0, n = rnd(4); i < n; i++) {
            if (i)
                sl_buf_putc(b, ',');
            rand_value(b, depth + 1);
        }
        sl_buf_putc(b, ']');
    } else {
        sl_buf_putc(b, '{');
        for (unsigned i = 0, n = rnd(4); i < n; i++) {
            sl_buf_printf(b, "%s\"k%u\":", i ? "," : "", rnd(5));
            rand_value(b, depth + 1);
        }
        sl_buf_putc(b, '}');
    }
}

static void test_fast_path_agrees(void **state)
{
    (void)state;
    sl_meta_sel all = {0}, slow = {0};
    sl_err err = {{0}};
    assert_int_equal(sl_meta_sel_parse(&slow, SL_META_DROP, "\x01none", &err), 0);
    static const char junk[] = " \t\n,:{}[]\"\\u0dD8e+-.0a\x80\xc3\xed\xa0\x01";
    size_t copied = 0, rejected = 0;
    for (int it = 0; it < 20000; it++) {
        sl_buf in = {0}, a = {0}, b = {0}, c = {0};
        sl_buf_putc(&in, '{');
        for (unsigned i = 0, n = 1 + rnd(4); i < n; i++) {
            sl_buf_printf(&in, "%s\"f%u\":", i ? "," : "", i);
            rand_value(&in, 1);
        }
        sl_buf_putc(&in, '}');
        /* damage: none, or 1-3 bytes replaced / inserted / removed */
        for (unsigned d = 0, nd = rnd(2) ? 0 : 1 + rnd(3); d < nd; d++) {
            size_t at = rnd((unsigned)in.len);
            unsigned op = rnd(3);
            char j = junk[rnd(sizeof junk - 1)];
            if (op == 0)
                in.data[at] = j;
            else if (op == 1) {
                sl_buf_putc(&in, 0);
                memmove(in.data + at + 1, in.data + at, in.len - 1 - at);
                in.data[at] = j;
            } else if (in.len > 1) {
                memmove(in.data + at, in.data + at + 1, in.len - at - 1);
                in.len--;
            }
        }
        int ra = sl_meta_select(&all, in.data, in.len, &a, &err);
        int rb = sl_meta_select(&slow, in.data, in.len, &b, &err);
        assert_int_equal(ra, rb);
        if (ra) {
            rejected++;
        } else if (a.len == in.len && !memcmp(a.data, in.data, in.len)) {
            copied++;
            /* the copy means what the parser path wrote */
            assert_int_equal(sl_meta_select(&slow, a.data, a.len, &c, &err), 0);
            if (c.len != b.len || (c.len && memcmp(c.data, b.data, b.len)))
                fail_msg("copied '%.*s' reads back as '%.*s', the parser wrote '%.*s'", (int)in.len, in.data,
                         (int)c.len, c.data, (int)b.len, b.data);
        } else {
            /* not copied: the parser's output (no "meta" when the object is empty) */
            if (a.len != b.len || (a.len && memcmp(a.data, b.data, b.len)))
                fail_msg("'%.*s': '%.*s' vs '%.*s'", (int)in.len, in.data, (int)a.len, a.data, (int)b.len, b.data);
        }
        sl_buf_free(&in);
        sl_buf_free(&a);
        sl_buf_free(&b);
        sl_buf_free(&c);
    }
    /* both kinds happened often */
    assert_true(copied > 5000);
    assert_true(rejected > 1000);
    sl_meta_sel_free(&slow);
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
        cmocka_unit_test(test_fast_path_agrees),
        cmocka_unit_test(test_doc_line),
        cmocka_unit_test(test_idset),
    };
    return cmocka_run_group_tests_name("shard_meta", tests, NULL, NULL);
}
