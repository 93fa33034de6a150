/* The tokenizer interface (tokenize/tokenizer.h) and the stages on it
 * (sl_tokenize_text, sl_detok_run):
 * - every file form is recognised by content and reports its family, vocab
 *   size, special ids (from the files' added tokens) and the fingerprint
 *   (sha256 of the file bytes, values from sha256sum);
 * - encoding through the interface gives Hugging Face's ids on the test
 *   corpus (fixtures of tests/bpe/gen_expected.py, both special modes) and
 *   decoding HF's text;
 * - the character family: byte ids are the bytes, a code point vocabulary
 *   file is recognised by content, the vocabulary travels in the header;
 * - the document stage writes the same stream for 1, 2 and 3 threads and
 *   batches of one document or many, and sl_detok_run decodes it back to
 *   HF's decoded text; its failures carry their codes. */
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

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/chartok.h"
#include "tokenize/detok.h"
#include "tokenize/docpipe.h"
#include "tokenize/json_skim.h"
#include "tokenize/tokenizer.h"
#include "tokenize/tokenizer_impl.h"

static const char *data(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[8][4096];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf[k];
}

static char tmpdir[64];

static const char *tmp(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_file(const char *path, const char *text)
{
    assert_int_equal(sl_test_write(path, text, strlen(text)), 0);
}

static sl_tokenizer *load(const char *path)
{
    sl_err e = {{0}};
    sl_tokenizer *t = sl_tokenizer_load(path, NULL, &e);
    if (!t)
        fail_msg("%s: %s", path, e.msg);
    return t;
}

static void test_load_by_content(void **state)
{
    (void)state;
    static const struct {
        const char *path, *family, *name, *fp;
        uint32_t vocab;
        int64_t eos, pad;
    } cases[] = {
        {"neox-tokenizer.json", "bpe", "bpe:neox-tokenizer.json",
         "sha256:56ac4821e129d2c520fdaba60abd920fa852ada51b45c0dd52bbb6bd8c985ade", 50277, 0, 1},
        {"tiny-tokenizer.json", "bpe", "bpe:tiny-tokenizer.json",
         "sha256:cdcade0122ba324657f2acf34190c9e91738693e4a75bb047d193f4bd7bf56e0", 604, 0, -1},
        /* vocab.json followed by merges.txt */
        {"gpt2", "bpe", "bpe:gpt2", "sha256:00f404d36600411e497efb3df08d3b4e094f0820e2595afcb7cbd0c4353d4fcb", 50257,
         50256, -1},
        {"gpt2/vocab.json", "bpe", "bpe:vocab.json",
         "sha256:00f404d36600411e497efb3df08d3b4e094f0820e2595afcb7cbd0c4353d4fcb", 50257, 50256, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_tokenizer *t = load(data(cases[i].path));
        assert_string_equal(sl_tokenizer_family(t), cases[i].family);
        assert_string_equal(sl_tokenizer_name(t), cases[i].name);
        assert_string_equal(sl_tokenizer_fingerprint(t), cases[i].fp);
        assert_int_equal(sl_tokenizer_vocab_size(t), cases[i].vocab);
        assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), cases[i].eos);
        assert_int_equal(sl_tokenizer_special(t, SL_TOK_PAD), cases[i].pad);
        assert_int_equal(sl_tokenizer_special(t, SL_TOK_BOS), -1);
        assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), -1);
        assert_int_equal(sl_tokenizer_token_id(t, "<|endoftext|>"), cases[i].eos);
        sl_ts_header h;
        sl_tokenizer_header(t, &h);
        assert_int_equal(h.modality, SL_MOD_TEXT);
        assert_int_equal(h.vocab_size, cases[i].vocab);
        assert_int_equal(h.eos, cases[i].eos);
        assert_int_equal(h.pad, cases[i].pad < 0 ? SL_TS_NO_ID : cases[i].pad);
        assert_int_equal(h.bos, SL_TS_NO_ID);
        assert_string_equal(h.fingerprint, cases[i].fp);
        assert_string_equal(h.tokenizer, cases[i].name);
        assert_true(!h.extra_json || !*h.extra_json);
        assert_false(sl_tokenizer_in_header(&h));
        sl_ts_header_free(&h);
        sl_tokenizer_free(t);
    }
    /* the tiny tokenizer's added tokens by their content */
    sl_tokenizer *t = load(data("tiny-tokenizer.json"));
    assert_int_equal(sl_tokenizer_token_id(t, "<|sep|>"), 600);
    assert_int_equal(sl_tokenizer_token_id(t, "[MASK]"), 602);
    assert_int_equal(sl_tokenizer_token_id(t, "no such token"), -1);
    sl_tokenizer_free(t);

    /* what no family reads: the message names the file and the problem */
    sl_err e = {{0}};
    write_file(tmp("wp.json"), "{\"model\":{\"type\":\"Foo\",\"vocab\":{}}}");
    assert_null(sl_tokenizer_load(tmp("wp.json"), NULL, &e));
    assert_non_null(strstr(e.msg, "wp.json: model type 'Foo' is not supported"));
    assert_null(sl_tokenizer_load(tmp("missing.json"), NULL, &e));
    assert_non_null(strstr(e.msg, "missing.json"));
    /* a family asked for by name reads the file as that family */
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.family = "char";
    assert_null(sl_tokenizer_load(data("neox-tokenizer.json"), &o, &e));
    assert_non_null(strstr(e.msg, "not a character vocabulary"));
    o.family = "sentencepiece";
    assert_null(sl_tokenizer_load(data("neox-tokenizer.json"), &o, &e));
    assert_non_null(strstr(e.msg, "no tokenizer family 'sentencepiece'"));
}

