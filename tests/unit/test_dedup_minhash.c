/* MinHash signatures (dedup/minhash.h) against datatrove 0.10.1's own:
 * numpy's RandomState permutations (tests/data/dedup/minhash-perm.txt) and,
 * for four configurations (xxhash64 5/14x8 seed 1, sha1-64, sha1-32 3/9x5
 * seed 7, xxhash32 2/20x3), the SHA-1 of every document's signature as
 * datatrove's MinhashDedupSignature wrote it (minhash-<name>.sig), on the
 * multilingual corpus with planted near-duplicates (corpus.jsonl); the
 * documents without a signature are the same too. Fixtures from
 * tests/data/dedup/make_minhash_fixtures.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/support.h"

#include "base/rng.h"
#include "dedup/minhash.h"
#include "stream/io.h"
#include "base/json.h"

static char *path(const char *rel)
{
    return sl_test_path("tests/data/dedup/%s", rel);
}

static void test_permutations(void **state)
{
    (void)state;
    char *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("minhash-perm.txt"), &t, &n, &e), 0);
    char *p = t;
    int blocks = 0;
    while (*p) {
        unsigned seed, cnt;
        assert_int_equal(sscanf(p, "seed %u n %u", &seed, &cnt), 2);
        p = strchr(p, '\n') + 1;
        uint64_t *want[2];
        for (int k = 0; k < 2; k++) {
            want[k] = calloc(cnt, 8);
            assert_true(*p == (k ? 'b' : 'a'));
            p += 2;
            for (unsigned i = 0; i < cnt; i++)
                want[k][i] = strtoull(p, &p, 10);
            p = strchr(p, '\n') + 1;
        }
        sl_minhash_config c = SL_MINHASH_CONFIG_INIT;
        c.seed = seed;
        c.buckets = 1;
        c.rows = (int)cnt;
        sl_minhash *m = sl_minhash_new(&c, &e);
        assert_non_null(m);
        assert_memory_equal(sl_minhash_a(m), want[0], cnt * 8);
        assert_memory_equal(sl_minhash_b(m), want[1], cnt * 8);
        sl_minhash_free(m);
        free(want[0]);
        free(want[1]);
        blocks++;
    }
    assert_int_equal(blocks, 2);
    free(t);
}

static void check_config(const char *name, int hash, int ngram, int buckets, int rows, unsigned seed)
{
    sl_err e = {{0}};
    char fname[256];
    snprintf(fname, sizeof fname, "minhash-%s.sig", name);
    char *want, *corpus;
    size_t nw, nc;
    assert_int_equal(sl_read_file(path(fname), &want, &nw, &e), 0);
    assert_int_equal(sl_read_file(path("corpus.jsonl"), &corpus, &nc, &e), 0);
    sl_minhash_config c = {
        .ngram = ngram, .buckets = buckets, .rows = rows, .seed = seed, .hash = hash, .language = "en"};
    sl_minhash *m = sl_minhash_new(&c, &e);
    assert_non_null(m);
    sl_minhash_work *w = sl_minhash_work_new(m);
    size_t np = (size_t)buckets * rows;
    uint64_t *sig = calloc(np, 8);
    char *wp = want;
    size_t docs = 0, with_sig = 0;
    for (char *l = corpus; l < corpus + nc;) {
        char *nl = memchr(l, '\n', (size_t)(corpus + nc - l));
        sl_json_doc *d = sl_json_parse(l, (size_t)(nl - l), NULL, &e);
        assert_non_null(d);
        const char *id = sl_json_get_str(sl_json_root(d), "id");
        const sl_json *text = sl_json_get(sl_json_root(d), "text");
        int has = sl_minhash_signature(m, w, text->str, text->str_len, sig, NULL, NULL);
        size_t idlen = strlen(id);
        int listed = !strncmp(wp, id, idlen) && wp[idlen] == ' ';
        if (has != listed)
            fail_msg("%s: %s signature, datatrove: %s (%s)", id, has ? "a" : "no", listed ? "a" : "none", name);
        if (has) {
            uint8_t dg[20];
            sl_sha1(sig, np * 8, dg); /* the values as little-endian uint64 (this machine's order) */
            char hex[41];
            for (int i = 0; i < 20; i++)
                snprintf(hex + 2 * i, 3, "%02x", dg[i]);
            if (strncmp(wp + idlen + 1, hex, 40))
                fail_msg("%s: signature differs from datatrove's (%s)", id, name);
            wp = strchr(wp, '\n') + 1;
            with_sig++;
        }
        sl_json_free(d);
        docs++;
        l = nl + 1;
    }
    assert_true(*wp == 0);
    assert_true(docs > 200 && with_sig > 200);
    free(sig);
    sl_minhash_work_free(w);
    sl_minhash_free(m);
    free(want);
    free(corpus);
}

static void test_signatures_default(void **state)
{
    (void)state;
    check_config("default", SL_MH_XXHASH64, 5, 14, 8, 1);
}

static void test_signatures_sha1_64(void **state)
{
    (void)state;
    check_config("sha1-64", SL_MH_SHA1_64, 5, 14, 8, 1);
}

