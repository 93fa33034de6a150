/* BPE properties and edge cases:
 *  - long runs (1 MB of one character, spaces, digits, ...) give exactly the
 *    ids of HF `tokenizers` (tests/data/bpe/expected-long.jsonl: count,
 *    sha256 of the ids and the first 64 ids, from tests/bpe/gen_expected.py)
 *    and stay O(n log n): the work counter (pair lookups + heap operations)
 *    must stay below 40 per input byte, where the quadratic scan would need
 *    ~n^2/2;
 *  - the heap merge and the simple scan give identical ids on many pieces;
 *  - the per-thread piece caches (one id, up to 11, 12 to 16) give the ids
 *    of the uncached merge on pieces met again and again;
 *  - the tiny tokenizer.json (NFKC+Lowercase, add_prefix_space, pair-form
 *    merges, lstrip/rstrip/single_word added tokens) matches HF on the corpus;
 *  - unsupported tokenizer.json features are refused with their name;
 *  - a decoder chain other than ByteLevel (BPEDecoder, Sequence [BPEDecoder,
 *    ByteLevel]) decodes random id lists as HF's decode does
 *    (tests/data/bpepipe/decode.jsonl, from its make_fixtures.py);
 *  - SHA-256 against FIPS 180-2 vectors and the published sha256 of the
 *    GPT-NeoX tokenizer.json (shared/data/SOURCES.md). */
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
#include "tokenize/models/bpe_internal.h"
#include "tokenize/sha256.h"

static char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf;
}

static sl_bpe *load(const char *rel)
{
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load(path(rel), &e);
    if (!b)
        fail_msg("load %s: %s", rel, e.msg);
    return b;
}

static void hex_of_ids(const sl_ids *ids, char out[72])
{
    uint8_t *le = malloc(ids->n * 4 + 1);
    for (size_t i = 0; i < ids->n; i++)
        for (int k = 0; k < 4; k++)
            le[4 * i + k] = (uint8_t)(ids->v[i] >> (8 * k));
    sl_sha256_fingerprint(le, ids->n * 4, out);
    free(le);
}

static void test_long_runs(void **st)
{
    (void)st;
    sl_bpe *neox = load("neox-tokenizer.json"), *gpt2 = load("gpt2");
    char *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("expected-long.jsonl"), &t, &n, &e), 0);
    int cases = 0;
    for (char *line = t; line < t + n;) {
        char *nl = strchr(line, '\n');
        sl_json_doc *d = sl_json_parse(line, (size_t)(nl - line), NULL, &e);
        assert_non_null(d);
        const sl_json *r = sl_json_root(d);
        sl_bpe *b = !strcmp(sl_json_get_str(r, "tokenizer"), "neox") ? neox : gpt2;
        const char *unit = sl_json_get_str(r, "unit");
        int64_t count, want_n;
        assert_int_equal(sl_json_get_int(r, "count", &count), 0);
        assert_int_equal(sl_json_get_int(r, "n", &want_n), 0);
        size_t ul = strlen(unit), len = ul * (size_t)count;
        char *text = malloc(len);
        for (int64_t i = 0; i < count; i++)
            memcpy(text + (size_t)i * ul, unit, ul);
        sl_bpe_state *s = sl_bpe_state_new(b);
        sl_ids ids = {0};
        assert_int_equal(sl_bpe_encode(b, s, text, len, SL_SPECIAL_PARSE, &ids, &e), 0);
        assert_int_equal(ids.n, want_n);
        const sl_json *head = sl_json_get(r, "head");
        for (size_t i = 0; i < head->n; i++) {
            int64_t v;
            sl_json_is_int(head->kids[i], &v);
            assert_int_equal(ids.v[i], v);
        }
        char fp[72];
        hex_of_ids(&ids, fp);
        assert_string_equal(fp + 7, sl_json_get_str(r, "sha256"));
        if (sl_bpe_state_work(s) > 40 * len)
            fail_msg("'%s' x %lld: %llu units of work for %zu bytes (not n log n)", unit, (long long)count,
                     (unsigned long long)sl_bpe_state_work(s), len);
        sl_buf dec = {0};
        assert_int_equal(sl_bpe_decode(b, ids.v, ids.n, &dec, &e), 0);
        assert_int_equal(dec.len, len);
        assert_memory_equal(dec.data, text, len);
        sl_buf_free(&dec);
        sl_ids_free(&ids);
        sl_bpe_state_free(s);
        free(text);
        sl_json_free(d);
        line = nl + 1;
        cases++;
    }
    assert_int_equal(cases, 14);
    free(t);
    sl_bpe_free(neox);
    sl_bpe_free(gpt2);
}

