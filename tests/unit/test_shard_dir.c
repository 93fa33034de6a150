/* Shard directories (docs/shards.md section 4): what the writer stores is
 * what the reader returns (rows, pieces, document ids), the shuffle permutes
 * rows only within windows and is fully determined by the seed (same seed ->
 * byte-identical directory), files are cut at --max-file-bytes, and a
 * corrupted or truncated file is reported, naming the file; documents.jsonl
 * has a line per ordinal with the metadata given, indexed by documents.idx. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support.h"

#include "shard/pack.h"
#include "shard/shard.h"
#include "shard/util.h"
#include "base/rng.h"

#define L 16
#define NDOCS 60

typedef struct {
    uint32_t tok[L];
    size_t n;
    sl_piece p[L];
} saved_row;

typedef struct {
    sl_shard_writer *w;
    saved_row *rows;
    size_t n_rows, cap;
} wctx;

static int on_row(void *vc, const sl_row *r, sl_err *err)
{
    wctx *c = vc;
    if (c->n_rows == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
    }
    saved_row *s = &c->rows[c->n_rows++];
    memcpy(s->tok, r->tokens, sizeof s->tok);
    s->n = r->n_pieces;
    memcpy(s->p, r->pieces, r->n_pieces * sizeof *r->pieces);
    return sl_shard_writer_row(c->w, SL_SPLIT_TRAIN, r, err);
}

static uint32_t doc_tok[NDOCS][80];
static size_t doc_n[NDOCS];

static void make_docs(void)
{
    uint64_t rng = 5;
    for (int i = 0; i < NDOCS; i++) {
        doc_n[i] = (size_t)sl_rng_below(&rng, 80);
        for (size_t k = 0; k < doc_n[i]; k++)
            doc_tok[i][k] = 4 + (uint32_t)sl_rng_below(&rng, 60000);
    }
}

static sl_shard_info info_for(int shuffle, uint64_t seed)
{
    sl_shard_info in;
    memset(&in, 0, sizeof in);
    in.seq_len = L;
    in.dtype_bytes = 2;
    in.vocab_size = 65536;
    in.modality = 4;
    snprintf(in.fingerprint, sizeof in.fingerprint, "sha256:%064d", 0);
    in.eos = 1;
    in.bos = SL_NO_TOKEN;
    in.pad = 0;
    in.shuffle = shuffle;
    in.seed = seed;
    in.shuffle_window = 5;
    return in;
}

/* Packs the documents into dir; returns the rows in packing order. */
static wctx write_dir(const char *dir, int shuffle, uint64_t seed, uint64_t max_bytes)
{
    sl_err err = {{0}};
    sl_shard_info in = info_for(shuffle, seed);
    wctx c = {0};
    c.w = sl_shard_writer_open(dir, &in, max_bytes, 1, &err);
    if (!c.w)
        fail_msg("%s", err.msg);
    sl_pack_opts o = {.seq_len = L, .eos = 1, .bos = SL_NO_TOKEN, .pad = 0};
    sl_packer *p = sl_packer_new(&o, on_row, &c, &err);
    for (int i = 0; i < NDOCS; i++) {
        char id[16];
        snprintf(id, sizeof id, "d%d", i);
        int st;
        assert_int_equal(sl_packer_add(p, (uint64_t)i, id, strlen(id), doc_tok[i], doc_n[i], &st, &err), 0);
        assert_int_equal(sl_shard_writer_doc(c.w, (uint64_t)i, id, strlen(id), SL_SPLIT_TRAIN, st, &err), 0);
    }
    assert_int_equal(sl_packer_finish(p, &err), 0);
    sl_packer_free(p);
    if (sl_shard_writer_finish(c.w, &err))
        fail_msg("%s", err.msg);
    return c;
}

static char tmpdir[64];

static void path(char *buf, const char *a, const char *b)
{
    snprintf(buf, 256, "%s/%s%s%s", tmpdir, a, b ? "/" : "", b ? b : "");
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sluice-shardtest-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    make_docs();
    return 0;
}

static void rm_tree(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd)
        return;
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (e->d_name[0] == '.')
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        if (sl_shard_is_dir(p))
            sl_shard_rmdir(p);
        else
            unlink(p);
    }
    closedir(dd);
    rmdir(d);
}

static int teardown(void **state)
{
    (void)state;
    rm_tree(tmpdir);
    return 0;
}

