/* base/hashtab: random insertions and lookups agree with a plain reference
 * (an array searched linearly) for fixed-size keys of 3, 4, 8 and 16 bytes,
 * for string keys through the caller's hash and compare with entries that
 * hold only an index into the caller's array, at several loads and with a
 * hash that sends every key to one slot; the walk yields each entry once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/hashtab.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- fixed-size keys ------------------------------------------------------ */

/* A key of ks bytes (never all zero) drawn from a universe of u keys, and a
 * 4-byte count after it. */
static void make_key(unsigned char *k, size_t ks, uint64_t x)
{
    memset(k, 0, ks);
    x = x * 0x9E3779B97F4A7C15ull + 1; /* spread, and never 0 for small x */
    for (size_t i = 0; i < ks; i++)
        k[i] = (unsigned char)(x >> (8 * (i % 8)) ^ (i / 8) * 0x5b);
    if (ks < 8 && !(x & ((UINT64_C(1) << (8 * ks)) - 1)))
        k[0] = 1;
}

typedef struct {
    unsigned char key[16];
    uint32_t count;
} ref_entry;

static ref_entry *ref_find(ref_entry *r, size_t n, const unsigned char *k, size_t ks)
{
    for (size_t i = 0; i < n; i++)
        if (!memcmp(r[i].key, k, ks))
            return &r[i];
    return NULL;
}

static void run_fixed(size_t ks, unsigned load, size_t min_cap, uint64_t universe, int ops)
{
    sl_htab_type t = {.entry_size = ks + 4, .key_size = ks, .max_load = load, .min_cap = min_cap};
    sl_htab h;
    sl_htab_init(&h, NULL);
    ref_entry *ref = calloc((size_t)ops, sizeof *ref);
    size_t nref = 0;
    unsigned char k[16];
    for (int op = 0; op < ops; op++) {
        make_key(k, ks, rnd() % universe);
        ref_entry *r = ref_find(ref, nref, k, ks);
        if (rnd() % 3) { /* insert or count */
            int fresh;
            unsigned char *e = sl_htab_put(&h, &t, k, &fresh);
            assert_non_null(e);
            assert_int_equal(fresh, r == NULL);
            assert_memory_equal(e, k, ks);
            uint32_t c;
            memcpy(&c, e + ks, 4);
            if (!r) {
                assert_int_equal(c, 0); /* a new entry is zeroed */
                r = &ref[nref++];
                memcpy(r->key, k, ks);
            } else
                assert_int_equal(c, r->count);
            c++;
            memcpy(e + ks, &c, 4);
            r->count++;
        } else { /* look up */
            unsigned char *e = sl_htab_find(&h, &t, k);
            if (!r)
                assert_null(e);
            else {
                assert_non_null(e);
                uint32_t c;
                memcpy(&c, e + ks, 4);
                assert_int_equal(c, r->count);
            }
        }
        assert_int_equal(sl_htab_count(&h), nref);
    }
    /* capacity: a power of two within the load */
    if (nref) {
        assert_true((h.cap & (h.cap - 1)) == 0);
        assert_true(nref * 100 <= h.cap * (load ? load : 75));
    }
    /* the walk: every entry once, each in the reference */
    size_t pos = 0, seen = 0;
    unsigned char *e;
    while ((e = sl_htab_next(&h, &t, &pos))) {
        ref_entry *r = ref_find(ref, nref, e, ks);
        assert_non_null(r);
        assert_int_not_equal(r->count, UINT32_MAX);
        uint32_t c;
        memcpy(&c, e + ks, 4);
        assert_int_equal(c, r->count);
        r->count = UINT32_MAX; /* seen */
        seen++;
    }
    assert_int_equal(seen, nref);
    sl_htab_free(&h);
    assert_null(sl_htab_find(&h, &t, k));
    free(ref);
}

static void test_fixed_keys(void **state)
{
    (void)state;
    static const size_t sizes[] = {3, 4, 8, 16};
    for (size_t s = 0; s < 4; s++) {
        run_fixed(sizes[s], 0, 0, 50, 2000);       /* few keys, many repeats */
        run_fixed(sizes[s], 0, 0, 5000, 4000);     /* mostly new keys: grows */
        run_fixed(sizes[s], 90, 2, 3000, 4000);    /* crowded */
        run_fixed(sizes[s], 10, 1024, 300, 1500);  /* sparse */
        run_fixed(sizes[s], 50, 0, 1u << 30, 800); /* all distinct */
    }
}

/* ---- the caller's hash and compare: entries are indexes into an array ------ */

typedef struct {
    char **s; /* the strings, in order of insertion */
    size_t n;
    int bad; /* every key hashes to 0: one probe run */
} strs;

typedef struct {
    const char *s;
    size_t len;
} skey;

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t skey_hash(const void *key, const void *ctx)
{
    const skey *k = key;
    return ((const strs *)ctx)->bad ? 0 : fnv(k->s, k->len);
}

