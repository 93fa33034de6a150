/* libFuzzer target: the Megatron .idx parser on arbitrary bytes. Whatever it
 * accepts satisfies the invariants a reader relies on: pointers are the
 * prefix sums of the sizes, document indices run from 0 to S without going
 * down, and (when the .bin size is given) the .bin size matches. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "shard/megatron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err err;
    sl_mega_index ix;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t bin = pass ? (size > 8 ? (uint64_t)data[size - 1] * 2 : 0) : UINT64_MAX;
        if (sl_mega_parse_idx(data, size, bin, "fuzz.idx", &ix, &err))
            continue;
        uint64_t total = 0;
        for (uint64_t i = 0; i < ix.n_seq; i++) {
            if (ix.sizes[i] < 0 || (uint64_t)ix.pointers[i] != total * (uint64_t)ix.itemsize)
                abort();
            total += (uint64_t)ix.sizes[i];
        }
        if (ix.n_doc_idx < 1 || ix.doc_idx[0] != 0 || (uint64_t)ix.doc_idx[ix.n_doc_idx - 1] != ix.n_seq)
            abort();
        for (uint64_t i = 1; i < ix.n_doc_idx; i++)
            if (ix.doc_idx[i] < ix.doc_idx[i - 1])
                abort();
        if (total != ix.total_tokens || (bin != UINT64_MAX && bin != total * (uint64_t)ix.itemsize))
            abort();
        sl_mega_index_free(&ix);
    }
    return 0;
}
