/* Nucleotide tokenizers against independent evidence:
 *  - tests/data/dna/hyenadna_token_vectors.tsv (shared reference: ids re-derived
 *    from HyenaDNA's and Caduceus' code paths), every row but the species one
 *    (that one goes through `sluice dna species` in tests/cli/dna_tokenize.sh);
 *  - DNABERT's vocab.txt order as quoted in the reference note
 *    (AAAAAA=5, AAAAAT=6, AAAAAC=7, AAAAAG=8; 4101 ids for k=6);
 *  - properties: decode(encode(x)) == x, reverse complement is an involution,
 *    padding/truncation give exactly L ids with the content in place, the mask
 *    channel marks exactly the lower-case bases. (Thread independence is
 *    checked end to end: tests/cli/dna_tokenize.sh compares -@ 1 and -@ 2.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/unit/support.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dna/nuctok.h"
#include "stream/io.h"
#include "base/json.h"
#include "base/rng.h"

static const char *path_of(const char *rel)
{
    return sl_test_path("tests/data/dna/%s", rel);
}

static size_t parse_ids(const char *s, uint32_t *out, size_t max)
{
    size_t n = 0;
    char *end;
    while (*s && n < max) {
        unsigned long v = strtoul(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (uint32_t)v;
        s = end;
    }
    return n;
}

static void test_hyenadna_vectors(void **state)
{
    (void)state;
    char *data;
    size_t len;
    sl_err err;
    assert_int_equal(sl_read_file(path_of("hyenadna_token_vectors.tsv"), &data, &len, &err), 0);
    char *save = NULL, *line = strtok_r(data, "\n", &save);
    int checked = 0;
    dna_tokens t = {0};
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[4];
        f[0] = line;
        for (int i = 1; i < 4; i++) {
            char *tab = strchr(f[i - 1], '\t');
            assert_non_null(tab);
            *tab = 0;
            f[i] = tab + 1;
        }
        const char *cs = f[0];
        if (!strncmp(cs, "species", 7))
            continue; /* checked end to end by tests/cli/dna_tokenize.sh */
        const char *lp = strstr(cs, "L=");
        assert_non_null(lp);
        uint64_t L = strtoull(lp + 2, NULL, 10);
        dna_tok_opts o;
        dna_tok_opts_default(&o);
        o.add_eos = strstr(cs, "add_eos") != NULL;
        o.n_mode = strstr(cs, "replace_N") ? DNA_N_PAD : DNA_N_TOKEN;
        if (!strncmp(cs, "hyena_hg38", 10)) {
            /* hg38_dataset.py tokenizes the FASTA as it is: no case folding */
            o.case_mode = DNA_CASE_UNK;
            o.max_length = L;
        } else if (!strncmp(cs, "caduceus_hg38", 13)) {
            /* Caduceus: L bases (left-padded), then [SEP], N -> [PAD]: the same as
             * L+1 ids with [SEP] kept inside */
            o.case_mode = DNA_CASE_UNK;
            o.max_length = L + (o.add_eos ? 1 : 0);
            o.n_mode = DNA_N_PAD;
        } else {
            fail_msg("unknown vector case '%s'", cs);
        }
        uint32_t want_data[64], want_target[64];
        size_t nd = parse_ids(f[2], want_data, 64), nt = parse_ids(f[3], want_target, 64);
        dna_tok_encode(&o, f[1], strlen(f[1]), &t);
        /* the trainer's shift: data = ids[:-1], target = ids[1:] */
        assert_int_equal(t.n - 1, nd);
        assert_int_equal(t.n - 1, nt);
        for (size_t i = 0; i < nd; i++) {
            if (t.ids[i] != want_data[i] || t.ids[i + 1] != want_target[i])
                fail_msg("%s: position %zu: got %u/%u, want %u/%u", cs, i, t.ids[i], t.ids[i + 1], want_data[i],
                         want_target[i]);
        }
        checked++;
    }
    assert_int_equal(checked, 5);
    dna_tokens_free(&t);
    free(data);
}

/* Ids from HyenaDNA's CharacterTokenizer itself (executed under transformers
 * 4.26.1 by tests/data/dna/make_reference_vectors.py), as HG38Dataset and
 * SpeciesDataset call it, on 300 random inputs with lower case, N, IUPAC, '.'. */
