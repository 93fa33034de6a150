/* libFuzzer target: the BED parser on arbitrary bytes (with and without a
 * split column). Every interval it accepts has start <= end. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dna/bed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err err;
    for (int col = 0; col <= 4; col += 4) {
        dna_bed bed = {0};
        if (dna_bed_parse((const char *)data, size, "fuzz.bed", col, &bed, &err) == 0)
            for (size_t i = 0; i < bed.n; i++)
                if (bed.rec[i].start > bed.rec[i].end || (col && !bed.rec[i].split))
                    abort();
        dna_bed_free(&bed);
    }
    return 0;
}
