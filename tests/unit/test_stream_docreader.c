/* The docreader: JSON Lines fields and ids, plain text, limits, positions in
 * error messages, and lines that straddle the reader's internal chunks.
 * Expected values are written out by hand from the rules in docreader.h and
 * docs/read.md, or generated independently in the test (the chunk test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/unit/support.h"

#include "stream/docreader.h"
#include "base/json.h"

static char tmpdir[64];

static int setup(void **st)
{
    (void)st;
    return sl_test_tmpdir_into(tmpdir, sizeof tmpdir, "sluice-read-unit");
}

static int teardown(void **st)
{
    (void)st;
    sl_test_rmtree(tmpdir);
    return 0;
}

/* Writes n bytes to tmpdir/name; returns the path (static storage, 8 slots). */
static const char *put(const char *name, const void *data, size_t n)
{
    static char paths[8][160];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, 160, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return p;
}
#define PUTS(name, lit) put(name, lit, sizeof lit - 1)

typedef struct {
    sl_docreader *r;
    sl_textdoc d;
    sl_err err;
} rd;

static void open1(rd *x, const char *path, sl_docreader_opts o)
{
    memset(x, 0, sizeof *x);
    o.quiet = 1;
    const char *paths[] = {path};
    x->r = sl_docreader_open(paths, 1, &o, &x->err);
    if (!x->r)
        fail_msg("open %s: %s", path, x->err.msg);
}

static void expect_doc(rd *x, const char *id, int id_is_string, const char *text, const char *meta)
{
    int rc = sl_docreader_next(x->r, &x->d, &x->err);
    if (rc != 1)
        fail_msg("expected document '%s', got %d (%s)", id, rc, x->err.msg);
    assert_string_equal(x->d.id.data, id);
    assert_int_equal(x->d.id_is_string, id_is_string);
    assert_int_equal(x->d.text.len, strlen(text));
    assert_string_equal(x->d.text.data, text);
    if (meta)
        assert_string_equal(x->d.meta.data, meta);
}

static void expect_end(rd *x)
{
    int rc = sl_docreader_next(x->r, &x->d, &x->err);
    if (rc != 0)
        fail_msg("expected the end, got %d (%s)", rc, x->err.msg);
}

/* The error message must start with `prefix` (the position), and contain
 * `what` when given (for messages written by the JSON parser). */
static void expect_error(rd *x, const char *prefix, const char *what)
{
    int rc = sl_docreader_next(x->r, &x->d, &x->err);
    if (rc != -1)
        fail_msg("expected an error '%s', got %d", prefix, rc);
    if (strncmp(x->err.msg, prefix, strlen(prefix)) || (what && !strstr(x->err.msg, what)))
        fail_msg("error '%s' does not start with '%s' / contain '%s'", x->err.msg, prefix, what ? what : "");
    assert_null(strchr(x->err.msg, '\n'));
}

/* "<path>:<n>", the id of the n-th document of a source without ids. */
static const char *gid(const char *path, int n)
{
    static char b[4][200];
    static int k;
    char *p = b[k++ % 4];
    snprintf(p, 200, "%s:%d", path, n);
    return p;
}

static void done(rd *x)
{
    sl_textdoc_free(&x->d);
    sl_docreader_close(x->r);
}

static void test_jsonl_ids_and_fields(void **st)
{
    (void)st;
    const char *p = PUTS("a.jsonl", "{\"id\":\"s1\",\"text\":\"one\",\"lang\":\"en\",\"n\":[1,{\"k\":null}]}\n"
                                    "{\"text\":\"two\",\"id\":42}\n"
                                    "{\"id\":-1.5e3,\"text\":\"three\"}\n"
                                    "{\"text\":\"four\",\"id\":null,\"x\":true}\n"
                                    "{\"score\":0.25,\"text\":\"five\\u0000six\"}\n");
    rd x;
    open1(&x, p, (sl_docreader_opts){0});
    expect_doc(&x, "s1", 1, "one", "{\"lang\":\"en\",\"n\":[1,{\"k\":null}]}");
    assert_int_equal(x.d.line, 1);
    expect_doc(&x, "42", 0, "two", "{}"); /* a number id keeps its text */
    expect_doc(&x, "-1.5e3", 0, "three", "{}");
    expect_doc(&x, gid(p, 4), 1, "four", "{\"x\":true}"); /* null id: generated, 4th document */
    /* an escaped NUL is legitimate JSON text: kept, length counts it */
    assert_int_equal(sl_docreader_next(x.r, &x.d, &x.err), 1);
    assert_string_equal(x.d.id.data, gid(p, 5));
    assert_int_equal(x.d.text.len, 8);
    assert_memory_equal(x.d.text.data, "five\0six", 8);
    assert_string_equal(x.d.meta.data, "{\"score\":0.25}");
    assert_string_equal(x.d.source, p);
    assert_int_equal(x.d.line, 5);
    expect_end(&x);
    assert_int_equal(sl_docreader_stats_get(x.r)->docs, 5);
    done(&x);
}

