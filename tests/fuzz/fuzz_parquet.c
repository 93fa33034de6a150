/* libFuzzer target: a Parquet file (stream/parquet.c and everything under it:
 * the footer's Thrift, the schema tree, page headers, codecs, encodings,
 * record assembly) read from memory. The first byte picks the options.
 * Every document must be valid UTF-8 with a meta object; an error must be
 * one line. Seeds: tests/fuzz/corpus/parquet (small pyarrow files). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "stream/parquet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t flags = data[0];
    sl_pq_mem m = {data + 1, size - 1};
    sl_pq_opts o = {
        .field = flags & 1   ? "doc.body"
                 : flags & 2 ? "content"
                             : "text",
        .invalid_utf8 = ((flags >> 2) & 3) % 3,
        .skip_bad = (flags >> 4) & 1,
        .mem_budget = (size_t)1 << 20,
    };
    sl_err err = {{0}};
    sl_pq *q = sl_pq_open("fuzz", sl_pq_pread_mem, &m, m.len, &o, &err);
    if (q) {
        sl_textdoc d = {0};
        int rc;
        while ((rc = sl_pq_next(q, &d, &err)) == 1) {
            if (sl_utf8_check(d.text.data ? d.text.data : "", d.text.len) != d.text.len)
                abort();
            if (!d.id.data || !d.meta.data || d.meta.data[0] != '{')
                abort();
        }
        sl_textdoc_free(&d);
        sl_pq_close(q);
        if (rc < 0 && strchr(err.msg, '\n'))
            abort();
    } else if (strchr(err.msg, '\n')) {
        abort();
    }
    return 0;
}
