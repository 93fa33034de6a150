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

#include "tests/unit/support.h"
#include "tests/unit/support_tokenize.h"

#include "stream/io.h"
#include "base/json.h"
#include "base/rng.h"
#include "tokenize/models/sp_proto.h"
#include "tokenize/normalizers/norm_precompiled.h"
#include "tokenize/trie.h"
#include "tokenize/tokenizer.h"

static const char *path(const char *rel)
{
    return sl_test_path("tests/data/spm/%s", rel);
}

static sl_tokenizer *load(const char *file)
{
    return sl_tt_load(path(file), NULL, NULL);
}

/* The model's texts.jsonl encodes and decodes as expected-NAME.jsonl says
 * and its random id lists decode as decode-NAME.jsonl says. */
static void check_model(const char *name)
{
    char file[64], exp[96], dec[96];
    snprintf(file, sizeof file, "%s.model", name);
    snprintf(exp, sizeof exp, "expected-%s.jsonl", name);
    snprintf(dec, sizeof dec, "decode-%s.jsonl", name);
    sl_tokenizer *t = load(file);
    assert_string_equal(sl_tokenizer_family(t), "spm");
    assert_true(sl_tt_check_texts(t, file, path("texts.jsonl"), path(exp), 0) > 1000);
    sl_tt_check_decodes(t, file, path(dec), "sentencepiece", 300);
    sl_tokenizer_free(t);
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

/* file written to a temporary (its name in tmpl) and loaded as a
 * SentencePiece model: the tokenizer, or NULL with the message in e. */
static sl_tokenizer *load_tmp(const sl_buf *file, char tmpl[19], sl_err *e)
{
    memcpy(tmpl, "/tmp/sl_spm_XXXXXX", 19);
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, file->data, file->len), (ssize_t)file->len);
    close(fd);
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.family = "spm";
    sl_tokenizer *t = sl_tokenizer_load(tmpl, &o, e);
    unlink(tmpl);
    return t;
}