static void test_executed_hyenadna_vectors(void **state)
{
    (void)state;
    char *data;
    size_t len;
    sl_err err;
    assert_int_equal(sl_read_file(path_of("hyenadna_executed_vectors.tsv"), &data, &len, &err), 0);
    char *save = NULL;
    int rows = 0;
    dna_tokens t = {0};
    uint32_t *want = malloc(4096 * sizeof *want);
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[6];
        f[0] = line;
        for (int i = 1; i < 6; i++) {
            char *tab = strchr(f[i - 1], '\t');
            assert_non_null(tab);
            *tab = 0;
            f[i] = tab + 1;
        }
        const char *seq = strcmp(f[1], "-") ? f[1] : "";
        dna_tok_opts o;
        dna_tok_opts_default(&o);
        o.case_mode = DNA_CASE_UNK; /* the tokenizer never folds case */
        o.add_eos = atoi(f[3]);
        if (!strcmp(f[0], "hg38")) {
            o.max_length = strtoull(f[2], NULL, 10);
            o.n_mode = atoi(f[4]) ? DNA_N_PAD : DNA_N_TOKEN;
        }
        size_t nw = parse_ids(f[5], want, 4096);
        dna_tok_encode(&o, seq, strlen(seq), &t);
        if (t.n != nw || memcmp(t.ids, want, nw * sizeof *want))
            fail_msg("%s '%s' L=%s eos=%s N->PAD=%s: ids differ (got %zu, want %zu)", f[0], seq, f[2], f[3], f[4], t.n,
                     nw);
        rows++;
    }
    assert_int_equal(rows, 600);
    free(want);
    dna_tokens_free(&t);
    free(data);
}

static void test_dnabert_vocab(void **state)
{
    (void)state;
    dna_tok_opts o;
    dna_tok_opts_default(&o);
    o.kmer = 6;
    assert_int_equal(dna_tok_vocab_size(&o), 4101);
    sl_buf x = {0};
    dna_tok_extra_json(&o, &x);
    sl_err err;
    sl_json_doc *d = sl_json_parse(x.data, x.len, NULL, &err);
    assert_non_null(d);
    sl_json *v = sl_json_get(sl_json_root(d), "vocab");
    assert_non_null(v);
    assert_int_equal(v->n, 4101);
    const char *want[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "AAAAAA", "AAAAAT", "AAAAAC", "AAAAAG"};
    for (int i = 0; i < 9; i++)
        assert_string_equal(v->kids[i]->str, want[i]);
    assert_string_equal(v->kids[4100]->str, "GGGGGG");
    sl_json_free(d);
    sl_buf_free(&x);

    dna_tokens t = {0};
    dna_tok_encode(&o, "AAAAAAT", 7, &t); /* seq2kmer: AAAAAA, AAAAAT */
    assert_int_equal(t.n, 2);
    assert_int_equal(t.ids[0], 5);
    assert_int_equal(t.ids[1], 6);
    dna_tok_encode(&o, "GGGGGGNA", 8, &t);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.ids[0], 4100);
    assert_int_equal(t.ids[1], DNABERT_UNK);
    assert_int_equal(t.ids[2], DNABERT_UNK);
    o.n_mode = DNA_N_DROP;
    dna_tok_encode(&o, "GGGGGGNA", 8, &t);
    assert_int_equal(t.n, 1);
    o.n_mode = DNA_N_TOKEN;
    o.kmer_stride = 3;
    o.add_eos = 1;
    dna_tok_encode(&o, "ACGTACGTACGT", 12, &t); /* starts 0, 3, 6 */
    assert_int_equal(t.n, 4);
    assert_int_equal(t.ids[3], DNABERT_SEP);
    dna_tok_encode(&o, "ACG", 3, &t); /* shorter than k: only [SEP] */
    assert_int_equal(t.n, 1);
    dna_tokens_free(&t);
}

/* DNABERT's own vocab.txt files (CRC of the lines) and seq2kmer + vocabulary
 * lookup, run by make_reference_vectors.py on jerryji1993/DNABERT. */
