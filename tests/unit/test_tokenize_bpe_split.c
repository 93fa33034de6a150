/* The Split + ByteLevel pipelines (pre-tokenizer Sequence [Split(regex,
 * Isolated), ByteLevel without regex]) of Llama-3 (BPE with ignore_merges)
 * and Qwen2 (its pattern takes single digits; NFC normalizer) against
 * Hugging Face tokenizers 0.23.3, on fixtures made by tests/bpe/make_split.py
 * from small tokenizers trained with those pipelines (NAME-tiny-tokenizer.json;
 * in llama3's, 40 corpus words are vocabulary entries without merges, so
 * only ignore_merges gives them one id):
 * - NAME-splits.jsonl: 3000 random strings over an alphabet aimed at the
 *   regex (contractions in both cases and with U+017F, letters, marks,
 *   digits, Unicode spaces, CR/LF, punctuation): HF's piece ends must equal
 *   the scanner's and PCRE2's, and HF's ids ours;
 * - expected-NAME.jsonl: the test corpus in parse and plain modes, and
 *   HF's decode;
 * - ignore_merges is what gives the whole-word ids: with it switched off in
 *   the file, none of those ids can appear (no merge makes them);
 * - the same pipelines in a form the fast path does not take (a nested
 *   Sequence) run through the general pre-tokenizer and give the same ids;
 *   variants of them (another regex, behavior, invert, ByteLevel options)
 *   load on the general path; what sluice does not implement is refused. */
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
#include "tokenize/models/bpe_internal.h"

static const char *path(const char *rel)
{
    return sl_test_path("tests/data/bpe/%s", rel);
}

static const char *name = "llama3"; /* the fixture set */

static const char *fixture(const char *what)
{
    static char buf[256];
    snprintf(buf, sizeof buf, what, name);
    return buf;
}

static sl_bpe *load(void)
{
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load(path(fixture("%s-tiny-tokenizer.json")), &e);
    if (!b)
        fail_msg("%s", e.msg);
    return b;
}

/* The fixture's text with its first `from` replaced by `to`. */
static sl_buf replaced(const char *from, const char *to)
{
    size_t n;
    char *json = sl_tt_slurp(path(fixture("%s-tiny-tokenizer.json")), &n);
    char *at = strstr(json, from);
    if (!at)
        fail_msg("fixture lacks %s", from);
    sl_buf b = {0};
    sl_buf_append(&b, json, (size_t)(at - json));
    sl_buf_puts(&b, to);
    sl_buf_append(&b, at + strlen(from), n - (size_t)(at - json) - strlen(from));
    free(json);
    return b;
}