static void test_jsonl_field_option_crlf_blank_bom(void **st)
{
    (void)st;
    const char *p = PUTS("b.jsonl", "\xEF\xBB\xBF\r\n  \r\n{\"content\":\"a\\u00e9\\n\",\"text\":\"other\"}\r\n"
                                    "\t\n{\"id\":\"x\",\"content\":\"b\",\"id\":\"y\"}");
    rd x;
    open1(&x, p, (sl_docreader_opts){.field = "content"});
    /* with --field content, "text" is just another field */
    expect_doc(&x, gid(p, 1), 1, "a\xC3\xA9\n", "{\"text\":\"other\"}");
    assert_int_equal(x.d.line, 3);
    /* duplicate keys: the last wins (as in Python); none goes to meta */
    expect_doc(&x, "y", 1, "b", "{}");
    assert_int_equal(x.d.line, 5); /* last line, without '\n' */
    expect_end(&x);
    done(&x);
}

static void test_jsonl_bad_lines_fatal(void **st)
{
    (void)st;
    const char *p = PUTS("c.jsonl", "{\"text\":\"ok\"}\n\n{\"text\":\"ok\"\n{\"text\":\"after\"}\n");
    char pre[200];
    rd x;
    open1(&x, p, (sl_docreader_opts){0});
    expect_doc(&x, gid(p, 1), 1, "ok", "{}");
    snprintf(pre, sizeof pre, "%s:3: ", p);
    expect_error(&x, pre, "offset");
    done(&x);
}