static void test_signatures_sha1_32(void **state)
{
    (void)state;
    check_config("sha1-32-n3-b9-r5-s7", SL_MH_SHA1_32, 3, 9, 5, 7);
}

static void test_signatures_xxhash32(void **state)
{
    (void)state;
    check_config("xxhash32-n2-b20-r3", SL_MH_XXHASH32, 2, 20, 3, 1);
}

static void test_sha1_vectors(void **state)
{
    (void)state;
    /* FIPS 180 examples */
    static const struct {
        const char *in, *hex;
    } v[] = {{"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
             {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
             {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t d[20];
        char hex[41];
        sl_sha1(v[i].in, strlen(v[i].in), d);
        for (int k = 0; k < 20; k++)
            snprintf(hex + 2 * k, 3, "%02x", d[k]);
        assert_string_equal(hex, v[i].hex);
    }
}

static void test_bad_config(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_minhash_config c = SL_MINHASH_CONFIG_INIT;
    c.seed = (uint64_t)1 << 32;
    assert_null(sl_minhash_new(&c, &e));
    assert_non_null(strstr(e.msg, "`seed`"));
    c = (sl_minhash_config)SL_MINHASH_CONFIG_INIT;
    c.ngram = 0;
    assert_null(sl_minhash_new(&c, &e));
    assert_non_null(strstr(e.msg, "`ngram`"));
}

/* Every version of the permutation minima this CPU runs (vector
 * extensions, AVX2, AVX-512) gives the scalar definition's values: random
 * and edge-case shingle hashes (0, 2^61 - 1 and its neighbours, 2^64 - 1),
 * datatrove's permutations and random 64-bit ones (a sum of exactly
 * 2^61 - 1 among them), every permutation count
 * from 1 to 40 (the versions' remainders) and 112, both masks, and 0 to 300
 * shingles. The signatures above check the fastest against datatrove. */
static void test_perm_versions(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_minhash_config c = SL_MINHASH_CONFIG_INIT;
    c.buckets = 14, c.rows = 8, c.seed = 1;
    sl_minhash *m = sl_minhash_new(&c, &e);
    assert_non_null(m);
    enum { NP = 112, NS = 300 };
    uint64_t ra[NP], rb[NP], sh[NS], want[NP], got[NP], st = 12345;
    for (int j = 0; j < NP; j++)
        ra[j] = sl_splitmix64(&st), rb[j] = sl_splitmix64(&st);
    const uint64_t p = ((uint64_t)1 << 61) - 1;
    ra[0] = 1, rb[0] = 0, ra[1] = 1, rb[1] = p; /* x = p exactly: a reduced value equal to p becomes 0 */
    const uint64_t edge[] = {0, 1, p - 1, p, p + 1, 2 * p, (uint64_t)1 << 63, UINT64_MAX, UINT64_MAX - 1, UINT32_MAX};
    int checked[SL_MH_AVX512 + 1] = {0};
    for (int round = 0; round < 400; round++) {
        size_t ns = round % 50 == 0 ? 0 : (size_t)sl_rng_below(&st, round % 3 ? 8 : NS + 1);
        for (size_t i = 0; i < ns; i++)
            sh[i] = sl_rng_below(&st, 4) ? sl_splitmix64(&st) : edge[sl_rng_below(&st, sizeof edge / sizeof *edge)];
        int nperm = round % 41 == 40 ? NP : 1 + round % 40;
        const uint64_t *a = round % 2 ? ra : sl_minhash_a(m), *b = round % 2 ? rb : sl_minhash_b(m);
        uint64_t mask = round % 4 < 2 ? UINT64_MAX : UINT32_MAX;
        assert_int_equal(sl_minhash_perm_minima(sh, ns, a, b, nperm, mask, want, SL_MH_SCALAR), SL_MH_SCALAR);
        for (int v = SL_MH_VECTOR; v <= SL_MH_AVX512; v++) {
            memset(got, 0x5a, sizeof got);
            int used = sl_minhash_perm_minima(sh, ns, a, b, nperm, mask, got, v);
            if (used < 0)
                continue;
            assert_int_equal(used, v);
            checked[v]++;
            if (memcmp(got, want, (size_t)nperm * sizeof *got))
                fail_msg("version %d differs from the scalar minima (round %d, %zu shingles, %d permutations)", v,
                         round, ns, nperm);
        }
    }
    assert_int_equal(checked[SL_MH_VECTOR], 400); /* every build has it */
    int best = sl_minhash_perm_minima(sh, 1, ra, rb, 1, UINT64_MAX, got, SL_MH_BEST);
    assert_true(best >= SL_MH_VECTOR && checked[best] == 400);
    print_message("perm minima: versions up to %d of %d checked against the scalar one\n", best, SL_MH_AVX512);
    sl_minhash_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_vectors),       cmocka_unit_test(test_permutations),
        cmocka_unit_test(test_signatures_default), cmocka_unit_test(test_signatures_sha1_64),
        cmocka_unit_test(test_signatures_sha1_32), cmocka_unit_test(test_signatures_xxhash32),
        cmocka_unit_test(test_bad_config),         cmocka_unit_test(test_perm_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
