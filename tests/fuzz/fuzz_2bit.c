/* libFuzzer target: the .2bit reader on arbitrary bytes. Opening validates
 * every offset and count against the size, so every fetch of a sequence that
 * opened must succeed (abort otherwise) and stay inside the buffer (ASan). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dna/twobit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err err;
    dna_2bit *t = dna_2bit_open_mem(data, size, "fuzz.2bit", &err);
    if (!t)
        return 0;
    for (size_t i = 0; i < dna_2bit_count(t); i++) {
        uint64_t n = dna_2bit_length(t, i);
        char *out = malloc(n + 1);
        if (dna_2bit_fetch(t, i, 0, n, out, &err) != 0)
            abort();
        if (n > 2 && dna_2bit_fetch(t, i, n / 3, n - n / 3, out, &err) != 0)
            abort();
        free(out);
    }
    dna_2bit_close(t);
    return 0;
}
