/* `stats` and `--skip-existing` as library calls (shard/stats.h,
 * shard/verify.h): the statistics of streams and shard directories written
 * here agree with the document lengths the test chose (computed again here,
 * not read back from sluice), with what the packer and the shard writer
 * report, and with their JSON; existing outputs verify when whole and not
 * when cut short or damaged. */
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

#include "shard/shard.h"
#include "shard/stage.h"
#include "shard/stats.h"
#include "shard/verify.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/tokstream.h"

static char tmpdir[64];

static int64_t len_of(int i)
{
    return i % 11 == 0 ? 0 : (i * 37) % 700; /* every 11th document empty */
}

/* n documents (ids doc<first+i>) of lengths len_of(first + i). */
static void write_stream(const char *path, int first, int n)
{
    sl_err err = {{0}};
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_TEXT, 1000);
    h.eos = 999;
    sl_output *out = sl_output_open(path, &err);
    assert_non_null(out);
    sl_ts_writer *w = sl_ts_writer_open(out, &h, &err);
    assert_non_null(w);
    sl_doc d = {0};
    for (int i = first; i < first + n; i++) {
        char id[32];
        sl_doc_clear(&d);
        int len = snprintf(id, sizeof id, "doc%d", i);
        sl_doc_set_id(&d, id, (size_t)len);
        for (int64_t t = 0; t < len_of(i); t++)
            sl_doc_push(&d, (uint32_t)((i * 131 + t * 7) % 998));
        assert_int_equal(sl_ts_write_doc(w, &d, &err), 0);
    }
    sl_doc_free(&d);
    assert_int_equal(sl_ts_writer_finish(w, &err), 0);
    assert_int_equal(sl_output_commit(out, &err), 0);
    sl_ts_header_free(&h);
}

/* The expected length statistics of documents [first, first + n), with
 * extra tokens added to each (EOS), counted the plain way. */
static void expect(sl_len_stats *e, int first, int n, int extra, const char *only_split, double fraction)
{
    memset(e, 0, sizeof *e);
    for (int i = first; i < first + n; i++) {
        if (only_split) {
            char id[32];
            int len = snprintf(id, sizeof id, "doc%d", i);
            int val = sl_split_of(id, (size_t)len, fraction) == SL_SPLIT_VAL;
            if (val != !strcmp(only_split, "val"))
                continue;
        }
        uint64_t L = (uint64_t)(len_of(i) + extra);
        if (!e->n || L < e->min)
            e->min = L;
        if (L > e->max)
            e->max = L;
        e->n++;
        e->tokens += L;
        e->empty += L == 0;
        /* bucket: 0 for 0, else the k with 2^(k-1) <= L < 2^k */
        int k = 0;
        for (uint64_t lo = 1; L && lo <= L && k < 64; lo *= 2)
            k++;
        e->hist[k]++;
    }
}

static void assert_len_equal(const sl_len_stats *a, const sl_len_stats *e)
{
    assert_int_equal(a->n, e->n);
    assert_int_equal(a->tokens, e->tokens);
    assert_int_equal(a->empty, e->empty);
    assert_int_equal(a->min, e->min);
    assert_int_equal(a->max, e->max);
    assert_memory_equal(a->hist, e->hist, sizeof a->hist);
}

static void test_len_stats_buckets(void **state)
{
    (void)state;
    sl_len_stats s = {0};
    const uint64_t lens[] = {0, 1, 2, 3, 4, 7, 8, 1023, 1024, UINT64_MAX};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        sl_len_stats_add(&s, lens[i]);
    assert_int_equal(s.n, 10);
    assert_int_equal(s.empty, 1);
    assert_int_equal(s.min, 0);
    assert_true(s.max == UINT64_MAX);
    /* [0], [1,2), [2,4), [4,8), [8,16), [512,1024), [1024,2048), [2^63, 2^64) */
    assert_int_equal(s.hist[0], 1);
    assert_int_equal(s.hist[1], 1);
    assert_int_equal(s.hist[2], 2);
    assert_int_equal(s.hist[3], 2);
    assert_int_equal(s.hist[4], 1);
    assert_int_equal(s.hist[10], 1);
    assert_int_equal(s.hist[11], 1);
    assert_int_equal(s.hist[64], 1);
}

