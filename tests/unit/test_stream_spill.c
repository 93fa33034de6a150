/* stream/spill: whatever the budget (all in memory, many runs, runs merged in
 * several passes), the records come back as a stable sort of what was
 * appended would give them (the reference: qsort on (key, index)); order
 * "none" gives them back as appended; nothing is left in the temporary
 * directory, also while the spill is open (the files are unlinked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <unistd.h>

#include "stream/spill.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Records: a 4-byte big-endian key (few distinct values, so ties abound)
 * then payload bytes; the payload holds the index appended, which the
 * reference uses to check stability. */
typedef struct {
    uint32_t key, idx;
    size_t len;
} ref;

static int cmp_key(const void *a, size_t al, const void *b, size_t bl, void *ctx)
{
    (void)al, (void)bl, (void)ctx;
    return memcmp(a, b, 4);
}

static int cmp_ref(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void make_rec(unsigned char *r, uint32_t key, uint32_t idx, size_t len)
{
    r[0] = (unsigned char)(key >> 24), r[1] = (unsigned char)(key >> 16), r[2] = (unsigned char)(key >> 8),
    r[3] = (unsigned char)key;
    memcpy(r + 4, &idx, 4);
    for (size_t i = 8; i < len; i++)
        r[i] = (unsigned char)(idx * 31 + i);
}

static int dir_empty(const char *d)
{
    DIR *dd = opendir(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dd)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dd);
    return n == 0;
}

static void run_case(size_t n, size_t fixed, size_t budget, int sorted, size_t min_runs, const char *dir)
{
    ref *refs = malloc(n * sizeof *refs);
    unsigned char rec[300];
    sl_err e = {{0}};
    sl_spill_opts o = {.budget = budget, .rec_size = fixed, .cmp = sorted ? cmp_key : NULL, .tmpdir = dir};
    sl_spill *s = sl_spill_new(&o, &e);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        size_t len = fixed ? fixed : 8 + rnd() % 200;
        uint32_t key = rnd() % 97;
        refs[i] = (ref){key, (uint32_t)i, len};
        make_rec(rec, key, (uint32_t)i, len);
        if (sl_spill_add(s, rec, len, &e))
            fail_msg("add: %s", e.msg);
    }
    assert_int_equal(sl_spill_count(s), n);
    if (sl_spill_sort(s, &e))
        fail_msg("sort: %s", e.msg);
    if (sl_spill_runs(s) < min_runs)
        fail_msg("%zu runs, expected at least %zu (budget %zu, %zu records)", sl_spill_runs(s), min_runs, budget, n);
    assert_true(dir_empty(dir)); /* the runs are unlinked files */
    if (sorted)
        qsort(refs, n, sizeof *refs, cmp_ref);
    const void *r;
    size_t len, i = 0;
    int k;
    while ((k = sl_spill_next(s, &r, &len, &e)) == 1) {
        assert_true(i < n);
        make_rec(rec, refs[i].key, refs[i].idx, refs[i].len);
        if (len != refs[i].len || memcmp(r, rec, len))
            fail_msg("record %zu differs (budget %zu, fixed %zu, sorted %d)", i, budget, fixed, sorted);
        i++;
    }
    assert_int_equal(k, 0);
    assert_int_equal(i, n);
    assert_int_equal(sl_spill_next(s, &r, &len, &e), 0);
    /* a second time over the same records */
    assert_int_equal(sl_spill_rewind(s, &e), 0);
    for (i = 0; (k = sl_spill_next(s, &r, &len, &e)) == 1; i++) {
        make_rec(rec, refs[i].key, refs[i].idx, refs[i].len);
        if (len != refs[i].len || memcmp(r, rec, len))
            fail_msg("record %zu differs after the rewind", i);
    }
    assert_int_equal(i, n);
    sl_spill_free(s);
    free(refs);
}

static void test_spill_orders(void **state)
{
    (void)state;
    char dir[] = "/tmp/sluice-test-spill-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* all in memory */
    run_case(1000, 16, 64 << 20, 1, 0, dir);
    run_case(1000, 0, 64 << 20, 1, 0, dir);
    /* the smallest budget (256 KiB: 128 KiB held per run, a fan-in of 2):
     * many runs, merged in several passes */
    run_case(60000, 16, 1, 1, 3, dir);
    run_case(20000, 0, 1, 1, 3, dir);
    run_case(20000, 0, 1, 0, 3, dir); /* FIFO */
    /* 1 MiB: a fan-in of 14, one pass */
    run_case(100000, 24, 1 << 20, 1, 3, dir);
    run_case(0, 8, 1, 1, 0, dir);
    assert_true(dir_empty(dir));
    rmdir(dir);
}

static void test_spill_errors(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_spill_opts o = {.budget = 1 << 20, .rec_size = 0, .cmp = cmp_key, .purpose = "test index"};
    sl_spill *s = sl_spill_new(&o, &e);
    static unsigned char big[(1 << 20) / 4 + 1];
    assert_int_equal(sl_spill_add(s, big, sizeof big, &e), -1);
    assert_non_null(strstr(e.msg, "test index: a record of"));
    sl_spill_free(s);
    o.rec_size = 8;
    s = sl_spill_new(&o, &e);
    assert_int_equal(sl_spill_add(s, big, 7, &e), -1);
    sl_spill_free(s);
    /* a directory that is not there: the error names it */
    o.rec_size = 8;
    o.budget = 1;
    o.tmpdir = "/nonexistent-sluice-dir";
    s = sl_spill_new(&o, &e);
    int rc = 0;
    for (int i = 0; i < 100000 && !rc; i++)
        rc = sl_spill_add(s, big, 8, &e);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(e.msg, "/nonexistent-sluice-dir: cannot create a temporary file"));
    sl_spill_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_orders),
        cmocka_unit_test(test_spill_errors),
    };
    return cmocka_run_group_tests_name("stream/spill", tests, NULL, NULL);
}
