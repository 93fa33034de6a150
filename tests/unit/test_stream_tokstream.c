/* Token stream: round trips at every width, detection of truncation at every
 * offset and of every single-bit corruption, and writer-side checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream/io.h"
#include "stream/tokstream.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

typedef struct {
    char *data;
    size_t len;
} blob;

/* A writer of header h into a new temporary file (its name in path, a
 * "/tmp/sluice-ts-XXXXXX" to fill), *o its output. */
static sl_ts_writer *open_writer(const sl_ts_header *h, char *path, sl_output **o)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sl_err e;
    *o = sl_output_open(path, &e);
    assert_non_null(*o);
    sl_ts_writer *w = sl_ts_writer_open(*o, h, &e);
    assert_non_null(w);
    return w;
}

/* Finishes w, commits o and returns the file's bytes (the file removed). */
static blob finish_read(sl_ts_writer *w, sl_output *o, const char *path)
{
    sl_err e;
    assert_int_equal(sl_ts_writer_finish(w, &e), 0);
    assert_int_equal(sl_output_commit(o, &e), 0);
    blob b;
    assert_int_equal(sl_read_file(path, &b.data, &b.len, &e), 0);
    unlink(path);
    return b;
}

/* Writes docs to a temporary file and returns its bytes. */
static blob write_stream(const sl_ts_header *h, sl_doc *docs, int n)
{
    char path[] = "/tmp/sluice-ts-XXXXXX";
    sl_output *o;
    sl_ts_writer *w = open_writer(h, path, &o);
    sl_err e;
    for (int i = 0; i < n; i++)
        assert_int_equal(sl_ts_write_doc(w, &docs[i], &e), 0);
    return finish_read(w, o, path);
}

/* Reads a stream from memory; returns the number of docs or -1 on error. */
static int read_stream(const char *p, size_t n, sl_doc *out, int max, sl_err *e)
{
    sl_input *in = sl_input_mem(p, n, "mem", e);
    if (!in)
        return -1;
    sl_ts_reader *r = sl_ts_reader_open(in, e);
    if (!r) {
        sl_input_close(in);
        return -1;
    }
    int count = 0, rc;
    sl_doc d = {0};
    while ((rc = sl_ts_read_doc(r, &d, e)) == 1) {
        if (out && count < max) {
            sl_doc_set_id(&out[count], d.id, d.id_len);
            sl_doc_set_meta(&out[count], d.meta, d.meta_len);
            out[count].src_bytes = d.src_bytes;
            out[count].n_tokens = 0;
            for (size_t i = 0; i < d.n_tokens; i++)
                sl_doc_push(&out[count], d.tokens[i]);
        }
        count++;
    }
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_input_close(in);
    return rc < 0 ? -1 : count;
}

static void make_docs(sl_doc *docs, int n, uint32_t vocab)
{
    for (int i = 0; i < n; i++) {
        memset(&docs[i], 0, sizeof docs[i]);
        char id[64];
        int k = snprintf(id, sizeof id, "doc-%d-\xC3\xA9", i);
        sl_doc_set_id(&docs[i], id, (size_t)k);
        if (i % 2)
            sl_doc_set_meta(&docs[i], "{\"score\":1.5}", 13);
        docs[i].src_bytes = rnd() % 1000;
        size_t len = i == 0 ? 0 : rnd() % (i == 3 ? 300000 : 50); /* one empty, one long (> chunk) */
        for (size_t j = 0; j < len; j++)
            sl_doc_push(&docs[i], j == 0 ? vocab - 1 : rnd() % vocab);
    }
}

static void test_roundtrip_widths(void **st)
{
    (void)st;
    const uint32_t vocabs[] = {1, 12, 256, 257, 50277, 65536, 65537, 4000000000u};
    const uint8_t widths[] = {1, 1, 1, 2, 2, 2, 4, 4};
    for (size_t v = 0; v < sizeof vocabs / sizeof *vocabs; v++) {
        sl_ts_header h;
        sl_ts_header_init(&h, SL_MOD_TEXT, vocabs[v]);
        assert_int_equal(h.width, widths[v]);
        h.eos = 0;
        snprintf(h.fingerprint, sizeof h.fingerprint, "sha256:%064d", 0);
        sl_ts_header_set_extra(&h, "{\"sample_rate\":16000}");
        sl_doc docs[6], back[6];
        make_docs(docs, 6, vocabs[v]);
        memset(back, 0, sizeof back);
        blob b = write_stream(&h, docs, 6);
        sl_err e;
        assert_int_equal(read_stream(b.data, b.len, back, 6, &e), 6);
        for (int i = 0; i < 6; i++) {
            assert_string_equal(back[i].id, docs[i].id);
            assert_int_equal(back[i].n_tokens, docs[i].n_tokens);
            if (docs[i].n_tokens)
                assert_memory_equal(back[i].tokens, docs[i].tokens, docs[i].n_tokens * 4);
            assert_int_equal(back[i].src_bytes, docs[i].src_bytes);
            assert_string_equal(back[i].meta ? back[i].meta : "", docs[i].meta ? docs[i].meta : "");
            sl_doc_free(&docs[i]);
            sl_doc_free(&back[i]);
        }
        /* header fields survive */
        sl_input *in = sl_input_mem(b.data, b.len, "mem", &e);
        sl_ts_reader *r = sl_ts_reader_open(in, &e);
        const sl_ts_header *rh = sl_ts_reader_header(r);
        assert_int_equal(rh->vocab_size, vocabs[v]);
        assert_int_equal(rh->eos, 0);
        assert_int_equal(rh->bos, SL_TS_NO_ID);
        assert_string_equal(rh->fingerprint, h.fingerprint);
        assert_string_equal(rh->extra_json, "{\"sample_rate\":16000}");
        sl_ts_reader_close(r);
        sl_input_close(in);
        sl_ts_header_free(&h);
        free(b.data);
    }
}

