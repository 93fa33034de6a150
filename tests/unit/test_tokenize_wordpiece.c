/* The WordPiece / WordLevel family (tokenize/models/tok_wordpiece.c) and the
 * components it runs, against Hugging Face tokenizers 0.23.3 on fixtures made
 * by tests/data/tok/make_wp_fixtures.py:
 * - components.jsonl: 19 normalizers (BertNormalizer in three settings,
 *   NFC/NFD/NFKC/NFKD, StripAccents, Lowercase, Strip, Replace with regexes
 *   and a string, Prepend, Sequence) and 34 pre-tokenizers (BertPreTokenizer,
 *   Whitespace, WhitespaceSplit, Digits, Punctuation with every behavior,
 *   Split with a regex and a string for every behavior, inverted or not,
 *   empty-matching regexes, lookaround, Sequence), each loaded from HF's own
 *   serialization of it, must give HF's normalize_str / pre_tokenize_str on
 *   ~290 texts (edge cases, adversarial Unicode, random strings);
 * - decode-NAME.jsonl: random id lists decode as HF decodes them (bert-bge: the
 *   real BGE / bert-base-uncased tokenizer; WordPiece
 *   decoder with and without cleanup, BPEDecoder, no decoder);
 * - with add_special the post-processor's ids surround the text's;
 * - a unk token missing from the vocabulary is an encode error, as in HF.
 * The ids of whole pipelines are checked by tests/cli/tok_wordpiece.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/support.h"
#include "tests/unit/support_tokenize.h"

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/normalizers/normalize.h"
#include "tokenize/pre_tokenizers/pretokenizer.h"
#include "tokenize/tokenizer_impl.h"

static const char *path(const char *rel)
{
    return sl_test_path("tests/data/tok/%s", rel);
}

static int str_is(const sl_json *j, const char *s, size_t n)
{
    return j && j->type == SL_JSON_STRING && j->str_len == n && !memcmp(j->str, s, n);
}

static void test_components(void **state)
{
    (void)state;
    size_t n;
    char *text = sl_tt_slurp(path("components.jsonl"), &n), *p = text, *end = text + n;
    sl_json_doc *td = sl_tt_next_line(&p, end);
    const sl_json *texts = sl_json_get(sl_json_root(td), "texts");
    assert_true(texts && texts->n > 250);
    size_t n_norm = 0, n_pre = 0, bad = 0;
    sl_norm_scratch ns = {0};
    sl_pretok_scratch ps = {0};
    sl_buf out = {0};
    while (p < end) {
        sl_json_doc *d = sl_tt_next_line(&p, end);
        const sl_json *root = sl_json_root(d), *cfg, *want = sl_json_get(root, "out");
        sl_err e = {{0}};
        assert_int_equal(want->n, texts->n);
        if ((cfg = sl_json_get(root, "normalizer"))) {
            sl_normalizer nz = {0};
            if (sl_normalizer_load(&nz, cfg, "components.jsonl", &e))
                fail_msg("%s", e.msg);
            for (size_t i = 0; i < texts->n; i++) {
                const sl_json *t = texts->kids[i];
                assert_int_equal(sl_normalize(&nz, &ns, t->str, t->str_len, &out, &e), 0);
                if (!str_is(want->kids[i], out.data ? out.data : "", out.len) && bad++ < 5)
                    fprintf(stderr, "normalizer %s: text %zu: got '%.*s' want '%s'\n", sl_json_get_str(cfg, "type"), i,
                            (int)out.len, out.data ? out.data : "", want->kids[i]->str);
            }
            sl_normalizer_free(&nz);
            n_norm++;
        } else {
            cfg = sl_json_get(root, "pre_tokenizer");
            assert_non_null(cfg);
            sl_pretokenizer pt = {0};
            if (sl_pretokenizer_load(&pt, cfg, "components.jsonl", &e))
                fail_msg("%s", e.msg);
            for (size_t i = 0; i < texts->n; i++) {
                const sl_json *t = texts->kids[i], *w = want->kids[i];
                assert_int_equal(sl_pretokenize(&pt, &ps, t->str, t->str_len, &e), 0);
                int ok = ps.na == w->n;
                for (size_t k = 0; ok && k < ps.na; k++)
                    ok = str_is(w->kids[k], t->str + ps.a[k].off, ps.a[k].len);
                if (!ok && bad++ < 5)
                    fprintf(stderr, "pre_tokenizer %zu (%s): text %zu: %zu pieces, HF %zu\n", n_pre,
                            sl_json_get_str(cfg, "type"), i, ps.na, w->n);
            }
            sl_pretokenizer_free(&pt);
            n_pre++;
        }
        sl_json_free(d);
    }
    assert_int_equal(n_norm, 19);
    assert_int_equal(n_pre, 34);
    assert_int_equal(bad, 0);
    sl_buf_free(&out);
    sl_norm_scratch_free(&ns);
    sl_pretok_scratch_free(&ps);
    sl_json_free(td);
    free(text);
}

static sl_tokenizer *load(const char *file, int add_special)
{
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.add_special = add_special;
    return sl_tt_load(path(file), &o, "wordpiece");
}

static void check_decodes(const char *name)
{
    char file[128], fix[128];
    snprintf(file, sizeof file, "%s.json", name);
    snprintf(fix, sizeof fix, "decode-%s.jsonl", name);
    sl_tokenizer *t = load(file, 0);
    sl_tt_check_decodes(t, name, path(fix), "HF", 300);
    sl_tt_check_outside_id(t);
    sl_tokenizer_free(t);
}

static void test_decode_random(void **state)
{
    (void)state;
    check_decodes("bert-bge");
    check_decodes("bert-lower");
    check_decodes("bert-cased");
    check_decodes("wordlevel-a");
    check_decodes("wordlevel-b");
}

static void encode(sl_tokenizer *t, const char *s, sl_ids *ids)
{
    sl_tok_state *st = sl_tok_state_new(t);
    sl_err e = {{0}};
    ids->n = 0;
    if (sl_tokenizer_encode(t, st, s, strlen(s), ids, &e))
        fail_msg("%s", e.msg);
    sl_tok_state_free(st);
}

/* add_special: [CLS] ... [SEP] around the ids without it (bert-lower's
 * TemplateProcessing), the ids HF's file names for them. */