/* Read everything back and compare with the packed rows (window by window). */
static void test_round_trip(void **state)
{
    (void)state;
    char d[256];
    path(d, "a", NULL);
    wctx c = write_dir(d, 1, 42, 3 * L * 2); /* 3 rows per file */
    sl_err err = {{0}};
    sl_shard *s = sl_shard_open(d, 1, &err);
    if (!s)
        fail_msg("%s", err.msg);
    assert_int_equal(sl_shard_get_split(s, SL_SPLIT_TRAIN)->rows, c.n_rows);
    assert_int_equal(sl_shard_get_split(s, SL_SPLIT_TRAIN)->n_files, (c.n_rows + 2) / 3);
    assert_int_equal(sl_shard_n_docs(s), NDOCS);
    assert_int_equal(sl_shard_get_warmup(s)->n, 1);
    assert_int_equal(sl_shard_get_warmup(s)->stages[0].steps, (int64_t)c.n_rows);
    sl_shard_iter *it = sl_shard_iter_open(s, SL_SPLIT_TRAIN, &err);
    sl_row r;
    size_t k = 0, moved = 0;
    int *used = calloc(c.n_rows, sizeof *used);
    /* reassembled documents */
    uint32_t got[NDOCS][81];
    size_t got_n[NDOCS] = {0};
    int rc;
    while ((rc = sl_shard_iter_next(it, &r, &err)) == 1) {
        /* the row came from the same window of 5 */
        size_t w0 = k / 5 * 5, found = (size_t)-1;
        for (size_t j = w0; j < w0 + 5 && j < c.n_rows; j++)
            if (!used[j] && !memcmp(c.rows[j].tok, r.tokens, sizeof c.rows[j].tok) && c.rows[j].n == r.n_pieces) {
                found = j;
                break;
            }
        assert_true(found != (size_t)-1);
        used[found] = 1;
        moved += found != k;
        for (size_t i = 0; i < r.n_pieces; i++) {
            const sl_piece *p = &r.pieces[i];
            assert_int_equal(p->doc, c.rows[found].p[i].doc);
            char id[16];
            snprintf(id, sizeof id, "d%llu", (unsigned long long)p->doc);
            assert_int_equal(p->id_len, strlen(id));
            assert_memory_equal(p->id, id, p->id_len);
            memcpy(got[p->doc] + p->doc_offset, r.tokens + p->offset, p->length * sizeof(uint32_t));
            if (p->doc_offset + p->length > got_n[p->doc])
                got_n[p->doc] = p->doc_offset + p->length;
        }
        k++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(k, c.n_rows);
    assert_true(moved > 0); /* the shuffle did something */
    for (int i = 0; i < NDOCS; i++) {
        assert_int_equal(got_n[i], doc_n[i] + 1);
        assert_memory_equal(got[i], doc_tok[i], doc_n[i] * sizeof(uint32_t));
        assert_int_equal(got[i][doc_n[i]], 1); /* EOS */
    }
    free(used);
    sl_shard_iter_close(it);
    sl_shard_close(s);
    free(c.rows);
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    if (!fa || !fb) {
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
        return 0;
    }
    int ca, cb, same = 1;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        if (ca != cb)
            same = 0;
    } while (same && ca != EOF);
    fclose(fa);
    fclose(fb);
    return same;
}

static void test_deterministic(void **state)
{
    (void)state;
    char a[256], b[256], cdir[256], pa[256], pb[256], pc[256];
    path(a, "s1", NULL);
    path(b, "s2", NULL);
    path(cdir, "s3", NULL);
    wctx x = write_dir(a, 1, 7, 0), y = write_dir(b, 1, 7, 0), z = write_dir(cdir, 1, 8, 0);
    free(x.rows);
    free(y.rows);
    free(z.rows);
    const char *names[] = {"manifest.json", "documents.jsonl", "train-00000.tokens", "train-00000.bounds"};
    for (int i = 0; i < 4; i++) {
        path(pa, "s1", names[i]);
        path(pb, "s2", names[i]);
        if (!same_file(pa, pb))
            fail_msg("%s differs between two runs with the same seed", names[i]);
    }
    path(pa, "s1", "train-00000.tokens");
    path(pc, "s3", "train-00000.tokens");
    assert_false(same_file(pa, pc)); /* another seed, another order */
}

static void flip_byte(const char *p, long at)
{
    FILE *f = fopen(p, "r+b");
    assert_non_null(f);
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x20, f);
    fclose(f);
}

static void test_corruption(void **state)
{
    (void)state;
    char d[256], p[256];
    path(d, "c", NULL);
    wctx c = write_dir(d, 0, 0, 0);
    free(c.rows);
    sl_err err = {{0}};
    path(p, "c", "train-00000.tokens");
    flip_byte(p, 5);
    assert_null(sl_shard_open(d, 1, &err));
    assert_non_null(strstr(err.msg, "train-00000.tokens: checksum mismatch"));
    sl_shard *s = sl_shard_open(d, 0, &err); /* sizes still fine */
    assert_non_null(s);
    sl_shard_close(s);
    flip_byte(p, 5);
    path(p, "c", "train-00000.bounds");
    assert_int_equal(truncate(p, 40), 0);
    assert_null(sl_shard_open(d, 0, &err));
    assert_non_null(strstr(err.msg, "train-00000.bounds: size 40 bytes"));
    path(p, "c", "manifest.json");
    FILE *f = fopen(p, "w");
    fputs("{\"format\":\"sluice-shards\",\"version\":9}", f);
    fclose(f);
    assert_null(sl_shard_open(d, 0, &err));
    assert_non_null(strstr(err.msg, "unsupported version 9"));
    path(p, "nonexistent", NULL);
    assert_null(sl_shard_open(p, 0, &err));
    assert_non_null(strstr(err.msg, "manifest.json"));
}