/* Each corpus document through the interface: HF's ids for the special
 * mode, and HF's decoded text back. */
static void check_corpus(const char *tok, const char *expected, sl_special_mode mode)
{
    sl_err e = {{0}};
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.special = mode;
    sl_tokenizer *t = sl_tokenizer_load(data(tok), &o, &e);
    assert_non_null(t);
    sl_tok_state *s = sl_tok_state_new(t);
    char *corpus, *want;
    size_t cn, wn;
    assert_int_equal(sl_read_file(data("corpus.jsonl"), &corpus, &cn, &e), 0);
    assert_int_equal(sl_read_file(data(expected), &want, &wn, &e), 0);
    const char *c = corpus, *w = want;
    int docs = 0, specials = 0;
    sl_ids ids = {0};
    sl_buf text = {0};
    while (c < corpus + cn && w < want + wn) {
        const char *ce = memchr(c, '\n', (size_t)(corpus + cn - c)), *we = memchr(w, '\n', (size_t)(want + wn - w));
        assert_non_null(ce);
        assert_non_null(we);
        sl_json_doc *cd = sl_json_parse(c, (size_t)(ce - c), NULL, &e),
                    *wd = sl_json_parse(w, (size_t)(we - w), NULL, &e);
        assert_non_null(cd);
        assert_non_null(wd);
        const sl_json *txt = sl_json_get(sl_json_root(cd), "text");
        const sl_json *arr = sl_json_get(sl_json_root(wd), mode == SL_SPECIAL_PARSE ? "parse" : "plain");
        assert_non_null(txt);
        assert_non_null(arr);
        ids.n = 0;
        assert_int_equal(sl_tokenizer_encode(t, s, txt->str, txt->str_len, &ids, &e), 0);
        int ok = ids.n == arr->n;
        for (size_t i = 0; ok && i < arr->n; i++) {
            int64_t v;
            ok = sl_json_is_int(arr->kids[i], &v) && v == ids.v[i];
        }
        if (!ok)
            fail_msg("%s %s: ids differ from HF on %s", tok, expected, sl_json_get_str(sl_json_root(wd), "id"));
        /* a special token's text is found exactly where HF's ids with and
         * without parsing special tokens differ */
        const sl_json *pa = sl_json_get(sl_json_root(wd), "parse"), *pl = sl_json_get(sl_json_root(wd), "plain");
        int differ = pa->n != pl->n;
        for (size_t i = 0; !differ && i < pa->n; i++)
            differ = pa->kids[i]->num != pl->kids[i]->num;
        size_t at = SIZE_MAX;
        const char *sp = sl_tokenizer_find_special(t, txt->str, txt->str_len, &at);
        if (!sp != !differ)
            fail_msg("%s: %s: special token text %s, HF's parse and plain ids %s", tok,
                     sl_json_get_str(sl_json_root(wd), "id"), sp ? sp : "none", differ ? "differ" : "agree");
        if (sp) {
            assert_true(at + strlen(sp) <= txt->str_len);
            assert_memory_equal(txt->str + at, sp, strlen(sp));
            assert_null(memmem(txt->str, at + strlen(sp) - 1, sp, strlen(sp))); /* the first */
        }
        specials += sp != NULL;
        sl_buf_clear(&text);
        assert_int_equal(sl_tokenizer_decode(t, ids.v, ids.n, &text, &e), 0);
        const sl_json *dec = sl_json_get(sl_json_root(wd), "decoded"); /* of the parse ids; may hold NUL */
        assert_non_null(dec);
        if (mode == SL_SPECIAL_PARSE) {
            assert_int_equal(text.len, dec->str_len);
            assert_memory_equal(text.data ? text.data : "", dec->str, text.len);
        }
        sl_json_free(cd);
        sl_json_free(wd);
        c = ce + 1;
        w = we + 1;
        docs++;
    }
    assert_true(docs > 50);
    assert_true(specials >= 50); /* 72 documents hold <|endoftext|> or <|padding|> */
    assert_true(c >= corpus + cn && w >= want + wn);
    /* an id outside the vocabulary is an error naming its position */
    uint32_t bad[] = {1, sl_tokenizer_vocab_size(t)};
    assert_int_equal(sl_tokenizer_decode(t, bad, 2, &text, &e), -1);
    assert_non_null(strstr(e.msg, "token 1: id"));
    sl_ids_free(&ids);
    sl_buf_free(&text);
    free(corpus);
    free(want);
    sl_tok_state_free(s);
    sl_tokenizer_free(t);
}

