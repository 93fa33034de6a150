/* fastText models (model/fasttext.h) and classify's text preparation
 * (model/classify.h). The labels and probabilities themselves are checked
 * against the fasttext package in tests/cli/classify.sh; here: properties.
 * - A model whose vocabulary subword lists are not cached (computed where a
 *   word is met) predicts exactly what the cached one does, on every text
 *   of the fixture corpus, for every fixture model.
 * - k: the first k of k = all, in order, bit for bit (the search with a
 *   heap of k and the full sort agree; labels of equal probability come in
 *   the heap's order, which depends on k, as in fastText); threshold drops
 *   exactly the labels below it.
 * - The text is one line: a "\n" ends it (fastText appends one), so what
 *   follows changes nothing; a literal "</s>" ends it too.
 * - Every byte-prefix of a model file is refused with a message naming the
 *   file and an offset, never a crash.
 * - sl_classify_prepare: newlines become spaces (langid) or go, after
 *   Python's str.strip() of Unicode white space (classifier). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/support.h"

#include "model/classify.h"
#include "model/fasttext.h"
#include "stream/io.h"
#include "base/json.h"

static const char *const models[] = {"lid.176.ftz",       "topic-hs.bin",  "topic-hs.ftz",
                                     "topic-softmax.bin", "topic-ova.bin", "topic-ns.ftz"};

static char *path_of(const char *name)
{
    return sl_test_path("tests/data/classify/%s", name);
}

/* the fixture corpus' texts */
static char **texts(size_t *n)
{
    char *data;
    size_t len;
    sl_err e;
    assert_int_equal(sl_read_file(path_of("corpus.jsonl"), &data, &len, &e), 0);
    char **v = NULL;
    *n = 0;
    for (char *l = data; l < data + len;) {
        char *nl = memchr(l, '\n', (size_t)(data + len - l));
        size_t ll = nl ? (size_t)(nl - l) : (size_t)(data + len - l);
        sl_json_opts jo = {0};
        jo.invalid_utf8 = SL_UTF8_REPLACE;
        sl_json_doc *jd = sl_json_parse(l, ll, &jo, &e);
        assert_non_null(jd);
        const sl_json *t = sl_json_get(sl_json_root(jd), "text");
        assert_non_null(t);
        v = realloc(v, (*n + 1) * sizeof *v);
        v[*n] = malloc(t->str_len + 1);
        memcpy(v[*n], t->str, t->str_len + 1);
        (*n)++;
        sl_json_free(jd);
        l += ll + 1;
    }
    free(data);
    return v;
}

static sl_ft_model *load(const char *name, size_t cached)
{
    char *data;
    size_t len;
    sl_err e;
    assert_int_equal(sl_read_file(path_of(name), &data, &len, &e), 0);
    sl_ft_model *m = sl_ft_load_mem_cached(data, len, name, cached, &e);
    if (!m)
        fail_msg("%s", e.msg);
    free(data);
    return m;
}

static void test_cache_k_threshold(void **state)
{
    (void)state;
    size_t nt;
    char **tx = texts(&nt);
    assert_true(nt > 100);
    for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++) {
        sl_ft_model *a = load(models[mi], (size_t)1 << 25), *b = load(models[mi], 0);
        sl_ft_info info;
        sl_ft_get_info(a, &info);
        sl_ft_state *sa = sl_ft_state_new(a), *sb = sl_ft_state_new(b);
        sl_ft_pred *pa = malloc((size_t)info.nlabels * sizeof *pa), *pb = malloc((size_t)info.nlabels * sizeof *pb);
        sl_err e;
        for (size_t i = 0; i < nt; i++) {
            size_t len = strlen(tx[i]);
            int na = sl_ft_predict(a, sa, tx[i], len, -1, 0, pa, &e);
            int nb = sl_ft_predict(b, sb, tx[i], len, -1, 0, pb, &e);
            assert_int_equal(na, nb);
            assert_true(na >= 0 && na <= info.nlabels);
            assert_memory_equal(pa, pb, (size_t)na * sizeof *pa);
            for (int k = 1; k <= 3; k++) { /* the first k of all (equal probabilities: in either order) */
                int n = sl_ft_predict(b, sb, tx[i], len, k, 0, pb, &e);
                assert_int_equal(n, na < k ? na : k);
                for (int j = 0; j < n; j++) {
                    assert_true(pa[j].prob == pb[j].prob);
                    int tied = 0;
                    for (int q = 0; q < na; q++)
                        tied |= q != j && pa[q].prob == pa[j].prob;
                    assert_true(pa[j].label == pb[j].label || tied);
                }
            }
            if (na > 1 && info.loss[0] != 'h' && pa[0].prob - pa[1].prob > 1e-4f) {
                /* probabilities come back as p + 1e-5: a threshold at the
                 * second one's drops it and keeps the first */
                float t = pa[1].prob;
                {
                    int n = sl_ft_predict(a, sa, tx[i], len, -1, t, pb, &e);
                    assert_int_equal(n, 1);
                    assert_int_equal(pb[0].label, pa[0].label);
                }
            }
        }
        free(pa);
        free(pb);
        sl_ft_state_free(sa);
        sl_ft_state_free(sb);
        sl_ft_free(a);
        sl_ft_free(b);
    }
    for (size_t i = 0; i < nt; i++)
        free(tx[i]);
    free(tx);
}

