/* Normalizers against Hugging Face tokenizers on every code point:
 * tests/data/bpe/hf-nf.txt holds HF's NFC and NFKC of each code point X alone
 * and of 'a' X U+0316 (reordering, composition) wherever they change the
 * text, and hf-lower.txt HF's Lowercase of each code point it changes (both
 * probed from HF by scripts/gen/gen_pretok_classes.py). For all 1,112,064 scalar
 * values, sluice must give exactly HF's result (the input itself when the
 * fixture has no line). HF's normalization tables are Unicode 9.0 and its
 * lowercase Unicode 16.0; ICU 72 knows 15.0: this is what pins the filter
 * and the table in tokenize/normalizers/normalize.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "base/rng.h"
#include "stream/io.h"
#include "tokenize/models/bpe_internal.h"

static char *path(const char *rel)
{
    const char *src = getenv("SLUICE_SRC");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/bpe/%s", src ? src : ".", rel);
    return buf;
}

static sl_bpe *with_normalizer(const char *type)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"normalizer\":{\"type\":\"%s\"},\"pre_tokenizer\":{\"type\":\"ByteLevel\"},"
             "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}",
             type);
    sl_err e = {{0}};
    sl_bpe *b = sl_bpe_load_mem(json, strlen(json), NULL, 0, type, &e);
    if (!b)
        fail_msg("%s", e.msg);
    return b;
}

/* Expected results: per code point and probe, an index into lines (or -1). */
typedef struct {
    int32_t *idx; /* [cp * 2 + probe] */
    char **res;
    size_t *len;
    size_t n;
} expect;

static void load_expect(const char *file, const char *form, expect *x)
{
    x->idx = malloc(sizeof *x->idx * 0x110000 * 2);
    memset(x->idx, 0xff, sizeof *x->idx * 0x110000 * 2);
    x->res = NULL;
    x->len = NULL;
    x->n = 0;
    char *t;
    size_t n;
    sl_err e = {{0}};
    assert_int_equal(sl_read_file(path(file), &t, &n, &e), 0);
    for (char *l = t; l < t + n;) {
        char *nl = strchr(l, '\n');
        *nl = 0;
        char f[8], hex[256];
        unsigned cp;
        int probe = 0;
        int ok = form ? sscanf(l, "%7s %X %d %255s", f, &cp, &probe, hex) == 4 && !strcmp(f, form)
                      : sscanf(l, "%X %255s", &cp, hex) == 2;
        if (l[0] != '#' && ok) {
            size_t hl = strlen(hex) / 2;
            char *r = malloc(hl + 1);
            for (size_t i = 0; i < hl; i++) {
                unsigned v;
                sscanf(hex + 2 * i, "%2x", &v);
                r[i] = (char)v;
            }
            x->res = realloc(x->res, (x->n + 1) * sizeof *x->res);
            x->len = realloc(x->len, (x->n + 1) * sizeof *x->len);
            x->res[x->n] = r;
            x->len[x->n] = hl;
            x->idx[cp * 2 + (unsigned)probe] = (int32_t)x->n++;
        }
        l = nl + 1;
    }
    free(t);
}

static void free_expect(expect *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->res[i]);
    free(x->res);
    free(x->len);
    free(x->idx);
}

static void check_all(const char *type, const char *file, const char *form, int probes)
{
    sl_bpe *b = with_normalizer(type);
    sl_norm_scratch s = {0}; /* the normalizer runs without a BPE state */
    expect x;
    load_expect(file, form, &x);
    assert_true(x.n > 500);
    sl_buf out = {0};
    sl_err e = {{0}};
    size_t bad = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        for (int probe = 0; probe < probes; probe++) {
            char in[16];
            size_t n = 0;
            if (probe)
                in[n++] = 'a';
            n += sl_utf8_encode(in + n, cp);
            if (probe)
                in[n++] = (char)0xCC, in[n++] = (char)0x96; /* U+0316 */
            assert_int_equal(sl_normalize(&b->norm, &s, in, n, &out, &e), 0);
            int32_t k = x.idx[cp * 2 + (uint32_t)probe];
            const char *want = k >= 0 ? x.res[k] : in;
            size_t wl = k >= 0 ? x.len[k] : n;
            if (out.len != wl || memcmp(out.data, want, wl)) {
                if (bad++ < 10)
                    fprintf(stderr, "%s U+%04X probe %d differs from HF\n", type, cp, probe);
            }
        }
    }
    assert_int_equal(bad, 0);
    sl_buf_free(&out);
    free_expect(&x);
    sl_norm_scratch_free(&s);
    sl_bpe_free(b);
}