static void test_encode_decode_hf(void **state)
{
    (void)state;
    check_corpus("neox-tokenizer.json", "expected-neox.jsonl", SL_SPECIAL_PARSE);
    check_corpus("neox-tokenizer.json", "expected-neox.jsonl", SL_SPECIAL_PLAIN);
    check_corpus("gpt2", "expected-gpt2.jsonl", SL_SPECIAL_PARSE);
    check_corpus("tiny-tokenizer.json", "expected-tiny.jsonl", SL_SPECIAL_PARSE);
    check_corpus("tiny-tokenizer.json", "expected-tiny.jsonl", SL_SPECIAL_PLAIN);
}

/* sl_tokenizer_find_special: the special added tokens of each family
 * (not the other added tokens), the first and longest match, nothing for
 * families whose encoding never parses them. */
static const char *find(const sl_tokenizer *t, const char *text, size_t *at)
{
    *at = SIZE_MAX;
    return sl_tokenizer_find_special(t, text, strlen(text), at);
}

static void test_find_special(void **state)
{
    (void)state;
    size_t at;
    char path[4096];
    sl_tokenizer *t = load(data("neox-tokenizer.json")); /* <|endoftext|>, <|padding|>; space runs not special */
    assert_string_equal(find(t, "a<|endoftext|>b", &at), "<|endoftext|>");
    assert_int_equal(at, 1);
    assert_string_equal(find(t, "x <|padding|><|endoftext|>", &at), "<|padding|>");
    assert_int_equal(at, 2);
    assert_string_equal(find(t, "<<|<|endoftext|>", &at), "<|endoftext|>");
    assert_int_equal(at, 3);
    const char *none[] = {"", "<", "<|", "<|endoftext|", "< |endoftext|>", "<|ENDOFTEXT|>", "a      b", "<|pad|>"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (find(t, none[i], &at))
            fail_msg("found a special token in '%s'", none[i]);
    assert_null(sl_tokenizer_find_special(t, "<|endoftext|>", 12, &at)); /* the length counts, not NUL */
    sl_tokenizer_free(t);
    t = load(data("tiny-tokenizer.json")); /* special <|endoftext|>, <|sep|>; [MASK], fox, Quick are not */
    assert_string_equal(find(t, "the [MASK] fox <|sep|>", &at), "<|sep|>");
    assert_int_equal(at, 15);
    assert_null(find(t, "the [MASK] Quick fox", &at));
    sl_tokenizer_free(t);
    snprintf(path, sizeof path, "%s/tests/data/tok/bert-bge.json", getenv("SLUICE_SRC") ? getenv("SLUICE_SRC") : ".");
    t = load(path); /* [PAD] [UNK] [CLS] [SEP] [MASK]: a common first byte only */
    assert_string_equal(find(t, "a [b] [MASK [SEP]", &at), "[SEP]");
    assert_int_equal(at, 12);
    assert_null(find(t, "[cls] [Mask]", &at));
    sl_tokenizer_free(t);
    /* a tiktoken rank file with the special tokens given */
    snprintf(path, sizeof path, "%s/tests/data/tiktoken/small.tiktoken",
             getenv("SLUICE_SRC") ? getenv("SLUICE_SRC") : ".");
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    sl_err e = {{0}};
    o.pattern = "gpt2";
    o.specials = "<|endoftext|>=7000,<|fim|>=7001";
    t = sl_tokenizer_load(path, &o, &e);
    if (!t)
        fail_msg("%s", e.msg);
    assert_string_equal(find(t, "ab<|fim|>", &at), "<|fim|>");
    assert_int_equal(at, 2);
    sl_tokenizer_free(t);
    /* Mistral's tekken: special tokens starting with '<' or '[' (no
     * common prefix: the scan for their first bytes 16 at a time), against
     * the first position where one matches, the longest there, on random
     * text of their characters, with matches on either side of 16-byte
     * boundaries */
    snprintf(path, sizeof path, "%s/tests/data/tiktoken/tekken-specials.json",
             getenv("SLUICE_SRC") ? getenv("SLUICE_SRC") : ".");
    t = load(path);
    assert_true(t->n_spec == 12 && t->spec_prefix == 0 && t->spec_nfirst == 2);
    assert_string_equal(find(t, "0123456789abcde[INST] x", &at), "[INST]");
    assert_int_equal(at, 15);
    assert_string_equal(find(t, "0123456789abcdef<s>", &at), "<s>");
    assert_int_equal(at, 16);
    assert_null(find(t, "0123456789abcdef[INS] <x> [/INST <s", &at));
    static const char alpha[] = "<[]/sINSTaP_1>";
    srand(7);
    for (int round = 0; round < 3000; round++) {
        char text[80];
        size_t n = (size_t)(rand() % 79);
        for (size_t i = 0; i < n; i++)
            text[i] = rand() % 4 ? 'x' : alpha[rand() % (int)(sizeof alpha - 1)];
        if (n > 8 && rand() % 2) { /* a whole special token somewhere */
            const char *sp = t->spec_text[(size_t)rand() % t->n_spec];
            size_t l = strlen(sp), p = (size_t)rand() % n;
            if (p + l <= n)
                memcpy(text + p, sp, l);
        }
        text[n] = 0;
        const char *want = NULL;
        size_t want_at = SIZE_MAX;
        for (size_t i = 0; i < n && !want; i++)
            for (size_t k = 0; k < t->n_spec; k++) {
                size_t l = strlen(t->spec_text[k]);
                if (l <= n - i && !memcmp(text + i, t->spec_text[k], l) && (!want || l > strlen(want)))
                    want = t->spec_text[k], want_at = i;
            }
        const char *got = find(t, text, &at);
        if (!want != !got || (want && (strcmp(want, got) || at != want_at)))
            fail_msg("'%s': found %s at %zu, want %s at %zu", text, got ? got : "none", at, want ? want : "none",
                     want_at);
    }
    sl_tokenizer_free(t);
    /* never parsed: a SentencePiece .model's control pieces, a byte vocabulary */
    snprintf(path, sizeof path, "%s/tests/data/spm/bpe-bf.model", getenv("SLUICE_SRC") ? getenv("SLUICE_SRC") : ".");
    t = load(path);
    assert_null(find(t, "<s> </s> <unk> <|endoftext|>", &at));
    sl_tokenizer_free(t);
    sl_charvocab *bv = sl_charvocab_bytes();
    assert_int_equal(sl_charvocab_save(bv, tmp("bytes2.json"), &e), 0);
    sl_charvocab_free(bv);
    t = load(tmp("bytes2.json"));
    assert_null(find(t, "<|endoftext|> <eos>", &at));
    sl_tokenizer_free(t);
}

static void test_char_family(void **state)
{
    (void)state;
    sl_err e = {{0}};
    /* bytes: written by sl_charvocab_save, read back by content */
    sl_charvocab *bv = sl_charvocab_bytes();
    assert_int_equal(sl_charvocab_save(bv, tmp("bytes.json"), &e), 0);
    sl_charvocab_free(bv);
    sl_tokenizer *t = load(tmp("bytes.json"));
    assert_string_equal(sl_tokenizer_family(t), "char");
    assert_string_equal(sl_tokenizer_name(t), "char:byte");
    assert_int_equal(sl_tokenizer_vocab_size(t), 258);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_EOS), 256);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_BOS), 257);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), -1);
    assert_int_equal(sl_tokenizer_token_id(t, "a"), 'a');
    assert_int_equal(sl_tokenizer_token_id(t, "<|bos|>"), 257);
    assert_int_equal(sl_tokenizer_token_id(t, "ab"), -1);
    sl_tok_state *s = sl_tok_state_new(t);
    sl_ids ids = {0};
    assert_int_equal(sl_tokenizer_encode(t, s, "h\xc3\xa9", 3, &ids, &e), 0);
    assert_int_equal(ids.n, 3);
    assert_int_equal(ids.v[0], 'h');
    assert_int_equal(ids.v[1], 0xc3);
    assert_int_equal(ids.v[2], 0xa9);
    sl_tok_state_free(s);
    sl_tokenizer_free(t);

    /* code points: vocab[i] is id i, then the specials; unknown -> <|unk|> */
    write_file(tmp("cp.json"), "{\"type\":\"char\",\"unit\":\"codepoint\",\"vocab\":[\"a\",\"\xc3\xa9\",\"z\"],"
                               "\"specials\":[\"<|endoftext|>\",\"<|bos|>\",\"<|unk|>\"]}\n");
    t = load(tmp("cp.json"));
    assert_string_equal(sl_tokenizer_name(t), "char:codepoint");
    assert_int_equal(sl_tokenizer_vocab_size(t), 6);
    assert_int_equal(sl_tokenizer_special(t, SL_TOK_UNK), 5);
    assert_int_equal(sl_tokenizer_token_id(t, "\xc3\xa9"), 1);
    assert_int_equal(sl_tokenizer_token_id(t, "q"), -1);
    s = sl_tok_state_new(t);
    ids.n = 0;
    assert_int_equal(sl_tokenizer_encode(t, s, "z\xc3\xa9qa", 5, &ids, &e), 0);
    uint32_t want[] = {2, 1, 5, 0};
    assert_int_equal(ids.n, 4);
    assert_memory_equal(ids.v, want, sizeof want);
    sl_buf text = {0};
    assert_int_equal(sl_tokenizer_decode(t, ids.v, ids.n, &text, &e), 0);
    assert_int_equal(text.len, strlen("z\xc3\xa9<|unk|>a"));
    assert_memory_equal(text.data, "z\xc3\xa9<|unk|>a", text.len);

    /* the vocabulary travels in the header, with the same fingerprint */
    sl_ts_header h;
    sl_tokenizer_header(t, &h);
    assert_int_equal(h.eos, 3);
    assert_int_equal(h.bos, 4);
    assert_int_equal(h.unk, 5);
    assert_int_equal(h.pad, SL_TS_NO_ID);
    assert_true(sl_tokenizer_in_header(&h));
    sl_tokenizer *th = sl_tokenizer_from_header(&h, "stream", &e);
    assert_non_null(th);
    assert_string_equal(sl_tokenizer_fingerprint(th), sl_tokenizer_fingerprint(t));
    assert_int_equal(sl_tokenizer_vocab_size(th), 6);
    sl_tokenizer_free(th);
    sl_ts_header_free(&h);
    sl_ts_header_init(&h, SL_MOD_TEXT, 10);
    assert_false(sl_tokenizer_in_header(&h));
    assert_null(sl_tokenizer_from_header(&h, "stream", &e));
    assert_non_null(strstr(e.msg, "stream: the stream has no"));
    sl_ts_header_free(&h);
    sl_buf_free(&text);
    sl_ids_free(&ids);
    sl_tok_state_free(s);
    sl_tokenizer_free(t);
}