/* Deterministic pseudo-random generator for the property test. */
static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void test_heap_equals_scan(void **st)
{
    (void)st;
    const char *alphabet[] = {"a", "b", "e", "t", "h", " ", "-", "=", "0", "1", "\xc3\xa9", "in", "the", "\n", "ab"};
    const char *toks[] = {"neox-tokenizer.json", "gpt2"};
    for (int k = 0; k < 2; k++) {
        sl_bpe *b = load(toks[k]);
        sl_bpe_state *s = sl_bpe_state_new(b);
        for (int iter = 0; iter < 3000; iter++) {
            char buf[600];
            size_t n = 0, want = 1 + next_rand() % 300;
            /* half: few symbols (many repeats), half: the whole alphabet */
            size_t span = iter % 2 ? 3 : sizeof alphabet / sizeof *alphabet;
            while (n < want) {
                const char *a = alphabet[next_rand() % span];
                memcpy(buf + n, a, strlen(a));
                n += strlen(a);
            }
            sl_ids h = {0}, sc = {0};
            sl_bpe_encode_piece(b, s, (const uint8_t *)buf, n, 1, &h);
            sl_bpe_encode_piece(b, s, (const uint8_t *)buf, n, 0, &sc);
            assert_int_equal(h.n, sc.n);
            assert_memory_equal(h.v, sc.v, h.n * sizeof *h.v);
            sl_ids_free(&h);
            sl_ids_free(&sc);
        }
        sl_bpe_state_free(s);
        sl_bpe_free(b);
    }
}

/* sl_bpe_piece answers from the per-thread caches once a piece was seen:
 * pieces of 1 to 20 bytes (runs of spaces, of '=' and of 3-byte characters
 * give 12 to 16 ids in GPT-2, words one or a few), each encoded several
 * times, always give the ids of the uncached merge. */
static void test_piece_caches(void **st)
{
    (void)st;
    const char *alphabet[] = {" ", " ", "=", "\xe4\xb8\xad", "e", "t", "\xc3\xa9", "x", "0", "\n"};
    const char *toks[] = {"gpt2", "neox-tokenizer.json"};
    for (int k = 0; k < 2; k++) {
        sl_bpe *b = load(toks[k]);
        sl_bpe_state *s = sl_bpe_state_new(b);
        char pieces[64][24];
        size_t lens[64];
        size_t wide = 0;
        for (int i = 0; i < 64; i++) {
            size_t n = 0, want = 1 + next_rand() % 20;
            const char *a = alphabet[next_rand() % (sizeof alphabet / sizeof *alphabet)];
            int run = next_rand() % 2; /* half: runs of one unit */
            while (n + 3 <= want || n == 0) {
                if (!run)
                    a = alphabet[next_rand() % (sizeof alphabet / sizeof *alphabet)];
                memcpy(pieces[i] + n, a, strlen(a));
                n += strlen(a);
            }
            lens[i] = n;
        }
        /* and for certain: 12 and 16 spaces, 13 tabs (one id per byte in GPT-2) */
        const char *fixed[] = {"            ", "                ", "\t\t\t\t\t\t\t\t\t\t\t\t\t"};
        for (int i = 0; i < 3; i++) {
            lens[i] = strlen(fixed[i]);
            memcpy(pieces[i], fixed[i], lens[i]);
        }
        for (int iter = 0; iter < 2000; iter++) {
            int i = (int)(next_rand() % 64);
            sl_ids got = {0}, want = {0};
            sl_bpe_piece(b, s, (const uint8_t *)pieces[i], lens[i], &got);
            sl_bpe_encode_piece(b, s, (const uint8_t *)pieces[i], lens[i], 0, &want);
            assert_int_equal(got.n, want.n);
            assert_memory_equal(got.v, want.v, got.n * sizeof *got.v);
            wide += lens[i] <= 16 && got.n > 11;
            sl_ids_free(&got);
            sl_ids_free(&want);
        }
        if (k == 0)
            assert_true(wide > 0); /* the 12-16 id table was used */
        sl_bpe_state_free(s);
        sl_bpe_free(b);
    }
}