static void test_document_streams(void **state)
{
    (void)state;
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.tok", tmpdir);
    snprintf(b, sizeof b, "%s/b.tok", tmpdir);
    write_stream(a, 0, 120);
    write_stream(b, 120, 80);
    sl_err err = {{0}};
    sl_stats st;
    sl_len_stats e;
    /* one file */
    const char *one[] = {a};
    assert_int_equal(sl_stats_run(one, 1, &st, &err), 0);
    assert_int_equal(st.kind, SL_STATS_DOCUMENTS);
    assert_int_equal(st.vocab_size, 1000);
    expect(&e, 0, 120, 0, NULL, 0);
    assert_len_equal(&st.docs, &e);
    sl_stats_free(&st);
    /* two files read as one: the statistics of all 200 documents */
    const char *two[] = {a, b};
    assert_int_equal(sl_stats_run(two, 2, &st, &err), 0);
    expect(&e, 0, 200, 0, NULL, 0);
    assert_len_equal(&st.docs, &e);
    assert_true(e.empty > 0);
    /* the JSON says the same */
    sl_buf j = {0};
    sl_stats_json(&j, &st);
    sl_json_doc *doc = sl_json_parse(j.data, j.len, NULL, &err);
    assert_non_null(doc);
    const sl_json *root = sl_json_root(doc);
    assert_string_equal(sl_json_get_str(root, "kind"), "documents");
    assert_int_equal(sl_json_get(root, "input")->n, 2);
    assert_true(sl_json_get(root, "documents")->num == (double)e.n);
    assert_true(sl_json_get(root, "document_tokens")->num == (double)e.tokens);
    assert_true(sl_json_get(root, "empty_documents")->num == (double)e.empty);
    const sl_json *h = sl_json_get(root, "length_histogram");
    uint64_t total = 0;
    for (size_t i = 0; i < h->n; i++)
        total += (uint64_t)sl_json_get(h->kids[i], "count")->num;
    assert_int_equal(total, e.n);
    sl_json_free(doc);
    sl_buf_free(&j);
    sl_stats_free(&st);
    /* a missing input: an error naming it, and nothing to free twice */
    char none[128];
    snprintf(none, sizeof none, "%s/none.tok", tmpdir);
    const char *bad[] = {none};
    assert_int_equal(sl_stats_run(bad, 1, &st, &err), -1);
    assert_non_null(strstr(err.msg, "none.tok"));
    sl_stats_free(&st);
}

static void test_packed_stream(void **state)
{
    (void)state;
    char in[128], out[128];
    snprintf(in, sizeof in, "%s/p.tok", tmpdir);
    snprintf(out, sizeof out, "%s/p.packed", tmpdir);
    write_stream(in, 0, 100);
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.pack.seq_len = 128;
    o.progress = 0;
    sl_err err = {{0}};
    sl_output *w = sl_output_open(out, &err);
    assert_non_null(w);
    const char *inputs[] = {in};
    sl_stage_stats ps;
    assert_int_equal(sl_pack_run(&o, inputs, 1, w, &ps, &err), 0);
    assert_int_equal(sl_output_commit(w, &err), 0);
    const char *packed[] = {out};
    sl_stats st;
    assert_int_equal(sl_stats_run(packed, 1, &st, &err), 0);
    assert_int_equal(st.kind, SL_STATS_PACKED);
    assert_int_equal(st.seq_len, 128);
    assert_int_equal(st.tokens, st.rows * 128);
    /* every document (EOS appended: none is empty) starts exactly once */
    assert_int_equal(st.document_starts, ps.docs - ps.dropped);
    assert_true(st.pieces >= st.document_starts);
    /* the padding is what the documents' tokens (each + EOS) leave */
    sl_len_stats e;
    expect(&e, 0, 100, 1, NULL, 0);
    assert_int_equal(st.pad_tokens + e.tokens, st.tokens);
    assert_int_equal(st.mem_tokens_total, 0);
    /* as few rows as the tokens need, the last one partly padded */
    assert_int_equal(st.rows, (e.tokens + 127) / 128);
    sl_stats_free(&st);
}

