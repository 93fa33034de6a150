/* The SentencePiece-style BPE family (tokenize/models/tok_spbpe.c) against Hugging
 * Face tokenizers 0.23.3, on fixtures made by tests/data/tok/make_fixtures.py:
 * - mistral-v1.json: Mistral-7B v0.1's SentencePiece model (mistral-common)
 *   converted by transformers' LlamaTokenizerFast (Llama-2 configuration:
 *   Prepend + Replace normalizer, byte_fallback, unk); HF's ids of the
 *   converted file equal sentencepiece's own on every text (checked by the
 *   script);
 * - v3-small-{legacy,meta}.json: Codestral Mamba's v3 model trimmed to 4000
 *   merges with its 771 control and user tokens, in the legacy configuration
 *   and with the Metaspace pre-tokenizer (prepend_scheme first);
 * - v1-small-norm.json: mistral-v1 trimmed, with normalized added tokens
 *   (Prepend and Replace apply to them), lstrip, rstrip, single_word;
 * - unk-{small,nofuse}.json: no byte_fallback and no CJK characters, so the
 *   unk token appears (fused or not), Metaspace with split and the other
 *   prepend schemes, a Metaspace decoder, ignore_merges and added tokens with
 *   normalized / lstrip / rstrip / single_word;
 * for each, texts.jsonl (the bpe test corpus, hand-written edge cases, 3000
 * seeded random strings) must give HF's ids with special tokens parsed and
 * as plain text, and HF's decode of the parsed ids; random id lists must
 * decode as HF decodes them (decode-NAME.jsonl). Then files this family
 * cannot run are refused with one line naming the file and the component. */
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
#include "tokenize/tokenizer.h"

static const char *path(const char *rel)
{
    return sl_test_path("tests/data/tok/%s", rel);
}

static sl_tokenizer *load(const char *file, sl_special_mode mode)
{
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.special = mode;
    return sl_tt_load(path(file), &o, "spbpe");
}

static void check_set(const char *name, size_t *n_unk)
{
    char file[128], exp[128];
    snprintf(file, sizeof file, "%s.json", name);
    snprintf(exp, sizeof exp, "expected-%s.jsonl", name);
    sl_tokenizer *parse = load(file, SL_SPECIAL_PARSE), *plain = load(file, SL_SPECIAL_PLAIN);
    sl_tok_state *sp = sl_tok_state_new(parse), *sl = sl_tok_state_new(plain);
    size_t tn, en;
    char *texts = sl_tt_slurp(path("texts.jsonl"), &tn), *want = sl_tt_slurp(path(exp), &en);
    char *tp = texts, *wp = want;
    size_t lines = 0, bad = 0;
    int64_t unk = sl_tokenizer_special(parse, SL_TOK_UNK);
    while (tp < texts + tn) {
        sl_json_doc *td = sl_tt_next_line(&tp, texts + tn), *wd = sl_tt_next_line(&wp, want + en);
        const sl_json *text = sl_json_get(sl_json_root(td), "text"), *w = sl_json_root(wd);
        const sl_json *wplain = sl_json_get(w, "plain");
        sl_ids ids = {0};
        sl_buf dec = {0};
        sl_err e = {{0}};
        assert_int_equal(sl_tokenizer_encode(plain, sl, text->str, text->str_len, &ids, &e), 0);
        if (!sl_tt_ids_equal(&ids, wplain ? wplain : sl_json_get(w, "parse")) && bad++ < 5)
            fprintf(stderr, "%s: plain ids of text %zu differ from HF\n", name, lines);
        for (size_t i = 0; i < ids.n; i++) /* as plain text, a literal <unk> is not the unk id */
            *n_unk += ids.v[i] == (uint32_t)unk;
        ids.n = 0;
        assert_int_equal(sl_tokenizer_encode(parse, sp, text->str, text->str_len, &ids, &e), 0);
        if (!sl_tt_ids_equal(&ids, sl_json_get(w, "parse")) && bad++ < 5)
            fprintf(stderr, "%s: ids of text %zu differ from HF\n", name, lines);
        assert_int_equal(sl_tokenizer_decode(parse, ids.v, ids.n, &dec, &e), 0);
        const sl_json *hd = sl_json_get(w, "decoded");
        if ((dec.len != hd->str_len || memcmp(dec.data ? dec.data : "", hd->str, dec.len)) && bad++ < 5)
            fprintf(stderr, "%s: decode of text %zu differs from HF\n", name, lines);
        sl_ids_free(&ids);
        sl_buf_free(&dec);
        sl_json_free(td);
        sl_json_free(wd);
        lines++;
    }
    assert_ptr_equal(wp, want + en);
    assert_true(lines > 3200);
    assert_int_equal(bad, 0);
    free(texts);
    free(want);
    sl_tok_state_free(sp);
    sl_tok_state_free(sl);
    sl_tokenizer_free(parse);
    sl_tokenizer_free(plain);
}

/* The merges on whole pieces (no cut at U+2581): unk-small with its unk
 * token renamed "<unk>\u2581" (a token ending in U+2581 turns the cut off;
 * the name of the unk token does not change any id) must give HF's plain
 * ids of unk-small. */