static void test_exists_and_abort(void **state)
{
    (void)state;
    char d[256], t[300];
    path(d, "e", NULL);
    assert_int_equal(mkdir(d, 0777), 0);
    sl_err err = {{0}};
    sl_shard_info in = info_for(0, 0);
    assert_null(sl_shard_writer_open(d, &in, 0, 0, &err));
    assert_non_null(strstr(err.msg, "already exists"));
    rmdir(d);
    sl_shard_writer *w = sl_shard_writer_open(d, &in, 0, 0, &err);
    assert_non_null(w);
    snprintf(t, sizeof t, "%s.tmp.%ld", d, (long)getpid());
    assert_true(sl_shard_is_dir(t));
    sl_shard_writer_abort(w);
    assert_false(sl_shard_is_dir(t));
    assert_false(sl_shard_is_dir(d));
    /* vocab larger than the dtype */
    in.vocab_size = 70000;
    assert_null(sl_shard_writer_open(d, &in, 0, 0, &err));
    assert_non_null(strstr(err.msg, "does not fit uint16"));
}

static void read_all(const char *p, char **data, size_t *len)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(*len + 1);
    assert_int_equal(fread(*data, 1, *len, f), *len);
    (*data)[*len] = 0;
    fclose(f);
}

static void write_all(const char *p, const char *data, size_t len)
{
    assert_int_equal(sl_test_write(p, data, len), 0);
}

/* Metadata lines: what the writer is given comes back by ordinal; skipped
 * ordinals get a line; documents.idx entry k is the offset of line k (read
 * from the file with the format's rules, not through the reader). */
