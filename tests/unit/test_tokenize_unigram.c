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
#include "tokenize/hf_pipeline.h"
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

/* text written to a temporary (its name in tmpl) and loaded, its
 * model.vocab read ahead (way 1) or from the tree alone (0): the
 * tokenizer, or NULL with the message in e. */
static sl_tokenizer *load_tmp(const sl_buf *text, int way, char tmpl[19], sl_err *e)
{
    memcpy(tmpl, "/tmp/sl_uni_XXXXXX", 19);
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text->data, text->len), (ssize_t)text->len);
    close(fd);
    sl_hf_read_ahead = way;
    sl_tokenizer *t = sl_tokenizer_load(tmpl, NULL, e);
    sl_hf_read_ahead = 1;
    unlink(tmpl);
    return t;
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
    char tmpl[19];
    sl_err e = {{0}};
    sl_tokenizer *t = load_tmp(&b, 1, tmpl, &e);
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

/* text loaded as a tokenizer.json, read ahead (way 1) or from the tree
 * alone (0): its message in msg ("" when it loads) and its ids on the
 * texts of texts.jsonl, each text's ids then a -1, in ids. */
static void load_way(const sl_buf *text, int way, char *msg, size_t cap, sl_ids *ids)
{
    char tmpl[19];
    size_t before = sl_hf_read_ahead_loads;
    sl_err e = {{0}};
    sl_tokenizer *t = load_tmp(text, way, tmpl, &e);
    if (!way)
        assert_int_equal(sl_hf_read_ahead_loads, before);
    snprintf(msg, cap, "%s", t ? "" : e.msg + strlen(tmpl));
    ids->n = 0;
    if (!t)
        return;
    size_t n;
    char *texts = sl_tt_slurp(path("texts.jsonl"), &n), *p = texts;
    sl_json_doc *d;
    sl_tok_state *st = sl_tok_state_new(t);
    for (int k = 0; k < 200 && (d = sl_tt_next_line(&p, texts + n)); k++) {
        const sl_json *tx = sl_json_get(sl_json_root(d), "text");
        assert_int_equal(sl_tokenizer_encode(t, st, tx->str, tx->str_len, ids, &e), 0);
        sl_ids_push(ids, UINT32_MAX);
        sl_json_free(d);
    }
    sl_tok_state_free(st);
    free(texts);
    sl_tokenizer_free(t);
}

/* model.vocab read ahead of the parse (vlist.h) gives the tree's
 * tokenizer, or declines and the tree's message stands: the fixtures
 * (read ahead, checked against HF above and here against the tree) and
 * variants of uni-unk.json's vocabulary: escaped pieces, strings equal
 * to another entry's (the last one's id wins, as HF's map), numbers of
 * every JSON form and malformed ones, entries of the wrong shape, an empty
 * list. */