static void test_whole_pieces(void **state)
{
    (void)state;
    size_t n;
    char *json = sl_tt_slurp(path("unk-small.json"), &n);
    sl_buf b = {0};
    for (char *p = json, *at; p < json + n; p = at + 7) {
        at = strstr(p, "\"<unk>\"");
        if (!at) {
            sl_buf_append(&b, p, (size_t)(json + n - p));
            break;
        }
        sl_buf_append(&b, p, (size_t)(at - p));
        sl_buf_puts(&b, "\"<unk>\xE2\x96\x81\"");
    }
    char tmp[64];
    strcpy(tmp, "/tmp/sluice-spbpe-XXXXXX");
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tmp, &o, &e);
    unlink(tmp);
    if (!t)
        fail_msg("%s", e.msg);
    assert_int_equal(sl_tokenizer_token_id(t, "<unk>\xE2\x96\x81"), sl_tokenizer_special(t, SL_TOK_UNK));
    sl_tok_state *s = sl_tok_state_new(t);
    size_t tn, en, bad = 0, lines = 0;
    char *texts = sl_tt_slurp(path("texts.jsonl"), &tn), *want = sl_tt_slurp(path("expected-unk-small.jsonl"), &en);
    for (char *tp = texts, *wp = want; tp < texts + tn; lines++) {
        sl_json_doc *td = sl_tt_next_line(&tp, texts + tn), *wd = sl_tt_next_line(&wp, want + en);
        const sl_json *text = sl_json_get(sl_json_root(td), "text"), *w = sl_json_root(wd);
        const sl_json *wplain = sl_json_get(w, "plain");
        sl_ids ids = {0};
        assert_int_equal(sl_tokenizer_encode(t, s, text->str, text->str_len, &ids, &e), 0);
        if (!sl_tt_ids_equal(&ids, wplain ? wplain : sl_json_get(w, "parse")) && bad++ < 5)
            fprintf(stderr, "whole pieces: plain ids of text %zu differ from HF\n", lines);
        sl_ids_free(&ids);
        sl_json_free(td);
        sl_json_free(wd);
    }
    assert_true(lines > 3200);
    assert_int_equal(bad, 0);
    free(texts);
    free(want);
    free(json);
    sl_buf_free(&b);
    sl_tok_state_free(s);
    sl_tokenizer_free(t);
}

/* decode-NAME.jsonl: random id lists (byte tokens that are not UTF-8,
 * specials, anything) decode as HF decodes them. */
static void check_decodes(const char *name)
{
    char file[128], fix[128];
    snprintf(file, sizeof file, "%s.json", name);
    snprintf(fix, sizeof fix, "decode-%s.jsonl", name);
    sl_tokenizer *t = load(file, SL_SPECIAL_PLAIN);
    sl_tt_check_decodes(t, name, path(fix), "HF", 1000);
    /* an id outside the vocabulary is an error naming its position */
    sl_tt_check_outside_id(t);
    sl_tokenizer_free(t);
}

static void test_decode_random(void **state)
{
    (void)state;
    check_decodes("mistral-v1");
    check_decodes("unk-small");
    check_decodes("v1-small-norm");
}

static void test_mistral_v1(void **state)
{
    (void)state;
    size_t unk = 0;
    check_set("mistral-v1", &unk);
    /* the header's special ids: <s> 1, </s> 2, <unk> 0 */
    sl_tokenizer *t = load("mistral-v1.json", SL_SPECIAL_PLAIN);
    assert_int_equal(sl_tokenizer_vocab_size(t), 32000);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_BOS), 1);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), 2);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), 0);
    assert_string_equal(sl_tokenizer_name(t), "bpe:mistral-v1.json");
    sl_tokenizer_free(t);
}

static void test_v3_small(void **state)
{
    (void)state;
    size_t unk = 0;
    check_set("v3-small-legacy", &unk);
    check_set("v3-small-meta", &unk);
    check_set("v1-small-norm", &unk);
    assert_int_equal(unk, 0); /* byte fallback: unknown characters are never unk */
}

static void test_unk(void **state)
{
    (void)state;
    size_t fused = 0, unfused = 0;
    check_set("unk-small", &fused);
    check_set("unk-nofuse", &unfused);
    /* the fixtures exercise what they are for: unk ids, more when not fused */
    assert_true(fused > 1000);
    assert_true(unfused > fused);
}

/* unk-small.json's text with `from` replaced by `to` (first occurrence),
 * written to a temporary file whose path is returned. */
static const char *variant(const char *src, const char *from, const char *to, char *tmp)
{
    size_t n;
    char *json = sl_tt_slurp(path(src), &n);
    char *at = strstr(json, from);
    if (!at)
        fail_msg("fixture lacks %s", from);
    strcpy(tmp, "/tmp/sluice-spbpe-XXXXXX");
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    fwrite(json, 1, (size_t)(at - json), f);
    fputs(to, f);
    fwrite(at + strlen(from), 1, n - (size_t)(at - json) - strlen(from), f);
    fclose(f);
    free(json);
    return tmp;
}