static char *slurp(const char *path)
{
    sl_err e = {{0}};
    char *t;
    size_t n;
    if (sl_read_file(path, &t, &n, &e))
        fail_msg("%s", e.msg);
    t = realloc(t, n + 1);
    t[n] = 0;
    return t;
}

static void test_stages(void **state)
{
    (void)state;
    sl_err e = {{0}};
    sl_tokenizer_opts to = SL_TOKENIZER_OPTS_INIT;
    to.special = SL_SPECIAL_PARSE;
    sl_tokenizer *t = sl_tokenizer_load(data("neox-tokenizer.json"), &to, &e);
    assert_non_null(t);
    const char *in[] = {data("corpus.jsonl")};
    sl_docreader_opts ro = {.field = "text", .invalid_utf8 = SL_UTF8_REPLACE, .quiet = 1};
    char *first = NULL;
    size_t first_n = 0;
    static const struct {
        int threads;
        size_t batch;
    } runs[] = {{1, 0}, {2, 0}, {3, 0}, {2, 1}, {3, 700}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        sl_docpipe_opts po = SL_DOCPIPE_OPTS_INIT;
        po.threads = runs[i].threads;
        po.batch_bytes = runs[i].batch;
        po.append = 0;
        sl_docreader_stats st;
        assert_int_equal(sl_tokenize_text(t, in, 1, &ro, &po, tmp("c.tok"), &st, &e), 0);
        assert_true(st.docs > 50);
        char *got;
        size_t n;
        assert_int_equal(sl_read_file(tmp("c.tok"), &got, &n, &e), 0);
        if (!first) {
            first = got;
            first_n = n;
        } else {
            assert_int_equal(n, first_n);
            assert_memory_equal(got, first, n);
            free(got);
        }
    }
    free(first);

    /* back to text: HF's decoded text of each document, plus the eos */
    sl_detok_opts dopt = SL_DETOK_OPTS_INIT;
    dopt.tokenizer = data("neox-tokenizer.json");
    sl_detok_stats ds;
    assert_int_equal(sl_detok_run(&dopt, tmp("c.tok"), tmp("d.jsonl"), &ds, &e), 0);
    assert_int_equal(ds.repaired, 0);
    char *d = slurp(tmp("d.jsonl")), *w = slurp(data("expected-neox.jsonl"));
    size_t docs = 0;
    for (char *dl = d, *wl = w; *dl && *wl; docs++) {
        char *de = strchr(dl, '\n'), *we = strchr(wl, '\n');
        sl_json_doc *dj = sl_json_parse(dl, (size_t)(de - dl), NULL, &e),
                    *wj = sl_json_parse(wl, (size_t)(we - wl), NULL, &e);
        assert_non_null(dj);
        assert_non_null(wj);
        const sl_json *dt = sl_json_get(sl_json_root(dj), "text");
        const sl_json *wt = sl_json_get(sl_json_root(wj), "decoded"); /* may hold NUL */
        assert_string_equal(sl_json_get_str(sl_json_root(dj), "id"), sl_json_get_str(sl_json_root(wj), "id"));
        assert_int_equal(dt->str_len, wt->str_len + strlen("<|endoftext|>"));
        assert_memory_equal(dt->str, wt->str, wt->str_len);
        assert_string_equal(dt->str + wt->str_len, "<|endoftext|>");
        sl_json_free(dj);
        sl_json_free(wj);
        dl = de + 1;
        wl = we + 1;
    }
    assert_int_equal(docs, ds.docs);
    free(d);
    free(w);
    /* skip_special leaves the eos out */
    dopt.skip_special = 1;
    assert_int_equal(sl_detok_run(&dopt, tmp("c.tok"), tmp("d.jsonl"), &ds, &e), 0);
    d = slurp(tmp("d.jsonl"));
    assert_null(strstr(d, "<|endoftext|>\"")); /* no document ends with it any more */
    free(d);

    /* failures: another tokenizer's fingerprint, no tokenizer at all;
     * nothing is left at the output */
    unlink(tmp("d.jsonl"));
    dopt.tokenizer = data("gpt2");
    assert_int_equal(sl_detok_run(&dopt, tmp("c.tok"), tmp("d.jsonl"), &ds, &e), SL_DETOK_MISMATCH);
    assert_non_null(strstr(e.msg, "the stream was made with tokenizer sha256:56ac4821"));
    assert_int_equal(access(tmp("d.jsonl"), F_OK), -1);
    dopt.tokenizer = NULL;
    assert_int_equal(sl_detok_run(&dopt, tmp("c.tok"), tmp("d.jsonl"), &ds, &e), SL_DETOK_NO_TOKENIZER);
    assert_int_equal(access(tmp("d.jsonl"), F_OK), -1);
    dopt.tokenizer = data("gpt2");
    dopt.force = 1; /* neox ids beyond gpt2's vocabulary */
    assert_int_equal(sl_detok_run(&dopt, tmp("c.tok"), tmp("d.jsonl"), &ds, &e), SL_DETOK_FAIL);
    assert_non_null(strstr(e.msg, "is not in the vocabulary"));
    assert_int_equal(access(tmp("d.jsonl"), F_OK), -1);
    sl_tokenizer_free(t);
}