static void test_executed_dnabert_vectors(void **state)
{
    (void)state;
    char *data;
    size_t len;
    sl_err err;
    assert_int_equal(sl_read_file(path_of("dnabert_executed_vectors.tsv"), &data, &len, &err), 0);
    char *save = NULL;
    int vocabs = 0, rows = 0;
    dna_tokens t = {0};
    uint32_t want[128];
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            char *tab = strchr(f[i - 1], '\t');
            if (!tab)
                break;
            *tab = 0;
            f[i] = tab + 1;
        }
        dna_tok_opts o;
        dna_tok_opts_default(&o);
        o.kmer = atoi(f[0]);
        if (!strcmp(f[1], "vocab")) {
            sl_buf x = {0}, joined = {0};
            dna_tok_extra_json(&o, &x);
            sl_json_doc *d = sl_json_parse(x.data, x.len, NULL, &err);
            sl_json *v = sl_json_get(sl_json_root(d), "vocab");
            assert_int_equal(v->n, strtoul(f[2], NULL, 10));
            for (size_t i = 0; i < v->n; i++) {
                if (i)
                    sl_buf_putc(&joined, '\n');
                sl_buf_append(&joined, v->kids[i]->str, v->kids[i]->str_len);
            }
            char crc[16];
            snprintf(crc, sizeof crc, "%08lx", crc32(0, (const Bytef *)joined.data, (uInt)joined.len));
            assert_string_equal(crc, f[3]);
            sl_json_free(d);
            sl_buf_free(&x);
            sl_buf_free(&joined);
            vocabs++;
            continue;
        }
        size_t nw = parse_ids(f[2], want, 128);
        dna_tok_encode(&o, f[1], strlen(f[1]), &t);
        assert_int_equal(t.n, nw);
        assert_memory_equal(t.ids, want, nw * sizeof *want);
        rows++;
    }
    assert_int_equal(vocabs, 4);
    assert_int_equal(rows, 100);
    dna_tokens_free(&t);
    free(data);
}

static void test_kmer_round_trip(void **state)
{
    (void)state;
    uint64_t st = 11;
    dna_tokens t = {0};
    sl_buf dec = {0};
    for (int it = 0; it < 200; it++) {
        dna_tok_opts o;
        dna_tok_opts_default(&o);
        o.kmer = 1 + (int)sl_rng_below(&st, 8);
        size_t n = sl_rng_below(&st, 300);
        char *s = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            s[i] = "ACGTacgt"[sl_rng_below(&st, 8)];
        s[n] = 0;
        dna_tok_encode(&o, s, n, &t);
        assert_int_equal(t.n, n >= (size_t)o.kmer ? n - (size_t)o.kmer + 1 : 0);
        sl_buf_clear(&dec);
        assert_int_equal(dna_tok_decode(&o, t.ids, t.n, &dec), 0);
        /* k-mer i (space-separated) is s[i..i+k) upper-cased */
        for (size_t i = 0; i < t.n; i++)
            for (int j = 0; j < o.kmer; j++)
                assert_int_equal(dec.data[i * (size_t)(o.kmer + 1) + (size_t)j],
                                 toupper((unsigned char)s[i + (size_t)j]));
        free(s);
    }
    dna_tokens_free(&t);
    sl_buf_free(&dec);
}

static void test_char_round_trip_and_policies(void **state)
{
    (void)state;
    uint64_t st = 12;
    dna_tokens t = {0};
    sl_buf dec = {0}, want = {0};
    for (int it = 0; it < 500; it++) {
        dna_tok_opts o;
        dna_tok_opts_default(&o);
        o.case_mode = (int)sl_rng_below(&st, 3);
        o.n_mode = (int)sl_rng_below(&st, 3);
        size_t n = sl_rng_below(&st, 400);
        char *s = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            s[i] = "ACGTNacgtnRy.-"[sl_rng_below(&st, 14)];
        s[n] = 0;
        dna_tok_encode(&o, s, n, &t);
        sl_buf_clear(&dec);
        assert_int_equal(dna_tok_decode(&o, t.ids, t.n, &dec), 0);
        /* expected text, written from the policy definitions */
        sl_buf_clear(&want);
        size_t tokpos = 0;
        for (size_t i = 0; i < n; i++) {
            char c = s[i];
            int lower = islower((unsigned char)c) != 0;
            char u = (char)toupper((unsigned char)c);
            int known = strchr("ACGTN", u) != NULL;
            if (lower && o.case_mode == DNA_CASE_UNK)
                known = 0;
            if (known && u == 'N' && o.n_mode == DNA_N_DROP)
                continue;
            if (!known)
                sl_buf_puts(&want, "[UNK]");
            else if (u == 'N' && o.n_mode == DNA_N_PAD)
                sl_buf_puts(&want, "[PAD]");
            else
                sl_buf_putc(&want, u);
            if (o.case_mode == DNA_CASE_KEEP)
                assert_int_equal(t.mask[tokpos], lower);
            tokpos++;
        }
        assert_int_equal(tokpos, t.n);
        assert_int_equal(dec.len, want.len);
        if (want.len)
            assert_memory_equal(dec.data, want.data, want.len);
        free(s);
    }
    dna_tokens_free(&t);
    sl_buf_free(&dec);
    sl_buf_free(&want);
}