static void expect_refused(const sl_buf *file, const char *msg)
{
    char tmpl[19];
    sl_err e = {{0}};
    sl_tokenizer *t = load_tmp(file, tmpl, &e);
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
    char *v1 = sl_tt_slurp(path("mistral-v1.model"), &n);
    sl_buf f = {0};
    sl_buf_append(&f, v1, 1000); /* cut inside a piece */
    expect_refused(&f, ": offset ");
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

    for (int k = 0; k < 3; k++) { /* a score of NaN or +-inf: sentencepiece refuses it ("score is NaN or Inf") */
        static const uint32_t bits[] = {0x7fc00000u, 0x7f800000u, 0xff800000u};
        small_model(&f, NULL, 0);
        sl_buf m = {0};
        put_bytes(&m, 1, "c", 1);
        put_varint(&m, 2 << 3 | 5);
        for (int i = 0; i < 4; i++) {
            char c = (char)(bits[k] >> 8 * i);
            sl_buf_append(&m, &c, 1);
        }
        put_bytes(&f, 1, m.data, m.len);
        sl_buf_free(&m);
        expect_refused(&f, "a piece's score is NaN or infinite");
    }

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

/* Parses p[0..n) with the fast way for the usual piece layout and
 * without it: the same outcome, message and values. Returns whether it
 * parsed. */
static int proto_both_ways(const uint8_t *p, size_t n, const char *what)
{
    sl_spm_proto a, b;
    sl_err ea = {{0}}, eb = {{0}};
    sl_spm_proto_fast = 1;
    int ra = sl_spm_proto_parse(p, n, "m.model", &a, &ea);
    sl_spm_proto_fast = 0;
    int rb = sl_spm_proto_parse(p, n, "m.model", &b, &eb);
    sl_spm_proto_fast = 1;
    if (ra != rb || (ra && strcmp(ea.msg, eb.msg)))
        fail_msg("%s: fast way %d (%s), field loop %d (%s)", what, ra, ra ? ea.msg : "", rb, rb ? eb.msg : "");
    if (!ra) {
        if (!sl_spm_proto_same(&a, &b))
            fail_msg("%s: the two ways parse different values", what);
        sl_spm_proto_free(&a);
        sl_spm_proto_free(&b);
    }
    return ra == 0;
}

/* The fast way for the usual piece layout (sp_proto.c, piece_prefix)
 * against the field loop alone: every fixture model, then thousands of
 * copies of the small ones with bytes changed, cut or inserted at random
 * (scores that turn NaN, types out of range, lengths past the end, pieces
 * repeated, fields out of order), each the same both ways. */
static void test_proto_fast(void **state)
{
    (void)state;
    static const char *const files[] = {"mistral-v1.model", "mistral-v3.model", "uni-bf.model", "uni-unk.model",
                                        "bpe-bf.model",     "bpe-unk.model",    "uni-raw.model"};
    uint64_t rng = 0x9e3779b97f4a7c15u;
    int parsed = 0, refused = 0;
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        size_t n;
        char *f = sl_tt_slurp(path(files[k]), &n);
        assert_true(proto_both_ways((const uint8_t *)f, n, files[k]));
        if (n > 300000) { /* the Mistral models: the whole file only */
            free(f);
            continue;
        }
        uint8_t *g = malloc(n + 16);
        char what[96];
        for (int round = 0; round < 1500; round++) {
            memcpy(g, f, n);
            size_t m = n;
            for (int e = 1 + (int)sl_rng_below(&rng, 3); e > 0; e--) {
                /* in the pieces (the file's first fields), rarely a cut */
                size_t at = (size_t)sl_rng_below(&rng, m < 8192 ? m : 8192);
                switch (sl_rng_below(&rng, 16) < 12 ? sl_rng_below(&rng, 2) : 2 + sl_rng_below(&rng, 2)) {
                case 0: g[at] = (uint8_t)sl_rng_below(&rng, 256); break;        /* any byte */
                case 1: g[at] ^= (uint8_t)(1u << sl_rng_below(&rng, 8)); break; /* one bit */
                case 2: m = at; break;                                          /* cut */
                default:                                                        /* a byte inserted */
                    if (m < n + 16) {
                        memmove(g + at + 1, g + at, m - at);
                        g[at] = (uint8_t) "\x0a\x15\x18\x01\x06\x07\x7f\x80"[sl_rng_below(&rng, 8)];
                        m++;
                    }
                }
            }
            snprintf(what, sizeof what, "%s, round %d", files[k], round);
            if (proto_both_ways(g, m, what))
                parsed++;
            else
                refused++;
        }
        free(g);
        free(f);
    }
    /* both outcomes many times */
    assert_true(parsed > 1000);
    assert_true(refused > 1000);
}

/* The message of loading file, less the file's name ("" when it loads),
 * in msg. */
static void load_msg(const sl_buf *file, char *msg, size_t cap)
{
    char tmpl[19];
    sl_err e = {{0}};
    sl_tokenizer *t = load_tmp(file, tmpl, &e);
    snprintf(msg, cap, "%s", t ? "" : e.msg + strlen(tmpl));
    sl_tokenizer_free(t);
}

/* A Unigram model's pieces defined twice are found from the lattice's
 * trie (normal, user-defined, unused) and by a sort (control, unknown),
 * without the piece table a BPE model makes and checks them with
 * (spm_bpe.c): the same model as BPE gives the reference message. Random
 * models of short strings, many defined twice, in every mix of types; and
 * a string that is both a normal and a control piece loads (sentencepiece
 * keeps the two kinds apart) and decodes and looks up as the control one. */
