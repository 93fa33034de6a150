/* Token stream records written in pieces (sl_ts_write_doc_begin/_part, for
 * documents too long to hold): byte-identical to the same documents written
 * whole, at every width and for any split of the tokens; misuse (more tokens
 * than announced, another record or the trailer before the record is
 * complete) is an error. */
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

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* ids of doc d packed little-endian at width w */
static unsigned char *pack(const sl_doc *d, int w)
{
    unsigned char *p = malloc(d->n_tokens * (size_t)w + 1);
    for (size_t i = 0; i < d->n_tokens; i++)
        for (int b = 0; b < w; b++)
            p[i * (size_t)w + (size_t)b] = (unsigned char)(d->tokens[i] >> (8 * b));
    return p;
}

/* The stream of docs, written whole (pieces = 0) or each in random pieces. */
static void write_stream(const sl_ts_header *h, const sl_doc *docs, int n, int pieces, char **data, size_t *len)
{
    char path[] = "/tmp/sluice-tsp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sl_err e;
    sl_output *o = sl_output_open(path, &e);
    assert_non_null(o);
    sl_ts_writer *w = sl_ts_writer_open(o, h, &e);
    assert_non_null(w);
    for (int i = 0; i < n; i++) {
        if (!pieces) {
            assert_int_equal(sl_ts_write_doc(w, &docs[i], &e), 0);
            continue;
        }
        int width = sl_ts_writer_width(w);
        unsigned char *p = pack(&docs[i], width);
        assert_int_equal(sl_ts_write_doc_begin(w, &docs[i], docs[i].n_tokens, h->vocab_size - 1, &e), 0);
        for (size_t at = 0; at < docs[i].n_tokens;) {
            size_t k = 1 + rnd() % (docs[i].n_tokens - at < 5000 ? docs[i].n_tokens - at : 5000);
            assert_int_equal(sl_ts_write_doc_part(w, p + at * (size_t)width, k, &e), 0);
            at += k;
        }
        free(p);
    }
    assert_int_equal(sl_ts_writer_count(w), (uint64_t)n);
    assert_int_equal(sl_ts_writer_finish(w, &e), 0);
    assert_int_equal(sl_output_commit(o, &e), 0);
    assert_int_equal(sl_read_file(path, data, len, &e), 0);
    unlink(path);
}

static void test_pieces_equal_whole(void **state)
{
    (void)state;
    const uint32_t vocabs[] = {200, 50000, 1u << 20};
    for (int v = 0; v < 3; v++) {
        sl_ts_header h;
        sl_ts_header_init(&h, SL_MOD_DNA, vocabs[v]);
        sl_doc docs[4] = {{0}};
        const size_t sizes[] = {7, 123457, 0, 1};
        for (int i = 0; i < 4; i++) {
            char id[32];
            snprintf(id, sizeof id, "doc%d", i);
            sl_doc_set_id(&docs[i], id, strlen(id));
            sl_doc_set_meta(&docs[i], i == 1 ? "{\"desc\":\"x\"}" : "", i == 1 ? 12 : 0);
            docs[i].src_bytes = sizes[i];
            for (size_t k = 0; k < sizes[i]; k++)
                sl_doc_push(&docs[i], rnd() % vocabs[v]);
        }
        char *a, *b;
        size_t na, nb;
        write_stream(&h, docs, 4, 0, &a, &na);
        for (int round = 0; round < 3; round++) {
            write_stream(&h, docs, 4, 1, &b, &nb);
            assert_int_equal(na, nb);
            assert_memory_equal(a, b, na);
            free(b);
        }
        free(a);
        for (int i = 0; i < 4; i++)
            sl_doc_free(&docs[i]);
        sl_ts_header_free(&h);
    }
}

static void test_misuse_is_an_error(void **state)
{
    (void)state;
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_IDS, 256);
    char path[] = "/tmp/sluice-tsp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sl_err e;
    sl_output *o = sl_output_open(path, &e);
    assert_non_null(o);
    sl_ts_writer *w = sl_ts_writer_open(o, &h, &e);
    sl_doc d = {0};
    sl_doc_set_id(&d, "long", 4);
    unsigned char t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* an id at or above the vocabulary */
    assert_int_equal(sl_ts_write_doc_begin(w, &d, 5, 256, &e), -1);
    assert_int_equal(sl_ts_write_doc_begin(w, &d, 5, 255, &e), 0);
    /* more than announced */
    assert_int_equal(sl_ts_write_doc_part(w, t, 6, &e), -1);
    assert_non_null(strstr(e.msg, "more than its record's count"));
    assert_int_equal(sl_ts_write_doc_part(w, t, 3, &e), 0);
    /* another record before this one is complete */
    assert_int_equal(sl_ts_write_doc(w, &d, &e), -1);
    assert_non_null(strstr(e.msg, "'long': record unfinished (2 of its tokens not written)"));
    assert_int_equal(sl_ts_write_doc_begin(w, &d, 1, 255, &e), -1);
    /* the trailer before it is complete */
    assert_int_equal(sl_ts_writer_finish(w, &e), -1);
    assert_non_null(strstr(e.msg, "record unfinished"));
    sl_output_abort(o);
    unlink(path);
    sl_doc_free(&d);
    sl_ts_header_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_equal_whole),
        cmocka_unit_test(test_misuse_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