static blob small_stream(void)
{
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_IDS, 1000);
    sl_doc docs[3];
    make_docs(docs, 3, 1000);
    blob b = write_stream(&h, docs, 3);
    for (int i = 0; i < 3; i++)
        sl_doc_free(&docs[i]);
    return b;
}

static void test_truncation_every_offset(void **st)
{
    (void)st;
    blob b = small_stream();
    for (size_t cut = 0; cut < b.len; cut++) {
        sl_err e = {{0}};
        if (read_stream(b.data, cut, NULL, 0, &e) != -1)
            fail_msg("stream truncated at %zu of %zu bytes was accepted", cut, b.len);
        assert_true(strstr(e.msg, "truncated") || strstr(e.msg, "empty") || strstr(e.msg, "too short"));
    }
    sl_err e;
    assert_int_equal(read_stream(b.data, b.len, NULL, 0, &e), 3);
    free(b.data);
}

static void test_every_bit_flip_detected(void **st)
{
    (void)st;
    blob b = small_stream();
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            b.data[i] ^= (char)(1 << bit);
            sl_err e = {{0}};
            if (read_stream(b.data, b.len, NULL, 0, &e) != -1)
                fail_msg("flipping bit %d of byte %zu was not detected", bit, i);
            b.data[i] ^= (char)(1 << bit);
        }
    free(b.data);
}

static void test_trailing_garbage_rejected(void **st)
{
    (void)st;
    blob b = small_stream();
    b.data = realloc(b.data, b.len + 1);
    b.data[b.len] = 'x';
    sl_err e;
    assert_int_equal(read_stream(b.data, b.len + 1, NULL, 0, &e), -1);
    assert_non_null(strstr(e.msg, "after the end"));
    free(b.data);
}

static void test_writer_rejects_out_of_vocab(void **st)
{
    (void)st;
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_IDS, 10);
    sl_err e;
    sl_output *o = sl_output_open("/tmp/sluice-never-committed.tok", &e);
    sl_ts_writer *w = sl_ts_writer_open(o, &h, &e);
    sl_doc d = {0};
    sl_doc_set_id(&d, "x", 1);
    sl_doc_push(&d, 9);
    sl_doc_push(&d, 10);
    assert_int_equal(sl_ts_write_doc(w, &d, &e), -1);
    assert_non_null(strstr(e.msg, "token 1: id 10 is not below the vocab size 10"));
    sl_ts_writer_abort(w);
    sl_output_abort(o);
    assert_int_equal(access("/tmp/sluice-never-committed.tok", F_OK), -1);
    sl_doc_free(&d);
}

/* A refused document leaves nothing behind, wherever its bad id is (the
 * first id, the last of a long document's first 2^18, one past them, the
 * very last), at every width: the stream written around it reads back as
 * the good documents alone, byte for byte as a stream of only those. */
static void test_writer_refusal_writes_nothing(void **st)
{
    (void)st;
    static const uint32_t vocabs[] = {200, 50000, 100000};
    const size_t n = ((size_t)1 << 18) + 7;
    const size_t at[] = {0, ((size_t)1 << 18) - 1, (size_t)1 << 18, n - 1};
    for (size_t v = 0; v < sizeof vocabs / sizeof *vocabs; v++) {
        sl_ts_header h;
        sl_ts_header_init(&h, SL_MOD_IDS, vocabs[v]);
        sl_doc good[2] = {{0}, {0}}, bad = {0};
        for (int i = 0; i < 2; i++) {
            sl_doc_set_id(&good[i], i ? "b" : "a", 1);
            for (size_t j = 0; j < n; j++)
                sl_doc_push(&good[i], rnd() % vocabs[v]);
        }
        blob want = write_stream(&h, good, 2);
        for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
            char path[] = "/tmp/sluice-ts-XXXXXX";
            sl_output *o;
            sl_ts_writer *w = open_writer(&h, path, &o);
            sl_err e;
            sl_doc_clear(&bad);
            sl_doc_set_id(&bad, "x", 1);
            for (size_t j = 0; j < n; j++)
                sl_doc_push(&bad, j == at[a] ? vocabs[v] + (uint32_t)j : rnd() % vocabs[v]);
            assert_int_equal(sl_ts_write_doc(w, &good[0], &e), 0);
            assert_int_equal(sl_ts_write_doc(w, &bad, &e), -1);
            char msg[64];
            snprintf(msg, sizeof msg, "token %zu: id %u is not below", at[a], vocabs[v] + (uint32_t)at[a]);
            assert_non_null(strstr(e.msg, msg));
            assert_int_equal(sl_ts_write_doc(w, &good[1], &e), 0);
            blob got = finish_read(w, o, path);
            assert_int_equal(got.len, want.len);
            assert_memory_equal(got.data, want.data, want.len);
            free(got.data);
        }
        free(want.data);
        sl_doc_free(&good[0]);
        sl_doc_free(&good[1]);
        sl_doc_free(&bad);
        sl_ts_header_free(&h);
    }
}

