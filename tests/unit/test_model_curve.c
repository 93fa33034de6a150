/* Position curves (model/curve.h): bins of hand-computed documents, groups
 * from metadata, merge = the curve of all documents, JSON round trip, and
 * the messages that name fields. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/curve.h"

static void test_bin_of(void **st)
{
    (void)st;
    /* bin k = [2^k, 2^(k+1) - 1] */
    assert_int_equal(sl_curve_bin_of(1), 0);
    assert_int_equal(sl_curve_bin_of(2), 1);
    assert_int_equal(sl_curve_bin_of(3), 1);
    assert_int_equal(sl_curve_bin_of(4), 2);
    assert_int_equal(sl_curve_bin_of(7), 2);
    assert_int_equal(sl_curve_bin_of(8), 3);
    assert_int_equal(sl_curve_bin_of(1023), 9);
    assert_int_equal(sl_curve_bin_of(1024), 10);
    assert_int_equal(sl_curve_bin_of(INT64_MAX), 62);
}

/* A document of 6 predictions with log-probabilities -1..-6 and 12 source bytes:
 * positions 1 | 2 3 | 4 5 6 -> bins {1}, {2, 3}, {4, 5, 6}; 2 bytes per prediction. */
static void test_hand_document(void **st)
{
    (void)st;
    const float lp[6] = {-1, -2, -3, -4, -5, -6};
    sl_curve *c = sl_curve_new(NULL);
    sl_curve_add_doc(c, NULL, lp, 6, 12);
    sl_curve_add_doc(c, NULL, lp, 1, 0); /* a document of one prediction, no bytes */
    sl_curve_add_doc(c, NULL, lp, 0, 0); /* none: counted as a document only */
    const sl_curve_group *g = &c->groups[0];
    assert_int_equal(c->n_groups, 1);
    assert_string_equal(g->name, "all");
    assert_int_equal(g->documents, 3);
    assert_int_equal(g->nbins, 3);
    assert_int_equal(g->bins[0].count, 2);
    assert_true(g->bins[0].sum_nll == 2 && g->bins[0].sum_sq == 2);
    assert_int_equal(g->bins[0].bytes_count, 1);
    assert_true(g->bins[0].bytes_nll == 1 && g->bins[0].bytes == 2);
    assert_int_equal(g->bins[1].count, 2);
    assert_true(g->bins[1].sum_nll == 5 && g->bins[1].sum_sq == 13 && g->bins[1].bytes == 4);
    assert_int_equal(g->bins[2].count, 3);
    assert_true(g->bins[2].sum_nll == 15 && g->bins[2].sum_sq == 77 && g->bins[2].bytes == 6);
    /* mean 5, sample sd 1: half-width 1.96 / sqrt 3; bpb 15 / ln 2 / 6 */
    assert_true(fabs(sl_curve_mean(&g->bins[2]) - 5) < 1e-15);
    assert_true(fabs(sl_curve_ci95(&g->bins[2]) - 1.96 / sqrt(3)) < 1e-12);
    assert_true(fabs(sl_curve_bpb(&g->bins[2]) - 15 / M_LN2 / 6) < 1e-12);
    assert_true(fabs(sl_curve_bpb(&g->bins[0]) - 1 / M_LN2 / 2) < 1e-12); /* only the document with bytes */
    assert_true(isnan(sl_curve_ci95(&(sl_curve_bin){.count = 1, .sum_nll = 3, .sum_sq = 9})));
    sl_curve_free(c);
}

static void test_groups(void **st)
{
    (void)st;
    sl_curve *c = sl_curve_new("source");
    sl_err e = {{0}};
    sl_curve_group *g;
    const float lp[3] = {-1, -1, -1};
    const char *metas[] = {"{\"source\":\"web\",\"x\":1}", "", "{\"x\":2}", "{\"source\":7}", "{\"source\":\"web\"}"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(sl_curve_doc_group(c, metas[i], strlen(metas[i]), &g, &e), 0);
        sl_curve_add_doc(c, g, lp, 3, 0);
    }
    assert_int_equal(c->n_groups, 4);
    assert_string_equal(c->groups[1].name, "web");
    assert_string_equal(c->groups[2].name, SL_CURVE_NONE);
    assert_string_equal(c->groups[3].name, "7");
    assert_int_equal(c->groups[0].documents, 5);
    assert_int_equal(c->groups[1].documents, 2);
    assert_int_equal(c->groups[2].documents, 2);
    assert_int_equal(c->groups[1].bins[1].count, 4);
    assert_int_equal(c->groups[0].bins[1].count, 10);
    assert_int_equal(sl_curve_doc_group(c, "[1]", 3, &g, &e), -1);
    assert_non_null(strstr(e.msg, "`group_by`"));
    sl_curve_free(c);
}