static void test_read_ahead(void **state)
{
    (void)state;
    static const char *const files[] = {"uni-bf.json", "uni-unk.json", "uni-t5.json"};
    static const char *const edits[][2] = {
        {"", ""},
        {"\"\u2581machine\",", "\"\\u2581mach\\u0069ne\","}, /* escapes: the same string */
        {"\"format\",", "\"\\u2581machine\","},              /* equal to an earlier entry */
        {"\"<ctl>\",", "\"\u2581machine\","},                /* equal to a later entry */
        {"\"format\",", "\"f\\\"o\\\\r\\/m\","},             /* \" \\ \/ */
        {"-7.487320423126221", "-7487320423126221e-15"},
        {"-7.487320423126221", "-0.7487320423126221E+1"},
        {"-7.487320423126221", "-7.487320423126221e0"},
        {"-7.487320423126221", "-7"},
        {"-7.487320423126221", "-0"},
        {"-7.487320423126221", "-07.4"},
        {"-7.487320423126221", "-7."},
        {"-7.487320423126221", "-.5"},
        {"-7.487320423126221", "+7.4"},
        {"-7.487320423126221", "-7.4e"},
        {"-7.487320423126221", "-7.4e+"},
        {"-7.487320423126221", "\"-7.4\""},
        {"-7.487320423126221", "-7.4, 1"},
        {"-7.487320423126221", "[-7.4]"},
        {"-7.487320423126221", "-1e999"},
        {"-7.487320423126221", "-7.4 ]  , [\"zz\", -9"},
        {"\"format\",", "\"form\x01at\","}, /* a raw control byte */
        {"\"format\",", "\"form\\x\","},    /* a bad escape */
        {"\"format\",", "\"\\ud800\","},    /* a lone surrogate */
        {"\"format\",", "null,"},
        {"\"vocab\": [", "\"vocab\": [], \"x\": ["},
        {"\"vocab\": [", "\"vocab\": {}, \"x\": ["},
    };
    char m1[512], m0[512];
    sl_ids a = {0}, b = {0};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        size_t n;
        char *text = sl_tt_slurp(path(files[f]), &n);
        sl_buf t = {0};
        sl_buf_append(&t, text, n);
        size_t before = sl_hf_read_ahead_loads;
        load_way(&t, 1, m1, sizeof m1, &a);
        assert_int_equal(sl_hf_read_ahead_loads, before + 1); /* the fixture was read ahead */
        load_way(&t, 0, m0, sizeof m0, &b);
        assert_string_equal(m1, "");
        assert_string_equal(m0, "");
        assert_int_equal(a.n, b.n);
        assert_memory_equal(a.v, b.v, a.n * sizeof *a.v);
        sl_buf_free(&t);
        free(text);
    }
    size_t n;
    char *text = sl_tt_slurp(path("uni-unk.json"), &n);
    int loaded = 0, ahead = 0;
    for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
        sl_buf t = {0};
        const char *at = k ? strstr(strstr(text, "\"vocab\": ["), edits[k][0]) : text; /* (in the vocabulary) */
        assert_non_null(at);
        sl_buf_append(&t, text, (size_t)(at - text));
        sl_buf_puts(&t, edits[k][1]);
        sl_buf_puts(&t, at + strlen(edits[k][0]));
        size_t before = sl_hf_read_ahead_loads;
        load_way(&t, 1, m1, sizeof m1, &a);
        ahead += sl_hf_read_ahead_loads > before;
        load_way(&t, 0, m0, sizeof m0, &b);
        if (strcmp(m1, m0))
            fail_msg("edit %zu: read ahead '%s', tree '%s'", k, m1, m0);
        assert_int_equal(a.n, b.n);
        if (a.n)
            assert_memory_equal(a.v, b.v, a.n * sizeof *a.v);
        loaded += !m1[0];
        sl_buf_free(&t);
    }
    /* strings equal to another entry's: the last entry's id, in the
     * vocabulary and in the lattice (HF's HashMap insert, then its trie
     * looks the string up there) */
    for (int later = 0; later < 2; later++) {
        sl_tokenizer *t0 = sl_tokenizer_load(path("uni-unk.json"), NULL, NULL);
        int64_t m = sl_tokenizer_token_id(t0, "\xe2\x96\x81machine"),
                o = sl_tokenizer_token_id(t0, later ? "format" : "<ctl>");
        sl_tokenizer_free(t0);
        assert_true(m > 0 && o > 0 && (o > m) == later);
        sl_buf t = {0};
        const char *from = later ? "\"format\"," : "\"<ctl>\",";
        const char *at = strstr(strstr(text, "\"vocab\": ["), from);
        sl_buf_append(&t, text, (size_t)(at - text));
        sl_buf_puts(&t, "\"\u2581machine\",");
        sl_buf_puts(&t, at + strlen(from));
        for (int way = 0; way < 2; way++) {
            char tmpl[19];
            sl_tokenizer *tk = load_tmp(&t, way, tmpl, NULL);
            assert_non_null(tk);
            int64_t want = later ? o : m;
            assert_int_equal(sl_tokenizer_token_id(tk, "\xe2\x96\x81machine"), want);
            sl_tok_state *st = sl_tok_state_new(tk);
            a.n = 0;
            assert_int_equal(sl_tokenizer_encode(tk, st, "machine", 7, &a, NULL), 0);
            assert_int_equal(a.n, 1);
            assert_int_equal(a.v[0], want);
            sl_tok_state_free(st);
            sl_tokenizer_free(tk);
        }
        sl_buf_free(&t);
    }
    assert_true(loaded >= 12 && loaded < 27); /* both outcomes */
    assert_true(ahead >= 12 && ahead < 27);
    free(text);
    sl_ids_free(&a);
    sl_ids_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_converted), cmocka_unit_test(test_t5_like),
                                       cmocka_unit_test(test_refused), cmocka_unit_test(test_read_ahead)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
