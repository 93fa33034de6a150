/* Packing properties (docs/shards.md section 2), checked against the input
 * documents themselves: for random mixes of document lengths (empty, 1, L,
 * L+1, 100*L and random) and every packing mode,
 *  - every row has L tokens, its pieces are sorted, disjoint and inside it,
 *    and every position outside the pieces holds the pad id;
 *  - each piece's tokens equal the document sequence ([BOS] doc [EOS]) at its
 *    document offset, so a piece with offset 0 starts a document;
 *  - concatenating a document's pieces in offset order gives back the whole
 *    sequence (or its first L tokens when truncated, nothing when dropped);
 *  - sequential packing pads only the last row; --no-split never splits a
 *    document that fits in a row; the recurrent layout continues each slot's
 *    document in the same batch row of the next step;
 *  - with memory-token slots (recurrent layout, --memory-tokens K
 *    [--memory-write]): positions [0, K) and [L-K, L) of every row hold the
 *    memory id, pieces lie between them, a continued document resumes at K,
 *    and memory is counted apart from padding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/pack.h"
#include "shard/packed.h"
#include "base/rng.h"

#define PAD 7
#define MEM 5
#define EOS 3
#define BOS 2
#define MAXDOCS 64

typedef struct {
    size_t n;
    uint32_t *tok;
    /* expected sequence */
    uint32_t *seq;
    size_t seq_len;
    int status;
    /* reassembly */
    uint32_t *got;
    size_t got_len;
    size_t pieces;
} tdoc;

typedef struct {
    sl_pack_opts o;
    tdoc docs[MAXDOCS];
    size_t n_docs;
    uint64_t rows;
    uint64_t pad_rows_before_last; /* rows with padding other than the last one */
    /* recurrent: per slot, the (doc, end offset) of the last piece in the previous step */
    int64_t slot_doc[16];
    uint64_t slot_end[16];
    int fail_after; /* callback error injection: -1 = never */
} ctx_t;

/* memory slots of the next run_case (0: none) */
static uint32_t g_mem;
static int g_mem_write;

static int on_row(void *vc, const sl_row *r, sl_err *err)
{
    ctx_t *c = vc;
    uint32_t L = c->o.seq_len;
    uint32_t mr = c->o.mem_tokens, mw = c->o.mem_write ? c->o.mem_tokens : 0;
    if (c->fail_after >= 0 && (int)r->index == c->fail_after)
        return sl_errf(err, "injected");
    assert_int_equal(r->index, c->rows);
    c->rows++;
    uint32_t end = 0;
    uint64_t covered = 0;
    char *mark = calloc(L, 1);
    for (size_t i = 0; i < r->n_pieces; i++) {
        const sl_piece *p = &r->pieces[i];
        assert_true(p->offset >= end);
        assert_true(p->length > 0);
        assert_true(p->offset + p->length <= L);
        assert_true(p->offset >= mr && p->offset + p->length <= L - mw);
        end = p->offset + p->length;
        covered += p->length;
        assert_true(p->doc < c->n_docs);
        tdoc *d = &c->docs[p->doc];
        char idbuf[32];
        snprintf(idbuf, sizeof idbuf, "doc%llu", (unsigned long long)p->doc);
        assert_int_equal(p->id_len, strlen(idbuf));
        assert_memory_equal(p->id, idbuf, p->id_len);
        assert_true(p->doc_offset + p->length <= d->seq_len);
        assert_memory_equal(r->tokens + p->offset, d->seq + p->doc_offset, p->length * sizeof(uint32_t));
        /* pieces of a document arrive in order and contiguous */
        assert_int_equal(p->doc_offset, d->got_len);
        memcpy(d->got + d->got_len, r->tokens + p->offset, p->length * sizeof(uint32_t));
        d->got_len += p->length;
        d->pieces++;
        memset(mark + p->offset, 1, p->length);
    }
    for (uint32_t i = 0; i < L; i++)
        if (i < mr || i >= L - mw)
            assert_int_equal(r->tokens[i], MEM);
        else if (!mark[i])
            assert_int_equal(r->tokens[i], PAD);
    free(mark);
    if (covered + mr + mw < L)
        c->pad_rows_before_last++;
    if (c->o.layout == SL_LAYOUT_RECURRENT) {
        uint32_t b = (uint32_t)(r->index % c->o.batch);
        /* a slot whose document was unfinished continues it at offset 0
         * (after the read memory: K) */
        if (c->slot_doc[b] >= 0 && c->slot_end[b] < c->docs[c->slot_doc[b]].seq_len) {
            assert_true(r->n_pieces > 0);
            assert_int_equal(r->pieces[0].doc, (uint64_t)c->slot_doc[b]);
            assert_int_equal(r->pieces[0].offset, mr);
            assert_int_equal(r->pieces[0].doc_offset, c->slot_end[b]);
        }
        if (r->n_pieces) {
            const sl_piece *last = &r->pieces[r->n_pieces - 1];
            c->slot_doc[b] = (int64_t)last->doc;
            c->slot_end[b] = last->doc_offset + last->length;
        } else {
            c->slot_doc[b] = -1;
        }
    }
    return 0;
}

