/* The Unigram lattice (tokenize/models/unigram.c: a double array, a branchless
 * update, scores set ahead only as far as a piece reaches, the path read
 * back in one pass) against a plain statement of the same Viterbi: every
 * piece compared as a string at every character start, candidates taken in
 * order of start with a strict comparison, in float (SentencePiece 0.2.3:
 * user-defined pieces scored 0.1 per byte after the first, and every score
 * ahead less the path's score once that passes 1e5 in magnitude, written
 * here as its EncodeOptimized does it, with a frontier and set flags) and in
 * double (Hugging Face). Random vocabularies over a few one- to four-byte
 * characters, scores from a small set so that ties are common, user-defined
 * and unused pieces, texts with characters no piece covers, and texts of
 * 200k characters whose path scores pass the reset; with many pieces, also
 * pieces of up to 61 bytes that share a stem (so that the layout's sort
 * compares keys past 8, 16 and 24 bytes) and texts that hold it; the
 * segmentation (bytes and ids) must be the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tokenize/models/unigram.h"

#define MAXP 512

#define MAXLEN 64 /* the longest piece, in bytes */

typedef struct vocab {
    char s[MAXP][MAXLEN];
    size_t len[MAXP];
    double score[MAXP];
    int kind[MAXP];
    int dup[MAXP]; /* the string of an earlier piece: the earlier id is the piece */
    int n;
    size_t max_len; /* the longest piece */
} vocab;

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* characters of 1 to 4 bytes; "z" is never in a piece, and the zero byte
 * (7) only in the rounds with many pieces */
static const char *const CH[] = {"a", "b", "c", "\xC3\xA9", "\xE6\xBC\xA2", "\xF0\x9F\x99\x82", "z"};

static size_t put_char(char *o, int c)
{
    if (c == 7) {
        *o = 0;
        return 1;
    }
    size_t l = strlen(CH[c]);
    memcpy(o, CH[c], l);
    return l;
}

typedef struct ref_piece {
    size_t start, end;
    int64_t id;
} ref_piece;

/* The plain Viterbi; returns the number of pieces in out. */
static size_t reference(const vocab *v, int hf, int64_t unk, double min_s, const char *s, size_t n, ref_piece *out)
{
    double *bd = calloc(n + 1, sizeof *bd);
    float *bf = calloc(n + 1, sizeof *bf);
    long *start = malloc((n + 1) * sizeof *start);
    int64_t *id = malloc((n + 1) * sizeof *id);
    for (size_t i = 0; i <= n; i++)
        start[i] = -1;
    size_t frontier = 0;
    for (size_t at = 0; at < n;) {
        if (!hf && (bf[at] < -100000.0f || bf[at] > 100000.0f)) {
            const float off = bf[at];
            for (size_t i = at; i <= frontier; i++)
                if (i == at || start[i] >= 0)
                    bf[i] -= off;
        }
        uint8_t c = (uint8_t)s[at];
        size_t ml = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (ml > n - at)
            ml = n - at;
        int single = 0;
        for (size_t len = 1; len <= v->max_len && at + len <= n; len++)
            for (int p = 0; p < v->n; p++) {
                if (v->dup[p] || v->kind[p] == SL_UNI_UNUSED || v->len[p] != len || memcmp(v->s[p], s + at, len))
                    continue;
                double sc = v->kind[p] == SL_UNI_USER ? (double)(float)(0.1 * (double)(len - 1)) : v->score[p];
                size_t e = at + len;
                if (e > frontier)
                    frontier = e;
                int better;
                if (hf) {
                    double cand = sc + bd[at];
                    better = start[e] < 0 || cand > bd[e];
                    if (better)
                        bd[e] = cand;
                } else {
                    float cand = (float)sc + bf[at];
                    better = start[e] < 0 || cand > bf[e];
                    if (better)
                        bf[e] = cand;
                }
                if (better)
                    start[e] = (long)at, id[e] = p;
                if (len == ml)
                    single = 1;
            }
        if (!single) {
            size_t e = at + ml;
            if (e > frontier)
                frontier = e;
            int better;
            if (hf) {
                double cand = (min_s - 10.0) + bd[at];
                better = start[e] < 0 || cand > bd[e];
                if (better)
                    bd[e] = cand;
            } else {
                float cand = (float)(min_s - 10.0) + bf[at];
                better = start[e] < 0 || cand > bf[e];
                if (better)
                    bf[e] = cand;
            }
            if (better)
                start[e] = (long)at, id[e] = unk;
        }
        at += ml;
    }
    size_t k = 0;
    for (size_t e = n; e > 0; e = (size_t)start[e])
        k++;
    size_t m = k;
    for (size_t e = n; e > 0; e = (size_t)start[e])
        out[--k] = (ref_piece){(size_t)start[e], e, id[e]};
    free(bd);
    free(bf);
    free(start);
    free(id);
    return m;
}

/* rounds of random vocabularies of up to max_pieces pieces; texts of up
 * to max_chars characters. With many: strings added more than once (one
 * of them 20 times and more), zero bytes in pieces and texts, and enough
 * pieces that the double array's build sorts runs of keys with the same
 * first 8 bytes. */