static void test_add_special(void **state)
{
    (void)state;
    sl_tokenizer *a = load("bert-lower.json", 0), *b = load("bert-lower.json", 1);
    sl_ids x = {0}, y = {0};
    encode(a, "Hello, world!", &x);
    encode(b, "Hello, world!", &y);
    assert_int_equal(y.n, x.n + 2);
    assert_int_equal(y.v[0], sl_tokenizer_token_id(a, "[CLS]"));
    assert_memory_equal(y.v + 1, x.v, x.n * sizeof *x.v);
    assert_int_equal(y.v[y.n - 1], sl_tokenizer_token_id(a, "[SEP]"));
    encode(b, "", &y);
    assert_int_equal(y.n, 2);
    sl_ids_free(&x);
    sl_ids_free(&y);
    sl_tokenizer_free(a);
    sl_tokenizer_free(b);
}

/* A WordPiece vocabulary without its unk token: encoding a word it cannot
 * spell fails (HF: MissingUnkToken), a word it can spell does not. */
static void test_missing_unk(void **state)
{
    (void)state;
    static const char js[] = "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"vocab\":{\"ab\":0,\"##c\":1,"
                             "\"a\":2}},\"pre_tokenizer\":{\"type\":\"WhitespaceSplit\"}}";
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tok_wordpiece_load_mem(js, sizeof js - 1, "mem.json", NULL, &e);
    if (!t)
        fail_msg("%s", e.msg);
    sl_tok_state *st = sl_tok_state_new(t);
    sl_ids ids = {0};
    assert_int_equal(sl_tokenizer_encode(t, st, "abc a", 5, &ids, &e), 0);
    assert_int_equal(ids.n, 3); /* ab ##c a: longest match first */
    assert_int_equal(ids.v[0], 0);
    assert_int_equal(ids.v[1], 1);
    assert_int_equal(ids.v[2], 2);
    assert_int_not_equal(sl_tokenizer_encode(t, st, "abd", 3, &ids, &e), 0);
    assert_non_null(strstr(e.msg, "unk token '[UNK]' is not in the vocabulary"));
    sl_ids_free(&ids);
    sl_tok_state_free(st);
    sl_tokenizer_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_components),
        cmocka_unit_test(test_decode_random),
        cmocka_unit_test(test_add_special),
        cmocka_unit_test(test_missing_unk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