static void test_not_a_stream(void **st)
{
    (void)st;
    sl_err e;
    const char junk[] = "{\"id\":1}\n";
    assert_int_equal(read_stream(junk, sizeof junk - 1, NULL, 0, &e), -1);
    assert_non_null(strstr(e.msg, "not a token stream"));
}

/* sl_ts_write_doc_raw with ids already narrowed (by this test, byte by byte)
 * gives exactly the bytes sl_ts_write_doc gives for the same documents, at
 * every width, and the reader reads them back; a max_token not below the vocab
 * size is refused with the document named. */
static void test_write_raw_same_bytes(void **st)
{
    (void)st;
    const uint32_t vocabs[] = {12, 256, 257, 65536, 65537};
    for (size_t v = 0; v < sizeof vocabs / sizeof *vocabs; v++) {
        sl_ts_header h;
        sl_ts_header_init(&h, SL_MOD_DNA, vocabs[v]);
        sl_ts_header_set_extra(&h, "{\"k\":1}");
        sl_doc docs[6];
        make_docs(docs, 6, vocabs[v]);
        blob ref = write_stream(&h, docs, 6);

        char path[] = "/tmp/sluice-ts-raw-XXXXXX";
        sl_output *o;
        sl_ts_writer *w = open_writer(&h, path, &o);
        sl_err e;
        size_t width = sl_ts_writer_width(w);
        assert_int_equal(width, h.width);
        for (int i = 0; i < 6; i++) {
            unsigned char *p = malloc(docs[i].n_tokens * width + 1);
            uint32_t max = 0;
            for (size_t j = 0; j < docs[i].n_tokens; j++) {
                uint32_t t = docs[i].tokens[j];
                max = t > max ? t : max;
                for (size_t b = 0; b < width; b++)
                    p[j * width + b] = (unsigned char)(t >> (8 * b));
            }
            sl_doc meta = {0};
            sl_doc_set_id(&meta, docs[i].id, docs[i].id_len);
            sl_doc_set_meta(&meta, docs[i].meta ? docs[i].meta : "", docs[i].meta ? docs[i].meta_len : 0);
            meta.src_bytes = docs[i].src_bytes;
            assert_int_equal(sl_ts_write_doc_raw(w, &meta, p, docs[i].n_tokens, max, &e), 0);
            free(p);
            sl_doc_free(&meta);
        }
        assert_int_equal(sl_ts_writer_count(w), 6);
        blob raw = finish_read(w, o, path);
        assert_int_equal(raw.len, ref.len);
        assert_memory_equal(raw.data, ref.data, ref.len);
        assert_int_equal(read_stream(raw.data, raw.len, NULL, 0, &e), 6);
        for (int i = 0; i < 6; i++)
            sl_doc_free(&docs[i]);
        free(ref.data);
        free(raw.data);
        sl_ts_header_free(&h);
    }

    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_DNA, 12);
    sl_err e;
    sl_output *o = sl_output_open("/tmp/sluice-never-committed-raw.tok", &e);
    sl_ts_writer *w = sl_ts_writer_open(o, &h, &e);
    sl_doc d = {0};
    sl_doc_set_id(&d, "chr1", 4);
    const unsigned char ids[2] = {7, 11};
    assert_int_equal(sl_ts_write_doc_raw(w, &d, ids, 2, 11, &e), 0);
    assert_int_equal(sl_ts_write_doc_raw(w, &d, ids, 2, 12, &e), -1);
    assert_non_null(strstr(e.msg, "document 'chr1': ids up to 12 are not all below the vocab size 12"));
    assert_int_equal(sl_ts_writer_count(w), 1);
    sl_ts_writer_abort(w);
    sl_output_abort(o);
    assert_int_equal(access("/tmp/sluice-never-committed-raw.tok", F_OK), -1);
    sl_doc_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_widths),
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_every_bit_flip_detected),
        cmocka_unit_test(test_trailing_garbage_rejected),
        cmocka_unit_test(test_writer_rejects_out_of_vocab),
        cmocka_unit_test(test_writer_refusal_writes_nothing),
        cmocka_unit_test(test_not_a_stream),
        cmocka_unit_test(test_write_raw_same_bytes),
    };
    return cmocka_run_group_tests_name("stream/tokstream", tests, NULL, NULL);
}
