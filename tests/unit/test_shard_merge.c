/* sl_merge_run as one stream (docs/shards.md section 4.2) on directories
 * written row by row through the writer, so that their checksums are right
 * whatever their rows say: a directory whose rows are what the packer makes
 * of its documents merges into itself byte for byte; rows and
 * documents.jsonl that disagree (a gap in a document's pieces, a missing EOS,
 * tokens of a dropped document, pieces in the other split, a piece of a
 * document that has no line) are errors naming the directory and document,
 * and leave no output. documents.jsonl lines read the fast way (the
 * writer's own form) and the full way give the same documents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support.h"

#include "shard/merge.h"
#include "shard/shard.h"

#define L 16
#define EOS 1
#define PAD 0

static char base[64];

static sl_shard_info info_for(void)
{
    sl_shard_info in;
    memset(&in, 0, sizeof in);
    in.seq_len = L;
    in.dtype_bytes = 2;
    in.vocab_size = 1000;
    in.modality = 4;
    snprintf(in.fingerprint, sizeof in.fingerprint, "sha256:%064d", 0);
    in.eos = EOS;
    in.bos = SL_NO_TOKEN;
    in.pad = PAD;
    in.mem_id = SL_NO_TOKEN;
    in.shuffle_window = 5;
    return in;
}

/* Two documents packed in split mode: doc 0 = tokens 10..18 + EOS (10
 * tokens), doc 1 = 20..28 + EOS (10 tokens): row 0 = doc 0 [0,10) and doc 1
 * [0,6), row 1 = doc 1 [6,10) and padding. `bad` changes one thing. */
enum { OK, GAP, NO_EOS, DROPPED_WITH_TOKENS, OTHER_SPLIT, NO_LINE };

static void write_dir(const char *dir, int bad)
{
    sl_err err = {{0}};
    sl_shard_info in = info_for();
    if (bad == DROPPED_WITH_TOKENS) { /* recorded, so the status is one --no-split gives */
        in.no_split = 1;
        in.long_mode = SL_LONG_DROP;
    }
    sl_shard_writer *w = sl_shard_writer_open(dir, &in, 0, 1, &err);
    assert_non_null(w);
    uint32_t seq0[10], seq1[10];
    for (int i = 0; i < 9; i++) {
        seq0[i] = 10 + (uint32_t)i;
        seq1[i] = 20 + (uint32_t)i;
    }
    seq0[9] = bad == NO_EOS ? 77 : EOS;
    seq1[9] = EOS;
    uint32_t r0[L], r1[L];
    memcpy(r0, seq0, sizeof seq0);
    memcpy(r0 + 10, seq1, 6 * sizeof *seq1);
    memcpy(r1, seq1 + 6, 4 * sizeof *seq1);
    for (int i = 4; i < L; i++)
        r1[i] = PAD;
    sl_piece p0[2] = {{.doc = 0, .doc_offset = 0, .offset = 0, .length = 10, .id = "a", .id_len = 1},
                      {.doc = 1, .doc_offset = 0, .offset = 10, .length = 6, .id = "b", .id_len = 1}};
    sl_piece p1[1] = {{.doc = bad == NO_LINE ? 2 : 1,
                       .doc_offset = bad == GAP ? 7 : 6,
                       .offset = 0,
                       .length = 4,
                       .id = "b",
                       .id_len = 1}};
    sl_row row0 = {.index = 0, .tokens = r0, .n_pieces = 2, .pieces = p0};
    sl_row row1 = {.index = 1, .tokens = r1, .n_pieces = 1, .pieces = p1};
    assert_int_equal(sl_shard_writer_row(w, SL_SPLIT_TRAIN, &row0, &err), 0);
    assert_int_equal(sl_shard_writer_row(w, SL_SPLIT_TRAIN, &row1, &err), 0);
    assert_int_equal(sl_shard_writer_doc_meta(w, 0, "a", 1, SL_SPLIT_TRAIN,
                                              bad == DROPPED_WITH_TOKENS ? SL_DOC_DROPPED : SL_DOC_PLACED,
                                              "{\"k\":1.50}", 10, &err),
                     0);
    assert_int_equal(
        sl_shard_writer_doc(w, 1, "b", 1, bad == OTHER_SPLIT ? SL_SPLIT_VAL : SL_SPLIT_TRAIN, SL_DOC_PLACED, &err), 0);
    assert_int_equal(sl_shard_writer_finish(w, &err), 0);
}

