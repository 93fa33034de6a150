/* The SentencePiece family (tokenize/models/tok_spm.c: .model files) against the
 * `sentencepiece` library 0.2.3, on fixtures made by
 * tests/data/spm/make_fixtures.py:
 * - mistral-v1.model, mistral-v3.model: the real Mistral-7B v0.1 (Llama-2
 *   style BPE, byte_fallback, 32000 pieces) and Codestral Mamba (32768, with
 *   control and user-defined pieces) models from mistral-common;
 * - uni-bf, uni-unk, bpe-bf, bpe-unk: tiny Unigram and BPE models trained on
 *   the repository's docs with nmt_nfkc normalization (a real precompiled
 *   charsmap), byte_fallback on and off, user-defined and control pieces;
 *   uni-raw: identity normalization, no dummy prefix, whitespace kept;
 * for each, every text of texts.jsonl (the tokenizer corpus, edge cases,
 * random strings, adversarial whitespace / NFKC / unknown / emoji / CJK
 * strings) must give sentencepiece's encode(text) ids and decode back to
 * its decode(ids); random id lists must decode as sentencepiece decodes
 * them. Then malformed files are refused with one line naming the file and
 * the offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/normalizers/norm_precompiled.h"
#include "tokenize/tokenizer.h"

static const char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/spm/%s", src ? src : ".", rel);
    return buf;
}

static char *slurp(const char *rel, size_t *n)
{
    sl_err e = {{0}};
    char *t;
    if (sl_read_file(path(rel), &t, n, &e))
        fail_msg("%s", e.msg);
    return t;
}

static sl_tokenizer *load(const char *file)
{
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(path(file), NULL, &e);
    if (!t)
        fail_msg("%s", e.msg);
    return t;
}

static int ids_equal(const sl_ids *got, const sl_json *arr)
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

static sl_json_doc *next_line(char **p, const char *end)
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

static int str_equal(const sl_buf *b, const sl_json *s)
{
    return s && s->type == SL_JSON_STRING && b->len == s->str_len && !memcmp(b->data ? b->data : "", s->str, b->len);
}

/* texts.jsonl against want (one {"ids", "decoded"} per text); returns the
 * number of texts checked. */
static size_t check_texts(const char *file, const char *want_file, const char *family)
{
    sl_tokenizer *t = load(file);
    assert_string_equal(sl_tokenizer_family(t), family);
    sl_tok_state *st = sl_tok_state_new(t);
    size_t tn, wn;
    char *texts = slurp("texts.jsonl", &tn), *want = slurp(want_file, &wn);
    char *tp = texts, *wp = want;
    size_t lines = 0, bad = 0;
    while (tp < texts + tn) {
        sl_json_doc *td = next_line(&tp, texts + tn), *wd = next_line(&wp, want + wn);
        const sl_json *text = sl_json_get(sl_json_root(td), "text"), *w = sl_json_root(wd);
        sl_ids ids = {0};
        sl_buf dec = {0};
        sl_err e = {{0}};
        assert_int_equal(sl_tokenizer_encode(t, st, text->str, text->str_len, &ids, &e), 0);
        if (!ids_equal(&ids, sl_json_get(w, "ids")) && bad++ < 5)
            fprintf(stderr, "%s: ids of text %zu differ from the reference\n", file, lines);
        assert_int_equal(sl_tokenizer_decode(t, ids.v, ids.n, &dec, &e), 0);
        if (!str_equal(&dec, sl_json_get(w, "decoded")) && bad++ < 5)
            fprintf(stderr, "%s: decode of text %zu differs from the reference\n", file, lines);
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
    sl_tokenizer_free(t);
    return lines;
}

static void check_decodes(const char *file, const char *want_file)
{
    sl_tokenizer *t = load(file);
    size_t wn;
    char *want = slurp(want_file, &wn), *wp = want;
    size_t lines = 0, bad = 0;
    while (wp < want + wn) {
        sl_json_doc *wd = next_line(&wp, want + wn);
        const sl_json *arr = sl_json_get(sl_json_root(wd), "ids");
        uint32_t ids[64];
        assert_true(arr->n <= 64);
        for (size_t i = 0; i < arr->n; i++) {
            int64_t v;
            assert_true(sl_json_is_int(arr->kids[i], &v));
            ids[i] = (uint32_t)v;
        }
        sl_buf dec = {0};
        sl_err e = {{0}};
        assert_int_equal(sl_tokenizer_decode(t, ids, arr->n, &dec, &e), 0);
        if (!str_equal(&dec, sl_json_get(sl_json_root(wd), "decoded")) && bad++ < 5)
            fprintf(stderr, "%s: decode of id list %zu differs from sentencepiece\n", file, lines);
        sl_buf_free(&dec);
        sl_json_free(wd);
        lines++;
    }
    assert_int_equal(lines, 300);
    assert_int_equal(bad, 0);
    free(want);
    sl_tokenizer_free(t);
}

static void check_model(const char *name)
{
    char file[64], exp[96], dec[96];
    snprintf(file, sizeof file, "%s.model", name);
    snprintf(exp, sizeof exp, "expected-%s.jsonl", name);
    snprintf(dec, sizeof dec, "decode-%s.jsonl", name);
    assert_true(check_texts(file, exp, "spm") > 1000);
    check_decodes(file, dec);
}

static void test_mistral(void **state)
{
    (void)state;
    check_model("mistral-v1");
    check_model("mistral-v3");
    sl_tokenizer *t = load("mistral-v1.model");
    assert_int_equal(sl_tokenizer_vocab_size(t), 32000);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), 0);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_BOS), 1);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), 2);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_PAD), -1);
    assert_int_equal(sl_tokenizer_token_id(t, "<0x41>"), 3 + 0x41);
    assert_int_equal(sl_tokenizer_token_id(t, "no such piece"), -1);
    assert_string_equal(sl_tokenizer_name(t), "spm:mistral-v1.model");
    sl_tokenizer_free(t);
}

