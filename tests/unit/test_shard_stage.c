/* The pack and shard stages as library calls (shard/stage.h): a program that
 * links libsluice gets, file for file, what `sluice shard` and `sluice pack`
 * write for the same options (the binary is the independent path here: its
 * own option parsing and its own run); options the input makes invalid are
 * SL_STAGE_USAGE; messages name fields, not flags; repeated ids are counted
 * or, with unique_ids, an error. */
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

#include "shard/stage.h"
#include "stream/io.h"
#include "stream/tokstream.h"

static char tmpdir[64];

/* A document stream of n documents of varied lengths (ids doc<i>, one
 * repeated when dup), with metadata on every third. */
static void write_stream(const char *path, int n, int dup)
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
    for (int i = 0; i < n; i++) {
        char id[32], meta[64];
        sl_doc_clear(&d);
        int len = snprintf(id, sizeof id, "doc%d", dup && i == n - 1 ? 3 : i);
        sl_doc_set_id(&d, id, (size_t)len);
        for (int64_t t = 0; t < (i * 37) % 700; t++)
            sl_doc_push(&d, (uint32_t)((i * 131 + t * 7) % 998));
        int ml = i % 3 == 0 ? snprintf(meta, sizeof meta, "{\"source\":\"s%d\",\"label\":%d}", i % 2, i) : 0;
        sl_doc_set_meta(&d, ml ? meta : "", (size_t)ml);
        assert_int_equal(sl_ts_write_doc(w, &d, &err), 0);
    }
    sl_doc_free(&d);
    assert_int_equal(sl_ts_writer_finish(w, &err), 0);
    assert_int_equal(sl_output_commit(out, &err), 0);
    sl_ts_header_free(&h);
}

static const char *bin(void)
{
    const char *b = getenv("SLUICE_BIN");
    if (!b)
        fail_msg("SLUICE_BIN is not set");
    return b;
}

static void test_shard_equals_cli(void **state)
{
    (void)state;
    char in[128], a[128], b[128];
    snprintf(in, sizeof in, "%s/in.tok", tmpdir);
    write_stream(in, 200, 0);
    /* the same options both ways: warmup, val split, shuffle, small files, kept fields */
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.pack.seq_len = 256;
    o.pack.warmup = "double:64..256";
    o.val_fraction = 0.2;
    o.shuffle = 1;
    o.seed = 7;
    o.max_file_bytes = 4096;
    o.progress = 0;
    sl_err err = {{0}};
    assert_int_equal(sl_meta_sel_parse(&o.fields, SL_META_KEEP, "label", &err), 0);
    snprintf(a, sizeof a, "%s/lib", tmpdir);
    snprintf(b, sizeof b, "%s/cli", tmpdir);
    const char *inputs[] = {in};
    sl_stage_stats st;
    assert_int_equal(sl_shard_run(&o, inputs, 1, a, &st, &err), 0);
    assert_int_equal(st.docs, 200);
    assert_int_equal(st.dup_ids, 0);
    assert_int_equal(
        sl_test_sh("'%s' shard -q --seq-len 256 --warmup double:64..256 --val-fraction 0.2 --shuffle --seed 7 "
                   "--max-file-bytes 4096 --keep-fields label '%s' -o '%s'",
                   bin(), in, b),
        0);
    assert_int_equal(sl_test_sh("diff -r '%s' '%s' >/dev/null", a, b), 0);
    /* the directory really has several files and a val split */
    assert_int_equal(sl_test_sh("test -f '%s/train-00001.tokens' && test -f '%s/val-00000.tokens'", a, a), 0);
    sl_meta_sel_free(&o.fields);
}

static void test_pack_equals_cli(void **state)
{
    (void)state;
    char in[128], a[128], b[128];
    snprintf(in, sizeof in, "%s/in2.tok", tmpdir);
    write_stream(in, 50, 0);
    snprintf(a, sizeof a, "%s/lib.tok", tmpdir);
    snprintf(b, sizeof b, "%s/cli.tok", tmpdir);
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.pack.seq_len = 64;
    o.pack.no_split = 1;
    o.pack.long_mode = SL_LONG_DROP;
    o.progress = 0;
    sl_err err = {{0}};
    sl_output *out = sl_output_open(a, &err);
    assert_non_null(out);
    const char *inputs[] = {in, in}; /* two inputs read as one stream */
    sl_stage_stats st;
    assert_int_equal(sl_pack_run(&o, inputs, 2, out, &st, &err), 0);
    assert_int_equal(sl_output_commit(out, &err), 0);
    assert_int_equal(st.docs, 100);
    assert_true(st.dropped > 0);      /* documents over 64 tokens */
    assert_int_equal(st.dup_ids, 50); /* the second copy repeats every id */
    assert_string_equal(st.first_dup, "doc0");
    assert_int_equal(sl_test_sh("'%s' pack -q --seq-len 64 --no-split --long drop '%s' '%s' -o '%s'", bin(), in, in, b),
                     0);
    assert_int_equal(sl_test_sh("cmp -s '%s' '%s'", a, b), 0);
}

static void test_errors_name_fields(void **state)
{
    (void)state;
    char in[128], d[128];
    snprintf(in, sizeof in, "%s/in3.tok", tmpdir);
    write_stream(in, 10, 1);
    snprintf(d, sizeof d, "%s/none", tmpdir);
    const char *inputs[] = {in};
    sl_stage_opts o;
    sl_stage_opts_default(&o);
    o.progress = 0;
    sl_err err = {{0}};
    sl_stage_stats st;
    /* no row length for a document stream: a usage error */
    assert_int_equal(sl_shard_run(&o, inputs, 1, d, &st, &err), SL_STAGE_USAGE);
    assert_string_equal(err.msg, "`seq_len` L is required (or `warmup` SPEC)");
    /* combinations rejected before any input is read */
    o.pack.seq_len = 64;
    o.shuffle_window = 5;
    assert_int_equal(sl_stage_opts_check(&o, &err), -1);
    assert_string_equal(err.msg, "`shuffle_window` needs `shuffle`");
    assert_int_equal(sl_shard_run(&o, inputs, 1, d, &st, &err), -1);
    o.shuffle_window = 0;
    /* a repeated id: counted, or an error naming the document and the field */
    assert_int_equal(sl_shard_run(&o, inputs, 1, d, &st, &err), 0);
    assert_int_equal(st.dup_ids, 1);
    assert_int_equal(st.first_dup_doc, 9);
    o.unique_ids = 1;
    o.force = 1;
    assert_int_equal(sl_shard_run(&o, inputs, 1, d, &st, &err), -1);
    assert_non_null(strstr(err.msg, ": document 9: duplicate id 'doc3' (`unique_ids`)"));
    assert_null(strstr(err.msg, "--"));
    /* the failed run left the earlier directory as it was */
    assert_int_equal(sl_test_sh("test -f '%s/manifest.json'", d), 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-stage-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_equals_cli),
        cmocka_unit_test(test_pack_equals_cli),
        cmocka_unit_test(test_errors_name_fields),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sl_test_sh("rm -rf '%s'", tmpdir);
    return rc;
}