/* Length mix: the edge cases, then random lengths up to 3L. */
static size_t pick_len(uint64_t *rng, size_t i, uint32_t L)
{
    static const int edge[] = {0, 1, -1, -2, -3, 0, 1, -1};
    if (i < 8) {
        int e = edge[i];
        return e >= 0 ? (size_t)e : e == -1 ? L : e == -2 ? L + 1 : 100 * (size_t)L;
    }
    return (size_t)sl_rng_below(rng, 3 * (uint64_t)L + 1);
}

static void run_case(uint32_t L, int layout, uint32_t batch, int no_split, int long_mode, int bos, int eos,
                     uint64_t seed)
{
    ctx_t *c = calloc(1, sizeof *c);
    c->fail_after = -1;
    c->o = (sl_pack_opts){.seq_len = L,
                          .eos = eos ? EOS : SL_NO_TOKEN,
                          .bos = bos ? BOS : SL_NO_TOKEN,
                          .pad = PAD,
                          .layout = layout,
                          .batch = batch,
                          .no_split = no_split,
                          .long_mode = long_mode,
                          .mem_tokens = g_mem,
                          .mem_id = g_mem ? MEM : SL_NO_TOKEN,
                          .mem_write = g_mem_write};
    for (int b = 0; b < 16; b++)
        c->slot_doc[b] = -1;
    uint64_t rng = seed;
    c->n_docs = 8 + sl_rng_below(&rng, MAXDOCS - 8);
    /* shuffle the edge cases among the random ones by seed */
    sl_err err = {{0}};
    sl_packer *p = sl_packer_new(&c->o, on_row, c, &err);
    assert_non_null(p);
    uint64_t total_seq = 0;
    for (size_t i = 0; i < c->n_docs; i++) {
        tdoc *d = &c->docs[i];
        d->n = pick_len(&rng, (i + seed) % c->n_docs < 8 ? (i + seed) % c->n_docs : 8, L);
        d->tok = malloc((d->n + 1) * sizeof *d->tok);
        for (size_t k = 0; k < d->n; k++)
            d->tok[k] = 10 + (uint32_t)sl_rng_below(&rng, 1000); /* never a special id */
        d->seq = malloc((d->n + 2) * sizeof *d->seq);
        d->got = malloc((d->n + 2) * sizeof *d->got);
        size_t q = 0;
        if (bos)
            d->seq[q++] = BOS;
        memcpy(d->seq + q, d->tok, d->n * sizeof *d->tok);
        q += d->n;
        if (eos)
            d->seq[q++] = EOS;
        d->seq_len = q;
        total_seq += q;
        char id[32];
        snprintf(id, sizeof id, "doc%zu", i);
        assert_int_equal(sl_packer_add(p, i, id, strlen(id), d->tok, d->n, &d->status, &err), 0);
    }
    assert_int_equal(sl_packer_finish(p, &err), 0);
    const sl_pack_stats *st = sl_packer_stats(p);
    assert_int_equal(st->rows, c->rows);
    assert_int_equal(st->docs, c->n_docs);
    assert_int_equal(st->doc_tokens + st->pad_tokens + st->mem_tokens, c->rows * L);
    assert_int_equal(st->mem_tokens, c->rows * (g_mem + (g_mem_write ? g_mem : 0)));
    uint64_t placed = 0;
    for (size_t i = 0; i < c->n_docs; i++) {
        tdoc *d = &c->docs[i];
        if (d->seq_len == 0) {
            assert_int_equal(d->status, SL_DOC_EMPTY);
            assert_int_equal(d->got_len, 0);
        } else if (d->status == SL_DOC_DROPPED) {
            assert_true(no_split && long_mode == SL_LONG_DROP && d->seq_len > L);
            assert_int_equal(d->got_len, 0);
        } else if (d->status == SL_DOC_TRUNCATED) {
            assert_true(no_split && long_mode == SL_LONG_TRUNCATE && d->seq_len > L);
            assert_int_equal(d->got_len, L);
            assert_memory_equal(d->got, d->seq, L * sizeof(uint32_t));
        } else {
            assert_int_equal(d->status, SL_DOC_PLACED);
            assert_int_equal(d->got_len, d->seq_len); /* round trip */
            assert_memory_equal(d->got, d->seq, d->seq_len * sizeof(uint32_t));
            if (no_split && d->seq_len <= L)
                assert_int_equal(d->pieces, 1);
        }
        placed += d->got_len;
    }
    assert_int_equal(placed, st->doc_tokens);
    if (layout == SL_LAYOUT_SEQUENTIAL && !no_split) {
        assert_int_equal(c->rows, (total_seq + L - 1) / L);
        assert_true(c->pad_rows_before_last <= 1);
    }
    if (layout == SL_LAYOUT_RECURRENT)
        assert_int_equal(c->rows % batch, 0);
    sl_packer_free(p);
    for (size_t i = 0; i < c->n_docs; i++) {
        free(c->docs[i].tok);
        free(c->docs[i].seq);
        free(c->docs[i].got);
    }
    free(c);
}