static void test_nfc(void **st)
{
    (void)st;
    check_all("NFC", "hf-nf.txt", "NFC", 2);
}

static void test_nfkc(void **st)
{
    (void)st;
    check_all("NFKC", "hf-nf.txt", "NFKC", 2);
}

static void test_lowercase(void **st)
{
    (void)st;
    check_all("Lowercase", "hf-lower.txt", NULL, 1);
}

/* ICU's normal form of a whole string, in one call (the reference for the
 * stretch-by-stretch normalization, on characters Unicode 9.0 has, where
 * HF's filter changes nothing). */
static size_t icu_whole(const char *form, const char *in, size_t n, char *out, size_t cap)
{
    UErrorCode e = U_ZERO_ERROR;
    const UNormalizer2 *nf = !strcmp(form, "NFC") ? unorm2_getNFCInstance(&e) : unorm2_getNFKCInstance(&e);
    UChar a[1024], b[4096];
    int32_t len, got, need;
    u_strFromUTF8(a, 1024, &len, in, (int32_t)n, &e);
    got = unorm2_normalize(nf, a, len, b, 4096, &e);
    u_strToUTF8(out, (int32_t)cap, &need, b, got, &e);
    assert_false(U_FAILURE(e));
    return (size_t)need;
}

/* Random strings of characters that combine, reorder, compose across each
 * other or decompose (marks, Hangul jamo, compatibility forms) between
 * ASCII and Latin-1: the normalizer hands ICU only the stretches that can
 * change, so its result must be ICU's on the whole string. */
static void test_stretches(void **st)
{
    (void)st;
    static const char *const alpha[] = {"a",
                                        "e",
                                        " ",
                                        "Z",
                                        "\xC3\xA9" /* é */,
                                        "\xC2\xA0" /* NBSP: NFKC changes it */,
                                        "\xC2\xBD" /* ½ */,
                                        "\xCC\x81" /* U+0301 */,
                                        "\xCC\x96" /* U+0316 */,
                                        "\xCC\xA3" /* U+0323 */,
                                        "\xCD\x82" /* U+0342 */,
                                        "\xE1\x84\x80" /* U+1100 L */,
                                        "\xE1\x85\xA1" /* U+1161 V */,
                                        "\xE1\x86\xA8" /* U+11A8 T */,
                                        "\xEA\xB0\x80" /* U+AC00 LV */,
                                        "\xE2\x80\x99" /* right quote */,
                                        "\xE2\x84\xAB" /* Angstrom */,
                                        "\xEF\xAC\x81" /* fi */,
                                        "\xE2\x91\xA0" /* circled 1 */,
                                        "\xE1\xBA\x9B" /* U+1E9B */,
                                        "\xE4\xB8\xAD" /* CJK */,
                                        "\xCE\xA9" /* Omega */,
                                        "\xCD\x85" /* ypogegrammeni */};
    const char *forms[] = {"NFC", "NFKC"};
    uint64_t rng = 9;
    for (int f = 0; f < 2; f++) {
        sl_bpe *b = with_normalizer(forms[f]);
        sl_norm_scratch s = {0};
        sl_buf out = {0};
        sl_err e = {{0}};
        for (int iter = 0; iter < 20000; iter++) {
            char in[256], want[1024];
            size_t n = 0, k = sl_rng_below(&rng, 24);
            for (size_t i = 0; i < k; i++) {
                const char *c = alpha[sl_rng_below(&rng, sizeof alpha / sizeof *alpha)];
                memcpy(in + n, c, strlen(c));
                n += strlen(c);
            }
            size_t wl = icu_whole(forms[f], in, n, want, sizeof want);
            assert_int_equal(sl_normalize(&b->norm, &s, in, n, &out, &e), 0);
            if (out.len != wl || memcmp(out.data, want, wl))
                fail_msg("%s of '%.*s' differs from ICU on the whole string", forms[f], (int)n, in);
        }
        sl_buf_free(&out);
        sl_norm_scratch_free(&s);
        sl_bpe_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nfc),
        cmocka_unit_test(test_nfkc),
        cmocka_unit_test(test_lowercase),
        cmocka_unit_test(test_stretches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