static void test_tiny_tokenizer(void **st)
{
    (void)st;
    sl_bpe *b = load("tiny-tokenizer.json");
    sl_bpe_state *s = sl_bpe_state_new(b);
    char *ct, *et;
    size_t cn, en;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path("corpus.jsonl"), &ct, &cn, &e), 0);
    assert_int_equal(sl_read_file(path("expected-tiny.jsonl"), &et, &en, &e), 0);
    int docs = 0, bad = 0;
    for (char *c = ct, *x = et; c < ct + cn; docs++) {
        char *cl = strchr(c, '\n'), *xl = strchr(x, '\n');
        sl_json_doc *cd = sl_json_parse(c, (size_t)(cl - c), NULL, &e),
                    *xd = sl_json_parse(x, (size_t)(xl - x), NULL, &e);
        const sl_json *text = sl_json_get(sl_json_root(cd), "text");
        const char *keys[] = {"parse", "plain"};
        for (int m = 0; m < 2; m++) {
            const sl_json *want = sl_json_get(sl_json_root(xd), keys[m]);
            sl_ids got = {0};
            assert_int_equal(
                sl_bpe_encode(b, s, text->str, text->str_len, m == 0 ? SL_SPECIAL_PARSE : SL_SPECIAL_PLAIN, &got, &e),
                0);
            int ok = got.n == want->n;
            for (size_t i = 0; ok && i < got.n; i++) {
                int64_t v;
                ok = sl_json_is_int(want->kids[i], &v) && v == got.v[i];
            }
            if (!ok) {
                bad++;
                fprintf(stderr, "tiny %s %s: got", keys[m], sl_json_get_str(sl_json_root(cd), "id"));
                for (size_t i = 0; i < got.n; i++)
                    fprintf(stderr, " %u", got.v[i]);
                fprintf(stderr, "\n");
            }
            sl_ids_free(&got);
        }
        sl_json_free(cd);
        sl_json_free(xd);
        c = cl + 1;
        x = xl + 1;
    }
    assert_true(docs > 150);
    assert_int_equal(bad, 0);
    free(ct);
    free(et);
    sl_bpe_state_free(s);
    sl_bpe_free(b);
}

static void expect_refused(const char *json, const char *feature)
{
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load_mem(json, strlen(json), NULL, 0, "t.json", &e);
    if (b)
        fail_msg("accepted a tokenizer with %s", feature);
    if (!strstr(e.msg, feature))
        fail_msg("message '%s' does not name '%s'", e.msg, feature);
    assert_non_null(strstr(e.msg, "t.json"));
}

#define BASE_MODEL "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]"
#define BL "{\"type\":\"ByteLevel\",\"add_prefix_space\":false}"

