/* spaCy's sentencizer (text/sentsplit.h) against datatrove 0.10.1's
 * SpaCyTokenizer.span_tokenize and split_into_sentences (spacy.blank("en")
 * plus the sentencizer pipe) on 2,000 texts: the adversarial word-tokenizer
 * texts, lines and texts of the rule corpus, random runs of the
 * sentencizer's punctuation, whitespace tokens and "IS_ALPHA"
 * (tests/data/rules/sentsplit-en.jsonl, from make_sentsplit_fixtures.py).
 * Spans are compared in code points, as datatrove gives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stream/io.h"
#include "base/json.h"
#include "text/sentsplit.h"

static size_t cps(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((uint8_t)s[i] & 0xC0) != 0x80;
    return c;
}

static void test_against_spacy(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_wordtok *t = sl_wordtok_new("en", &e);
    if (!t)
        fail_msg("%s", e.msg);
    sl_wordtok_work *w = sl_wordtok_work_new(t);
    sl_sents s = {0};
    char *text, path[4096];
    const char *src = getenv("SLUICE_SRC");
    snprintf(path, sizeof path, "%s/tests/data/rules/sentsplit-en.jsonl", src ? src : ".");
    size_t n, lines = 0, sents = 0, bad = 0;
    assert_int_equal(sl_read_file(path, &text, &n, &e), 0);
    for (char *l = text; l < text + n;) {
        char *nl = memchr(l, '\n', (size_t)(text + n - l));
        sl_json_doc *d = sl_json_parse(l, (size_t)(nl - l), NULL, &e);
        assert_non_null(d);
        const sl_json *in = sl_json_get(sl_json_root(d), "text");
        const sl_json *spans = sl_json_get(sl_json_root(d), "spans");
        const sl_json *pieces = sl_json_get(sl_json_root(d), "pieces");
        assert_non_null(in);
        assert_non_null(spans);
        assert_non_null(pieces);
        const char *base;
        size_t k = sl_sentsplit_spans(t, w, in->str, in->str_len, &s, &base);
        int same = k == spans->n;
        for (size_t i = 0; same && i < k; i++) {
            int64_t a, b;
            sl_json_is_int(spans->kids[i]->kids[0], &a);
            sl_json_is_int(spans->kids[i]->kids[1], &b);
            same = cps(base, s.v[i].off) == (size_t)a && cps(base, s.v[i].off + s.v[i].len) == (size_t)b;
        }
        size_t kp = sl_sentsplit_pieces(t, w, in->str, in->str_len, &s);
        int same_p = kp == pieces->n;
        size_t end = 0;
        for (size_t i = 0; same_p && i < kp; i++) {
            int64_t len;
            sl_json_is_int(pieces->kids[i], &len);
            same_p = s.v[i].off == end && cps(in->str + s.v[i].off, s.v[i].len) == (size_t)len;
            end = s.v[i].off + s.v[i].len;
        }
        same_p = same_p && end == in->str_len;
        if (!same || !same_p) {
            if (bad < 10)
                fprintf(stderr, "line %zu: %s: %zu sentences (spaCy %zu), pieces %s\n", lines + 1, in->str, k, spans->n,
                        same_p ? "same" : "differ");
            bad++;
        }
        sents += k;
        sl_json_free(d);
        lines++;
        l = nl + 1;
    }
    fprintf(stderr, "%zu texts, %zu sentences, %zu differ\n", lines, sents, bad);
    assert_int_equal(bad, 0);
    assert_true(lines > 2000);
    free(text);
    sl_sents_free(&s);
    sl_wordtok_work_free(w);
    sl_wordtok_free(t);
}

static void test_tables(void **state)
{
    (void)state;
    assert_true(sl_sentsplit_is_punct_char(".", 1));
    assert_true(sl_sentsplit_is_punct_char("\xE3\x80\x82", 3)); /* 。 */
    assert_false(sl_sentsplit_is_punct_char("..", 2));
    assert_false(sl_sentsplit_is_punct_char(",", 1));
    assert_true(sl_sentsplit_is_punct("...", 3));
    assert_true(sl_sentsplit_is_punct("\xE2\x80\x94", 3)); /* — Pd */
    assert_false(sl_sentsplit_is_punct("a.", 2));
    assert_false(sl_sentsplit_is_punct("$", 1)); /* Sc */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_spacy),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
