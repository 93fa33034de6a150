/* The Unigram tokenizer.json family (tokenize/models/tok_unigram.c) against
 * Hugging Face tokenizers 0.22.2, on fixtures made by
 * tests/data/spm/make_fixtures.py: the tiny Unigram SentencePiece models
 * uni-bf / uni-unk (nmt_nfkc charsmap, byte_fallback on / off) converted by
 * transformers' SpmConverter (Precompiled + Strip + Replace regex
 * normalizer, Metaspace), and uni-t5, the same in a T5-like configuration
 * (WhitespaceSplit + Metaspace prepend_scheme first without split; Strip,
 * string Replace, Lowercase, NFKC; normalized / lstrip / rstrip added
 * tokens). Every text of texts.jsonl must give HF's ids with special tokens
 * parsed and as plain text, and HF's decode; random id lists must decode as
 * HF decodes them. HF differs from sentencepiece on 222 to 916 of these
 * texts, so the fixtures tell the two ways apart. Then components this
 * family does not run are refused, naming them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/unit/support.h"
#include "tests/unit/support_tokenize.h"

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/normalizers/norm_precompiled.h"
#include "tokenize/tokenizer.h"

static const char *path(const char *rel)
{
    return sl_test_path("tests/data/spm/%s", rel);
}

static sl_special_mode g_mode = SL_SPECIAL_PARSE;

static sl_tokenizer *load(const char *file)
{
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.special = g_mode;
    return sl_tt_load(path(file), &o, NULL);
}

/* texts.jsonl against want (one {"ids", "decoded"} per text); returns the
 * number of texts checked. */
static size_t check_texts(const char *file, const char *want_file, const char *family)
{
    sl_tokenizer *t = load(file);
    assert_string_equal(sl_tokenizer_family(t), family);
    size_t lines = sl_tt_check_texts(t, file, path("texts.jsonl"), path(want_file), g_mode == SL_SPECIAL_PLAIN);
    sl_tokenizer_free(t);
    return lines;
}

static void check_decodes(const char *file, const char *want_file)
{
    sl_tokenizer *t = load(file);
    sl_tt_check_decodes(t, file, path(want_file), "HF", 300);
    sl_tokenizer_free(t);
}

static void check_json(const char *name)
{
    char file[64], exp[96], dec[96];
    snprintf(file, sizeof file, "%s.json", name);
    snprintf(exp, sizeof exp, "hf-expected-%s.jsonl", name);
    snprintf(dec, sizeof dec, "hf-decode-%s.jsonl", name);
    g_mode = SL_SPECIAL_PARSE;
    assert_true(check_texts(file, exp, "unigram") > 1000);
    g_mode = SL_SPECIAL_PLAIN;
    assert_true(check_texts(file, exp, "unigram") > 1000);
    g_mode = SL_SPECIAL_PARSE;
    check_decodes(file, dec);
}

static void test_converted(void **state)
{
    (void)state;
    check_json("uni-bf");
    check_json("uni-unk");
    sl_tokenizer *t = load("uni-unk.json");
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), 0);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_BOS), 1);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), 2);
    assert_string_equal(sl_tokenizer_name(t), "unigram:uni-unk.json");
    sl_tokenizer_free(t);
}

static void test_t5_like(void **state)
{
    (void)state;
    check_json("uni-t5");
}

/* uni-unk.json with the first occurrence of from replaced by to must be
 * refused with msg. */
static void refused(const char *from, const char *to, const char *msg)
{
    size_t n;
    char *text = sl_tt_slurp(path("uni-unk.json"), &n);
    char *at = strstr(text, from);
    assert_non_null(at);
    sl_buf b = {0};
    sl_buf_append(&b, text, (size_t)(at - text));
    sl_buf_puts(&b, to);
    sl_buf_append(&b, at + strlen(from), n - (size_t)(at - text) - strlen(from));
    char tmpl[] = "/tmp/sl_uni_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tmpl, NULL, &e);
    unlink(tmpl);
    assert_null(t);
    if (!strstr(e.msg, msg) || strncmp(e.msg, tmpl, strlen(tmpl)) || strchr(e.msg, '\n'))
        fail_msg("message '%s' does not start with the file and contain '%s'", e.msg, msg);
    sl_buf_free(&b);
    free(text);
}

static void test_refused(void **state)
{
    (void)state;
    /* every normalizer of HF's list is run (normalize.h); Nmt is one sluice lacks */
    refused("\"type\": \"Precompiled\"", "\"type\": \"Nmt\"", "normalizer 'Nmt' is not supported");
    /* every pre-tokenizer of HF's list but ByteLevel runs (pretokenizer.h) */
    refused("\"type\": \"Metaspace\"", "\"type\": \"CharDelimiterSplit\"",
            "pre_tokenizer 'CharDelimiterSplit' is not supported");
    refused("\"precompiled_charsmap\": \"", "\"precompiled_charsmap\": \"*", "precompiled_charsmap is not base64");
    refused("\"precompiled_charsmap\": \"", "\"precompiled_charsmap\": \"AAAAAAAA", "charsmap trie size");
    refused("\"Regex\": \" {2,}\"", "\"Regex\": \" ({2,}\"", "invalid regex");
    refused("\"unk_id\": 0", "\"unk_id\": 99999", "model.unk_id is not an id");
    /* a score past a double (serde_json: "number out of range"), and one so
     * large that a path's sum could reach infinity (no candidate would win:
     * this crashed the lattice's read-back, fuzz_sptok_load) */
    refused("\"<s>\",\n        0.0", "\"<s>\",\n        -1e999", "vocab entry 1: the score is out of range");
    refused("\"<s>\",\n        0.0", "\"<s>\",\n        -1e300",
            "vocab entry 1: the score is out of range (beyond 1e290");
    refused("\"post_processor\": null", "\"post_processor\": {\"type\": \"RobertaProcessing\", \"cls\": 1}",
            "post_processor RobertaProcessing: 'cls' is not [token, id]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_converted), cmocka_unit_test(test_t5_like),
                                       cmocka_unit_test(test_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
