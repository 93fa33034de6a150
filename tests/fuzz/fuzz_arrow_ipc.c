/* libFuzzer target: an Arrow IPC file or stream (stream/arrow_ipc.c: the
 * flatbuffer Messages, the schema, record and dictionary batches, LZ4_FRAME
 * and ZSTD buffers, the arrays' offsets and dictionary indices) read from
 * memory. The first byte picks the options. Every document must be valid
 * UTF-8 with a meta object; an error must be one line. Seeds:
 * tests/fuzz/corpus/arrow_ipc (small pyarrow files and streams). */
#include <stdint.h>

#include "stream/arrow_ipc.h"
#include "tests/fuzz/columnar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    sl_pq_mem m = {data + 1, size - 1};
    sl_pq_opts o = columnar_opts(data[0], m.len);
    (void)sl_arrow_sniff(m.data, m.len);
    sl_err err = {{0}};
    sl_arrow *a = sl_arrow_open("fuzz", sl_pq_pread_mem, &m, m.len, &o, &err);
    if (!a) {
        columnar_check_err(&err);
        return 0;
    }
    sl_textdoc d = {0};
    int rc;
    while ((rc = sl_arrow_next(a, &d, &err)) == 1)
        columnar_check_doc(&d);
    sl_textdoc_free(&d);
    sl_arrow_close(a);
    if (rc < 0)
        columnar_check_err(&err);
    return 0;
}
