/* libFuzzer target: an Arrow IPC file or stream (stream/arrow_ipc.c: the
 * flatbuffer Messages, the schema, record and dictionary batches, LZ4_FRAME
 * and ZSTD buffers, the arrays' offsets and dictionary indices) read from
 * memory. The first byte picks the options. Every document must be valid
 * UTF-8 with a meta object; an error must be one line. Seeds:
 * tests/fuzz/corpus/arrow_ipc (small pyarrow files and streams). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/arrow_ipc.h"
#include "base/json.h"

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
    if (flags & 0x20) { /* a part's share: the record batches starting in the first half */
        o.byte_begin = 0;
        o.byte_end = m.len / 2 + 1;
    }
    (void)sl_arrow_sniff(m.data, m.len);
    sl_err err = {{0}};
    sl_arrow *a = sl_arrow_open("fuzz", sl_pq_pread_mem, &m, m.len, &o, &err);
    if (a) {
        sl_textdoc d = {0};
        int rc;
        while ((rc = sl_arrow_next(a, &d, &err)) == 1) {
            if (sl_utf8_check(d.text.data ? d.text.data : "", d.text.len) != d.text.len)
                abort();
            if (!d.id.data || !d.meta.data || d.meta.data[0] != '{')
                abort();
        }
        sl_textdoc_free(&d);
        sl_arrow_close(a);
        if (rc < 0 && strchr(err.msg, '\n'))
            abort();
    } else if (strchr(err.msg, '\n')) {
        abort();
    }
    return 0;
}