static void test_jsonl_bad_lines_skipped(void **st)
{
    (void)st;
    const char *p = PUTS("d.jsonl", "{\"text\":\"a\"}\n"
                                    "{\"text\":\"b\"\n"             /* truncated object */
                                    "{\"txt\":\"c\"}\n"             /* no text field */
                                    "{\"text\":3}\n"                /* not a string */
                                    "{\"text\":\"e\",\"id\":[1]}\n" /* id of another type */
                                    "[1,2]\n"                       /* not an object */
                                    "{\"text\":\"g\"}\n");
    rd x;
    open1(&x, p, (sl_docreader_opts){.skip_bad_json = 1});
    expect_doc(&x, gid(p, 1), 1, "a", "{}");
    expect_doc(&x, gid(p, 2), 1, "g", "{}"); /* n counts documents, not lines */
    assert_int_equal(x.d.line, 7);
    expect_end(&x);
    assert_int_equal(sl_docreader_stats_get(x.r)->skipped_lines, 5);
    done(&x);

    /* the same lines, fatal, each with its own message */
    static const struct {
        const char *body, *what;
    } bad[] = {
        {"{\"txt\":\"c\"}\n", ":1: no \"text\" field (fields: txt); --field names the text's"},
        {"{\"text\":3}\n", ":1: field \"text\" is not a string"},
        {"{\"text\":\"e\",\"id\":[1]}\n", ":1: field \"id\" is not a string or a number"},
        {"[1,2]\n", ":1: not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char want[300];
        /* the first line decides the format, so these lines are preceded by a good one */
        char body[200];
        snprintf(body, sizeof body, "{\"text\":\"a\"}\n%s", bad[i].body);
        const char *q = put("e.jsonl", body, strlen(body));
        snprintf(want, sizeof want, "%s:%d%s", q, 2, bad[i].what + 2);
        open1(&x, q, (sl_docreader_opts){0});
        expect_doc(&x, gid(q, 1), 1, "a", "{}");
        expect_error(&x, want, NULL);
        assert_string_equal(x.err.msg, want);
        done(&x);
    }
}

static void test_plain_text_whole_file(void **st)
{
    (void)st;
    const char *p = PUTS("t.txt", "\n  First line.\r\nSecond \xC3\xA9 line.\n\n");
    rd x;
    open1(&x, p, (sl_docreader_opts){0});
    /* the file's exact bytes: leading blank line, CRLF and trailing newlines kept */
    expect_doc(&x, gid(p, 1), 1, "\n  First line.\r\nSecond \xC3\xA9 line.\n\n", "{}");
    assert_int_equal(x.d.line, 0);
    expect_end(&x);
    done(&x);
}

static void test_plain_text_lines(void **st)
{
    (void)st;
    const char *p = PUTS("l.txt", "\xEF\xBB\xBFone\r\n\n \t\ntwo {\"x\":1}\n   three  ");
    rd x;
    open1(&x, p, (sl_docreader_opts){.lines = 1});
    expect_doc(&x, gid(p, 1), 1, "one", "{}");
    assert_int_equal(x.d.line, 1);
    expect_doc(&x, gid(p, 2), 1, "two {\"x\":1}", NULL);
    assert_int_equal(x.d.line, 4);
    expect_doc(&x, gid(p, 3), 1, "   three  ", NULL);
    assert_int_equal(x.d.line, 5);
    expect_end(&x);
    done(&x);
}

static void test_empty_and_blank_sources(void **st)
{
    (void)st;
    const char *e = PUTS("empty.txt", "");
    const char *w = PUTS("blank.txt", " \n\r\n\t    \n");
    const char *b = PUTS("bom.txt", "\xEF\xBB\xBF\n      ");
    const char *t = PUTS("after.jsonl", "{\"text\":\"last\"}");
    const char *paths[] = {e, w, b, t};
    sl_err err;
    sl_docreader_opts o = {.quiet = 1};
    sl_docreader *r = sl_docreader_open(paths, 4, &o, &err);
    assert_non_null(r);
    sl_textdoc d = {0};
    assert_int_equal(sl_docreader_next(r, &d, &err), 1);
    assert_string_equal(d.text.data, "last");
    assert_string_equal(d.source, t);
    assert_int_equal(sl_docreader_next(r, &d, &err), 0);
    sl_textdoc_free(&d);
    sl_docreader_close(r);
}

static void test_binary_data_rejected(void **st)
{
    (void)st;
    char pre[200];
    const char *p = PUTS("bin.dat", "text at first\nthen\0 binary");
    rd x;
    open1(&x, p, (sl_docreader_opts){0});
    snprintf(pre, sizeof pre, "%s:2: binary data (NUL byte at offset 18)", p);
    expect_error(&x, pre, NULL);
    done(&x);
    open1(&x, p, (sl_docreader_opts){.lines = 1});
    expect_doc(&x, gid(p, 1), 1, "text at first", NULL);
    snprintf(pre, sizeof pre, "%s:2: binary data (NUL byte at offset 4)", p);
    expect_error(&x, pre, NULL);
    done(&x);
}

static void test_max_doc_bytes(void **st)
{
    (void)st;
    char pre[200];
    /* lines of 10, 11 and 12 bytes (CR included) with a 11-byte limit */
    const char *p = PUTS("m.txt", "0123456789\n0123456789\r\n0123456789ab\n");
    rd x;
    open1(&x, p, (sl_docreader_opts){.lines = 1, .max_doc_bytes = 11});
    expect_doc(&x, gid(p, 1), 1, "0123456789", NULL);
    expect_doc(&x, gid(p, 2), 1, "0123456789", NULL);
    snprintf(pre, sizeof pre, "%s:3: line longer than `max_doc_bytes` (11 bytes)", p);
    expect_error(&x, pre, NULL);
    done(&x);
    /* a whole-file document: 36 bytes */
    open1(&x, p, (sl_docreader_opts){.max_doc_bytes = 36});
    expect_doc(&x, gid(p, 1), 1, "0123456789\n0123456789\r\n0123456789ab\n", NULL);
    done(&x);
    open1(&x, p, (sl_docreader_opts){.max_doc_bytes = 35});
    snprintf(pre, sizeof pre, "%s: document longer than `max_doc_bytes` (35 bytes)", p);
    expect_error(&x, pre, NULL);
    done(&x);
    /* JSON Lines: the limit applies to the line */
    const char *j = PUTS("m.jsonl", "{\"text\":\"abc\"}\n{\"text\":\"abcd\"}\n");
    open1(&x, j, (sl_docreader_opts){.max_doc_bytes = 14});
    expect_doc(&x, gid(j, 1), 1, "abc", NULL);
    snprintf(pre, sizeof pre, "%s:2: line longer than `max_doc_bytes` (14 bytes)", j);
    expect_error(&x, pre, NULL);
    done(&x);
}

/* Lines of pseudo-random lengths (0 to ~300 KiB) around the reader's 1 MiB
 * chunks: every line must come back whole and in order. */
static void test_lines_across_chunks(void **st)
{
    (void)st;
    size_t total = 0, nlines = 0, cap = 6u << 20;
    char *data = malloc(cap);
    size_t lens[4096];
    uint32_t s = 12345;
    while (nlines < 4096) {
        s = s * 1103515245u + 12345u;
        size_t len = (s >> 8) % (nlines % 7 == 0 ? 300000 : 3000);
        if (total + len + 2 > cap)
            break;
        data[total] = 'A' + (char)(nlines % 26); /* never blank, never '{' */
        for (size_t i = 1; i < len + 1; i++)
            data[total + i] = (char)('a' + (i * 7 + nlines) % 26);
        lens[nlines++] = len + 1;
        total += len + 1;
        data[total++] = '\n';
    }
    const char *p = put("chunks.txt", data, total);
    rd x;
    open1(&x, p, (sl_docreader_opts){.lines = 1});
    size_t off = 0;
    for (size_t i = 0; i < nlines; i++) {
        if (sl_docreader_next(x.r, &x.d, &x.err) != 1)
            fail_msg("line %zu: %s", i + 1, x.err.msg);
        assert_int_equal(x.d.text.len, lens[i]);
        assert_memory_equal(x.d.text.data, data + off, lens[i]);
        assert_int_equal(x.d.line, i + 1);
        off += lens[i] + 1;
    }
    expect_end(&x);
    assert_int_equal(sl_docreader_stats_get(x.r)->bytes, total);
    done(&x);
    /* and as a whole file */
    open1(&x, p, (sl_docreader_opts){0});
    assert_int_equal(sl_docreader_next(x.r, &x.d, &x.err), 1);
    assert_int_equal(x.d.text.len, total);
    assert_memory_equal(x.d.text.data, data, total);
    done(&x);
    free(data);
}

/* JSON Lines are parsed in parallel batches of up to 1024 lines: 5000 lines
 * with a bad line every 7th (skipped) and ids every 3rd must come out in
 * order with the ids of a sequential reading, for 1 and 4 threads; a line
 * over the limit in a later batch is reported after every earlier document. */
static void test_jsonl_batches(void **st)
{
    (void)st;
    sl_buf in = {0};
    for (int i = 1; i <= 5000; i++) {
        if (i % 7 == 0)
            sl_buf_printf(&in, "{\"text\":\"bad %d\",}\n", i);
        else if (i % 3 == 0)
            sl_buf_printf(&in, "{\"id\":\"own-%d\",\"text\":\"line %d\",\"k\":%d}\n", i, i, i);
        else
            sl_buf_printf(&in, "{\"text\":\"line %d\"}\n", i);
    }
    sl_buf_printf(&in, "{\"text\":\"%s\"}\n", "this line is longer than the limit of 50 bytes");
    sl_buf_printf(&in, "{\"text\":\"never read\"}\n");
    const char *p = put("batches.jsonl", in.data, in.len);
    for (int threads = 1; threads <= 4; threads += 3) {
        omp_set_num_threads(threads);
        rd x;
        open1(&x, p, (sl_docreader_opts){.skip_bad_json = 1, .max_doc_bytes = 50});
        int n = 0;
        for (int i = 1; i <= 5000; i++) {
            if (i % 7 == 0)
                continue;
            n++;
            char id[64], text[64];
            snprintf(text, sizeof text, "line %d", i);
            if (i % 3 == 0) {
                snprintf(id, sizeof id, "own-%d", i);
                snprintf(text + 32, 32, "{\"k\":%d}", i);
                expect_doc(&x, id, 1, text, text + 32);
            } else {
                expect_doc(&x, gid(p, n), 1, text, "{}");
            }
            assert_int_equal(x.d.line, i);
        }
        char pre[200];
        snprintf(pre, sizeof pre, "%s:5001: line longer than `max_doc_bytes` (50 bytes)", p);
        expect_error(&x, pre, NULL);
        assert_int_equal(sl_docreader_stats_get(x.r)->skipped_lines, 5000 / 7);
        done(&x);
    }
    omp_set_num_threads(omp_get_num_procs());
    sl_buf_free(&in);
}

static void test_sources_in_order_and_missing_file(void **st)
{
    (void)st;
    const char *a = PUTS("s1.txt", "first file\n");
    const char *b = PUTS("s2.jsonl", "{\"text\":\"second\"}\n{\"text\":\"third\"}\n");
    const char *paths[] = {a, b, a};
    sl_err err;
    sl_docreader_opts o = {.quiet = 1};
    sl_docreader *r = sl_docreader_open(paths, 3, &o, &err);
    assert_non_null(r);
    sl_textdoc d = {0};
    const char *want[][2] = {{a, "first file\n"}, {b, "second"}, {b, "third"}, {a, "first file\n"}};
    int nth[] = {1, 1, 2, 1}; /* numbering restarts in each source */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sl_docreader_next(r, &d, &err), 1);
        assert_string_equal(d.source, want[i][0]);
        assert_string_equal(d.text.data, want[i][1]);
        assert_string_equal(d.id.data, gid(want[i][0], nth[i]));
    }
    assert_int_equal(sl_docreader_next(r, &d, &err), 0);
    sl_textdoc_free(&d);
    sl_docreader_close(r);

    /* a missing file fails at open, before any document */
    char missing[200];
    snprintf(missing, sizeof missing, "%s/no-such-file.jsonl", tmpdir);
    const char *paths2[] = {a, missing};
    assert_null(sl_docreader_open(paths2, 2, &o, &err));
    char want2[300];
    snprintf(want2, sizeof want2, "%s: No such file or directory", missing);
    assert_string_equal(err.msg, want2);
}