static void test_shard_directory(void **state)
{
    (void)state;
    char in[128], dir[128];
    snprintf(in, sizeof in, "%s/s.tok", tmpdir);
    snprintf(dir, sizeof dir, "%s/shards", tmpdir);
    write_stream(in, 0, 200);
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.pack.seq_len = 256;
    o.val_fraction = 0.25;
    o.max_file_bytes = 4096;
    o.progress = 0;
    sl_err err = {{0}};
    const char *inputs[] = {in};
    sl_stage_stats ss;
    assert_int_equal(sl_shard_run(&o, inputs, 1, dir, &ss, &err), 0);
    assert_int_equal(ss.dropped, 0);
    const char *d[] = {dir};
    assert_int_equal(sl_shard_has_manifest(dir), 1);
    assert_int_equal(sl_shard_has_manifest(in), 0);
    assert_int_equal(sl_shard_has_manifest(tmpdir), 0);
    sl_stats st;
    assert_int_equal(sl_stats_run(d, 1, &st, &err), 0);
    assert_int_equal(st.kind, SL_STATS_SHARDS);
    assert_int_equal(st.documents, 200);
    assert_int_equal(st.seq_len, 256);
    assert_int_equal(st.dtype_bytes, 2);
    /* per split: the documents the split function sends there, each with its EOS */
    sl_len_stats e;
    const char *names[] = {"train", "val"};
    for (int k = 0; k < SL_SPLIT_N; k++) {
        const sl_stats_split *sp = &st.splits[k];
        assert_int_equal(sp->present, 1);
        expect(&e, 0, 200, 1, names[k], 0.25);
        assert_len_equal(&sp->docs, &e);
        assert_int_equal(sp->tokens, sp->rows * 256);
        assert_int_equal(sp->pad_tokens + e.tokens, sp->tokens);
        assert_true(sp->files >= 2); /* 4096-byte files */
        assert_true(sp->pieces >= e.n);
    }
    /* one stage without warmup: an epoch is the train split's rows */
    assert_null(st.warmup);
    assert_int_equal(st.n_stages, 1);
    assert_int_equal(st.stages[0].seq_len, 256);
    assert_int_equal(st.stages[0].epoch_rows, st.splits[SL_SPLIT_TRAIN].rows);
    assert_int_equal(st.stages[0].epoch_pieces, st.splits[SL_SPLIT_TRAIN].pieces);
    assert_int_equal(st.stages[0].epoch_document_starts, st.splits[SL_SPLIT_TRAIN].docs.n);
    sl_buf j = {0};
    sl_stats_json(&j, &st);
    sl_json_doc *doc = sl_json_parse(j.data, j.len, NULL, &err);
    assert_non_null(doc);
    const sl_json *val = sl_json_get(sl_json_get(sl_json_root(doc), "splits"), "val");
    assert_non_null(val);
    assert_true(sl_json_get(val, "documents")->num == (double)st.splits[SL_SPLIT_VAL].docs.n);
    sl_json_free(doc);
    sl_buf_free(&j);
    sl_stats_free(&st);
}

static int says_no(const char *path, sl_err *err)
{
    return sl_errf(err, "%s: no", path);
}

static int says_yes(const char *path, sl_err *err)
{
    (void)path, (void)err;
    return 0;
}