static void test_sequential(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 30; seed++)
        for (int m = 0; m < 4; m++)
            run_case(m < 2 ? 8 : 64, SL_LAYOUT_SEQUENTIAL, 0, 0, 0, m & 1, 1, seed * 7 + (uint64_t)m);
    run_case(16, SL_LAYOUT_SEQUENTIAL, 0, 0, 0, 0, 0, 99); /* no markers at all */
}

static void test_no_split(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++)
        for (int lm = 0; lm < 3; lm++)
            run_case(seed % 2 ? 8 : 32, SL_LAYOUT_SEQUENTIAL, 0, 1, lm, (int)(seed % 3 == 0), 1,
                     seed * 13 + (uint64_t)lm);
}

static void test_recurrent(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++)
        for (uint32_t b = 1; b <= 5; b += 2)
            run_case(seed % 2 ? 8 : 24, SL_LAYOUT_RECURRENT, b, 0, 0, 0, 1, seed * 31 + b);
}

static void test_memory_slots(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++)
        for (uint32_t b = 1; b <= 5; b += 2) {
            g_mem = 1 + (uint32_t)(seed % 3); /* 1..3 */
            g_mem_write = (int)(seed % 2);
            run_case(seed % 2 ? 8 : 24, SL_LAYOUT_RECURRENT, b, 0, 0, (int)(seed % 4 == 0), 1, seed * 37 + b);
        }
    g_mem = 0;
    g_mem_write = 0;
}

/* One hand-computed case: L 16, K 2 with write memory (12 data positions
 * per row), one slot, one document of 14 tokens + EOS:
 * row 0 = M M 10..21 M M, row 1 = M M 22 23 EOS P P P P P P P P P M M. */
static uint32_t cap_rows[4][16];
static sl_piece cap_first[4];
static int cap_n;

static int cap_row(void *vc, const sl_row *r, sl_err *err)
{
    (void)vc;
    (void)err;
    assert_true(cap_n < 4);
    memcpy(cap_rows[cap_n], r->tokens, sizeof cap_rows[0]);
    assert_int_equal(r->n_pieces, 1);
    cap_first[cap_n++] = r->pieces[0];
    return 0;
}

