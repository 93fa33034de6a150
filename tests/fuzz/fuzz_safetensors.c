/* libFuzzer target: the safetensors header parser and validator, plus the
 * fp32 conversion of every float tensor it accepts (which must stay inside
 * the buffer). Seeds: tests/data/model/ (any model.safetensors). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy so reads past the end are caught by ASan */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    sl_err err;
    sl_st_file *f = sl_st_parse(copy, size, "fuzz", &err);
    if (f) {
        for (size_t i = 0; i < sl_st_count(f); i++) {
            const sl_st_tensor *t = sl_st_tensor_at(f, i);
            if (sl_st_find(f, t->name) != t)
                abort();
            if (t->numel > (1u << 20))
                continue;
            float *out = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(float));
            sl_st_to_f32(f, t, out, &err);
            free(out);
        }
        sl_st_close(f);
    }
    free(copy);
    return 0;
}
