/* libFuzzer target: the PyTorch checkpoint reader (model/tensors_pt.c): the
 * zip central directory, the restricted unpickler and the tensor views it
 * accepts; every accepted float tensor is converted to fp32 (reads must
 * stay inside the input). Seeds: tests/fuzz/corpus/pytorch (torch.save
 * files from tests/model/gen_pt_fixtures.py). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensors_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy so reads past the end are caught by ASan */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    sl_err err;
    void *f = sl_tensors_pt_parse(copy, size, "fuzz", &err);
    if (f) {
        const sl_tensors_fmt *fmt = &sl_tensors_pytorch;
        for (size_t i = 0; i < fmt->count(f); i++) {
            sl_tensor_info t, u;
            fmt->at(f, i, &t);
            if (!fmt->find(f, t.name, &u) || strcmp(u.name, t.name))
                abort();
            if (t.dtype == SL_TENSOR_OTHER || t.numel > (1u << 20))
                continue;
            float *out = malloc((size_t)(t.numel ? t.numel : 1) * sizeof(float));
            fmt->read_f32(f, &t, out, &err);
            free(out);
        }
        fmt->close_file(f);
    }
    free(copy);
    return 0;
}
