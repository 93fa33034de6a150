/* BPE encoder against ids produced by Hugging Face `tokenizers` (and
 * cross-checked with tiktoken for GPT-2) on tests/data/bpe/corpus.jsonl,
 * a varied corpus: scripts, emoji, combining marks and non-NFC text,
 * Unicode whitespace, whitespace runs, CRLF, NUL, code, special tokens in
 * the text. Fixtures come from tests/bpe/gen_expected.py.
 * For each document: --special=parse gives HF's default ids, plain gives
 * HF's encode_special_tokens=True ids, error fails exactly when parse
 * produced a special token id, and decoding gives HF's decoded text. */
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
#include "tokenize/bpe.h"

static char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf;
}

static void ids_of(const sl_json *arr, sl_ids *out)
{
    assert_non_null(arr);
    assert_int_equal(arr->type, SL_JSON_ARRAY);
    for (size_t i = 0; i < arr->n; i++) {
        int64_t v;
        assert_true(sl_json_is_int(arr->kids[i], &v));
        sl_ids_push(out, (uint32_t)v);
    }
}

static void report(const char *what, const char *id, const sl_ids *got, const sl_ids *want)
{
    fprintf(stderr, "%s %s: got", what, id);
    for (size_t i = 0; i < got->n; i++)
        fprintf(stderr, " %u", got->v[i]);
    fprintf(stderr, "\n   want");
    for (size_t i = 0; i < want->n; i++)
        fprintf(stderr, " %u", want->v[i]);
    fprintf(stderr, "\n");
}

static int same(const sl_ids *a, const sl_ids *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, a->n * sizeof *a->v));
}

static void run_corpus(const char *tok, const char *expected, const uint32_t *specials, size_t n_specials)
{
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load(path(tok), &e);
    if (!b)
        fail_msg("load: %s", e.msg);
    sl_bpe_state *st = sl_bpe_state_new(b);
    char *ct, *et;
    size_t cn, en;
    assert_int_equal(sl_read_file(path("corpus.jsonl"), &ct, &cn, &e), 0);
    assert_int_equal(sl_read_file(path(expected), &et, &en, &e), 0);
    size_t cp = 0, ep = 0;
    int docs = 0, failures = 0;
    while (cp < cn) {
        char *cl = memchr(ct + cp, '\n', cn - cp), *el = memchr(et + ep, '\n', en - ep);
        assert_non_null(cl);
        assert_non_null(el);
        sl_json_doc *cd = sl_json_parse(ct + cp, (size_t)(cl - ct) - cp, NULL, &e);
        sl_json_doc *ed = sl_json_parse(et + ep, (size_t)(el - et) - ep, NULL, &e);
        assert_non_null(cd);
        assert_non_null(ed);
        const sl_json *text = sl_json_get(sl_json_root(cd), "text");
        const char *id = sl_json_get_str(sl_json_root(cd), "id");
        assert_string_equal(id, sl_json_get_str(sl_json_root(ed), "id"));
        sl_ids want_parse = {0}, want_plain = {0}, got = {0};
        ids_of(sl_json_get(sl_json_root(ed), "parse"), &want_parse);
        ids_of(sl_json_get(sl_json_root(ed), "plain"), &want_plain);

        assert_int_equal(sl_bpe_encode(b, st, text->str, text->str_len, SL_SPECIAL_PARSE, &got, &e), 0);
        if (!same(&got, &want_parse))
            report("parse", id, &got, &want_parse), failures++;
        const sl_json *dec = sl_json_get(sl_json_root(ed), "decoded");
        sl_buf out = {0};
        assert_int_equal(sl_bpe_decode(b, got.v, got.n, &out, &e), 0);
        if (out.len != dec->str_len || memcmp(out.data ? out.data : "", dec->str, out.len))
            fprintf(stderr, "decode %s differs\n", id), failures++;
        sl_buf_free(&out);

        got.n = 0;
        assert_int_equal(sl_bpe_encode(b, st, text->str, text->str_len, SL_SPECIAL_PLAIN, &got, &e), 0);
        if (!same(&got, &want_plain))
            report("plain", id, &got, &want_plain), failures++;

        int has_special = 0;
        for (size_t i = 0; i < want_parse.n; i++)
            for (size_t k = 0; k < n_specials; k++)
                has_special |= want_parse.v[i] == specials[k];
        got.n = 0;
        int rc = sl_bpe_encode(b, st, text->str, text->str_len, SL_SPECIAL_ERROR, &got, &e);
        if (rc != (has_special ? -1 : 0))
            fprintf(stderr, "error mode %s: rc %d\n", id, rc), failures++;
        if (rc)
            assert_non_null(strstr(e.msg, "special token"));

        sl_ids_free(&want_parse);
        sl_ids_free(&want_plain);
        sl_ids_free(&got);
        sl_json_free(cd);
        sl_json_free(ed);
        cp = (size_t)(cl - ct) + 1;
        ep = (size_t)(el - et) + 1;
        docs++;
    }
    assert_int_equal(ep, en);
    assert_true(docs >= 150);
    assert_int_equal(failures, 0);
    free(ct);
    free(et);
    sl_bpe_state_free(st);
    sl_bpe_free(b);
}

static void test_neox_corpus(void **s)
{
    (void)s;
    const uint32_t sp[] = {0, 1};
    run_corpus("neox-tokenizer.json", "expected-neox.jsonl", sp, 2);
}

static void test_gpt2_corpus(void **s)
{
    (void)s;
    const uint32_t sp[] = {50256};
    run_corpus("gpt2", "expected-gpt2.jsonl", sp, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neox_corpus),
        cmocka_unit_test(test_gpt2_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
