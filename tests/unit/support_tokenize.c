/* Helpers the tokenizer unit tests share (support_tokenize.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/support_tokenize.h"

#include "stream/io.h"

char *sl_tt_slurp(const char *path, size_t *n)
{
    sl_err e = {{0}};
    char *t;
    if (sl_read_file(path, &t, n, &e))
        fail_msg("%s", e.msg);
    return t;
}

sl_tokenizer *sl_tt_load(const char *path, const sl_tokenizer_opts *o, const char *family)
{
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(path, o, &e);
    if (!t)
        fail_msg("%s", e.msg);
    if (family)
        assert_string_equal(sl_tokenizer_family(t), family);
    return t;
}

int sl_tt_ids_equal(const sl_ids *got, const sl_json *arr)
{
    if (!arr || arr->type != SL_JSON_ARRAY || arr->n != got->n)
        return 0;
    for (size_t i = 0; i < arr->n; i++) {
        int64_t v;
        if (!sl_json_is_int(arr->kids[i], &v) || v != got->v[i])
            return 0;
    }
    return 1;
}

sl_json_doc *sl_tt_next_line(char **p, const char *end)
{
    char *nl = memchr(*p, '\n', (size_t)(end - *p));
    assert_non_null(nl);
    sl_err e = {{0}};
    sl_json_doc *d = sl_json_parse(*p, (size_t)(nl - *p), NULL, &e);
    if (!d)
        fail_msg("%s", e.msg);
    *p = nl + 1;
    return d;
}

int sl_tt_str_equal(const sl_buf *b, const sl_json *s)
{
    return s && s->type == SL_JSON_STRING && b->len == s->str_len && !memcmp(b->data ? b->data : "", s->str, b->len);
}

size_t sl_tt_check_texts(sl_tokenizer *t, const char *label, const char *texts_path, const char *want_path, int plain)
{
    sl_tok_state *st = sl_tok_state_new(t);
    size_t tn, wn;
    char *texts = sl_tt_slurp(texts_path, &tn), *want = sl_tt_slurp(want_path, &wn);
    char *tp = texts, *wp = want;
    size_t lines = 0, bad = 0;
    while (tp < texts + tn) {
        sl_json_doc *td = sl_tt_next_line(&tp, texts + tn), *wd = sl_tt_next_line(&wp, want + wn);
        const sl_json *text = sl_json_get(sl_json_root(td), "text"), *w = sl_json_root(wd);
        sl_ids ids = {0};
        sl_buf dec = {0};
        sl_err e = {{0}};
        assert_int_equal(sl_tokenizer_encode(t, st, text->str, text->str_len, &ids, &e), 0);
        const sl_json *want_ids = sl_json_get(w, "ids");
        if (plain && sl_json_get(w, "plain"))
            want_ids = sl_json_get(w, "plain");
        if (!sl_tt_ids_equal(&ids, want_ids) && bad++ < 5)
            fprintf(stderr, "%s: ids of text %zu differ from the reference\n", label, lines);
        assert_int_equal(sl_tokenizer_decode(t, ids.v, ids.n, &dec, &e), 0);
        if (!plain && !sl_tt_str_equal(&dec, sl_json_get(w, "decoded")) && bad++ < 5)
            fprintf(stderr, "%s: decode of text %zu differs from the reference\n", label, lines);
        sl_ids_free(&ids);
        sl_buf_free(&dec);
        sl_json_free(td);
        sl_json_free(wd);
        lines++;
    }
    assert_ptr_equal(wp, want + wn);
    assert_int_equal(bad, 0);
    free(texts);
    free(want);
    sl_tok_state_free(st);
    return lines;
}

void sl_tt_json_ids(const sl_json *arr, uint32_t *ids, size_t cap)
{
    assert_true(arr->n <= cap);
    for (size_t i = 0; i < arr->n; i++) {
        int64_t v;
        assert_true(sl_json_is_int(arr->kids[i], &v));
        ids[i] = (uint32_t)v;
    }
}

void sl_tt_check_decodes(sl_tokenizer *t, const char *label, const char *want_path, const char *ref, size_t want_lines)
{
    size_t wn;
    char *want = sl_tt_slurp(want_path, &wn), *wp = want;
    size_t lines = 0, bad = 0;
    while (wp < want + wn) {
        sl_json_doc *wd = sl_tt_next_line(&wp, want + wn);
        const sl_json *arr = sl_json_get(sl_json_root(wd), "ids");
        uint32_t ids[64];
        sl_tt_json_ids(arr, ids, 64);
        sl_buf dec = {0};
        sl_err e = {{0}};
        assert_int_equal(sl_tokenizer_decode(t, ids, arr->n, &dec, &e), 0);
        if (!sl_tt_str_equal(&dec, sl_json_get(sl_json_root(wd), "decoded")) && bad++ < 5)
            fprintf(stderr, "%s: decode of id list %zu differs from %s\n", label, lines, ref);
        sl_buf_free(&dec);
        sl_json_free(wd);
        lines++;
    }
    assert_int_equal(lines, want_lines);
    assert_int_equal(bad, 0);
    free(want);
}

void sl_tt_check_outside_id(sl_tokenizer *t)
{
    uint32_t outside[2] = {5, sl_tokenizer_vocab_size(t)};
    sl_buf out = {0};
    sl_err e = {{0}};
    assert_int_not_equal(sl_tokenizer_decode(t, outside, 2, &out, &e), 0);
    assert_non_null(strstr(e.msg, "token 1: id"));
    sl_buf_free(&out);
}

pcre2_code *sl_tt_pcre2_compile(const char *pat)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    assert_non_null(re);
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}