static void test_memory_exact(void **state)
{
    (void)state;
    sl_pack_opts o = {.seq_len = 16,
                      .eos = EOS,
                      .bos = SL_NO_TOKEN,
                      .pad = PAD,
                      .layout = SL_LAYOUT_RECURRENT,
                      .batch = 1,
                      .mem_tokens = 2,
                      .mem_id = MEM,
                      .mem_write = 1};
    sl_err err = {{0}};
    sl_packer *p = sl_packer_new(&o, cap_row, NULL, &err);
    assert_non_null(p);
    uint32_t doc[14];
    for (int i = 0; i < 14; i++)
        doc[i] = 10 + (uint32_t)i;
    assert_int_equal(sl_packer_add(p, 0, "d", 1, doc, 14, NULL, &err), 0);
    assert_int_equal(sl_packer_finish(p, &err), 0);
    assert_int_equal(cap_n, 2);
    const uint32_t want0[16] = {MEM, MEM, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, MEM, MEM};
    const uint32_t want1[16] = {MEM, MEM, 22, 23, EOS, PAD, PAD, PAD, PAD, PAD, PAD, PAD, PAD, PAD, MEM, MEM};
    assert_memory_equal(cap_rows[0], want0, sizeof want0);
    assert_memory_equal(cap_rows[1], want1, sizeof want1);
    assert_int_equal(cap_first[0].offset, 2);
    assert_int_equal(cap_first[0].length, 12);
    assert_int_equal(cap_first[0].doc_offset, 0);
    assert_int_equal(cap_first[1].offset, 2);
    assert_int_equal(cap_first[1].length, 3);
    assert_int_equal(cap_first[1].doc_offset, 12);
    const sl_pack_stats *st = sl_packer_stats(p);
    assert_int_equal(st->mem_tokens, 8);
    assert_int_equal(st->pad_tokens, 9);
    assert_int_equal(st->doc_tokens, 15);
    sl_packer_free(p);
    /* the option checks, with field names */
    o.mem_tokens = 8; /* 2K = L: no room */
    assert_null(sl_packer_new(&o, cap_row, NULL, &err));
    assert_string_equal(err.msg, "`mem_tokens` 8 (read and write) leaves no room for data in rows of `seq_len` 16");
    o.mem_tokens = 2;
    o.mem_id = SL_NO_TOKEN;
    assert_null(sl_packer_new(&o, cap_row, NULL, &err));
    assert_string_equal(err.msg, "`mem_tokens` 2 needs `mem_id`");
    o.mem_id = MEM;
    o.layout = SL_LAYOUT_SEQUENTIAL;
    assert_null(sl_packer_new(&o, cap_row, NULL, &err));
    assert_string_equal(err.msg, "`mem_tokens` applies to `layout` recurrent");
    sl_pack_user u = SL_PACK_USER_INIT;
    u.seq_len = 16;
    u.mem_tokens = 2;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_string_equal(err.msg, "`mem_tokens` (memory-token slots) applies to `layout` recurrent");
    u.layout = SL_LAYOUT_RECURRENT;
    u.batch = 2;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_string_equal(err.msg, "`mem_tokens` 2 needs `mem_id` ID (the token id of a memory position)");
    u.mem_id = 9;
    assert_int_equal(sl_pack_user_check(&u, &err), 0);
    u.mem_tokens = -1;
    u.mem_write = 1;
    u.mem_id = -1;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_string_equal(err.msg, "`mem_write` needs `mem_tokens` K");
    /* the packed header carries the slots: write, detect, compare */
    sl_ts_header h, ph;
    sl_ts_header_init(&h, 4, 100);
    o.layout = SL_LAYOUT_RECURRENT;
    o.mem_tokens = 3;
    o.mem_id = 42;
    o.mem_write = 1;
    sl_packed_header(&h, &o, NULL, &ph);
    assert_non_null(strstr(ph.extra_json, "\"memory\":{\"tokens\":3,\"id\":42,\"write\":true}"));
    sl_pack_opts back;
    char *wu = NULL;
    assert_int_equal(sl_packed_detect(&ph, &back, &wu, &err), 1);
    assert_int_equal(back.mem_tokens, 3);
    assert_int_equal(back.mem_id, 42);
    assert_int_equal(back.mem_write, 1);
    sl_ts_header_free(&ph);
    /* without slots: no "memory" key (headers as before) */
    o.mem_tokens = 0;
    o.mem_id = SL_NO_TOKEN;
    o.mem_write = 0;
    sl_packed_header(&h, &o, NULL, &ph);
    assert_null(strstr(ph.extra_json, "memory"));
    assert_int_equal(sl_packed_detect(&ph, &back, &wu, &err), 1);
    assert_int_equal(back.mem_tokens, 0);
    sl_ts_header_free(&ph);
    /* a malformed memory object is an error */
    sl_ts_header_set_extra(
        &h, "{\"packed\":{\"seq_len\":16,\"layout\":\"recurrent\",\"batch\":1,\"eos\":null,"
            "\"bos\":null,\"pad\":0,\"warmup\":null,\"memory\":{\"tokens\":8,\"id\":1,\"write\":true}}}");
    assert_int_equal(sl_packed_detect(&h, &back, &wu, &err), -1);
    assert_non_null(strstr(err.msg, "malformed \"packed\" object"));
    sl_ts_header_free(&h);
}

/* A row boundary exactly at a document end: the next row starts a document
 * at offset 0 with doc_offset 0 (and nothing is carried over). */