static void test_dups(void **state)
{
    (void)state;
    static const int types[] = {1, 3, 4, 5}; /* normal, control, user-defined, unused */
    static const char *strs[] = {"a", "b", "ab", "ba", "<s>", "aa", "b\xe2\x96\x81"};
    uint64_t x = 88172645463325252u;
    sl_buf f = {0}, g = {0};
    char uni[512], bpe[512];
    int refused = 0;
    for (int round = 0; round < 400; round++) {
        sl_buf_clear(&f);
        put_piece(&f, "<unk>", 2);
        int np = 1 + round % 12;
        for (int i = 0; i < np; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            put_piece(&f, strs[x % 7], types[(x >> 8) % 4]);
        }
        load_msg(&f, uni, sizeof uni);
        sl_buf_clear(&g);
        sl_buf_append(&g, f.data, f.len);
        uint8_t ts[] = {3 << 3, 2}; /* trainer_spec.model_type = BPE */
        put_bytes(&g, 2, ts, 2);
        load_msg(&g, bpe, sizeof bpe);
        if (strcmp(uni, bpe))
            fail_msg("round %d: Unigram '%s', BPE '%s'", round, uni, bpe);
        refused += uni[0] != 0;
    }
    assert_true(refused > 100 && refused < 390); /* both outcomes, many times */

    small_model(&f, NULL, 0); /* <unk> <s> </s> a b ab, then a control "a" */
    put_piece(&f, "a", 3);
    load_msg(&f, uni, sizeof uni);
    assert_string_equal(uni, "");
    small_model(&f, NULL, 0); /* the first repeat by index, of either kind */
    put_piece(&f, "<s>", 3);
    put_piece(&f, "a", 1);
    load_msg(&f, uni, sizeof uni);
    assert_string_equal(uni, ": piece 6 '<s>' is already defined (piece 1)");
    small_model(&f, NULL, 0);
    put_piece(&f, "b", 4);
    put_piece(&f, "b", 5);
    put_piece(&f, "<s>", 3);
    load_msg(&f, uni, sizeof uni);
    assert_string_equal(uni, ": piece 6 'b' is already defined (piece 4)");

    small_model(&f, NULL, 0);
    put_piece(&f, "a", 3); /* id 6: control "a" beside normal "a" (3) */
    char tmpl[19];
    sl_err e = {{0}};
    sl_tokenizer *t = load_tmp(&f, tmpl, &e);
    assert_non_null(t);
    assert_int_equal(sl_tokenizer_token_id(t, "a"), 6);
    assert_int_equal(sl_tokenizer_token_id(t, "b"), 4);
    assert_int_equal(sl_tokenizer_token_id(t, "zz"), -1);
    sl_buf out = {0};
    uint32_t ids[] = {3, 4, 5};
    assert_int_equal(sl_tokenizer_decode(t, ids, 3, &out, &e), 0); /* "a" decodes as the control piece: nothing */
    assert_int_equal(out.len, 3);
    assert_memory_equal(out.data, "bab", 3);
    sl_buf_free(&out);
    sl_tokenizer_free(t);
    sl_buf_free(&f);
    sl_buf_free(&g);
}

/* The normalizer's 16-byte way for stretches of plain ASCII gives the bytes
 * of its one-at-a-time way: random strings of words, runs of spaces, a
 * charsmap rule (A -> a), the first bytes of user-defined pieces (stops),
 * non-ASCII right after ASCII (a combining accent: NFKC joins them),
 * control bytes, for each NormalizerSpec
 * setting; then the same through the uni-bf model (nmt_nfkc charsmap,
 * user-defined pieces), by ids. */