/* Calls fn on each line of a fixture as parsed JSON. */
static size_t each_line(const char *rel, void (*fn)(const sl_json *o, void *ctx), void *ctx)
{
    size_t n, lines = 0;
    char *t = sl_tt_slurp(path(rel), &n);
    sl_err e = {{0}};
    for (char *p = t; p < t + n;) {
        char *nl = memchr(p, '\n', (size_t)(t + n - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(t + n - p);
        sl_json_doc *d = sl_json_parse(p, len, NULL, &e);
        if (!d)
            fail_msg("%s: %s", rel, e.msg);
        fn(sl_json_root(d), ctx);
        sl_json_free(d);
        lines++;
        p += len + 1;
    }
    free(t);
    return lines;
}

typedef struct {
    sl_bpe *b;
    sl_bpe_state *s;
    size_t bad_split, bad_ids;
} split_ctx;

static void check_split(const sl_json *o, void *c)
{
    split_ctx *x = c;
    const sl_json *text = sl_json_get(o, "text");
    assert_non_null(text);
    sl_ids ends = {0}, ids = {0};
    sl_err e = {{0}};
    assert_int_equal(sl_bpe_pretokenize(x->b, x->s, text->str, text->str_len, &ends), 0);
    if (!sl_tt_ids_equal(&ends, sl_json_get(o, "ends")) && x->bad_split++ < 5)
        fprintf(stderr, "split of '%s' differs from HF\n", text->str);
    assert_int_equal(sl_bpe_encode(x->b, x->s, text->str, text->str_len, SL_SPECIAL_PARSE, &ids, &e), 0);
    if (!sl_tt_ids_equal(&ids, sl_json_get(o, "ids")) && x->bad_ids++ < 5)
        fprintf(stderr, "ids of '%s' differ from HF\n", text->str);
    sl_ids_free(&ends);
    sl_ids_free(&ids);
}

static void test_splits(void **state)
{
    (void)state;
    for (int scan = 1; scan >= 0; scan--) {
        split_ctx x = {.b = load()};
        sl_bpe_set_scanner(x.b, scan);
        x.s = sl_bpe_state_new(x.b);
        assert_int_equal(each_line(fixture("%s-splits.jsonl"), check_split, &x), 3000);
        assert_int_equal(x.bad_split, 0);
        assert_int_equal(x.bad_ids, 0);
        sl_bpe_state_free(x.s);
        sl_bpe_free(x.b);
    }
}

typedef struct {
    sl_bpe *b, *merging;
    sl_bpe_state *s, *ms;
    const char *corpus, *end;
    size_t bad, whole_words, merged_whole_words;
} corpus_ctx;

static size_t count_whole_words(const sl_ids *ids)
{
    size_t k = 0;
    for (size_t i = 0; i < ids->n; i++)
        k += ids->v[i] >= 800 && ids->v[i] < 840; /* the entries without merges */
    return k;
}

static void check_doc(const sl_json *want, void *c)
{
    corpus_ctx *x = c;
    const char *nl = memchr(x->corpus, '\n', (size_t)(x->end - x->corpus));
    assert_non_null(nl);
    sl_err e = {{0}};
    sl_json_doc *d = sl_json_parse(x->corpus, (size_t)(nl - x->corpus), NULL, &e);
    assert_non_null(d);
    x->corpus = nl + 1;
    const sl_json *text = sl_json_get(sl_json_root(d), "text");
    const char *id = sl_json_get_str(want, "id");
    assert_string_equal(sl_json_get_str(sl_json_root(d), "id"), id);
    sl_ids ids = {0};
    sl_buf dec = {0};
    assert_int_equal(sl_bpe_encode(x->b, x->s, text->str, text->str_len, SL_SPECIAL_PLAIN, &ids, &e), 0);
    if (!sl_tt_ids_equal(&ids, sl_json_get(want, "plain")) && x->bad++ < 5)
        fprintf(stderr, "plain %s differs from HF\n", id);
    ids.n = 0;
    assert_int_equal(sl_bpe_encode(x->b, x->s, text->str, text->str_len, SL_SPECIAL_PARSE, &ids, &e), 0);
    if (!sl_tt_ids_equal(&ids, sl_json_get(want, "parse")) && x->bad++ < 5)
        fprintf(stderr, "parse %s differs from HF\n", id);
    x->whole_words += count_whole_words(&ids);
    assert_int_equal(sl_bpe_decode(x->b, ids.v, ids.n, &dec, &e), 0);
    const sl_json *hd = sl_json_get(want, "decoded");
    if ((dec.len != hd->str_len || memcmp(dec.data ? dec.data : "", hd->str, dec.len)) && x->bad++ < 5)
        fprintf(stderr, "decode %s differs from HF\n", id);
    ids.n = 0;
    assert_int_equal(sl_bpe_encode(x->merging, x->ms, text->str, text->str_len, SL_SPECIAL_PARSE, &ids, &e), 0);
    x->merged_whole_words += count_whole_words(&ids);
    sl_ids_free(&ids);
    sl_buf_free(&dec);
    sl_json_free(d);
}

static void test_corpus(void **state)
{
    (void)state;
    size_t cn;
    sl_buf off = !strcmp(name, "llama3") ? replaced("\"ignore_merges\":true", "\"ignore_merges\":false")
                                         : replaced("\"ignore_merges\":false", "\"ignore_merges\":false");
    sl_err e = {{0}};
    corpus_ctx x = {.b = load(), .merging = sl_bpe_load_mem(off.data, off.len, NULL, 0, "merging", &e)};
    assert_non_null(x.merging);
    assert_int_equal(x.merging->ignore_merges, 0);
    assert_int_equal(x.b->ignore_merges, !strcmp(name, "llama3"));
    assert_int_equal(x.b->pretok, !strcmp(name, "llama3") ? SL_PRETOK_LLAMA3 : SL_PRETOK_QWEN2);
    x.s = sl_bpe_state_new(x.b);
    x.ms = sl_bpe_state_new(x.merging);
    char *corpus = sl_tt_slurp(path("corpus.jsonl"), &cn);
    x.corpus = corpus;
    x.end = corpus + cn;
    assert_true(each_line(fixture("expected-%s.jsonl"), check_doc, &x) > 150);
    assert_int_equal(x.bad, 0);
    if (!strcmp(name, "llama3")) {
        assert_true(x.whole_words >= 40);          /* ignore_merges gives the whole words (40 in HF ids)... */
        assert_int_equal(x.merged_whole_words, 0); /* ...which merges alone never make */
    }
    sl_bpe_state_free(x.s);
    sl_bpe_state_free(x.ms);
    sl_bpe_free(x.b);
    sl_bpe_free(x.merging);
    free(corpus);
    sl_buf_free(&off);
}

/* The fixture with one piece of text replaced must be refused with msg. */
static void refused(const char *from, const char *to, const char *msg)
{
    sl_buf b = replaced(from, to);
    sl_err e = {{0}};
    sl_bpe *t = sl_bpe_load_mem(b.data, b.len, NULL, 0, "l3.json", &e);
    if (t)
        fail_msg("accepted with %s", to);
    if (!strstr(e.msg, msg))
        fail_msg("'%s' lacks '%s'", e.msg, msg);
    sl_buf_free(&b);
}

/* The fixture in a form the fast path does not recognize, the same
 * pipeline for HF: the Split and ByteLevel steps in a nested Sequence. */
static sl_bpe *load_nested(void)
{
    sl_buf a = replaced("\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[",
                        "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Sequence\","
                        "\"pretokenizers\":[");
    char *at = strstr(a.data, "\"use_regex\":false}]}");
    assert_non_null(at);
    sl_buf b = {0};
    sl_buf_append(&b, a.data, (size_t)(at - a.data));
    sl_buf_puts(&b, "\"use_regex\":false}]}]}");
    sl_buf_puts(&b, at + strlen("\"use_regex\":false}]}"));
    sl_err e = {{0}};
    sl_bpe *t = sl_bpe_load_mem(b.data, b.len, NULL, 0, "nested.json", &e);
    if (!t)
        fail_msg("%s", e.msg);
    sl_buf_free(&a);
    sl_buf_free(&b);
    return t;
}

static void check_split_ids(const sl_json *o, void *c)
{
    split_ctx *x = c;
    const sl_json *text = sl_json_get(o, "text");
    sl_ids ids = {0};
    sl_err e = {{0}};
    assert_int_equal(sl_bpe_encode(x->b, x->s, text->str, text->str_len, SL_SPECIAL_PARSE, &ids, &e), 0);
    if (!sl_tt_ids_equal(&ids, sl_json_get(o, "ids")) && x->bad_ids++ < 5)
        fprintf(stderr, "general path: ids of '%s' differ from HF\n", text->str);
    sl_ids_free(&ids);
}

/* The general pre-tokenizer (pretokenizer.h's Split with the pattern
 * translated for PCRE2, then the ByteLevel step) on the same pipeline gives
 * HF's ids too: on the 3000 strings aimed at the regex and the corpus. */
static void test_general(void)
{
    split_ctx x = {.b = load_nested()};
    assert_int_equal(x.b->general, 1);
    x.s = sl_bpe_state_new(x.b);
    assert_int_equal(each_line(fixture("%s-splits.jsonl"), check_split_ids, &x), 3000);
    assert_int_equal(x.bad_ids, 0);
    sl_bpe_state_free(x.s);
    size_t cn;
    corpus_ctx y = {.b = x.b, .merging = load_nested()};
    y.s = sl_bpe_state_new(y.b);
    y.ms = sl_bpe_state_new(y.merging);
    char *corpus = sl_tt_slurp(path("corpus.jsonl"), &cn);
    y.corpus = corpus;
    y.end = corpus + cn;
    assert_true(each_line(fixture("expected-%s.jsonl"), check_doc, &y) > 150);
    assert_int_equal(y.bad, 0);
    sl_bpe_state_free(y.s);
    sl_bpe_state_free(y.ms);
    sl_bpe_free(y.merging);
    sl_bpe_free(x.b);
    free(corpus);
}

/* Variants of the fast form that the fast path does not take: run by the
 * general pre-tokenizer (their ids are checked against HF by
 * tests/cli/tok_bpe_pipeline.sh on other files); what sluice does not
 * implement is refused by name. */
static void general_variant(const char *from, const char *to)
{
    sl_buf b = replaced(from, to);
    sl_err e = {{0}};
    sl_bpe *t = sl_bpe_load_mem(b.data, b.len, NULL, 0, "l3.json", &e);
    if (!t)
        fail_msg("refused with %s: %s", to, e.msg);
    assert_int_equal(t->general, 1);
    assert_int_equal(t->pretok, SL_PRETOK_GPT2);
    sl_bpe_free(t);
    sl_buf_free(&b);
}

static void test_refusals(void **state)
{
    (void)state;
    name = "llama3";
    general_variant("|\\\\s+(?!\\\\S)|\\\\s+\"}", "|\\\\s+\"}");
    general_variant("\"behavior\":\"Isolated\"", "\"behavior\":\"Removed\"");
    general_variant("\"invert\":false", "\"invert\":true");
    general_variant("\"use_regex\":false}]", "\"use_regex\":true}]");
    general_variant("\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}]",
                    "\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":false}]");
    refused("\"behavior\":\"Isolated\"", "\"behavior\":\"Isolate\"", "behavior 'Isolate' is not one of");
    refused("|\\\\s+(?!\\\\S)|\\\\s+\"}", "|[a-z&&[^b]]\"}", "class intersection");
    refused("\"post_processor\":{\"type\":\"TemplateProcessing\"", "\"post_processor\":{\"type\":\"BertProcessing\"",
            "post_processor BertProcessing: 'cls' is not [token, id]");
}

static void test_llama3(void **state)
{
    name = "llama3";
    test_splits(state);
    test_corpus(state);
    test_general();
}

static void test_qwen2(void **state)
{
    name = "qwen2";
    test_splits(state);
    test_corpus(state);
    test_general();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3),
        cmocka_unit_test(test_qwen2),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
