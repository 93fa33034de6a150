/* Internal: what a checkpoint file format implements behind model/tensors.h.
 *
 * A format reads one file (open_file) and answers for it: how many tensors,
 * the i-th, one by name, one as fp32. model/tensors.c does the rest for
 * every format alike: the single file (`single`, e.g. model.safetensors) or
 * the shards listed in the index (`index`, e.g.
 * model.safetensors.index.json: {"weight_map": {tensor: file}}), tried in
 * the order of its format table. Not installed. */
#ifndef SLUICE_MODEL_TENSORS_IMPL_H
#define SLUICE_MODEL_TENSORS_IMPL_H

#include "model/tensors.h"

typedef struct sl_tensors_fmt {
    const char *name;   /* "safetensors" */
    const char *single; /* file name of an unsharded checkpoint */
    const char *index;  /* file name of a shard index */
    void *(*open_file)(const char *path, sl_err *err);
    void (*close_file)(void *f);
    const char *(*file_name)(const void *f); /* the path, for messages */
    size_t (*count)(const void *f);
    void (*at)(const void *f, size_t i, sl_tensor_info *info);
    int (*find)(const void *f, const char *name, sl_tensor_info *info); /* 1 found, 0 absent */
    /* info from this file's at/find; dtype F32/F16/BF16 */
    int (*read_f32)(const void *f, const sl_tensor_info *info, float *out, sl_err *err);
} sl_tensors_fmt;

/* tensors_st.c: model.safetensors / model.safetensors.index.json */
extern const sl_tensors_fmt sl_tensors_safetensors;
/* Fills info for a tensor whose element type is an sl_st_dtype (any format
 * may use safetensors' dtype list). */
void sl_tensors_st_info(sl_tensor_info *info, const char *name, const char *file, int st_dtype, int ndim,
                        const int64_t *shape, uint64_t numel);
/* tensors_pt.c: pytorch_model.bin / pytorch_model.bin.index.json */
extern const sl_tensors_fmt sl_tensors_pytorch;
/* A torch.save file held in memory (not copied; must outlive the result),
 * for the fuzz target; close with sl_tensors_pytorch.close_file. */
void *sl_tensors_pt_parse(const void *bytes, size_t len, const char *name, sl_err *err);

#endif
