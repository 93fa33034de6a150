/* Stage views (docs/shards.md section 3): cutting stored rows of L tokens
 * at a stage length l (dividing L or not) must tile every view row exactly,
 * keep the stored token order, and still let each document be reassembled
 * from its pieces. Expected values come from the documents themselves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "shard/pack.h"
#include "shard/view.h"
#include "base/rng.h"

#define L 64
#define NDOCS 40

static uint32_t stream[1 << 16]; /* stored rows, concatenated */
static size_t n_stream;
static uint32_t docs[NDOCS][200];
static size_t doc_len[NDOCS];
static sl_piece saved[4096];
static size_t n_saved, row_first[512];
static size_t n_rows;

static int keep_row(void *ctx, const sl_row *r, sl_err *err)
{
    (void)ctx;
    (void)err;
    memcpy(stream + n_stream, r->tokens, L * sizeof(uint32_t));
    n_stream += L;
    row_first[n_rows++] = n_saved;
    for (size_t i = 0; i < r->n_pieces; i++)
        saved[n_saved++] = r->pieces[i];
    row_first[n_rows] = n_saved;
    return 0;
}

typedef struct {
    uint32_t l;
    uint64_t last_row;
    uint32_t last_end;
    uint64_t n_pieces;
    uint32_t got[NDOCS][201];
    size_t got_len[NDOCS];
} vctx;

static int on_piece(void *vc, uint64_t vr, const sl_piece *p, const uint32_t *tok, sl_err *err)
{
    (void)err;
    vctx *c = vc;
    assert_true(p->length > 0);
    assert_true(p->offset + p->length <= c->l);
    /* pieces come in view order: rows non-decreasing, offsets increasing within a row */
    if (vr == c->last_row)
        assert_true(p->offset >= c->last_end);
    else
        assert_true(vr > c->last_row || c->last_row == UINT64_MAX);
    c->last_row = vr;
    c->n_pieces++;
    c->last_end = p->offset + p->length;
    /* the tokens are those of the stored sequence at that position */
    assert_memory_equal(tok, stream + vr * c->l + p->offset, p->length * sizeof(uint32_t));
    /* and the document's own tokens at doc_offset */
    assert_int_equal(p->doc_offset, c->got_len[p->doc]);
    memcpy(c->got[p->doc] + p->doc_offset, tok, p->length * sizeof(uint32_t));
    c->got_len[p->doc] += p->length;
    return 0;
}

static void test_views(void **state)
{
    (void)state;
    uint64_t rng = 11;
    sl_pack_opts o = {.seq_len = L, .eos = 1, .bos = SL_NO_TOKEN, .pad = 0};
    sl_err err = {{0}};
    sl_packer *p = sl_packer_new(&o, keep_row, NULL, &err);
    for (int i = 0; i < NDOCS; i++) {
        doc_len[i] = (size_t)sl_rng_below(&rng, 199);
        for (size_t k = 0; k < doc_len[i]; k++)
            docs[i][k] = 2 + (uint32_t)sl_rng_below(&rng, 500);
        assert_int_equal(sl_packer_add(p, (uint64_t)i, "x", 1, docs[i], doc_len[i], NULL, &err), 0);
    }
    assert_int_equal(sl_packer_finish(p, &err), 0);
    sl_packer_free(p);
    const uint32_t lens[] = {8, 16, 24, 40, 64, 72, 128};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        vctx *c = calloc(1, sizeof *c);
        c->l = lens[li];
        c->last_row = UINT64_MAX;
        uint64_t count = 0;
        for (size_t r = 0; r < n_rows; r++) {
            sl_row row = {.index = r,
                          .tokens = stream + r * L,
                          .n_pieces = row_first[r + 1] - row_first[r],
                          .pieces = saved + row_first[r]};
            for (size_t i = 0; i < row.n_pieces; i++) { /* the count formula sluice stats uses */
                uint64_t g = r * L + row.pieces[i].offset;
                count += (g + row.pieces[i].length - 1) / c->l - g / c->l + 1;
            }
            assert_int_equal(sl_view_row(&row, L, c->l, on_piece, c, &err), 0);
        }
        for (int i = 0; i < NDOCS; i++) {
            assert_int_equal(c->got_len[i], doc_len[i] + 1);
            assert_memory_equal(c->got[i], docs[i], doc_len[i] * sizeof(uint32_t));
            assert_int_equal(c->got[i][doc_len[i]], 1);
        }
        assert_int_equal(count, c->n_pieces); /* stats' formula counts what the view yields */
        free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_views)};
    return cmocka_run_group_tests_name("shard_view", tests, NULL, NULL);
}