static void test_refusals(void **st)
{
    (void)st;
    expect_refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}", "WordPiece");
    expect_refused("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", "Unigram");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Metaspace\"}," BASE_MODEL "}}", "Metaspace");
    /* the general pre-tokenizer takes any Sequence of HF's splitting steps
     * with one ByteLevel; what sluice does not have is refused by name */
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\"}," BL
                   "]}," BASE_MODEL "}}",
                   "pre_tokenizer Split needs a pattern");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"CharDelimiterSplit\","
                   "\"delimiter\":\"x\"}," BL "]}," BASE_MODEL "}}",
                   "pre_tokenizer 'CharDelimiterSplit' is not supported with byte-level BPE");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"UnicodeScripts\"}," BL
                   "]}," BASE_MODEL "}}",
                   "'UnicodeScripts' is not supported");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Whitespace\"},"
                   "{\"type\":\"Digits\"}]}," BASE_MODEL "}}",
                   "pre_tokenizer Sequence has no ByteLevel step");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Whitespace\"}," BASE_MODEL "}}",
                   "pre_tokenizer Whitespace has no ByteLevel step");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[" BL ",{\"type\":\"Digits\"}," BL
                   "]}," BASE_MODEL "}}",
                   "more than one ByteLevel step");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":"
                   "{\"Regex\":\"(a\"},\"behavior\":\"Isolated\"}," BL "]}," BASE_MODEL "}}",
                   "pre_tokenizer Split: invalid regex at offset 2");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Punctuation\","
                   "\"behavior\":\"Merged\"}," BL "]}," BASE_MODEL "}}",
                   "behavior 'Merged' is not one of");
    expect_refused("{\"normalizer\":{\"type\":\"NoSuchNormalizer\"},\"pre_tokenizer\":" BL "," BASE_MODEL "}}",
                   "NoSuchNormalizer");
    expect_refused("{\"pre_tokenizer\":" BL "," BASE_MODEL ",\"unk_token\":\"zz\"}}",
                   "model.unk_token 'zz' is not in the vocab");
    expect_refused("{\"pre_tokenizer\":" BL "," BASE_MODEL ",\"dropout\":0.1}}", "dropout");
    expect_refused("{\"pre_tokenizer\":" BL "," BASE_MODEL ",\"byte_fallback\":true}}", "byte_fallback");
    expect_refused("{\"pre_tokenizer\":" BL "," BASE_MODEL ",\"continuing_subword_prefix\":7}}",
                   "continuing_subword_prefix is not a string");
    /* HF strips the prefix's length from a merge's right token: one shorter than it cannot be */
    expect_refused("{\"pre_tokenizer\":" BL "," BASE_MODEL ",\"continuing_subword_prefix\":\"##\"}}",
                   "shorter than the continuing_subword_prefix");
    /* and so with a left token long enough that the merge's bytes go to the heap (ASan: no leak) */
#define A60 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define A300 A60 A60 A60 A60 A60
    expect_refused("{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"" A300 "\":0,\"b\":1},"
                   "\"merges\":[\"" A300 " b\"],\"continuing_subword_prefix\":\"##\"}}",
                   "shorter than the continuing_subword_prefix");
