/* The added-token trie's skip (tokenize/trie.h, sl_trie_next) against the
 * trie's own match at every position: random tries over a small alphabet
 * (one-byte tokens or not, one to eight first bytes, so both the SSE2 path
 * with its second-byte filter and the byte loop are taken), random texts,
 * every start position. sl_trie_next may stop where nothing matches, but it
 * must never pass a position where a token matches: that is what makes the
 * split of added tokens (sl_added_split) the same as trying every position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/rng.h"
#include "tokenize/trie.h"

static const char *const alphabet[] = {" ", " ", "<", "|", "a", "\t", "\xC3\xA9", "\xE2\x96\x81", "x", "\n"};
#define NA (sizeof alphabet / sizeof *alphabet)

static size_t random_text(uint64_t *rng, char *out, size_t cap, size_t max_pieces)
{
    size_t n = 0, k = sl_rng_below(rng, max_pieces + 1);
    for (size_t i = 0; i < k; i++) {
        const char *a = alphabet[sl_rng_below(rng, NA)];
        size_t l = strlen(a);
        if (n + l > cap)
            break;
        memcpy(out + n, a, l);
        n += l;
    }
    return n;
}

static void test_next_passes_no_match(void **state)
{
    (void)state;
    uint64_t rng = 34;
    size_t checked = 0, matches = 0, simd_tries = 0;
    for (int iter = 0; iter < 3000; iter++) {
        sl_trie t;
        memset(&t, 0, sizeof t);
        size_t ntok = 1 + sl_rng_below(&rng, 8);
        int one_byte_ok = iter % 3 == 0; /* a third of the tries may hold one-byte tokens */
        for (size_t k = 0; k < ntok; k++) {
            char tok[32];
            size_t n = random_text(&rng, tok, sizeof tok, 4);
            if (n == 0 || (n == 1 && !one_byte_ok))
                continue;
            sl_trie_add(&t, tok, n, (int32_t)k);
        }
        if (t.n == 0)
            continue;
        simd_tries += t.n_first <= 4;
        for (int r = 0; r < 8; r++) {
            char text[400];
            size_t n = random_text(&rng, text, sizeof text, 120);
            for (size_t pos = 0; pos <= n; pos++) {
                size_t next = sl_trie_next(&t, text, n, pos);
                assert_true(next >= pos && next <= n);
                for (size_t q = pos; q < next; q++) {
                    size_t len = 0;
                    assert_true(sl_trie_longest(&t, text, n, q, &len) < 0);
                }
                if (next < n) {
                    assert_true(t.first[(uint8_t)text[next]]);
                    size_t len = 0;
                    matches += sl_trie_longest(&t, text, n, next, &len) >= 0;
                }
                checked++;
            }
        }
        sl_trie_free(&t);
    }
    /* the test saw both kinds of trie and real matches */
    assert_true(simd_tries > 100);
    assert_true(matches > 1000);
    print_message("%zu start positions checked, %zu of them stopped at a match\n", checked, matches);
}

/* A trie like GPT-NeoX's added tokens (runs of 2 to 24 spaces): the skip
 * stops exactly at the first double space, never at a single one. */
static void test_space_runs(void **state)
{
    (void)state;
    sl_trie t;
    memset(&t, 0, sizeof t);
    char sp[25];
    memset(sp, ' ', sizeof sp);
    for (int k = 2; k <= 24; k++)
        sl_trie_add(&t, sp, (size_t)k, k);
    const char *text = "a b c d e f g h i j k l m n o p q r s t u v w x y z  end";
    size_t n = strlen(text), at = (size_t)(strstr(text, "  ") - text);
    assert_int_equal(sl_trie_next(&t, text, n, 0), at);
    assert_int_equal(sl_trie_next(&t, text, n, at + 1), n); /* the run's last space is alone */
    assert_int_equal(sl_trie_next(&t, "a    b", 6, 2), 2);
    sl_trie_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_passes_no_match),
        cmocka_unit_test(test_space_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
