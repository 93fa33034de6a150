/* Cutting BPE where no merge joins (tokenize/models/joins.h) and the stretch cache
 * (tokenize/scache.h):
 * - the junction filter: cuts between characters whose pair was not added,
 *   none where it was, none next to an invalid byte; multi-byte characters;
 *   SentencePiece's words (sl_joins_word);
 * - the claim cutting rests on, against an independent BPE: random merge
 *   tables over a small alphabet (U+2581 included, so that some tables allow
 *   the word cut and some do not) made into tokenizer.json files, random
 *   texts (repeated, so that the cache answers too); the SentencePiece-style
 *   family, which cuts, must give the ids of a plain lowest-rank-leftmost
 *   merge loop written here on the whole text;
 * - the cache: what it returns for a key is what was stored for that key,
 *   across the short and long tables, past the point where it starts again,
 *   and with four threads writing and reading one shared short table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <omp.h>

#include "base/buf.h"
#include "base/rng.h"
#include "tokenize/models/joins.h"
#include "tokenize/scache.h"
#include "tokenize/tokenizer.h"
#include "tokenize/tokenizer_impl.h"

#define META "\xE2\x96\x81"

static void test_filter(void **state)
{
    (void)state;
    sl_joins j;
    sl_joins_init(&j);
    assert_int_equal(sl_joins_part(&j, "abc", 3), 1); /* nothing joins: every boundary */
    sl_joins_add(&j, 'a', 'b');
    assert_int_equal(sl_joins_part(&j, "abc", 3), 2);
    sl_joins_add_junction(&j, "xb", 2, "cz", 2); /* (b, c) */
    assert_int_equal(sl_joins_part(&j, "abc", 3), 3);
    assert_int_equal(sl_joins_part(&j, "abcab", 5), 3);
    /* multi-byte characters: é (2 bytes), 中 (3) */
    sl_joins_add_inner(&j, "\xC3\xA9\xE4\xB8\xAD", 5);
    assert_int_equal(sl_joins_part(&j,
                                   "\xC3\xA9\xE4\xB8\xAD"
                                   "x",
                                   6),
                     5);
    assert_int_equal(sl_joins_part(&j, "x\xC3\xA9", 3), 1);
    /* an invalid byte: no cut next to it (nor after it) */
    assert_int_equal(sl_joins_part(&j,
                                   "c\xFF"
                                   "a",
                                   3),
                     3);
    assert_int_equal(sl_joins_part(&j,
                                   "\xFF"
                                   "ca",
                                   3),
                     3);
    /* a junction of a token that is not text turns cutting off */
    sl_joins_add_inner(&j, "a\xFF", 2);
    assert_null(j.bits);
    sl_joins_free(&j);
    /* SentencePiece's words start at a U+2581 after another character */
    const char *w = META "a" META META "b" META;
    size_t n = strlen(w);
    assert_int_equal(sl_joins_word(w, n), 4);
    assert_int_equal(sl_joins_word(w + 4, n - 4), 7);
    assert_int_equal(sl_joins_word(w + 11, n - 11), 3);
    assert_int_equal(sl_joins_word("abc", 3), 3);
}

/* --- random merge tables against a plain BPE ------------------------------ */
static const char *const ALPHA[] = {"a", "b", "c", "d", META, "\xC3\xA9"};
#define N_ALPHA 6

typedef struct table {
    char tok[128][48];
    size_t n_tok;
    int ml[128], mr[128], mc[128]; /* merge k: tokens ml, mr -> mc, rank k */
    size_t n_merge;
} table;

static int find_tok(const table *t, const char *s)
{
    for (size_t i = 0; i < t->n_tok; i++)
        if (!strcmp(t->tok[i], s))
            return (int)i;
    return -1;
}

