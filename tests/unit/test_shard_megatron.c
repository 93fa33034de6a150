/* Megatron .idx/.bin writer and reader. The expected bytes are spelled out
 * from the layout documented by megatron-core (_IndexWriter): 9-byte magic,
 * <Q version 1, <B dtype code, <Q S, <Q D, int32 sizes, int64 byte pointers,
 * int64 document indices. The fixtures written by megatron-core itself are
 * checked end to end in tests/cli/shard_megatron.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support.h"

#include "shard/megatron.h"

static size_t put(unsigned char *b, size_t at, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
    return at + (size_t)n;
}

/* Documents [5,6,EOS], [7,EOS] with EOS = 0: S = 2, D = 3, uint16. */
static size_t expected_idx(unsigned char *b)
{
    memcpy(b, "MMIDIDX\0\0", 9);
    size_t at = put(b, 9, 1, 8);
    at = put(b, at, 8, 1);
    at = put(b, at, 2, 8);
    at = put(b, at, 3, 8);
    at = put(b, at, 3, 4); /* sizes */
    at = put(b, at, 2, 4);
    at = put(b, at, 0, 8); /* pointers in bytes */
    at = put(b, at, 6, 8);
    at = put(b, at, 0, 8); /* document indices */
    at = put(b, at, 1, 8);
    at = put(b, at, 2, 8);
    return at;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    unsigned char *p = (unsigned char *)sl_test_slurp(path, n);
    assert_non_null(p);
    return p;
}

static void test_write_bytes(void **state)
{
    (void)state;
    char prefix[] = "/tmp/sluice-mega-XXXXXX";
    int fd = mkstemp(prefix);
    close(fd);
    unlink(prefix);
    sl_err err = {{0}};
    sl_mega_writer *w = sl_mega_writer_open(prefix, SL_MEGA_UINT16, &err);
    assert_non_null(w);
    uint32_t a[3] = {5, 6, 0}, b[2] = {7, 0};
    assert_int_equal(sl_mega_add_doc(w, a, 3, &err), 0);
    assert_int_equal(sl_mega_add_doc(w, b, 2, &err), 0);
    assert_int_equal(sl_mega_writer_finish(w, &err), 0);
    char path[256];
    size_t n;
    snprintf(path, sizeof path, "%s.idx", prefix);
    unsigned char *idx = slurp(path, &n), want[128];
    size_t wn = expected_idx(want);
    assert_int_equal(n, wn);
    assert_int_equal(n, 42 + 20 * 2); /* 34 + 20S + 8D with D = S + 1 */
    assert_memory_equal(idx, want, n);
    free(idx);
    snprintf(path, sizeof path, "%s.bin", prefix);
    unsigned char *bin = slurp(path, &n);
    const unsigned char wbin[10] = {5, 0, 6, 0, 0, 0, 7, 0, 0, 0};
    assert_int_equal(n, 10);
    assert_memory_equal(bin, wbin, 10);
    free(bin);
    /* read back */
    sl_mega_reader *r = sl_mega_open(prefix, &err);
    assert_non_null(r);
    assert_int_equal(sl_mega_n_docs(r), 2);
    uint32_t *tok = NULL;
    size_t tn = 0, cap = 0;
    assert_int_equal(sl_mega_read_doc(r, 1, &tok, &tn, &cap, &err), 0);
    assert_int_equal(tn, 2);
    assert_int_equal(tok[0], 7);
    uint32_t mx;
    assert_int_equal(sl_mega_max_token(r, &mx, &err), 0);
    assert_int_equal(mx, 7);
    free(tok);
    sl_mega_close(r);
    unlink(path);
    snprintf(path, sizeof path, "%s.idx", prefix);
    unlink(path);
}

static void expect_bad(const unsigned char *b, size_t n, uint64_t bin, const char *msg)
{
    sl_mega_index ix;
    sl_err err = {{0}};
    assert_int_equal(sl_mega_parse_idx(b, n, bin, "x.idx", &ix, &err), -1);
    if (!strstr(err.msg, msg) || strncmp(err.msg, "x.idx: ", 7))
        fail_msg("message '%s' lacks '%s'", err.msg, msg);
}

static void test_parse_errors(void **state)
{
    (void)state;
    unsigned char b[128], c[128];
    size_t n = expected_idx(b);
    sl_mega_index ix;
    sl_err err = {{0}};
    if (sl_mega_parse_idx(b, n, 10, "x.idx", &ix, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(ix.total_tokens, 5);
    assert_int_equal(ix.doc_idx[2], 2);
    sl_mega_index_free(&ix);
    expect_bad(b, 20, 10, "too short");
    expect_bad(b, n - 1, 10, "do not match");
    expect_bad(b, n, 12, "the .bin has 12 bytes");
    memcpy(c, b, n);
    c[0] = 'X';
    expect_bad(c, n, 10, "bad magic");
    memcpy(c, b, n);
    c[9] = 2;
    expect_bad(c, n, 10, "version 2");
    memcpy(c, b, n);
    c[17] = 6;
    expect_bad(c, n, 10, "dtype code 6");
    memcpy(c, b, n);
    put(c, 34 + 8, 4, 8); /* second pointer */
    expect_bad(c, n, 10, "pointer 4");
    memcpy(c, b, n);
    put(c, 34, 0xffffffff, 4); /* size -1 */
    expect_bad(c, n, 10, "negative size");
    memcpy(c, b, n);
    put(c, 34 + 24 + 16, 1, 8); /* last document index 1 != S */
    expect_bad(c, n, 10, "document index 2");
    /* multimodal: sequence modes appended */
    memcpy(c, b, n);
    c[n] = 0;
    c[n + 1] = 0;
    expect_bad(c, n + 2, 10, "multimodal");
}

static void test_dtype_for_vocab(void **state)
{
    (void)state;
    assert_int_equal(sl_mega_dtype_for_vocab(50277), SL_MEGA_UINT16);
    assert_int_equal(sl_mega_dtype_for_vocab(65499), SL_MEGA_UINT16);
    assert_int_equal(sl_mega_dtype_for_vocab(65500), SL_MEGA_INT32); /* Megatron's optimal_dtype threshold */
    assert_int_equal(sl_mega_dtype_for_vocab(128256), SL_MEGA_INT32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_bytes),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_dtype_for_vocab),
    };
    return cmocka_run_group_tests_name("shard_megatron", tests, NULL, NULL);
}