/* The one-pass JSON Lines reading against the parsed tree's (the reference):
 * the same documents (text, id, metadata, counts) and the same error, word
 * for word, on seed lines and on every truncation and one-byte change or
 * insertion of them, in the three invalid-UTF-8 modes and two field names. */
static void line_both(const sl_docreader_opts *o, const char *p, size_t n)
{
    sl_textdoc a = {0}, b = {0};
    sl_err ea = {{0}}, eb = {{0}};
    int ga = 0, gb = 0;
    size_t ia = 0, ib = 0;
    int ra = sl_docreader_json_line(o, p, n, 0, &a, &ga, &ia, &ea);
    int rb = sl_docreader_json_line(o, p, n, 1, &b, &gb, &ib, &eb);
    if (ra != rb || (ra && strcmp(ea.msg, eb.msg)) ||
        (!ra && (ga != gb || ia != ib || a.id_is_string != b.id_is_string || a.text.len != b.text.len ||
                 (a.text.len && memcmp(a.text.data, b.text.data, a.text.len)) || a.id.len != b.id.len ||
                 (a.id.len && memcmp(a.id.data, b.id.data, a.id.len)) || a.meta.len != b.meta.len ||
                 (a.meta.len && memcmp(a.meta.data, b.meta.data, a.meta.len))))) {
        fprintf(stderr, "line [%.*s] mode %d field %s: fast %d [%s] meta [%s], tree %d [%s] meta [%s]\n", (int)n, p,
                o->invalid_utf8, o->field, ra, ea.msg, a.meta.data ? a.meta.data : "", rb, eb.msg,
                b.meta.data ? b.meta.data : "");
        fail();
    }
    sl_textdoc_free(&a);
    sl_textdoc_free(&b);
}