static void make_table(table *t, uint64_t *rng)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < N_ALPHA; i++)
        strcpy(t->tok[t->n_tok++], ALPHA[i]);
    size_t want = 8 + sl_splitmix64(rng) % 40;
    for (int tries = 0; t->n_merge < want && tries < 1000; tries++) {
        int l = (int)(sl_splitmix64(rng) % t->n_tok), r = (int)(sl_splitmix64(rng) % t->n_tok);
        char cat[96];
        snprintf(cat, sizeof cat, "%s%s", t->tok[l], t->tok[r]);
        if (strlen(cat) >= sizeof t->tok[0] || t->n_tok == 128)
            continue;
        int dup = 0;
        for (size_t k = 0; k < t->n_merge; k++)
            dup |= t->ml[k] == l && t->mr[k] == r;
        if (dup)
            continue;
        int c = find_tok(t, cat);
        if (c < 0) {
            c = (int)t->n_tok;
            strcpy(t->tok[t->n_tok++], cat);
        }
        t->ml[t->n_merge] = l, t->mr[t->n_merge] = r, t->mc[t->n_merge] = c;
        t->n_merge++;
    }
}

static void to_json(const table *t, sl_buf *b)
{
    sl_buf_clear(b);
    sl_buf_puts(b, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[],"
                   "\"normalizer\":null,\"pre_tokenizer\":null,\"post_processor\":null,\"decoder\":null,"
                   "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,"
                   "\"continuing_subword_prefix\":null,\"end_of_word_suffix\":null,\"fuse_unk\":false,"
                   "\"byte_fallback\":false,\"ignore_merges\":false,\"vocab\":{");
    for (size_t i = 0; i < t->n_tok; i++)
        sl_buf_printf(b, "%s\"%s\":%zu", i ? "," : "", t->tok[i], i);
    sl_buf_puts(b, "},\"merges\":[");
    for (size_t k = 0; k < t->n_merge; k++)
        sl_buf_printf(b, "%s[\"%s\",\"%s\"]", k ? "," : "", t->tok[t->ml[k]], t->tok[t->mr[k]]);
    sl_buf_puts(b, "]}}");
}

/* The whole text as characters, then the lowest-ranked adjacent pair
 * merged, leftmost first, until none is in the table. */
static size_t plain_bpe(const table *t, const int *chars, size_t n, int *sym)
{
    memcpy(sym, chars, n * sizeof *sym);
    for (;;) {
        size_t best_k = SIZE_MAX, at = 0;
        for (size_t i = 0; i + 1 < n; i++)
            for (size_t k = 0; k < t->n_merge && k < best_k; k++)
                if (t->ml[k] == sym[i] && t->mr[k] == sym[i + 1]) {
                    best_k = k, at = i;
                    break;
                }
        if (best_k == SIZE_MAX)
            return n;
        sym[at] = t->mc[best_k];
        memmove(sym + at + 1, sym + at + 2, (n - at - 2) * sizeof *sym);
        n--;
    }
}