/* merged halves == the whole, and JSON write/read keeps every sum */
static void test_merge_and_round_trip(void **st)
{
    (void)st;
    float lp[300];
    for (int i = 0; i < 300; i++)
        lp[i] = -(float)((i * 37) % 101) / 7.0f;
    sl_curve *whole = sl_curve_new("s"), *a = sl_curve_new("s"), *b = sl_curve_new("s");
    sl_err e = {{0}};
    for (int d = 0; d < 20; d++) {
        sl_curve *half = d < 9 ? a : b;
        int64_t n = (d * 53) % 300;
        const char *name = d % 3 ? "x" : "y";
        sl_curve_add_doc(whole, sl_curve_group_get(whole, name, 1), lp + (300 - n), n, (uint64_t)d * 10);
        sl_curve_add_doc(half, sl_curve_group_get(half, name, 1), lp + (300 - n), n, (uint64_t)d * 10);
    }
    assert_int_equal(sl_curve_merge(a, b, &e), 0);
    assert_int_equal(a->n_groups, whole->n_groups);
    for (size_t i = 0; i < whole->n_groups; i++) {
        const sl_curve_group *x = sl_curve_group_get(a, whole->groups[i].name, strlen(whole->groups[i].name));
        const sl_curve_group *y = &whole->groups[i];
        assert_int_equal(x->nbins, y->nbins);
        assert_int_equal(x->documents, y->documents);
        for (int k = 0; k < y->nbins; k++) {
            assert_int_equal(x->bins[k].count, y->bins[k].count);
            assert_true(fabs(x->bins[k].sum_nll - y->bins[k].sum_nll) <= 1e-12 * fabs(y->bins[k].sum_nll));
            assert_true(fabs(x->bins[k].sum_sq - y->bins[k].sum_sq) <= 1e-12 * fabs(y->bins[k].sum_sq));
            assert_true(fabs(x->bins[k].bytes - y->bins[k].bytes) <= 1e-12 * fabs(y->bins[k].bytes));
        }
    }
    /* JSON round trip: every sum exact */
    whole->train_length = 64;
    whole->max_position = 4096;
    sl_buf j = {0};
    sl_curve_json(&j, whole);
    sl_curve *r = sl_curve_read(j.data, j.len, "mem", &e);
    assert_non_null(r);
    assert_string_equal(r->group_by, "s");
    assert_int_equal(r->train_length, 64);
    assert_int_equal(r->max_position, 4096);
    assert_int_equal(r->n_groups, whole->n_groups);
    for (size_t i = 0; i < r->n_groups; i++) {
        assert_string_equal(r->groups[i].name, whole->groups[i].name);
        assert_int_equal(r->groups[i].nbins, whole->groups[i].nbins);
        assert_memory_equal(r->groups[i].bins, whole->groups[i].bins,
                            sizeof(sl_curve_bin) * (size_t)r->groups[i].nbins);
    }
    sl_buf j2 = {0};
    sl_curve_json(&j2, r);
    assert_int_equal(j.len, j2.len);
    assert_memory_equal(j.data, j2.data, j.len);
    /* settings must agree */
    assert_int_equal(sl_curve_merge(a, r, &e), -1); /* a has max_position 0 */
    assert_non_null(strstr(e.msg, "`max_position`"));
    sl_curve *other = sl_curve_new("t");
    assert_int_equal(sl_curve_merge(a, other, &e), -1);
    assert_non_null(strstr(e.msg, "`group_by`"));
    sl_buf_free(&j);
    sl_buf_free(&j2);
    sl_curve_free(other);
    sl_curve_free(r);
    sl_curve_free(whole);
    sl_curve_free(a);
    sl_curve_free(b);
}

static void test_read_errors(void **st)
{
    (void)st;
    const char *bad[] = {
        "[]",
        "{\"format\":\"sluice-position-curve\",\"version\":2}",
        "{\"format\":\"sluice-position-curve\",\"version\":1,\"group_by\":null,\"max_position\":0,"
        "\"train_length\":0,\"groups\":[]}",
        "{\"format\":\"sluice-position-curve\",\"version\":1,\"group_by\":null,\"max_position\":0,"
        "\"train_length\":0,\"groups\":[{\"name\":\"all\",\"documents\":1,\"bins\":[{\"lo\":2}]}]}",
        "{\"format\":\"sluice-position-curve\",\"version\":1,\"group_by\":null,\"max_position\":0,"
        "\"train_length\":0,\"groups\":[{\"name\":\"all\",\"documents\":1,\"bins\":[{\"lo\":1,\"count\":1,"
        "\"bytes_count\":0,\"sum_nll\":\"x\",\"sum_sq\":1,\"bytes_nll\":0,\"bytes\":0}]}]}",
        "{\"format\":\"sluice-position-curve\",\"version\":1,\"group_by\":null,\"max_position\":0,"
        "\"train_length\":0,\"groups\":[{\"name\":\"web\",\"documents\":1,\"bins\":[]}]}",
    };
    const char *want[] = {"not a position curve", "not a position curve", "`groups`", "`lo` is not 1", "`sum_nll`",
                          "not \"all\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_err e = {{0}};
        assert_null(sl_curve_read(bad[i], strlen(bad[i]), "f.json", &e));
        assert_non_null(strstr(e.msg, "f.json"));
        if (!strstr(e.msg, want[i]))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, want[i]);
    }
}