/* The probes' skim of model.type (json_skim.h) gives the full parse's answer
 * or gives up: on every tokenizer.json fixture, and on documents built to
 * trip it (escapes, nesting, strings holding braces and quotes, duplicate
 * keys: the last wins, as in sl_json_get, truncation). */
static int parsed_type(const char *text, size_t len, char *out, size_t cap)
{
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
    const sl_json *root = doc ? sl_json_root(doc) : NULL;
    const sl_json *model = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
    int r = doc ? (mt ? 1 : 0) : -2;
    if (mt)
        snprintf(out, cap, "%s", mt);
    sl_json_free(doc);
    return r;
}

/* A span of the skim holds the value the parser keeps for that key (the
 * same JSON once both are written out), or is empty when the key is absent
 * (or, for model.type, when model is not an object). */
static void check_span(const char *text, sl_skim_span sp, const sl_json *parent, const char *key)
{
    const sl_json *v = parent && parent->type == SL_JSON_OBJECT ? sl_json_get(parent, key) : NULL;
    if (!v) {
        assert_int_equal(sp.len, 0);
        return;
    }
    assert_true(sp.len > 0);
    sl_err e = {{0}};
    sl_json_doc *d = sl_json_parse(text + sp.at, sp.len, NULL, &e);
    assert_non_null(d);
    sl_buf x = {0}, y = {0};
    sl_json_put_value(&x, sl_json_root(d));
    sl_json_put_value(&y, v);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    sl_buf_free(&x);
    sl_buf_free(&y);
    sl_json_free(d);
}