#undef A300
#undef A60
    expect_refused("{\"pre_tokenizer\":" BL ",\"post_processor\":{\"type\":\"Foo\"}," BASE_MODEL "}}",
                   "post_processor 'Foo' is not supported");
    expect_refused("{\"pre_tokenizer\":" BL ",\"post_processor\":{\"type\":\"RobertaProcessing\"}," BASE_MODEL "}}",
                   "post_processor RobertaProcessing");
    expect_refused("{\"pre_tokenizer\":" BL ",\"decoder\":{\"type\":\"CTC\"}," BASE_MODEL "}}", "decoder 'CTC'");
    expect_refused("{\"truncation\":{\"max_length\":5},\"pre_tokenizer\":" BL "," BASE_MODEL "}}", "truncation");
    expect_refused("{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a b\"]}}",
                   "not in the vocab");
    expect_refused("{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a\"]}}",
                   "two tokens");
    expect_refused("{\"model\":", "t.json");
    /* one huge id would otherwise allocate gigabytes (found by fuzz_bpe_load) */
    expect_refused("{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":888888888},\"merges\":[]}}",
                   "not dense");
    expect_refused("{\"pre_tokenizer\":" BL ",\"added_tokens\":[{\"id\":99999999,\"content\":\"x\"}]," BASE_MODEL "}}",
                   "far beyond");
    /* and a minimal valid one loads, with the pair-form merge */
    const char *ok = "{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[[\"a\",\"b\"]]}}";
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load_mem(ok, strlen(ok), NULL, 0, "ok.json", &e);
    if (!b)
        fail_msg("%s", e.msg);
    sl_bpe_state *s = sl_bpe_state_new(b);
    sl_ids ids = {0};
    assert_int_equal(sl_bpe_encode(b, s, "abab", 4, SL_SPECIAL_PARSE, &ids, &e), 0);
    assert_int_equal(ids.n, 2);
    assert_int_equal(ids.v[0], 2);
    assert_int_equal(ids.v[1], 2);
    sl_ids_free(&ids);
    sl_bpe_state_free(s);
    sl_bpe_free(b);
}

static void test_invalid_utf8_and_specials(void **st)
{
    (void)st;
    sl_bpe *b = load("gpt2");
    sl_bpe_state *s = sl_bpe_state_new(b);
    sl_err e = {{0}};
    /* Invalid bytes: never a crash; GPT-2 has a token for every byte, so
     * the bytes come back unchanged. */
    const char bad[] = "ok \xff\xfe\xc0\x80 x\xe2\x82 end\xed\xa0\x80";
    sl_ids ids = {0};
    assert_int_equal(sl_bpe_encode(b, s, bad, sizeof bad - 1, SL_SPECIAL_PARSE, &ids, &e), 0);
    sl_buf dec = {0};
    assert_int_equal(sl_bpe_decode(b, ids.v, ids.n, &dec, &e), 0);
    assert_int_equal(dec.len, sizeof bad - 1);
    assert_memory_equal(dec.data, bad, sizeof bad - 1);
    sl_buf_free(&dec);
    /* --special=error names the byte offset */
    ids.n = 0;
    assert_int_equal(sl_bpe_encode(b, s, "abc <|endoftext|>", 17, SL_SPECIAL_ERROR, &ids, &e), -1);
    assert_non_null(strstr(e.msg, "byte 4"));
    /* decode refuses unknown ids */
    uint32_t big = 60000;
    assert_int_equal(sl_bpe_decode(b, &big, 1, &dec, &e), -1);
    assert_non_null(strstr(e.msg, "60000"));
    assert_int_equal(sl_bpe_vocab_size(b), 50257);
    assert_int_equal(sl_bpe_token_id(b, "<|endoftext|>"), 50256);
    sl_buf_free(&dec);
    sl_ids_free(&ids);
    sl_bpe_state_free(s);
    sl_bpe_free(b);
}