static void test_verify_existing(void **state)
{
    (void)state;
    char tok[128], cut[128], jl[128], part[128], dir[128], p[256];
    sl_err err = {{0}};
    snprintf(tok, sizeof tok, "%s/v.tok", tmpdir);
    snprintf(cut, sizeof cut, "%s/v-cut.tok", tmpdir);
    snprintf(jl, sizeof jl, "%s/v.jsonl", tmpdir);
    snprintf(part, sizeof part, "%s/v-part.jsonl", tmpdir);
    snprintf(dir, sizeof dir, "%s/vshards", tmpdir);
    /* not there */
    assert_int_equal(sl_output_verify_existing(tok, SL_VERIFY_TOKENS, &err), SL_EXISTING_NONE);
    /* a whole token stream, and the same cut short */
    write_stream(tok, 0, 30);
    assert_int_equal(sl_output_verify_existing(tok, SL_VERIFY_TOKENS, &err), SL_EXISTING_OK);
    assert_int_equal(sl_test_sh("head -c $(( $(stat -c %%s '%s') - 9 )) '%s' > '%s'", tok, tok, cut), 0);
    assert_int_equal(sl_output_verify_existing(cut, SL_VERIFY_TOKENS, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "v-cut.tok"));
    /* JSON Lines: whole, empty, cut in a line */
    assert_int_equal(
        sl_test_sh("printf '{\"a\":1}\\n{\"a\":2}\\n' > '%s' && printf '{\"a\":1}\\n{\"a\"' > '%s'", jl, part), 0);
    assert_int_equal(sl_output_verify_existing(jl, SL_VERIFY_LINES, &err), SL_EXISTING_OK);
    assert_int_equal(sl_output_verify_existing(part, SL_VERIFY_LINES, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "the last line is not complete"));
    assert_int_equal(sl_test_sh(": > '%s'", part), 0);
    assert_int_equal(sl_output_verify_existing(part, SL_VERIFY_LINES, &err), SL_EXISTING_OK);
    /* a shard directory, then one of its files damaged */
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.pack.seq_len = 64;
    o.progress = 0;
    const char *inputs[] = {tok};
    sl_stage_stats ss;
    assert_int_equal(sl_shard_run(&o, inputs, 1, dir, &ss, &err), 0);
    assert_int_equal(sl_output_verify_existing(dir, SL_VERIFY_SHARDS, &err), SL_EXISTING_OK);
    /* the wrong kind of thing */
    assert_int_equal(sl_output_verify_existing(dir, SL_VERIFY_TOKENS, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(sl_output_verify_existing(tok, SL_VERIFY_SHARDS, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_int_equal(
        sl_test_sh("printf 'XY' | dd of='%s/train-00000.tokens' bs=1 seek=10 conv=notrunc 2>/dev/null", dir), 0);
    assert_int_equal(sl_output_verify_existing(dir, SL_VERIFY_SHARDS, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "train-00000.tokens"));
    /* cannot be looked at: a path through a regular file */
    snprintf(p, sizeof p, "%s/x", tok);
    assert_int_equal(sl_output_verify_existing(p, SL_VERIFY_TOKENS, &err), SL_EXISTING_UNKNOWN);
    assert_non_null(strstr(err.msg, "Not a directory"));
    /* a check of the caller's */
    assert_int_equal(sl_output_verify_existing_with(tok, says_yes, &err), SL_EXISTING_OK);
    assert_int_equal(sl_output_verify_existing_with(tok, says_no, &err), SL_EXISTING_BAD);
    assert_non_null(strstr(err.msg, "v.tok: no"));
    assert_int_equal(sl_output_verify_existing_with(p, says_yes, &err), SL_EXISTING_UNKNOWN);
    snprintf(p, sizeof p, "%s/absent", tmpdir);
    assert_int_equal(sl_output_verify_existing_with(p, says_no, &err), SL_EXISTING_NONE);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-stats-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_len_stats_buckets), cmocka_unit_test(test_document_streams),
        cmocka_unit_test(test_packed_stream),     cmocka_unit_test(test_shard_directory),
        cmocka_unit_test(test_verify_existing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sl_test_sh("rm -rf '%s'", tmpdir);
    return rc;
}
