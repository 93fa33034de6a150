/* libFuzzer target: the token stream reader (stream/tokstream.c) over
 * sl_input_mem. Any input must be read to a verified end or rejected with a
 * one-line message; never crash, hang or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/io.h"
#include "stream/tokstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err err = {{0}};
    sl_input *in = sl_input_mem(data, size, "fuzz.tok", &err);
    if (!in)
        return 0;
    sl_ts_reader *r = sl_ts_reader_open(in, &err);
    if (r) {
        const sl_ts_header *h = sl_ts_reader_header(r);
        sl_doc d = {0};
        int rc;
        while ((rc = sl_ts_read_doc(r, &d, &err)) == 1)
            for (size_t i = 0; i < d.n_tokens; i++)
                if (d.tokens[i] >= h->vocab_size)
                    abort(); /* the reader promises ids < vocab_size */
        if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n')))
            abort();
        sl_doc_free(&d);
        sl_ts_reader_close(r);
    } else if (!err.msg[0]) {
        abort();
    }
    sl_input_close(in);
    return 0;
}