/* sl_curve_save writes the JSON and SVG files (both or neither) and
 * sl_curve_load adds up curve files: the sum of the files of two halves of
 * the documents is the curve of all of them (sums of dyadic values, so
 * exact: the same JSON bytes). */
static void test_save_and_load(void **st)
{
    (void)st;
    char dir[] = "/tmp/sluice-curve-XXXXXX", pa[64], pb[64], svg[64], bad[128];
    assert_non_null(mkdtemp(dir));
    snprintf(pa, sizeof pa, "%s/a.json", dir);
    snprintf(pb, sizeof pb, "%s/b.json", dir);
    snprintf(svg, sizeof svg, "%s/a.svg", dir);
    float lp[200];
    for (int i = 0; i < 200; i++)
        lp[i] = -(float)(i % 8) / 4.0f;
    sl_curve *whole = sl_curve_new("s"), *a = sl_curve_new("s"), *b = sl_curve_new("s");
    sl_err e = {{0}};
    for (int d = 0; d < 16; d++) {
        sl_curve *half = d % 2 ? b : a; /* a sees the groups in the order all does */
        int64_t n = (d * 29) % 200;
        const char *name = d % 3 ? "x" : "y";
        uint64_t bytes = d % 4 ? (uint64_t)n * 4 : 0;
        sl_curve_add_doc(whole, sl_curve_group_get(whole, name, 1), lp, n, bytes);
        sl_curve_add_doc(half, sl_curve_group_get(half, name, 1), lp, n, bytes);
    }
    assert_int_equal(sl_curve_save(a, pa, svg, &e), 0);
    assert_int_equal(sl_curve_save(b, pb, NULL, &e), 0);
    const char *paths[] = {pa, pb};
    sl_curve *sum = sl_curve_load(paths, 2, &e);
    assert_non_null(sum);
    sl_buf x = {0}, y = {0}, s = {0};
    sl_curve_json(&x, whole);
    sl_curve_json(&y, sum);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    /* the SVG file is the curve's SVG */
    sl_curve_svg(&s, a);
    FILE *f = fopen(svg, "rb");
    assert_non_null(f);
    char *got = malloc(s.len + 1);
    assert_int_equal(fread(got, 1, s.len + 1, f), s.len);
    fclose(f);
    assert_memory_equal(got, s.data, s.len);
    free(got);
    /* a file that is not a curve: an error naming it */
    const char *wrong[] = {pa, svg};
    assert_null(sl_curve_load(wrong, 2, &e));
    assert_non_null(strstr(e.msg, "a.svg"));
    /* curves of other settings do not add up: the message names the file */
    sl_curve *other = sl_curve_new("t");
    char pc[64];
    snprintf(pc, sizeof pc, "%s/c.json", dir);
    assert_int_equal(sl_curve_save(other, pc, NULL, &e), 0);
    const char *mixed[] = {pa, pc};
    assert_null(sl_curve_load(mixed, 2, &e));
    assert_non_null(strstr(e.msg, "c.json"));
    assert_non_null(strstr(e.msg, "`group_by`"));
    /* the SVG cannot be written: no JSON file either */
    char pd[64];
    snprintf(pd, sizeof pd, "%s/d.json", dir);
    snprintf(bad, sizeof bad, "%s/d.svg", pa); /* under a regular file */
    assert_int_equal(sl_curve_save(a, pd, bad, &e), -1);
    assert_null(fopen(pd, "rb"));
    sl_buf_free(&x);
    sl_buf_free(&y);
    sl_buf_free(&s);
    sl_curve_free(other);
    sl_curve_free(sum);
    sl_curve_free(whole);
    sl_curve_free(a);
    sl_curve_free(b);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bin_of),      cmocka_unit_test(test_hand_document),
        cmocka_unit_test(test_groups),      cmocka_unit_test(test_merge_and_round_trip),
        cmocka_unit_test(test_read_errors), cmocka_unit_test(test_save_and_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