static void test_norm_fast(void **state)
{
    (void)state;
    static const char *const parts[] = {"hello",
                                        "World",
                                        " ",
                                        "  ",
                                        "   ",
                                        "A",
                                        "Ab",
                                        "<",
                                        "<mask>",
                                        "@",
                                        "@@",
                                        "\xC3\xA9",
                                        "\xE2\x96\x81",
                                        "\xEF\xBD\xB1",
                                        "\t",
                                        "\n",
                                        "\x01",
                                        "~",
                                        "0123456789",
                                        "x",
                                        "\x7F",
                                        "\xEF\xBC\xA1",
                                        "#",
                                        "$",
                                        "\xCC\x81",
                                        "e\xCC\x81"};
    const size_t n_parts = sizeof parts / sizeof *parts;
    uint8_t cmb[4 + 4 * 0x43 + 2];
    size_t cmn = one_rule_charsmap(cmb);
    sl_charsmap c;
    sl_err e = {{0}};
    assert_int_equal(sl_charsmap_parse(&c, cmb, cmn, "x", 0, &e), 0);
    sl_trie user = {0};
    sl_trie_add(&user, "<mask>", 6, 1);
    sl_trie_add(&user, "@@", 2, 2);
    sl_trie_add(&user, "#", 1, 3);
    sl_trie_add(&user, "$x", 2, 4);
    sl_trie five = {0}; /* five stops: too many for the fast way, which is then not taken */
    const char *five_first[] = {"!", "%", "&", "*", "+"};
    for (int i = 0; i < 5; i++)
        sl_trie_add(&five, five_first[i], 1, i);
    sl_buf text = {0}, fast = {0}, slow = {0};
    uint64_t rng = 12345;
    size_t compared = 0, long_ones = 0;
    for (int cfg = 0; cfg < 64; cfg++) {
        sl_spm_norm nz = {(cfg & 1) ? &c : NULL, (cfg & 2) ? ((cfg & 32) ? &five : &user) : NULL,
                          (cfg >> 2) & 1,        (cfg >> 3) & 1,
                          (cfg >> 4) & 1,        0};
        for (int k = 0; k < 300; k++) {
            sl_buf_clear(&text);
            size_t m = 1 + sl_splitmix64(&rng) % 40;
            for (size_t i = 0; i < m; i++)
                sl_buf_puts(&text, parts[sl_splitmix64(&rng) % n_parts]);
            sl_spm_norm_fast = 1;
            sl_spm_normalize(&nz, text.data, text.len, &fast);
            sl_spm_norm_fast = 0;
            sl_spm_normalize(&nz, text.data, text.len, &slow);
            sl_spm_norm_fast = 1;
            if (fast.len != slow.len || memcmp(fast.data, slow.data, fast.len))
                fail_msg("config %d: '%s' normalizes to %zu bytes the fast way, %zu the slow way", cfg, text.data,
                         fast.len, slow.len);
            compared++;
            long_ones += text.len > 16;
        }
    }
    assert_true(compared == 64 * 300 && long_ones > compared / 2);
    sl_buf_free(&text);
    sl_buf_free(&fast);
    sl_buf_free(&slow);
    sl_trie_free(&user);
    sl_trie_free(&five);
    sl_charsmap_free(&c);

    /* the whole model: the same ids either way */
    sl_tokenizer *t = load("uni-bf.model");
    sl_tok_state *st = sl_tok_state_new(t);
    sl_ids a = {0}, b = {0};
    for (int k = 0; k < 2000; k++) {
        sl_buf_clear(&text);
        size_t m = 1 + sl_splitmix64(&rng) % 40;
        for (size_t i = 0; i < m; i++)
            sl_buf_puts(&text, parts[sl_splitmix64(&rng) % n_parts]);
        a.n = b.n = 0;
        sl_spm_norm_fast = 1;
        assert_int_equal(sl_tokenizer_encode(t, st, text.data, text.len, &a, &e), 0);
        sl_spm_norm_fast = 0;
        assert_int_equal(sl_tokenizer_encode(t, st, text.data, text.len, &b, &e), 0);
        sl_spm_norm_fast = 1;
        assert_int_equal(a.n, b.n);
        assert_memory_equal(a.v, b.v, a.n * sizeof *a.v);
    }
    sl_ids_free(&a);
    sl_ids_free(&b);
    sl_buf_free(&text);
    sl_tok_state_free(st);
    sl_tokenizer_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mistral),   cmocka_unit_test(test_trained),
                                       cmocka_unit_test(test_charsmap),  cmocka_unit_test(test_norm_fast),
                                       cmocka_unit_test(test_malformed), cmocka_unit_test(test_dups),
                                       cmocka_unit_test(test_proto_fast)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