static void test_cut_equals_whole(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    sl_buf json = {0}, text = {0};
    sl_ids ids = {0};
    int chars[400], sym[400];
    size_t cut_tables = 0;
    for (int round = 0; round < 300; round++) {
        table t;
        make_table(&t, &rng);
        to_json(&t, &json);
        sl_err e = {{0}};
        sl_tokenizer *tk = sl_tok_spbpe_load_mem(json.data, json.len, "random.json", NULL, &e);
        if (!tk)
            fail_msg("round %d: %s", round, e.msg);
        sl_tok_state *st = sl_tok_state_new(tk);
        /* a few words, each text encoded twice (the second time from the cache) */
        char words[4][64];
        for (int w = 0; w < 4; w++) {
            words[w][0] = 0;
            for (size_t k = 0, len = 1 + sl_splitmix64(&rng) % 8; k < len; k++)
                strcat(words[w], ALPHA[sl_splitmix64(&rng) % N_ALPHA]);
        }
        for (int x = 0; x < 20; x++) {
            sl_buf_clear(&text);
            size_t nc = 0;
            for (size_t k = 0, len = 1 + sl_splitmix64(&rng) % 40; k < len && nc < 300; k++) {
                if (sl_splitmix64(&rng) % 3 == 0) {
                    const char *w = words[sl_splitmix64(&rng) % 4];
                    sl_buf_puts(&text, w);
                    for (size_t i = 0; w[i];) {
                        size_t cl = (uint8_t)w[i] < 0x80 ? 1 : (uint8_t)w[i] < 0xE0 ? 2 : 3;
                        char ch[4] = {0};
                        memcpy(ch, w + i, cl);
                        chars[nc++] = find_tok(&t, ch);
                        i += cl;
                    }
                } else {
                    int c = (int)(sl_splitmix64(&rng) % N_ALPHA);
                    sl_buf_puts(&text, ALPHA[c]);
                    chars[nc++] = c;
                }
            }
            size_t want = plain_bpe(&t, chars, nc, sym);
            for (int again = 0; again < 2; again++) {
                ids.n = 0;
                if (sl_tokenizer_encode(tk, st, text.data, text.len, &ids, &e))
                    fail_msg("round %d: %s", round, e.msg);
                if (ids.n != want || memcmp(ids.v, sym, want * sizeof *sym))
                    fail_msg("round %d text '%s': %zu ids, want %zu", round, text.data, ids.n, want);
            }
        }
        /* tables where some pair of characters is no merge's junction
         * (the ones where cutting happens) */
        int cuts = 0;
        for (int x = 0; x < N_ALPHA && !cuts; x++)
            for (int y = 0; y < N_ALPHA && !cuts; y++) {
                int joined = 0;
                for (size_t k = 0; k < t.n_merge && !joined; k++) {
                    const char *l = t.tok[t.ml[k]], *r = t.tok[t.mr[k]];
                    size_t ln = strlen(l), xn = strlen(ALPHA[x]);
                    joined = ln >= xn && !strcmp(l + ln - xn, ALPHA[x]) && !strncmp(r, ALPHA[y], strlen(ALPHA[y]));
                }
                cuts = !joined;
            }
        cut_tables += (size_t)cuts;
        sl_tok_state_free(st);
        sl_tokenizer_free(tk);
    }
    assert_true(cut_tables > 100);
    sl_buf_free(&json);
    sl_buf_free(&text);
    sl_ids_free(&ids);
}

/* --- the cache ----------------------------------------------------------- */
/* key i: its number, '#', then filler; 1 to 300 bytes (some over
 * SL_SCACHE_KEY, some in the short table) */
static size_t key_of(uint64_t i, char *k)
{
    uint64_t r = i * 0x9E3779B97F4A7C15ULL + 1;
    size_t n = (size_t)snprintf(k, 24, "%llu#", (unsigned long long)i), want = 1 + (size_t)(sl_splitmix64(&r) % 300);
    for (; n < want; n++)
        k[n] = (char)('a' + sl_splitmix64(&r) % 3);
    return n;
}

static size_t vals_of(uint64_t i, uint32_t *v)
{
    size_t nv = (size_t)(i % 40); /* some over the short table's 14 */
    for (size_t j = 0; j < nv; j++)
        v[j] = (uint32_t)(i * 31 + j);
    return nv;
}

static void test_cache(void **state)
{
    (void)state;
    sl_scache c = {0};
    char k[320];
    uint32_t v[64];
    size_t hits = 0;
    for (uint64_t i = 0; i < 3 * SL_SCACHE_MAX; i++) {
        size_t n = key_of(i, k), nv = vals_of(i, v);
        uint64_t h = sl_scache_hash(k, n);
        size_t got_n;
        assert_null(sl_scache_get(&c, h, k, n, &got_n)); /* never stored before */
        sl_scache_put(&c, h, k, n, v, nv);
        /* an earlier key: its own values, or nothing */
        uint64_t back = i / 2;
        n = key_of(back, k), nv = vals_of(back, v);
        const uint32_t *got = sl_scache_get(&c, sl_scache_hash(k, n), k, n, &got_n);
        if (got) {
            assert_true(n <= SL_SCACHE_KEY);
            assert_int_equal(got_n, nv);
            assert_memory_equal(got, v, nv * sizeof *v);
            hits++;
        }
    }
    assert_true(hits > SL_SCACHE_MAX / 4); /* it does cache */
    sl_scache_free(&c);
}