static void test_exact_fit(void **state)
{
    (void)state;
    ctx_t *c = calloc(1, sizeof *c);
    c->fail_after = -1;
    c->o = (sl_pack_opts){.seq_len = 8, .eos = EOS, .bos = SL_NO_TOKEN, .pad = PAD};
    uint32_t a[7] = {10, 11, 12, 13, 14, 15, 16}, b[2] = {20, 21};
    c->n_docs = 2;
    uint32_t sa[8] = {10, 11, 12, 13, 14, 15, 16, EOS}, sb[3] = {20, 21, EOS};
    uint32_t ga[8], gb[3];
    c->docs[0] = (tdoc){.n = 7, .tok = a, .seq = sa, .seq_len = 8, .got = ga};
    c->docs[1] = (tdoc){.n = 2, .tok = b, .seq = sb, .seq_len = 3, .got = gb};
    sl_err err = {{0}};
    sl_packer *p = sl_packer_new(&c->o, on_row, c, &err);
    assert_int_equal(sl_packer_add(p, 0, "doc0", 4, a, 7, NULL, &err), 0);
    assert_int_equal(c->rows, 1); /* emitted as soon as full */
    assert_int_equal(sl_packer_add(p, 1, "doc1", 4, b, 2, NULL, &err), 0);
    assert_int_equal(sl_packer_finish(p, &err), 0);
    assert_int_equal(c->rows, 2);
    assert_int_equal(sl_packer_stats(p)->pad_tokens, 5);
    sl_packer_free(p);
    free(c);
}

static void test_errors(void **state)
{
    (void)state;
    sl_err err = {{0}};
    sl_pack_opts o = {.seq_len = 0, .eos = EOS, .bos = SL_NO_TOKEN, .pad = PAD};
    assert_null(sl_packer_new(&o, on_row, NULL, &err));
    /* library messages name the field (backquoted), never a command-line flag */
    assert_string_equal(err.msg, "`seq_len` 0: must be a positive multiple of 8");
    o.seq_len = 12;
    assert_null(sl_packer_new(&o, on_row, NULL, &err));
    o.seq_len = 8;
    o.layout = SL_LAYOUT_RECURRENT;
    o.batch = 0;
    assert_null(sl_packer_new(&o, on_row, NULL, &err));
    assert_string_equal(err.msg, "`layout` recurrent needs `batch` B (B > 0)");
    /* the checks of the user's options that need no input: one per rule */
    sl_pack_user u = SL_PACK_USER_INIT;
    assert_int_equal(sl_pack_user_check(&u, &err), 0);
    u.seq_len = 20;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_string_equal(err.msg, "`seq_len` 20: must be a positive multiple of 8");
    u.seq_len = 1ll << 32;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    u.seq_len = 16;
    u.long_mode = SL_LONG_DROP;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_non_null(strstr(err.msg, "`long_mode` applies only with `no_split`"));
    u.no_split = 1;
    assert_int_equal(sl_pack_user_check(&u, &err), 0);
    u.layout = SL_LAYOUT_RECURRENT;
    assert_int_equal(sl_pack_user_check(&u, &err), -1);
    assert_string_equal(err.msg, "`layout` recurrent needs `batch` B");
    assert_null(strstr(err.msg, "--"));
    /* padding needed without a pad id: an error naming the row and offset */
    ctx_t *c = calloc(1, sizeof *c);
    c->fail_after = -1;
    c->o = (sl_pack_opts){.seq_len = 8, .eos = SL_NO_TOKEN, .bos = SL_NO_TOKEN, .pad = SL_NO_TOKEN};
    c->n_docs = 1;
    uint32_t a[3] = {10, 11, 12}, g[3];
    c->docs[0] = (tdoc){.n = 3, .tok = a, .seq = a, .seq_len = 3, .got = g};
    sl_packer *p = sl_packer_new(&c->o, on_row, c, &err);
    assert_int_equal(sl_packer_add(p, 0, "doc0", 4, a, 3, NULL, &err), 0);
    assert_int_equal(sl_packer_finish(p, &err), -1);
    assert_non_null(strstr(err.msg, "row 0: offset 3: padding needed"));
    sl_packer_free(p);
    /* an error from the row callback stops packing */
    c->o.pad = PAD;
    c->fail_after = 0;
    c->rows = 0;
    p = sl_packer_new(&c->o, on_row, c, &err);
    uint32_t big[20] = {0};
    assert_int_equal(sl_packer_add(p, 0, "doc0", 4, big, 20, NULL, &err), -1);
    assert_string_equal(err.msg, "injected");
    sl_packer_free(p);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequential),   cmocka_unit_test(test_no_split), cmocka_unit_test(test_recurrent),
        cmocka_unit_test(test_exact_fit),    cmocka_unit_test(test_errors),   cmocka_unit_test(test_memory_slots),
        cmocka_unit_test(test_memory_exact),
    };
    return cmocka_run_group_tests_name("shard_pack", tests, NULL, NULL);
}
