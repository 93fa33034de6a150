/* UTF-8 repair against CPython: tests/data/read/utf8_cases.tsv holds byte
 * strings with what bytes.decode('utf-8', 'replace' / 'ignore') makes of
 * them, the number of maximal invalid subparts and the first invalid offset
 * (generated once by tests/data/read/make_utf8_cases.py). The same cases go
 * through sl_utf8_repair/sl_utf8_check directly, and through the docreader
 * as plain-text lines and as JSON strings. sl_utf8_check (16 bytes at a
 * time by table lookups where the CPU has SSSE3) is also checked against a
 * byte-by-byte reading of the Unicode standard's Table 3-7: every 1-4 byte
 * sequence at offsets around the 16-byte blocks, and 200,000 random
 * strings, valid or broken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream/docreader.h"
#include "base/json.h"

typedef struct {
    sl_buf in, rep, ign;
    size_t count, first_bad;
} ucase;

static ucase *cases;
static size_t n_cases;
static char tmpdir[64];

static void unhex(sl_buf *b, const char *h)
{
    sl_buf_append(b, "", 0); /* data is never NULL, even when empty ("-") */
    for (size_t i = 0; strcmp(h, "-") && h[i] && h[i + 1]; i += 2) {
        unsigned v;
        assert_int_equal(sscanf(h + i, "%2x", &v), 1);
        sl_buf_putc(b, (char)v);
    }
}

static int load(void **st)
{
    (void)st;
    const char *src = getenv("SLUICE_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/read/utf8_cases.tsv", src ? src : ".");
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s (set SLUICE_SRC)\n", path);
        return -1;
    }
    char in[4096], rep[4096], ign[4096];
    size_t cnt, at;
    while (fscanf(f, "%4095s %4095s %4095s %zu %zu", in, rep, ign, &cnt, &at) == 5) {
        cases = realloc(cases, (n_cases + 1) * sizeof *cases);
        ucase *c = &cases[n_cases++];
        memset(c, 0, sizeof *c);
        unhex(&c->in, in);
        unhex(&c->rep, rep);
        unhex(&c->ign, ign);
        c->count = cnt;
        c->first_bad = at;
    }
    fclose(f);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-read-utf8-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    return n_cases > 2000 ? 0 : -1;
}

static int unload(void **st)
{
    (void)st;
    for (size_t i = 0; i < n_cases; i++) {
        sl_buf_free(&cases[i].in);
        sl_buf_free(&cases[i].rep);
        sl_buf_free(&cases[i].ign);
    }
    free(cases);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_repair_matches_cpython(void **st)
{
    (void)st;
    for (size_t i = 0; i < n_cases; i++) {
        const ucase *c = &cases[i];
        sl_buf out = {0};
        size_t n = sl_utf8_repair(&out, c->in.data, c->in.len, SL_UTF8_REPLACE);
        if (n != c->count || out.len != c->rep.len || memcmp(out.data ? out.data : "", c->rep.data, out.len))
            fail_msg("case %zu: replace gives %zu bytes / %zu repairs, CPython %zu / %zu", i + 1, out.len, n,
                     c->rep.len, c->count);
        sl_buf_clear(&out);
        n = sl_utf8_repair(&out, c->in.data, c->in.len, SL_UTF8_SKIP);
        if (n != c->count || out.len != c->ign.len || memcmp(out.data ? out.data : "", c->ign.data, out.len))
            fail_msg("case %zu: skip gives %zu bytes / %zu, CPython %zu / %zu", i + 1, out.len, n, c->ign.len,
                     c->count);
        assert_int_equal(sl_utf8_check(c->in.data, c->in.len), c->first_bad);
        sl_buf_free(&out);
    }
}

/* Writes the cases as lines "x<case>" (plain) or {"text":"x<case>"}; the
 * "x" keeps a line from being blank or starting with '{'. */
static void write_cases(const char *path, int json)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n_cases; i++) {
        fputs(json ? "{\"text\":\"x" : "x", f);
        fwrite(cases[i].in.data, 1, cases[i].in.len, f);
        fputs(json ? "\"}\n" : "\n", f);
    }
    fclose(f);
}