static void sha256_vectors(void)
{
    char fp[72];
    sl_sha256_fingerprint("", 0, fp);
    assert_string_equal(fp, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sl_sha256_fingerprint("abc", 3, fp);
    assert_string_equal(fp, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sl_sha256_fingerprint(two, strlen(two), fp);
    assert_string_equal(fp, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    for (int i = 0; i < 1000000; i += 999) /* odd chunk sizes exercise buffering */
        sl_sha256_update(&h, million + i, i + 999 <= 1000000 ? 999 : (size_t)(1000000 - i));
    sl_sha256_final(&h, d);
    assert_int_equal(d[0], 0xcd);
    assert_int_equal(d[1], 0xc7);
    assert_int_equal(d[31], 0xd0);
    free(million);
    sl_bpe *b = load("neox-tokenizer.json");
    assert_string_equal(sl_bpe_fingerprint(b),
                        "sha256:56ac4821e129d2c520fdaba60abd920fa852ada51b45c0dd52bbb6bd8c985ade");
    sl_bpe_free(b);
}

/* The FIPS vectors through the portable code and through the SHA
 * extensions (where the CPU has them), then both on random data of every
 * length up to 300 bytes and random chunkings: the same digests. */
static void test_sha256(void **st)
{
    (void)st;
    sl_sha256_set_hw(0);
    assert_int_equal(sl_sha256_hw(), 0);
    sha256_vectors();
    sl_sha256_set_hw(1);
    print_message("SHA-256: %s\n", sl_sha256_hw() ? "SHA extensions and portable code compared"
                                                  : "portable code only (no SHA extensions)");
    sha256_vectors();
    uint8_t buf[4096];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t n = 0; n <= sizeof buf; n = n < 300 ? n + 1 : n * 2 + 7) {
        if (n > sizeof buf)
            n = sizeof buf;
        uint8_t d[2][32];
        for (int hw = 0; hw < 2; hw++) {
            sl_sha256_set_hw(hw);
            sl_sha256 h;
            sl_sha256_init(&h);
            size_t i = 0;
            while (i < n) { /* chunks of 1..130 bytes: partial and whole blocks */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                size_t k = 1 + (size_t)(x % 130);
                k = k < n - i ? k : n - i;
                sl_sha256_update(&h, buf + i, k);
                i += k;
            }
            sl_sha256_final(&h, d[hw]);
        }
        assert_memory_equal(d[0], d[1], 32);
        if (n == sizeof buf)
            break;
    }
    sl_sha256_set_hw(1);
}

/* tests/data/bpepipe/decode.jsonl: {"tok": NAME, "ids": [...], "decoded": HF's decode} */
static void test_decode_chain(void **st)
{
    (void)st;
    char dir[4096], *text;
    const char *src = getenv("SLUICE_SRC");
    size_t n, lines = 0, bad = 0;
    sl_err e = {{0}};
    snprintf(dir, sizeof dir, "%s/tests/data/bpepipe/decode.jsonl", src ? src : ".");
    if (sl_read_file(dir, &text, &n, &e))
        fail_msg("%s", e.msg);
    sl_bpe *tok[2] = {0};
    static const char *const names[2] = {"affix", "suffix-dec"};
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/tests/data/bpepipe/%s.json", src ? src : ".", names[i]);
        if (!(tok[i] = sl_bpe_load(dir, &e)))
            fail_msg("%s", e.msg);
        assert_int_equal(tok[i]->dec_chain, 1);
    }
    for (char *p = text; p < text + n;) {
        char *nl = memchr(p, '\n', (size_t)(text + n - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(text + n - p);
        sl_json_doc *d = sl_json_parse(p, len, NULL, &e);
        assert_non_null(d);
        const sl_json *o = sl_json_root(d), *ids = sl_json_get(o, "ids"), *want = sl_json_get(o, "decoded");
        sl_bpe *b = tok[strcmp(sl_json_get_str(o, "tok"), "affix") != 0];
        uint32_t v[64];
        assert_true(ids->n <= 64);
        for (size_t i = 0; i < ids->n; i++) {
            int64_t x;
            assert_true(sl_json_is_int(ids->kids[i], &x));
            v[i] = (uint32_t)x;
        }
        sl_buf out = {0};
        assert_int_equal(sl_bpe_decode(b, v, ids->n, &out, &e), 0);
        if ((out.len != want->str_len || memcmp(out.data ? out.data : "", want->str, out.len)) && bad++ < 3)
            fprintf(stderr, "decode of line %zu: '%.*s', HF '%s'\n", lines + 1, (int)out.len, out.data, want->str);
        sl_buf_free(&out);
        sl_json_free(d);
        lines++;
        p += len + 1;
    }
    assert_int_equal(lines, 400);
    assert_int_equal(bad, 0);
    /* an id beyond the vocabulary is an error there too */
    uint32_t big = sl_bpe_vocab_size(tok[0]);
    sl_buf out = {0};
    assert_int_equal(sl_bpe_decode(tok[0], &big, 1, &out, &e), -1);
    sl_buf_free(&out);
    for (int i = 0; i < 2; i++)
        sl_bpe_free(tok[i]);
    free(text);
}

/* The dense merge grid (pairs of ids below SL_GRID_IDS) holds exactly the
 * merge table's entries there, with the ids by one offset where every
 * merge's id is its rank plus one offset, else by rank; either way the ids
 * follow the merges' ranks. */
static void check_grid(const sl_bpe *b, int ranked)
{
    assert_non_null(b->merge_grid);
    assert_int_equal(b->merge_grid_ranked, ranked);
    size_t in_grid = 0, cells = 0;
    for (size_t q = 0; q <= b->merge_mask; q++) {
        const sl_merge_slot *m = &b->merges[q];
        if (m->key == UINT64_MAX)
            continue;
        uint32_t l = (uint32_t)(m->key >> 32), r = (uint32_t)m->key;
        if (ranked)
            assert_int_equal(b->merge_rank_id[m->rank], m->id);
        else
            assert_int_equal((int64_t)m->id - (int64_t)m->rank, b->merge_grid_off);
        if (l < SL_GRID_IDS && r < SL_GRID_IDS) {
            in_grid++;
            assert_int_equal(b->merge_grid[(size_t)l * SL_GRID_IDS + r], m->rank);
        }
    }
    for (size_t i = 0; i < (size_t)SL_GRID_IDS * SL_GRID_IDS; i++)
        cells += b->merge_grid[i] != UINT32_MAX;
    assert_int_equal(cells, in_grid);
}

static void expect_ids(sl_bpe *b, const char *text, const uint32_t *want, size_t n)
{
    sl_bpe_state *s = sl_bpe_state_new(b);
    sl_ids got = {0};
    sl_err e = {{0}};
    assert_int_equal(sl_bpe_encode(b, s, text, strlen(text), SL_SPECIAL_PLAIN, &got, &e), 0);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got.v[i], want[i]);
    sl_ids_free(&got);
    sl_bpe_state_free(s);
}

static void test_merge_grid(void **st)
{
    (void)st;
    const char *files[] = {"gpt2", "neox-tokenizer.json"};
    for (int f = 0; f < 2; f++) {
        sl_bpe *b = load(files[f]);
        check_grid(b, 0);
        sl_bpe_free(b);
    }
    /* "a b" (rank 0), "b c" (1), "ab c" (2): in "bcab" the a-b pair merges
     * first, then b-c; in "abc", a-b, then ab-c. "ab" and "bc" take ids 3
     * and 4 (one offset: ids by offset) or 4 and 3 (ids by rank). */
    for (int ranked = 0; ranked < 2; ranked++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"pre_tokenizer\":" BL ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"c\":2,"
                 "\"ab\":%d,\"bc\":%d,\"abc\":5},\"merges\":[\"a b\",\"b c\",\"ab c\"]}}",
                 3 + ranked, 4 - ranked);
        sl_err e = {{0}};
        sl_bpe *b = sl_bpe_load_mem(json, strlen(json), NULL, 0, "t.json", &e);
        if (!b)
            fail_msg("%s", e.msg);
        check_grid(b, ranked);
        uint32_t ab = 3 + (uint32_t)ranked, bc = 4 - (uint32_t)ranked;
        expect_ids(b, "abc", (const uint32_t[]){5}, 1);
        expect_ids(b, "bcab", (const uint32_t[]){bc, ab}, 2);
        expect_ids(b, "cba", (const uint32_t[]){2, 1, 0}, 3);
        sl_bpe_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),           cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_decode_chain),     cmocka_unit_test(test_invalid_utf8_and_specials),
        cmocka_unit_test(test_heap_equals_scan), cmocka_unit_test(test_piece_caches),
        cmocka_unit_test(test_tiny_tokenizer),   cmocka_unit_test(test_long_runs),
        cmocka_unit_test(test_merge_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