static void refused(const char *src, const char *from, const char *to, const char *msg)
{
    char tmp[64];
    variant(src, from, to, tmp);
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tmp, NULL, &e);
    unlink(tmp);
    if (t)
        fail_msg("%s -> %s was accepted", from, to);
    if (!strstr(e.msg, msg) || strncmp(e.msg, tmp, strlen(tmp)) || strchr(e.msg, '\n'))
        fail_msg("message '%s' lacks '%s' or the file", e.msg, msg);
}

static void test_refused(void **state)
{
    (void)state;
    refused("unk-small.json", "\"dropout\": null", "\"dropout\": 0.1", "model.dropout is not supported");
    /* every pre-tokenizer of HF's list but ByteLevel runs (pretokenizer.h);
     * UnicodeScripts is one sluice lacks */
    refused("unk-small.json", "\"type\": \"Metaspace\"", "\"type\": \"UnicodeScripts\"",
            "pre_tokenizer 'UnicodeScripts' is not supported");
    refused("v3-small-legacy.json", "\"type\": \"Fuse\"", "\"type\": \"CTC\"", "decoder 'CTC' is not supported");
    /* every normalizer of HF's list is run (normalize.h); Nmt is one sluice lacks */
    refused("v3-small-legacy.json", "\"type\": \"Prepend\"", "\"type\": \"Nmt\"", "normalizer 'Nmt' is not supported");
    refused("unk-small.json", "\"end_of_word_suffix\": null", "\"end_of_word_suffix\": 7",
            "model.end_of_word_suffix is not a string");
    refused("unk-small.json", "\"unk_token\": \"<unk>\"", "\"unk_token\": \"<nope>\"",
            "model.unk_token '<nope>' is not in the vocab");
    /* every post-processor of postproc.h is read (and checked) at load time */
    refused("unk-small.json", "\"post_processor\": null",
            "\"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"</s>\", 2], \"cls\": [\"<s>\", 99999]}",
            "post_processor BertProcessing: id 99999 of 'cls' is not in the vocabulary");
    /* a dropout of 0 is no dropout for HF either, but null is what files write:
     * anything non-null is refused rather than guessed at */
    refused("unk-small.json", "\"dropout\": null", "\"dropout\": 0.0", "model.dropout is not supported");
}

/* The family probe (sp_probe skims the file and parses only model.type,
 * pre_tokenizer and decoder): whatever the layout, it decides as a parse of
 * the whole file does (json.h: the last of duplicate keys counts, escapes
 * are decoded), also in keys and values. */
static int loads_as_spbpe(const char *from, const char *to)
{
    char tmp[64];
    variant("unk-small.json", from, to, tmp);
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tmp, NULL, &e);
    unlink(tmp);
    int is = t && !strcmp(sl_tokenizer_family(t), "spbpe");
    sl_tokenizer_free(t);
    return is;
}

static void test_probe(void **state)
{
    (void)state;
    /* this family's: decoys below the top level, strings with escaped quotes
     * and brackets, scalars of every kind, a duplicate decoder before the
     * real one, a duplicate model type before the real one, an escaped type
     * value, an escaped key */
    assert_true(loads_as_spbpe("\"version\": \"1.0\"",
                               "\"version\": \"1.0\", \"x\": {\"pre_tokenizer\": {\"type\": \"ByteLevel\"}, "
                               "\"s\": \"q\\\\\\\"}]{[\\\\\"}, \"n\": [1, -2.5e3, true, false, null, {}, []]"));
    assert_true(loads_as_spbpe("\"version\": \"1.0\"", "\"s\": \"x\\\"}\", \"version\": \"1.0\""));
    assert_true(loads_as_spbpe("\"version\": \"1.0\"", "\"decoder\": {\"type\": \"ByteLevel\"}, \"version\": \"1.0\""));
    assert_true(loads_as_spbpe("\"model\": {", "\"model\": {\"type\": \"WordPiece\", \"sub\": {\"type\": \"x\"}, "));
    assert_true(loads_as_spbpe("\"type\": \"BPE\"", "\"type\": \"\\u0042PE\""));
    assert_true(loads_as_spbpe("\"version\": \"1.0\"", "\"ver\\u0073ion\": \"1.0\""));
    /* not this family's: a byte-level decoder after the real one, a
     * byte-level pre-tokenizer under an escaped key, a model type after
     * the real one, a model that is not an object */
    assert_false(loads_as_spbpe("\"model\": {", "\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {"));
    assert_false(loads_as_spbpe("\"model\": {", "\"pre_tokeni\\u007aer\": {\"type\": \"ByteLevel\"}, \"model\": {"));
    assert_false(loads_as_spbpe("\"type\": \"BPE\"", "\"type\": \"BPE\", \"type\": \"Unigram\""));
    assert_false(loads_as_spbpe("\"model\": {", "\"model\": 7, \"m\": {"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mistral_v1),   cmocka_unit_test(test_v3_small),      cmocka_unit_test(test_unk),
        cmocka_unit_test(test_whole_pieces), cmocka_unit_test(test_decode_random), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