static void read_cases(int json, int mode)
{
    char path[128];
    snprintf(path, sizeof path, "%s/cases.%s", tmpdir, json ? "jsonl" : "txt");
    write_cases(path, json);
    const char *paths[] = {path};
    sl_docreader_opts o = {.lines = 1, .invalid_utf8 = mode, .quiet = 1};
    sl_err err = {{0}};
    sl_docreader *r = sl_docreader_open(paths, 1, &o, &err);
    assert_non_null(r);
    sl_textdoc d = {0};
    size_t total = 0;
    for (size_t i = 0; i < n_cases; i++) {
        const sl_buf *want = mode == SL_UTF8_SKIP ? &cases[i].ign : &cases[i].rep;
        if (sl_docreader_next(r, &d, &err) != 1)
            fail_msg("case %zu: no document: %s", i + 1, err.msg);
        if (d.text.len != want->len + 1 || d.text.data[0] != 'x' || memcmp(d.text.data + 1, want->data, want->len))
            fail_msg("case %zu (%s): docreader text differs from CPython", i + 1, json ? "json" : "text");
        assert_int_equal(d.line, i + 1);
        total += cases[i].count;
    }
    assert_int_equal(sl_docreader_next(r, &d, &err), 0);
    assert_int_equal(sl_docreader_stats_get(r)->invalid_utf8, total);
    assert_int_equal(sl_docreader_stats_get(r)->docs, n_cases);
    sl_textdoc_free(&d);
    sl_docreader_close(r);
}

static void test_docreader_lines_replace(void **st)
{
    (void)st;
    read_cases(0, SL_UTF8_REPLACE);
}
static void test_docreader_lines_skip(void **st)
{
    (void)st;
    read_cases(0, SL_UTF8_SKIP);
}
static void test_docreader_json_replace(void **st)
{
    (void)st;
    read_cases(1, SL_UTF8_REPLACE);
}
static void test_docreader_json_skip(void **st)
{
    (void)st;
    read_cases(1, SL_UTF8_SKIP);
}

/* --invalid=error stops at the first case with an invalid sequence and
 * names its line. */
static void test_docreader_error_mode(void **st)
{
    (void)st;
    size_t first = 0;
    while (first < n_cases && cases[first].count == 0)
        first++;
    assert_true(first < n_cases);
    for (int json = 0; json < 2; json++) {
        char path[128];
        snprintf(path, sizeof path, "%s/err.%s", tmpdir, json ? "jsonl" : "txt");
        write_cases(path, json);
        const char *paths[] = {path};
        sl_docreader_opts o = {.lines = 1, .invalid_utf8 = SL_UTF8_ERROR, .skip_bad_json = 1, .quiet = 1};
        sl_err err = {{0}};
        sl_docreader *r = sl_docreader_open(paths, 1, &o, &err);
        assert_non_null(r);
        sl_textdoc d = {0};
        for (size_t i = 0; i < first; i++)
            assert_int_equal(sl_docreader_next(r, &d, &err), 1);
        /* fatal even with skip_bad_json: the user asked for an error */
        assert_int_equal(sl_docreader_next(r, &d, &err), -1);
        char want[256];
        snprintf(want, sizeof want, "%s:%zu: invalid UTF-8 (byte %zu of the line)", path, first + 1,
                 cases[first].first_bad + (json ? 10 : 1));
        assert_string_equal(err.msg, want);
        sl_textdoc_free(&d);
        sl_docreader_close(r);
    }
}

/* The first ill-formed offset by Table 3-7 of the Unicode standard
 * (well-formed UTF-8 byte sequences), byte by byte. */