static void test_doc_meta(void **state)
{
    (void)state;
    char d[256], p[256];
    path(d, "m", NULL);
    sl_err err = {{0}};
    sl_shard_info in = info_for(0, 0);
    sl_shard_writer *w = sl_shard_writer_open(d, &in, 0, 1, &err);
    assert_non_null(w);
    /* in the writer's canonical form (what sl_meta_select writes and the reader returns) */
    const char *m0 = "{\"label\":1,\"s\":\"a\\\"b\\u0001\xc3\xa9\",\"n\":{\"x\":[1,2.5e3,null]}}";
    assert_int_equal(sl_shard_writer_doc_meta(w, 0, "x", 1, SL_SPLIT_TRAIN, SL_DOC_PLACED, m0, strlen(m0), &err), 0);
    assert_int_equal(sl_shard_writer_doc_meta(w, 1, "y", 1, SL_SPLIT_VAL, SL_DOC_TRUNCATED, NULL, 0, &err), 0);
    /* a gap: ordinals 2 and 3 are never given */
    assert_int_equal(sl_shard_writer_doc_meta(w, 4, "z", 1, SL_SPLIT_TRAIN, SL_DOC_PLACED, "{}", 2, &err), 0);
    /* ordinals must increase; metadata must be a one-line object */
    assert_int_equal(sl_shard_writer_doc_meta(w, 4, "z", 1, SL_SPLIT_TRAIN, SL_DOC_PLACED, NULL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "document 4: ordinals must increase"));
    assert_int_equal(sl_shard_writer_doc_meta(w, 5, "z", 1, SL_SPLIT_TRAIN, SL_DOC_PLACED, "{\n}", 3, &err), -1);
    assert_non_null(strstr(err.msg, "one-line JSON object"));
    assert_int_equal(sl_shard_writer_doc_meta(w, 5, "z", 1, SL_SPLIT_TRAIN, SL_DOC_PLACED, "[1]", 3, &err), -1);
    uint32_t tok[L] = {0};
    sl_piece pc = {.doc = 0, .doc_offset = 0, .offset = 0, .length = L};
    sl_row r = {.tokens = tok, .n_pieces = 1, .pieces = &pc};
    assert_int_equal(sl_shard_writer_row(w, SL_SPLIT_TRAIN, &r, &err), 0);
    assert_int_equal(sl_shard_writer_finish(w, &err), 0);

    const char *want[5] = {
        "{\"doc\":0,\"id\":\"x\",\"split\":\"train\",\"meta\":{\"label\":1,\"s\":\"a\\\"b\\u0001\xc3\xa9\","
        "\"n\":{\"x\":[1,2.5e3,null]}}}\n",
        "{\"doc\":1,\"id\":\"y\",\"split\":\"val\",\"long\":\"truncated\"}\n",
        "{\"doc\":2,\"id\":\"\",\"split\":\"train\",\"long\":\"dropped\"}\n",
        "{\"doc\":3,\"id\":\"\",\"split\":\"train\",\"long\":\"dropped\"}\n",
        "{\"doc\":4,\"id\":\"z\",\"split\":\"train\"}\n", /* an empty object is no metadata */
    };
    char *data, *idx;
    size_t len, ilen;
    path(p, "m", "documents.jsonl");
    read_all(p, &data, &len);
    path(p, "m", "documents.idx");
    read_all(p, &idx, &ilen);
    assert_int_equal(ilen, 6 * 8);
    uint64_t off = 0;
    for (int k = 0; k < 5; k++) {
        uint64_t e = 0, e1 = 0;
        for (int b = 7; b >= 0; b--) {
            e = e << 8 | (unsigned char)idx[8 * k + b];
            e1 = e1 << 8 | (unsigned char)idx[8 * k + 8 + b];
        }
        assert_int_equal(e, off);
        assert_int_equal(e1 - e, strlen(want[k]));
        assert_memory_equal(data + e, want[k], strlen(want[k]));
        off += strlen(want[k]);
    }
    assert_int_equal(off, len);

    /* the reader: metadata by document, ids, has_meta */
    for (int verify = 0; verify < 2; verify++) {
        sl_shard *s = sl_shard_open(d, verify, &err);
        if (!s)
            fail_msg("%s", err.msg);
        assert_int_equal(sl_shard_n_docs(s), 5);
        sl_buf b = {0};
        assert_int_equal(sl_shard_doc_meta(s, 0, &b, &err), 0);
        assert_int_equal(b.len, strlen(m0));
        assert_memory_equal(b.data, m0, b.len);
        sl_buf_clear(&b);
        assert_int_equal(sl_shard_doc_meta(s, 1, &b, &err), 0);
        assert_int_equal(b.len, 0);
        assert_int_equal(sl_shard_doc(s, 1, NULL)->long_status, SL_DOC_TRUNCATED);
        assert_int_equal(sl_shard_doc(s, 1, NULL)->split, SL_SPLIT_VAL);
        assert_int_equal(sl_shard_doc(s, 2, NULL)->long_status, SL_DOC_DROPPED);
        assert_int_equal(sl_shard_doc_find(s, 4), 4);
        assert_int_equal(sl_shard_doc_find(s, 5), SIZE_MAX);
        assert_true(sl_shard_doc(s, 0, NULL)->has_meta);
        assert_false(sl_shard_doc(s, 4, NULL)->has_meta);
        sl_buf_free(&b);
        sl_shard_close(s);
    }

    /* an entry that points elsewhere (same size): the checksum finds it, and
     * without checksums the entry check does, naming documents.idx */
    idx[8] ^= 1;
    path(p, "m", "documents.idx");
    write_all(p, idx, ilen);
    assert_null(sl_shard_open(d, 1, &err));
    assert_non_null(strstr(err.msg, "documents.idx: checksum mismatch"));
    assert_null(sl_shard_open(d, 0, &err));
    assert_non_null(strstr(err.msg, "documents.idx: entry 1 is"));
    idx[8] ^= 1;
    idx[40] ^= 1; /* the last entry: the size of documents.jsonl */
    write_all(p, idx, ilen);
    assert_null(sl_shard_open(d, 0, &err));
    assert_non_null(strstr(err.msg, "documents.idx: entry 5 is"));
    write_all(p, idx, ilen - 8);
    assert_null(sl_shard_open(d, 0, &err));
    assert_non_null(strstr(err.msg, "documents.idx: size 40 bytes, the manifest implies 48"));
    free(data);
    free(idx);
}

static void test_split_of(void **state)
{
    (void)state;
    /* the split depends on the id only, and the fraction is honoured */
    int val = 0;
    for (int i = 0; i < 10000; i++) {
        char id[16];
        snprintf(id, sizeof id, "doc-%d", i);
        int s = sl_split_of(id, strlen(id), 0.1);
        assert_int_equal(s, sl_split_of(id, strlen(id), 0.1));
        if (s == SL_SPLIT_VAL) {
            val++;
            assert_int_equal(sl_split_of(id, strlen(id), 0.2), SL_SPLIT_VAL); /* monotone in F */
        }
        assert_int_equal(sl_split_of(id, strlen(id), 0), SL_SPLIT_TRAIN);
    }
    assert_in_range(val, 900, 1100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_corruption), cmocka_unit_test(test_exists_and_abort),
        cmocka_unit_test(test_split_of),   cmocka_unit_test(test_doc_meta),
    };
    return cmocka_run_group_tests_name("shard_dir", tests, setup, teardown);
}