static char *slurp(const char *path, size_t *n)
{
    char *b = sl_test_slurp(path, n);
    assert_non_null(b);
    return b;
}

static void same_file(const char *a, const char *b, const char *name)
{
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s/%s", a, name);
    snprintf(pb, sizeof pb, "%s/%s", b, name);
    size_t na, nb;
    char *x = slurp(pa, &na), *y = slurp(pb, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

static void test_packer_rows_merge_into_themselves(void **state)
{
    (void)state;
    char src[128], dst[128];
    snprintf(src, sizeof src, "%s/ok", base);
    snprintf(dst, sizeof dst, "%s/ok-merged", base);
    write_dir(src, OK);
    const char *srcs[1] = {src};
    sl_merge_opts mo = {0};
    sl_stage_stats st;
    sl_err err = {{0}};
    assert_int_equal(sl_merge_run(srcs, 1, dst, &mo, &st, &err), 0);
    const char *names[] = {"manifest.json", "documents.jsonl", "documents.idx", "train-00000.tokens",
                           "train-00000.bounds"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        same_file(src, dst, names[i]);
    assert_int_equal(st.docs, 2);
    assert_int_equal(st.dup_ids, 0);
    /* the same directory twice: documents renumbered, ids repeated (counted) */
    snprintf(dst, sizeof dst, "%s/ok-twice", base);
    const char *two[2] = {src, src};
    assert_int_equal(sl_merge_run(two, 2, dst, &mo, &st, &err), 0);
    assert_int_equal(st.docs, 4);
    assert_int_equal(st.dup_ids, 2);
    assert_int_equal(st.first_dup_doc, 2);
    sl_shard *s = sl_shard_open(dst, 1, &err);
    assert_non_null(s);
    /* 4 documents of 10 tokens in rows of 16: 3 rows, the last with 8 padding */
    assert_int_equal(sl_shard_get_split(s, SL_SPLIT_TRAIN)->rows, 3);
    assert_int_equal(sl_shard_get_split(s, SL_SPLIT_TRAIN)->pad_tokens, 8);
    const char *id;
    const sl_shard_docref *d = sl_shard_doc(s, 2, &id);
    assert_int_equal(d->ordinal, 2);
    assert_memory_equal(id, "a", 1);
    sl_shard_close(s);
}

static void refused(int bad, const char *want)
{
    char src[128], dst[128];
    snprintf(src, sizeof src, "%s/bad%d", base, bad);
    snprintf(dst, sizeof dst, "%s/bad%d-merged", base, bad);
    write_dir(src, bad);
    const char *srcs[1] = {src};
    sl_merge_opts mo = {0};
    sl_stage_stats st;
    sl_err err = {{0}};
    assert_int_equal(sl_merge_run(srcs, 1, dst, &mo, &st, &err), -1);
    if (!strstr(err.msg, want) || !strstr(err.msg, src))
        fail_msg("bad %d: '%s' does not say '%s' and name the directory", bad, err.msg, want);
    struct stat sb;
    assert_int_not_equal(stat(dst, &sb), 0); /* nothing written */
    /* the rows as they are still concatenate */
    mo.concat_rows = 1;
    if (bad != NO_LINE) /* (a piece of a document without a line does not even open) */
        assert_int_equal(sl_merge_run(srcs, 1, dst, &mo, &st, &err), 0);
}

static void test_inconsistent_sources(void **state)
{
    (void)state;
    refused(GAP, "document 1: its pieces do not cover its sequence once, in the train split (piece at sequence "
                 "offset 7, expected 6)");
    refused(NO_EOS, "document 0: its sequence does not end with the manifest's eos id");
    refused(DROPPED_WITH_TOKENS, "document 0: 10 tokens in the rows, which does not fit its \"dropped\" line");
    refused(OTHER_SPLIT, "document 1: its pieces do not cover its sequence once, in the val split");
    refused(NO_LINE, "document 2 is not in documents.jsonl");
}

/* documents.jsonl lines as the writer puts them are read without a JSON
 * tree; any other valid form (escaped ids, keys in another order) is parsed
 * in full: both give the same ids, statuses and metadata flags. */
static void test_document_lines(void **state)
{
    (void)state;
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/lines", base);
    sl_err err = {{0}};
    sl_shard_info in = info_for();
    in.no_split = 1;
    in.long_mode = SL_LONG_DROP;
    sl_shard_writer *w = sl_shard_writer_open(dir, &in, 0, 1, &err);
    assert_non_null(w);
    static const char meta[] = "{\"k\":[1.50,\"\\u00e9\"]}";
    static const char *ids[] = {"plain", "\xc3\xa9t\xc3\xa9", "q\"x", "b\\s", "\x01c", ""};
    for (int i = 0; i < 6; i++)
        assert_int_equal(sl_shard_writer_doc_meta(w, (uint64_t)i, ids[i], strlen(ids[i]), i % 2,
                                                  i == 3 ? SL_DOC_DROPPED : 0, i % 3 ? meta : NULL,
                                                  i % 3 ? strlen(meta) : 0, &err),
                         0);
    assert_int_equal(sl_shard_writer_finish(w, &err), 0);
    for (int round = 0; round < 2; round++) {
        sl_shard *s = sl_shard_open(dir, round == 0, &err);
        if (!s)
            fail_msg("round %d: %s", round, err.msg);
        assert_int_equal(sl_shard_n_docs(s), 6);
        for (int i = 0; i < 6; i++) {
            const char *id;
            const sl_shard_docref *d = sl_shard_doc(s, (size_t)i, &id);
            assert_int_equal(d->ordinal, (uint64_t)i);
            assert_int_equal(d->id_len, strlen(ids[i]));
            assert_memory_equal(id, ids[i], strlen(ids[i]));
            assert_int_equal(d->split, i % 2);
            assert_int_equal(d->long_status, i == 3 ? SL_DOC_DROPPED : SL_DOC_PLACED);
            assert_int_equal(d->has_meta, i % 3 != 0);
        }
        sl_shard_close(s);
        /* round 1 reads line 0 with its keys in another order (same length,
         * so documents.idx still holds; checksums no longer do) */
        if (round)
            break;
        snprintf(path, sizeof path, "%s/documents.jsonl", dir);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        static const char want[] = "{\"doc\":0,\"id\":\"plain\",", swapped[] = "{\"id\":\"plain\",\"doc\":0,";
        char head[sizeof want];
        assert_int_equal(fread(head, 1, sizeof want - 1, f), sizeof want - 1);
        assert_memory_equal(head, want, sizeof want - 1);
        fseek(f, 0, SEEK_SET);
        assert_int_equal(fwrite(swapped, 1, sizeof swapped - 1, f), sizeof swapped - 1);
        fclose(f);
    }
    assert_null(sl_shard_open(dir, 1, &err));
    assert_non_null(strstr(err.msg, "documents.jsonl: checksum mismatch"));
}

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/sluice-test-merge.%d", (int)getpid());
    return mkdir(base, 0700);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packer_rows_merge_into_themselves),
        cmocka_unit_test(test_inconsistent_sources),
        cmocka_unit_test(test_document_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