static void test_padding_truncation(void **state)
{
    (void)state;
    uint64_t st = 13;
    dna_tokens t = {0}, plain = {0};
    for (int it = 0; it < 500; it++) {
        dna_tok_opts o, p;
        dna_tok_opts_default(&o);
        o.add_eos = (int)sl_rng_below(&st, 2);
        o.pad_left = (int)sl_rng_below(&st, 2);
        o.max_length = 2 + sl_rng_below(&st, 40);
        o.case_mode = DNA_CASE_KEEP;
        p = o;
        p.max_length = 0;
        p.add_eos = 0;
        size_t n = sl_rng_below(&st, 60);
        char s[64];
        for (size_t i = 0; i < n; i++)
            s[i] = "ACGTNacgtn"[sl_rng_below(&st, 10)];
        dna_tok_encode(&o, s, n, &t);
        dna_tok_encode(&p, s, n, &plain);
        size_t L = (size_t)o.max_length, body = o.add_eos ? L - 1 : L;
        size_t kept = n < body ? n : body, pad = L - kept - (o.add_eos ? 1 : 0);
        if (n == 0 && !o.add_eos) { /* Hugging Face does not pad an empty input */
            assert_int_equal(t.n, 0);
            continue;
        }
        assert_int_equal(t.n, L);
        size_t b0 = o.pad_left ? pad : 0;
        for (size_t i = 0; i < kept; i++) {
            assert_int_equal(t.ids[b0 + i], plain.ids[i]);
            assert_int_equal(t.mask[b0 + i], plain.mask[i]);
        }
        if (o.add_eos)
            assert_int_equal(t.ids[b0 + kept], DNA_ID_SEP);
        size_t p0 = o.pad_left ? 0 : L - pad;
        for (size_t i = 0; i < pad; i++) {
            assert_int_equal(t.ids[p0 + i], DNA_ID_PAD);
            assert_int_equal(t.mask[p0 + i], 0);
        }
    }
    dna_tokens_free(&t);
    dna_tokens_free(&plain);
}

static void test_mask_json(void **state)
{
    (void)state;
    dna_tok_opts o;
    dna_tok_opts_default(&o);
    o.case_mode = DNA_CASE_KEEP;
    dna_tokens t = {0};
    dna_tok_encode(&o, "acGTnnAa", 8, &t);
    sl_buf b = {0};
    dna_tokens_mask_json(&t, &b);
    assert_string_equal(b.data, "[[0,2],[4,6],[7,8]]");
    o.max_length = 10; /* left padding shifts the runs */
    dna_tok_encode(&o, "acGTnnAa", 8, &t);
    sl_buf_clear(&b);
    dna_tokens_mask_json(&t, &b);
    assert_string_equal(b.data, "[[2,4],[6,8],[9,10]]");
    /* k-mers: masked when any of their bases is */
    o.max_length = 0;
    o.kmer = 3;
    dna_tok_encode(&o, "acGTAA", 6, &t);
    sl_buf_clear(&b);
    dna_tokens_mask_json(&t, &b);
    assert_string_equal(b.data, "[[0,2]]");
    assert_int_equal(t.ids[0], DNABERT_FIRST + (0 * 16 + 2 * 4 + 3)); /* ACG: A=0 C=2 G=3 */
    sl_buf_free(&b);
    dna_tokens_free(&t);
}

static void test_revcomp(void **state)
{
    (void)state;
    char s[] = "ACGTNRacgtn.";
    dna_revcomp(s, strlen(s));
    assert_string_equal(s, ".nacgtRNACGT"); /* IUPAC R kept, as HyenaDNA */
    uint64_t st = 14;
    for (int it = 0; it < 200; it++) {
        char a[101], b[101];
        size_t n = sl_rng_below(&st, 100);
        for (size_t i = 0; i < n; i++)
            a[i] = "ACGTNacgtnRYKM"[sl_rng_below(&st, 14)];
        memcpy(b, a, n);
        dna_revcomp(b, n);
        dna_revcomp(b, n);
        assert_memory_equal(a, b, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hyenadna_vectors),
        cmocka_unit_test(test_executed_hyenadna_vectors),
        cmocka_unit_test(test_dnabert_vocab),
        cmocka_unit_test(test_executed_dnabert_vectors),
        cmocka_unit_test(test_kmer_round_trip),
        cmocka_unit_test(test_char_round_trip_and_policies),
        cmocka_unit_test(test_padding_truncation),
        cmocka_unit_test(test_mask_json),
        cmocka_unit_test(test_revcomp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