static void check_skim(const char *text, size_t len, int want_known)
{
    char a[32] = "", b[64] = "";
    int rs = sl_tokjson_model_type(text, len, a, sizeof a), rp = parsed_type(text, len, b, sizeof b);
    if (want_known)
        assert_true(rs >= 0);
    if (rs < 0 || rp == -2) /* gave up, or not JSON at all (the loader reports it) */
        return;
    assert_int_equal(rs, rp);
    if (rs == 1)
        assert_string_equal(a, b);
    sl_tokjson_spans sp;
    assert_int_equal(sl_tokjson_skim(text, len, &sp), 0);
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
    const sl_json *root = sl_json_root(doc);
    check_span(text, sp.model, root, "model");
    check_span(text, sp.pre_tokenizer, root, "pre_tokenizer");
    check_span(text, sp.decoder, root, "decoder");
    check_span(text, sp.type, root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL, "type");
    sl_json_free(doc);
}

static void test_skim_model_type(void **state)
{
    (void)state;
    const char *src = getenv("SLUICE_SRC");
    static const char *const files[] = {"bpe/neox-tokenizer.json",       "bpe/llama3-tiny-tokenizer.json",
                                        "bpe/qwen2-tiny-tokenizer.json", "tok/bert-lower.json",
                                        "tok/wordlevel-a.json",          "tok/mistral-v1.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[4096], *text = NULL;
        size_t len;
        sl_err e = {{0}};
        snprintf(path, sizeof path, "%s/tests/data/%s", src ? src : ".", files[i]);
        if (sl_read_file(path, &text, &len, &e))
            fail_msg("%s", e.msg);
        check_skim(text, len, 1);
        for (size_t cut = 1; cut < 4096 && cut < len; cut = cut * 3 + 1) /* truncated: never a wrong answer */
            check_skim(text, len - cut, 0);
        free(text);
    }
    static const char *const docs[] = {
        "{\"model\":{\"type\":\"WordPiece\"}}",
        "{\"x\":\"}{\\\"model\\\":\",\"model\":{\"vocab\":{\"\\\"}\":1,\"{[\":2},\"type\":\"Unigram\"}}",
        "{\"model\":{\"type\":\"BPE\"},\"model\":{\"type\":\"WordLevel\"}}",
        "{\"model\":{\"type\":\"BPE\",\"type\":\"Unigram\"}}",
        "{\"model\":{\"ty\\u0070e\":\"Unigram\"}}",
        "{\"model\":{\"type\":\"Uni\\u0067ram\"}}",
        "{\"model\":[1,2]}",
        "{\"model\":{\"vocab\":[[\"a\",-1.5e3],[\"]\",0]]}}",
        " \n{ \"added_tokens\" : [ { \"content\" : \"[CLS]\" } ] , \"model\" : { \"type\" : \"WordPiece\" } } ",
        "{}",
        "[]",
        "{\"model\":{\"type\":7}}",
        "{\"decoder\":{\"type\":\"Fuse\"},\"model\":{\"type\":\"BPE\",\"vocab\":{}},\"pre_tokenizer\":null,"
        "\"decoder\":{\"type\":\"ByteLevel\"}}",
        "{\"model\":{\"type\":\"BPE\"},\"model\":7}",
        "{\"model\":{\"type\":\"BPE\"},\"model\":{\"vocab\":{}}}",
        "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"ByteLevel\"}]},\"model\":{}}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
        check_skim(docs[i], strlen(docs[i]), 0);
    char t[32];
    assert_int_equal(sl_tokjson_model_type(docs[0], strlen(docs[0]), t, sizeof t), 1);
    assert_string_equal(t, "WordPiece");
    assert_int_equal(sl_tokjson_model_type(docs[1], strlen(docs[1]), t, sizeof t), 1);
    assert_string_equal(t, "Unigram");
    assert_int_equal(sl_tokjson_model_type(docs[2], strlen(docs[2]), t, sizeof t), 1);
    assert_string_equal(t, "WordLevel");
    assert_int_equal(sl_tokjson_model_type(docs[6], strlen(docs[6]), t, sizeof t), 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-test-tokenizer.XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_by_content), cmocka_unit_test(test_encode_decode_hf),
        cmocka_unit_test(test_char_family),     cmocka_unit_test(test_stages),
        cmocka_unit_test(test_find_special),    cmocka_unit_test(test_skim_model_type),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