/* Short keys that differ from a stored one in a single byte, at every
 * position and length (the inline lookup compares whole words and then a
 * zero-padded last word): never a hit; the stored key itself always. */
static void test_cache_near_keys(void **state)
{
    (void)state;
    sl_scache c = {0};
    char k[SL_SCACHE_SHORT_KEY];
    for (size_t n = 1; n <= SL_SCACHE_SHORT_KEY; n++)
        for (size_t at = 0; at < n; at++) {
            memset(k, 'q', n);
            uint32_t v[2] = {(uint32_t)n, (uint32_t)at};
            size_t got_n;
            sl_scache_put(&c, sl_scache_hash(k, n), k, n, v, 2);
            const uint32_t *got = sl_scache_get(&c, sl_scache_hash(k, n), k, n, &got_n);
            assert_non_null(got);
            assert_int_equal(got_n, 2);
            assert_memory_equal(got, v, sizeof v);
            for (int d = 1; d < 256; d += 37) {
                k[at] = (char)('q' + d);
                got = sl_scache_get(&c, sl_scache_hash(k, n), k, n, &got_n);
                assert_null(got);
                /* the same lookup with the hash of the stored key: the
                 * entry is found, its key compared, and refused */
                memset(k, 'q', n);
                uint64_t h = sl_scache_hash(k, n);
                k[at] = (char)('q' + d);
                assert_null(sl_scache_get(&c, h, k, n, &got_n));
            }
        }
    sl_scache_free(&c);
}

/* Threads sharing one short table, all storing and looking up the same
 * few thousand keys (so entries are overwritten under readers all the
 * time): a hit is always the values of its own key, never half of
 * another's. */
static void test_cache_shared(void **state)
{
    (void)state;
    sl_scache_shared *sh = sl_scache_shared_new();
    long hits = 0, bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : hits, bad)
    {
        sl_scache c;
        sl_scache_init(&c, sh);
        uint64_t r = 99 + (uint64_t)omp_get_thread_num();
        char k[40];
        uint32_t v[SL_SCACHE_SHORT_VALS];
        for (int i = 0; i < 1500000; i++) {
            uint64_t key = sl_splitmix64(&r) % 60000; /* more keys than entries: stores never stop */
            uint64_t kr = key * 0x9E3779B97F4A7C15ULL + 7;
            size_t n = 3 + (size_t)(sl_splitmix64(&kr) % (SL_SCACHE_SHORT_KEY - 2)),
                   nv = (size_t)(key % (SL_SCACHE_SHORT_VALS + 1));
            for (size_t j = 0; j < n; j++)
                k[j] = (char)sl_splitmix64(&kr);
            k[0] = (char)(key & 0xff), k[1] = (char)(key >> 8 & 0xff), k[2] = (char)(key >> 16); /* distinct keys */
            for (size_t j = 0; j < nv; j++)
                v[j] = (uint32_t)sl_splitmix64(&kr);
            uint64_t h = sl_scache_hash(k, n);
            size_t got_n;
            const uint32_t *got = sl_scache_get(&c, h, k, n, &got_n);
            if (got) {
                hits++;
                bad += got_n != nv || memcmp(got, v, nv * sizeof *v);
            } else {
                sl_scache_put(&c, h, k, n, v, nv);
            }
        }
        sl_scache_free(&c);
    }
    sl_scache_shared_free(sh);
    assert_int_equal(bad, 0);
    assert_true(hits > 100000); /* (and lookups still hit) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),          cmocka_unit_test(test_cut_equals_whole), cmocka_unit_test(test_cache),
        cmocka_unit_test(test_cache_near_keys), cmocka_unit_test(test_cache_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