static size_t ref_check(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c == 0xE0)
            len = 3, lo = 0xA0;
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            len = 3;
        else if (c == 0xED)
            len = 3, hi = 0x9F;
        else if (c == 0xF0)
            len = 4, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3)
            len = 4;
        else if (c == 0xF4)
            len = 4, hi = 0x8F;
        else
            return i;
        if (i + len > n || p[i + 1] < lo || p[i + 1] > hi)
            return i;
        for (size_t k = 2; k < len; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return i;
        i += len;
    }
    return n;
}

static void check_same(const uint8_t *p, size_t n)
{
    size_t want = ref_check(p, n), got = sl_utf8_check((const char *)p, n);
    if (want != got) {
        char hex[3 * 64 + 1] = "";
        for (size_t i = 0; i < n && i < 64; i++)
            snprintf(hex + 3 * i, 4, "%02x ", p[i]);
        fail_msg("sl_utf8_check %zu, Table 3-7 %zu, on %zu bytes: %s", got, want, n, hex);
    }
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void test_check_table_3_7(void **st)
{
    (void)st;
    uint8_t b[64];
    /* every lead byte, with the bytes after it from the edges of every
     * range Table 3-7 draws, at offsets before, across and after the
     * blocks' ends, among ASCII or among 3-byte characters */
    static const uint8_t edge[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                   0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    static const size_t at[] = {0, 1, 12, 13, 14, 15, 16, 29, 30, 31, 45};
    size_t ne = sizeof edge / sizeof *edge;
    for (int fill = 0; fill < 2; fill++)
        for (size_t a = 0; a < sizeof at / sizeof *at; a++)
            for (unsigned lead = 0; lead < 256; lead++)
                for (size_t x = 0; x < ne * ne * ne; x++) {
                    for (size_t i = 0; i < sizeof b; i++)
                        b[i] = fill ? (uint8_t) "\xe4\xb8\xad"[i % 3] : 'a';
                    uint8_t s[4] = {(uint8_t)lead, edge[x % ne], edge[x / ne % ne], edge[x / ne / ne]};
                    size_t len = lead < 0xC0 ? 1 : lead < 0xF0 ? 3 : 4;
                    if (len == 1 && x)
                        break;
                    if (len == 3 && x >= ne * ne)
                        break;
                    memcpy(b + at[a], s, len);
                    check_same(b, 48);
                    check_same(b, at[a] + len);     /* (ending there) */
                    check_same(b, at[a] + len - 1); /* (cut short) */
                }
    uint64_t r = 7;
    for (int k = 0; k < 200000; k++) {
        size_t n = (size_t)rnd(&r) % 64;
        if (k % 2) { /* valid text, then maybe one fault */
            size_t i = 0;
            while (i < n) {
                uint32_t cp = (uint32_t)rnd(&r) % 4 == 0 ? (uint32_t)rnd(&r) % 0x110000 : (uint32_t)rnd(&r) % 0x80;
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 'x';
                char u[4];
                size_t m = sl_utf8_encode(u, cp);
                if (i + m > n)
                    break;
                memcpy(b + i, u, m);
                i += m;
            }
            n = i;
            if (n && rnd(&r) % 2)
                b[rnd(&r) % n] = (uint8_t)rnd(&r);
            if (n && rnd(&r) % 4 == 0)
                n -= (size_t)rnd(&r) % (n < 3 ? n : 3);
        } else {
            for (size_t i = 0; i < n; i++)
                b[i] = (uint8_t)(rnd(&r) % 3 == 0 ? 0x80 + rnd(&r) % 0x80 : rnd(&r));
        }
        check_same(b, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_table_3_7),         cmocka_unit_test(test_repair_matches_cpython),
        cmocka_unit_test(test_docreader_lines_replace), cmocka_unit_test(test_docreader_lines_skip),
        cmocka_unit_test(test_docreader_json_replace),  cmocka_unit_test(test_docreader_json_skip),
        cmocka_unit_test(test_docreader_error_mode),
    };
    return cmocka_run_group_tests_name("read_utf8", tests, load, unload);
}