static void test_trained(void **state)
{
    (void)state;
    check_model("uni-bf");
    check_model("uni-unk");
    check_model("uni-raw");
    check_model("bpe-bf");
    check_model("bpe-unk");
}

/* --- malformed files ------------------------------------------------------ */
static void put_varint(sl_buf *b, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        sl_buf_putc(b, (char)(c | (v ? 0x80 : 0)));
    } while (v);
}

static void put_bytes(sl_buf *b, unsigned field, const void *p, size_t n)
{
    put_varint(b, field << 3 | 2);
    put_varint(b, n);
    sl_buf_append(b, p, n);
}

static void put_piece(sl_buf *b, const char *s, int type)
{
    sl_buf m = {0};
    put_bytes(&m, 1, s, strlen(s));
    put_varint(&m, 3 << 3);
    put_varint(&m, (uint64_t)type);
    put_bytes(b, 1, m.data, m.len);
    sl_buf_free(&m);
}

static void expect_refused(const sl_buf *file, const char *msg)
{
    char tmpl[] = "/tmp/sl_spm_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, file->data, file->len), (ssize_t)file->len);
    close(fd);
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.family = "spm";
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(tmpl, &o, &e);
    unlink(tmpl);
    assert_null(t);
    if (!strstr(e.msg, msg) || strncmp(e.msg, tmpl, strlen(tmpl)) || strchr(e.msg, '\n'))
        fail_msg("message '%s' does not start with the file and contain '%s'", e.msg, msg);
}

/* A valid little model: <unk>, <s>, </s>, a, b, ab (Unigram), then bytes. */
static void small_model(sl_buf *b, const void *charsmap, size_t cm_len)
{
    sl_buf_clear(b);
    put_piece(b, "<unk>", 2);
    put_piece(b, "<s>", 3);
    put_piece(b, "</s>", 3);
    put_piece(b, "a", 1);
    put_piece(b, "b", 1);
    put_piece(b, "ab", 1);
    if (charsmap) {
        sl_buf ns = {0};
        put_bytes(&ns, 2, charsmap, cm_len);
        put_bytes(b, 3, ns.data, ns.len);
        sl_buf_free(&ns);
    }
}

/* A charsmap with one rule "A" -> "a", built by hand in the Darts layout:
 * the root's base is 1, so byte c leads to unit 1 ^ c; that unit carries
 * the label, the leaf flag and an offset to the base whose own unit keeps
 * the value (an index into the strings). */
static size_t one_rule_charsmap(uint8_t *out)
{
    /* units: [0] root: offset 1 -> base 1. child 'A' (0x41) at 1 ^ 0x41 = 0x40.
     * unit[0x40]: label 0x41, has_leaf, offset 0x40 ^ 0x42 = 2 -> value at
     * 0x42: value 0 (bit 31 set marks a value unit). */
    uint32_t units[0x43] = {0};
    units[0] = 1u << 10;                                      /* offset 1 */
    units[0x40] = 0x41 | (1u << 8) | ((0x40u ^ 0x42u) << 10); /* label, leaf, offset */
    units[0x42] = (1u << 31) | 0;                             /* value: string at 0 */
    size_t n = 0;
    uint32_t trie = sizeof units;
    memcpy(out, &trie, 4), n = 4;
    memcpy(out + n, units, sizeof units), n += sizeof units;
    memcpy(out + n, "a\0", 2), n += 2;
    return n;
}