static void test_jsonl_one_pass_equals_tree(void **st)
{
    (void)st;
    static const char *const seeds[] = {
        "{\"id\": \"b0\", \"text\": \"A plain line of text that is longer than sixteen bytes.\"}",
        "{\"text\":\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20ac \\ud83d\\ude00 \\ud800 x \\udc00 "
        "\\ud800\\u0041 "
        "end of a long string with escapes\",\"id\":7}",
        "{ \"a\" : [1, -2.5e+3, 0, true, false, null, {\"b\": \"c\\u0001\\/d\"}, []], \"text\" : \"t\" , \"z\": {} }",
        "{\"text\":\"caf\xc3\xa9 \xe2\x82\xac \xff bad \xc3 \xed\xa0\x80 multilingual \xe4\xb8\xad\xe6\x96\x87 text\","
        "\"meta\":\"\xfe raw \xe2\x82\",\"k\\u00e9y\":\"v\"}",
        "{\"id\": -Infinity, \"text\": \"\", \"x\": NaN, \"y\": Infinity, \"w\": 1E5}",
        "{\"id\": null, \"text\": \"nul id\", \"n\": {\"__float__\": \"NaN\"}}",
        "{\"text\": \"a\", \"text\": \"b\", \"id\": \"1\", \"id\": 2}",
        "{\"__float__\": \"Infinity\"}",
        "{\"body\": \"other field\", \"text\": 5, \"id\": true}",
        "{\"text\": \"0123456789abcdef0123456789abcdef\\\"0123456789abcdef\\\\\", \"deep\": [[[[[[[[[]]]]]]]]]}\r",
        "[\"text\"]",
        "  {\"text\":\"x\"}  ",
        "{\"text\": \"\\u4e2d\\u6587 \\ud83d\\ude00 ascii-escaped text, as json.dumps writes it by default: "
        "\\u00e9t\\u00e9 \\uD83D\\uDE00\\u0000\\u001f end\", \"id\": \"\\u0041\\n\"}",
        "{\"text\": \"0123456789abcde\\n0123456789abcdef\\t0123456789abcdefg\\\"\xc3\xa9"
        "0123456789abcd\\u00e9"
        "0123456789abcdef\xe2\x82\xac"
        "0123456789abcdef\xf0\x9f\x98\x80\"}",
    };
    static const char subst[] = "\"\\{}[],: un0e-.\x80\xff\x01NI\t";
    const char *fields[] = {"text", "body"};
    char buf[512];
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
        size_t n = strlen(seeds[s]);
        for (int mode = 0; mode < 3; mode++)
            for (int f = 0; f < 2; f++) {
                sl_docreader_opts o = {.field = fields[f], .invalid_utf8 = mode};
                for (size_t cut = 0; cut <= n; cut++)
                    line_both(&o, seeds[s], cut);
                for (size_t i = 0; i < n; i++)
                    for (size_t k = 0; k < sizeof subst - 1; k++) {
                        memcpy(buf, seeds[s], n);
                        buf[i] = subst[k];
                        line_both(&o, buf, n);
                        memcpy(buf, seeds[s], i);
                        buf[i] = subst[k];
                        memcpy(buf + i + 1, seeds[s] + i, n - i);
                        line_both(&o, buf, n + 1);
                    }
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jsonl_ids_and_fields),
        cmocka_unit_test(test_jsonl_field_option_crlf_blank_bom),
        cmocka_unit_test(test_jsonl_bad_lines_fatal),
        cmocka_unit_test(test_jsonl_bad_lines_skipped),
        cmocka_unit_test(test_plain_text_whole_file),
        cmocka_unit_test(test_plain_text_lines),
        cmocka_unit_test(test_empty_and_blank_sources),
        cmocka_unit_test(test_binary_data_rejected),
        cmocka_unit_test(test_max_doc_bytes),
        cmocka_unit_test(test_lines_across_chunks),
        cmocka_unit_test(test_jsonl_batches),
        cmocka_unit_test(test_sources_in_order_and_missing_file),
        cmocka_unit_test(test_jsonl_one_pass_equals_tree),
    };
    return cmocka_run_group_tests_name("read_docreader", tests, setup, teardown);
}