static void lattice_rounds(int rounds, size_t max_chars, int max_pieces, int many)
{
    static const double scores[] = {-1.0, -2.0, -1.5, -3.0, -0.5, -7.3125, -2.71828, -11.1};
    size_t cap = (many ? MAXLEN + 4 : 4) * max_chars + 8;
    char *text = malloc(cap);
    ref_piece *want = malloc(cap * sizeof *want);
    for (int round = 0; round < rounds; round++) {
        /* with many: a stem of 20 to 50 bytes that long pieces and some
         * texts share, so that keys agree on 8, 16, 24 bytes and more */
        char stem[MAXLEN];
        size_t stem_len = 0;
        while (stem_len < 20 + rnd() % 31)
            stem_len += put_char(stem + stem_len, (int)(rnd() % 6));
        vocab v = {.n = 1 + (int)(rnd() % (uint64_t)(max_pieces - 1))};
        int64_t unk = v.n; /* the unk id is past the pieces */
        double min_s = 0;
        for (int p = 0; p < v.n; p++) {
        again:;
            int nc = 1 + (int)(rnd() % 3);
            size_t l = 0;
            for (int c = 0; c < nc; c++) {
                int ch = (int)(rnd() % (many ? 7 : 6));
                l += put_char(v.s[p] + l, ch == 6 ? 7 : ch);
            }
            if (many && rnd() % 5 == 0) { /* a prefix of the stem, longer than 8 bytes, and up to 2 characters */
                l = 9 + (size_t)(rnd() % (stem_len - 8));
                memcpy(v.s[p], stem, l);
                for (int c = (int)(rnd() % 3); c > 0; c--)
                    l += put_char(v.s[p] + l, (int)(rnd() % 7) == 6 ? 7 : (int)(rnd() % 6));
            }
            if (many && p > 0 && (rnd() % 6 == 0 || (p >= 20 && p < 40))) { /* an earlier string again */
                int q = p < 40 && p >= 20 ? 0 : (int)(rnd() % (uint64_t)p);
                l = v.len[q];
                memcpy(v.s[p], v.s[q], l);
            }
            for (int q = 0; q < p && !v.dup[p]; q++)
                if (v.len[q] == l && !memcmp(v.s[q], v.s[p], l)) {
                    if (!many)
                        goto again; /* one id per string */
                    v.dup[p] = 1;
                }
            v.len[p] = l;
            if (l > v.max_len)
                v.max_len = l;
            v.score[p] = scores[rnd() % (max_chars > 1000 ? 8 : 5)];
            unsigned k = (unsigned)(rnd() % 10);
            v.kind[p] = k < 7 ? SL_UNI_NORMAL : k < 9 ? SL_UNI_USER : SL_UNI_UNUSED;
            if (v.score[p] < min_s)
                min_s = v.score[p];
        }
        for (int hf = 0; hf < 2; hf++) {
            sl_unigram *u = sl_unigram_new((uint32_t)v.n + 1, hf);
            for (int p = 0; p < v.n; p++)
                sl_unigram_add(u, (uint32_t)p, v.s[p], v.len[p], v.score[p], v.kind[p]);
            sl_unigram_set(u, unk, min_s);
            sl_uni_scratch sc = {0};
            for (int t = 0; t < (max_chars > 1000 ? 2 : 10); t++) {
                size_t n = 0,
                       chars = max_chars > 1000 ? max_chars - (size_t)(rnd() % 1000) : (size_t)(rnd() % max_chars);
                for (size_t i = 0; i < chars; i++) {
                    if (many && rnd() % 16 == 0) { /* the stem, or most of it */
                        size_t l = stem_len - (size_t)(rnd() % 4);
                        memcpy(text + n, stem, l);
                        n += l;
                        continue;
                    }
                    n += put_char(text + n, (int)(rnd() % (many ? 8 : 7)));
                }
                if (rnd() % 4 == 0 && n) /* a cut character at the end */
                    n -= (uint8_t)text[n - 1] >= 0x80 && n > 1 ? 1 : 0;
                size_t m = reference(&v, hf, unk, min_s, text, n, want);
                sl_unigram_encode(u, &sc, text, n);
                if (sc.n != m)
                    fail_msg("round %d hf %d text %d: %zu pieces, the reference %zu", round, hf, t, sc.n, m);
                for (size_t i = 0; i < m; i++)
                    if (sc.pieces[i].start != want[i].start || sc.pieces[i].end != want[i].end ||
                        sc.pieces[i].id != want[i].id)
                        fail_msg("round %d hf %d text %d piece %zu: [%u,%u) id %lld, the reference [%zu,%zu) id %lld",
                                 round, hf, t, i, sc.pieces[i].start, sc.pieces[i].end, (long long)sc.pieces[i].id,
                                 want[i].start, want[i].end, (long long)want[i].id);
            }
            sl_uni_scratch_free(&sc);
            sl_unigram_free(u);
        }
    }
    free(text);
    free(want);
}

static void test_lattice_random(void **st)
{
    (void)st;
    lattice_rounds(200, 300, 64, 0);
}

/* Hundreds of pieces, strings added more than once (the first id is the
 * piece), zero bytes: the double array built from the sorted pieces */
static void test_lattice_many(void **st)
{
    (void)st;
    lattice_rounds(40, 200, MAXP, 1);
}

/* 200k characters: SentencePiece's path scores pass 1e5 and are reset
 * (several times at these scores), Hugging Face's stay in double */
static void test_lattice_long(void **st)
{
    (void)st;
    lattice_rounds(3, 200000, 64, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lattice_random),
        cmocka_unit_test(test_lattice_many),
        cmocka_unit_test(test_lattice_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
