/* libFuzzer target: the parsers of shard/ that take text: the warmup SPEC
 * (first line) and a packed-stream row's metadata (the rest). Accepted
 * schedules have lengths that are positive multiples of 8 and at most the
 * longest; accepted rows have sorted pieces inside the row. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/packed.h"
#include "shard/warmup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n1 = nl ? (size_t)(nl - data) : size;
    char *spec = malloc(n1 + 1);
    memcpy(spec, data, n1);
    spec[n1] = 0;
    sl_err err;
    sl_warmup w;
    if (strlen(spec) == n1 && sl_warmup_parse(spec, &w, &err) == 0) {
        for (size_t i = 0; i < w.n; i++)
            if (w.stages[i].seq_len == 0 || w.stages[i].seq_len % 8 || w.stages[i].seq_len > w.max_len ||
                w.stages[i].batch == 0)
                abort();
        sl_warmup_resolve(&w, 123456, &err);
        sl_warmup_free(&w);
    }
    free(spec);
    if (!nl)
        return 0;
    const char *meta = (const char *)nl + 1;
    size_t mlen = size - n1 - 1;
    uint32_t toks[64] = {0};
    sl_doc d = {0};
    sl_doc_set_id(&d, "7", 1);
    sl_doc_set_meta(&d, meta, mlen);
    d.tokens = toks;
    d.n_tokens = 64;
    sl_packed_row st = {0};
    sl_row row;
    if (sl_packed_decode(&d, 64, &st, &row, "fuzz", &err) == 0) {
        uint32_t end = 0;
        for (size_t i = 0; i < row.n_pieces; i++) {
            if (row.pieces[i].offset < end || row.pieces[i].length == 0 ||
                row.pieces[i].offset + row.pieces[i].length > 64)
                abort();
            end = row.pieces[i].offset + row.pieces[i].length;
        }
    }
    d.tokens = NULL;
    sl_doc_free(&d);
    sl_packed_row_free(&st);
    return 0;
}
