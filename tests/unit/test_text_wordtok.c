/* The English word tokenizer (text/wordtok.h) against datatrove 0.10.1's
 * load_word_tokenizer("en").word_tokenize (spacy.blank("en") and
 * strip_strings), word by word on adversarial texts: every tokenizer
 * exception alone and run together, contractions, URLs, e-mail addresses,
 * IP addresses, numbers with units and currencies, emoticons, quotes and
 * brackets of many scripts, every kind of whitespace
 * (tests/data/dedup/wordtok-en.jsonl, from make_wordtok_fixtures.py).
 * SLUICE_WORDTOK_FIXTURE=FILE checks another file of the same form. */
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
#include "text/wordtok.h"

static const char *fixture(void)
{
    const char *env = getenv("SLUICE_WORDTOK_FIXTURE");
    if (env)
        return env;
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/dedup/wordtok-en.jsonl", src ? src : ".");
    return buf;
}

static void test_against_spacy(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_wordtok *t = sl_wordtok_new("en", &e);
    if (!t)
        fail_msg("%s", e.msg);
    sl_wordtok_work *w = sl_wordtok_work_new(t);
    char *text;
    size_t n, lines = 0, words = 0, bad = 0;
    assert_int_equal(sl_read_file(fixture(), &text, &n, &e), 0);
    for (char *l = text; l < text + n;) {
        char *nl = memchr(l, '\n', (size_t)(text + n - l));
        sl_json_doc *d = sl_json_parse(l, (size_t)(nl - l), NULL, &e);
        assert_non_null(d);
        const sl_json *in = sl_json_get(sl_json_root(d), "text");
        const sl_json *want = sl_json_get(sl_json_root(d), "words");
        assert_non_null(in);
        assert_non_null(want);
        const sl_word *got;
        size_t k = sl_wordtok_run(t, w, in->str, in->str_len, &got);
        int same = k == want->n;
        for (size_t i = 0; same && i < k; i++)
            same =
                got[i].len == want->kids[i]->str_len && !memcmp(in->str + got[i].off, want->kids[i]->str, got[i].len);
        if (!same) {
            if (bad < 10) {
                fprintf(stderr, "line %zu: %s\n  sluice:", lines + 1, in->str);
                for (size_t i = 0; i < k; i++)
                    fprintf(stderr, " [%.*s]", (int)got[i].len, in->str + got[i].off);
                fprintf(stderr, "\n  spaCy: ");
                for (size_t i = 0; i < want->n; i++)
                    fprintf(stderr, " [%s]", want->kids[i]->str);
                fprintf(stderr, "\n");
            }
            bad++;
        }
        words += k;
        sl_json_free(d);
        lines++;
        l = nl + 1;
    }
    fprintf(stderr, "%zu texts, %zu words, %zu differ\n", lines, words, bad);
    assert_int_equal(bad, 0);
    assert_true(lines > 500);
    free(text);
    sl_wordtok_work_free(w);
    sl_wordtok_free(t);
}

static void test_unknown_language(void **state)
{
    (void)state;
    sl_err e = {{0}};
    assert_null(sl_wordtok_new("xx", &e));
    assert_non_null(strstr(e.msg, "xx"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_spacy),
        cmocka_unit_test(test_unknown_language),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
