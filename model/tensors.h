/* Checkpoint tensors, apart from any architecture.
 *
 * A tensor source opens a model directory and answers two questions: which
 * tensors are there (name, dtype, shape, and the file holding each, for
 * messages), and "this one, as fp32". An architecture (model/mamba.h) asks
 * it for its weights by name and never sees the file format.
 *
 * Formats read today: safetensors (model/safetensors.h), either one
 * model.safetensors or the shards listed in model.safetensors.index.json
 * ("weight_map": tensor name -> file name in the same directory; every
 * mapped tensor must be in its file). Another format (a PyTorch
 * pytorch_model.bin, say) is a second implementation behind the same calls
 * (model/tensors_impl.h); sl_tensors_open picks the first format whose files
 * the directory has. */
#ifndef SLUICE_MODEL_TENSORS_H
#define SLUICE_MODEL_TENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_TENSOR_MAX_DIMS 8

/* The element types an architecture can read as fp32; anything else is
 * SL_TENSOR_OTHER (its name is in sl_tensor_info.dtype_name). */
typedef enum { SL_TENSOR_F32, SL_TENSOR_F16, SL_TENSOR_BF16, SL_TENSOR_OTHER } sl_tensor_dtype;

typedef struct sl_tensor_info {
    const char *name;       /* owned by the source */
    const char *file;       /* path of the file that holds it (for messages) */
    sl_tensor_dtype dtype;  /* convertible to fp32 unless SL_TENSOR_OTHER */
    const char *dtype_name; /* as the format names it: "F32", "BF16", "I64", ... */
    int ndim;
    int64_t shape[SL_TENSOR_MAX_DIMS];
    uint64_t numel;
} sl_tensor_info;

typedef struct sl_tensors sl_tensors;

/* Opens the checkpoint of a model directory. Errors name the file and
 * position ("DIR/model.safetensors: offset 8: ..."), or the directory when
 * it holds no checkpoint a source can read. */
sl_tensors *sl_tensors_open(const char *dir, sl_err *err);
void sl_tensors_close(sl_tensors *ts);

/* "safetensors" */
const char *sl_tensors_format(const sl_tensors *ts);
/* A name for messages about the checkpoint as a whole (its first file). */
const char *sl_tensors_name(const sl_tensors *ts);

/* Every tensor of every file, file by file (also tensors of a shard that
 * its index does not map), for checks over the whole checkpoint. */
size_t sl_tensors_count(const sl_tensors *ts);
void sl_tensors_at(const sl_tensors *ts, size_t i, sl_tensor_info *info);

/* Looks a tensor up by name: 1 and *info filled, or 0 when absent. */
int sl_tensors_find(const sl_tensors *ts, const char *name, sl_tensor_info *info);

/* Converts the named tensor (F32/F16/BF16) to fp32 into out (numel
 * floats). -1 with a message when absent or of another dtype. */
int sl_tensors_read_f32(const sl_tensors *ts, const char *name, float *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
