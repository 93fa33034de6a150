/* libFuzzer target: a Parquet file (stream/parquet.c and everything under it:
 * the footer's Thrift, the schema tree, page headers, codecs, encodings,
 * record assembly) read from memory. The first byte picks the options.
 * Every document must be valid UTF-8 with a meta object; an error must be
 * one line. Seeds: tests/fuzz/corpus/parquet (small pyarrow files). */
#include <stdint.h>

#include "stream/parquet.h"
#include "tests/fuzz/columnar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    sl_pq_mem m = {data + 1, size - 1};
    sl_pq_opts o = columnar_opts(data[0], m.len);
    sl_err err = {{0}};
    sl_pq *q = sl_pq_open("fuzz", sl_pq_pread_mem, &m, m.len, &o, &err);
    if (!q) {
        columnar_check_err(&err);
        return 0;
    }
    sl_textdoc d = {0};
    int rc;
    while ((rc = sl_pq_next(q, &d, &err)) == 1)
        columnar_check_doc(&d);
    sl_textdoc_free(&d);
    sl_pq_close(q);
    if (rc < 0)
        columnar_check_err(&err);
    return 0;
}