static void test_charsmap(void **state)
{
    (void)state;
    uint8_t cm[4 + 4 * 0x43 + 2];
    size_t n = one_rule_charsmap(cm);
    sl_charsmap c;
    sl_err e = {{0}};
    assert_int_equal(sl_charsmap_parse(&c, cm, n, "x", 0, &e), 0);
    const char *rep = NULL;
    assert_int_equal(sl_charsmap_match(&c, "AB", 2, 1, &rep), 1);
    assert_string_equal(rep, "a");
    assert_int_equal(sl_charsmap_match(&c, "BA", 2, 1, &rep), 0);
    sl_buf out = {0};
    sl_spm_norm nz = {&c, NULL, 1, 1, 1, 0};
    sl_spm_normalize(&nz, "  A  bA ", 8, &out);
    assert_int_equal(out.len, strlen("\xE2\x96\x81"
                                     "a\xE2\x96\x81"
                                     "ba"));
    assert_memory_equal(out.data,
                        "\xE2\x96\x81"
                        "a\xE2\x96\x81"
                        "ba",
                        out.len);
    sl_charsmap_free(&c);
    sl_buf_free(&out);

    /* through a model file: "A" normalizes to "a" */
    sl_buf f = {0};
    small_model(&f, cm, n);
    char tmpl[] = "/tmp/sl_spm_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f.data, f.len), (ssize_t)f.len);
    close(fd);
    sl_tokenizer *t = sl_tokenizer_load(tmpl, NULL, &e);
    unlink(tmpl);
    if (!t)
        fail_msg("%s", e.msg);
    assert_string_equal(sl_tokenizer_family(t), "spm");
    sl_tok_state *st = sl_tok_state_new(t);
    sl_ids ids = {0};
    /* "A b" -> "\u2581a\u2581b": U+2581 is no piece (unk), A became a */
    assert_int_equal(sl_tokenizer_encode(t, st, "A b", 3, &ids, &e), 0);
    assert_int_equal(ids.n, 4);
    assert_int_equal(ids.v[0], 0);
    assert_int_equal(ids.v[1], 3);
    assert_int_equal(ids.v[2], 0);
    assert_int_equal(ids.v[3], 4);
    sl_ids_free(&ids);
    sl_tok_state_free(st);
    sl_tokenizer_free(t);

    /* bad charsmaps: the offset is the charsmap's place in the file */
    uint8_t bad[sizeof cm];
    memcpy(bad, cm, n);
    bad[0] = 0xff, bad[1] = 0xff; /* trie size past the blob */
    small_model(&f, bad, n);
    expect_refused(&f, "charsmap trie size");
    memcpy(bad, cm, n);
    bad[4 + 4 * 0x42] = 9; /* the value points past the strings */
    small_model(&f, bad, n);
    expect_refused(&f, "charsmap value 9 is outside");
    memcpy(bad, cm, n);
    bad[4 + 4 * 0x40 + 3] = 0x7f; /* the offset leads outside the trie */
    small_model(&f, bad, n);
    expect_refused(&f, "points outside the trie");
    sl_buf_free(&f);
}

static void test_malformed(void **state)
{
    (void)state;
    size_t n;
    char *v1 = slurp("mistral-v1.model", &n);
    sl_buf f = {0};
    sl_buf_append(&f, v1, 1000); /* cut inside a piece */
    expect_refused(&f, ":offset ");
    sl_buf_clear(&f);
    sl_buf_append(&f, v1, 3);
    expect_refused(&f, "offset 0: field 1: length");
    free(v1);

    small_model(&f, NULL, 0);
    sl_buf_append(&f, "\x0b", 1); /* wire type 3 (group) */
    expect_refused(&f, "wire type 3 is not supported");

    sl_buf_clear(&f); /* no unknown piece */
    put_piece(&f, "a", 1);
    expect_refused(&f, "no unknown piece");

    small_model(&f, NULL, 0); /* WORD model */
    uint8_t ts[] = {3 << 3, 3};
    put_bytes(&f, 2, ts, 2);
    expect_refused(&f, "model_type 3 (WORD) is not supported");

    small_model(&f, NULL, 0);       /* byte_fallback without the 256 byte pieces */
    uint8_t bf[] = {0x98, 0x02, 1}; /* field 35, varint 1 */
    put_bytes(&f, 2, bf, 3);
    expect_refused(&f, "no byte piece <0x00>");

    small_model(&f, NULL, 0); /* a piece twice */
    put_piece(&f, "ab", 1);
    expect_refused(&f, "'ab' is already defined");

    small_model(&f, NULL, 0); /* a bad piece type */
    sl_buf m = {0};
    put_bytes(&m, 1, "c", 1);
    put_varint(&m, 3 << 3);
    put_varint(&m, 9);
    put_bytes(&f, 1, m.data, m.len);
    sl_buf_free(&m);
    expect_refused(&f, "piece type 9");
    sl_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mistral), cmocka_unit_test(test_trained),
                                       cmocka_unit_test(test_charsmap), cmocka_unit_test(test_malformed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