static void test_one_line(void **state)
{
    (void)state;
    sl_ft_model *m = load("lid.176.ftz", (size_t)1 << 25);
    sl_ft_state *s = sl_ft_state_new(m);
    sl_ft_pred a[5], b[5];
    sl_err e;
    static const char one[] = "Der schnelle braune Fuchs";
    static const char nl[] = "Der schnelle braune Fuchs\nle renard brun rapide";
    static const char eos[] = "Der schnelle braune Fuchs </s> le renard brun rapide";
    static const char seps[] = " \t Der\v\fschnelle\r braune\0Fuchs  "; /* the separators, NUL included */
    const char *const other[] = {nl, eos, seps};
    const size_t lens[] = {sizeof nl - 1, sizeof eos - 1, sizeof seps - 1};
    for (size_t i = 0; i < 3; i++) {
        int na = sl_ft_predict(m, s, one, sizeof one - 1, 5, 0, a, &e);
        int nb = sl_ft_predict(m, s, other[i], lens[i], 5, 0, b, &e);
        assert_int_equal(na, 5);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, sizeof a);
    }
    sl_ft_state_free(s);
    sl_ft_free(m);
}

static void test_prefixes_refused(void **state)
{
    (void)state;
    char *data;
    size_t len;
    sl_err e;
    assert_int_equal(sl_read_file(path_of("topic-hs.ftz"), &data, &len, &e), 0);
    for (size_t n = 0; n < len; n += n < 256 ? 1 : 97) {
        sl_ft_model *m = sl_ft_load_mem(data, n, "cut.ftz", &e);
        assert_null(m);
        assert_non_null(strstr(e.msg, "cut.ftz: offset "));
        assert_null(strchr(e.msg, '\n'));
    }
    sl_ft_model *m = sl_ft_load_mem(data, len, "whole.ftz", &e);
    assert_non_null(m);
    sl_ft_free(m);
    free(data);
}

static void test_prepare(void **state)
{
    (void)state;
    sl_buf b = {0};
    sl_classify_prepare(SL_CLASSIFY_PREP_LANGID, "a\nb\n\nc", 6, &b);
    assert_string_equal(b.data, "a b  c");
    sl_classify_prepare(SL_CLASSIFY_PREP_CLASSIFIER, "a\nb\n\nc", 6, &b);
    assert_string_equal(b.data, "abc");
    /* str.strip(): U+00A0, U+3000, U+2028, U+0085, \x1c..\x1f and ASCII space go; U+200B and U+FEFF stay */
    const char *t = "\xc2\xa0\xe3\x80\x80\x1c \n x\ny \xe2\x80\xa8\xc2\x85\t";
    sl_classify_prepare(SL_CLASSIFY_PREP_CLASSIFIER, t, strlen(t), &b);
    assert_string_equal(b.data, "xy");
    t = "\xe2\x80\x8b x \xef\xbb\xbf";
    sl_classify_prepare(SL_CLASSIFY_PREP_CLASSIFIER, t, strlen(t), &b);
    assert_string_equal(b.data, t);
    sl_classify_prepare(SL_CLASSIFY_PREP_CLASSIFIER, " \n\t ", 4, &b);
    assert_int_equal(b.len, 0);
    assert_non_null(b.data);
    sl_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_k_threshold),
        cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_prefixes_refused),
        cmocka_unit_test(test_prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