static uint64_t sentry_hash(const void *entry, const void *ctx)
{
    const strs *a = ctx;
    uint32_t i;
    memcpy(&i, entry, 4);
    const char *s = a->s[i - 1];
    return a->bad ? 0 : fnv(s, strlen(s));
}

static int sentry_eq(const void *key, const void *entry, const void *ctx)
{
    const skey *k = key;
    uint32_t i;
    memcpy(&i, entry, 4);
    const char *s = ((const strs *)ctx)->s[i - 1];
    return strlen(s) == k->len && !memcmp(s, k->s, k->len);
}

static void run_strings(int bad, int ops, unsigned universe)
{
    strs a = {.s = calloc((size_t)ops, sizeof(char *)), .bad = bad};
    const sl_htab_type t = {
        .entry_size = 4, .key_size = 4, .hash = skey_hash, .entry_hash = sentry_hash, .eq = sentry_eq, .max_load = 50};
    sl_htab h;
    sl_htab_init(&h, &a);
    char buf[32];
    for (int op = 0; op < ops; op++) {
        /* strings of varied length, some prefixes of others */
        unsigned x = (unsigned)(rnd() % universe);
        int len = snprintf(buf, sizeof buf, "%u", x);
        len -= (int)(x % 3 == 0 && len > 1);
        skey k = {buf, (size_t)len};
        size_t want = 0; /* the reference: index + 1 of the string, by linear search */
        for (size_t i = 0; i < a.n; i++)
            if (strlen(a.s[i]) == k.len && !memcmp(a.s[i], buf, k.len))
                want = i + 1;
        if (rnd() & 1) {
            int fresh;
            uint32_t *e = sl_htab_put(&h, &t, &k, &fresh);
            assert_int_equal(fresh, want == 0);
            if (fresh) {
                assert_int_equal(*e, 0);
                a.s[a.n] = strndup(buf, k.len);
                *e = (uint32_t)++a.n;
            } else
                assert_int_equal(*e, want);
        } else {
            uint32_t *e = sl_htab_find(&h, &t, &k);
            if (!want)
                assert_null(e);
            else
                assert_int_equal(*e, want);
        }
    }
    assert_int_equal(sl_htab_count(&h), a.n);
    /* every string is found at its index */
    for (size_t i = 0; i < a.n; i++) {
        skey k = {a.s[i], strlen(a.s[i])};
        uint32_t *e = sl_htab_find(&h, &t, &k);
        assert_non_null(e);
        assert_int_equal(*e, i + 1);
    }
    sl_htab_free(&h);
    for (size_t i = 0; i < a.n; i++)
        free(a.s[i]);
    free(a.s);
}

static void test_caller_hash(void **state)
{
    (void)state;
    run_strings(0, 5000, 2000);
    run_strings(0, 3000, 100000);
    run_strings(1, 600, 300); /* all in one probe run, wrapping round the table */
}

/* A reserved table takes that many entries without growing: no entry moves. */
static void test_reserve(void **state)
{
    (void)state;
    static const sl_htab_type t = {.entry_size = 8, .key_size = 8, .max_load = 50};
    for (size_t n = 0; n < 300; n += 7) {
        sl_htab h;
        sl_htab_init(&h, NULL);
        sl_htab_reserve(&h, &t, n);
        size_t cap = h.cap;
        assert_true(cap >= 16 && (cap & (cap - 1)) == 0 && n * 2 <= cap && (cap == 16 || n * 2 > cap / 2));
        unsigned char *first = NULL;
        for (uint64_t k = 1; k <= n; k++) {
            int fresh;
            unsigned char *e = sl_htab_put(&h, &t, &k, &fresh);
            assert_int_equal(fresh, 1);
            if (k == 1)
                first = e;
        }
        assert_int_equal(h.cap, cap);
        if (n)
            assert_ptr_equal(sl_htab_find(&h, &t, &(uint64_t){1}), first);
        sl_htab_reserve(&h, &t, 4 * n + 100); /* on a filled table: grows, keeps the entries */
        for (uint64_t k = 1; k <= n; k++)
            assert_non_null(sl_htab_find(&h, &t, &k));
        assert_int_equal(sl_htab_count(&h), n);
        sl_htab_free(&h);
    }
}

static void test_empty(void **state)
{
    (void)state;
    static const sl_htab_type t = {.entry_size = 8, .key_size = 8};
    sl_htab h;
    sl_htab_init(&h, NULL);
    uint64_t k = 7;
    assert_null(sl_htab_find(&h, &t, &k));
    size_t pos = 0;
    assert_null(sl_htab_next(&h, &t, &pos));
    assert_int_equal(sl_htab_count(&h), 0);
    sl_htab_free(&h);
    sl_htab_free(&h); /* twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_keys),
        cmocka_unit_test(test_caller_hash),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
