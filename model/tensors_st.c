/* safetensors checkpoint files behind model/tensors.h (tensors_impl.h). */
#include <string.h>

#include "model/safetensors.h"
#include "model/tensors_impl.h"

void sl_tensors_st_info(sl_tensor_info *info, const char *name, const char *file, int st_dtype, int ndim,
                        const int64_t *shape, uint64_t numel)
{
    info->name = name;
    info->file = file;
    info->dtype = st_dtype == SL_ST_F32    ? SL_TENSOR_F32
                  : st_dtype == SL_ST_F16  ? SL_TENSOR_F16
                  : st_dtype == SL_ST_BF16 ? SL_TENSOR_BF16
                                           : SL_TENSOR_OTHER;
    info->dtype_name = sl_st_dtype_name((sl_st_dtype)st_dtype);
    info->ndim = ndim;
    memset(info->shape, 0, sizeof info->shape);
    for (int i = 0; i < ndim && i < SL_TENSOR_MAX_DIMS; i++)
        info->shape[i] = shape[i];
    info->numel = numel;
}

static void fill_info(const sl_st_file *f, const sl_st_tensor *t, sl_tensor_info *info)
{
    sl_tensors_st_info(info, t->name, sl_st_name(f), t->dtype, t->ndim, t->shape, t->numel);
}

static void *st_open(const char *path, sl_err *err)
{
    return sl_st_open(path, err);
}
static void st_close(void *f)
{
    sl_st_close(f);
}
static const char *st_name(const void *f)
{
    return sl_st_name(f);
}
static size_t st_count(const void *f)
{
    return sl_st_count(f);
}
static void st_at(const void *f, size_t i, sl_tensor_info *info)
{
    fill_info(f, sl_st_tensor_at(f, i), info);
}
static int st_find(const void *f, const char *name, sl_tensor_info *info)
{
    const sl_st_tensor *t = sl_st_find(f, name);
    if (t)
        fill_info(f, t, info);
    return t != NULL;
}
static int st_read_f32(const void *f, const sl_tensor_info *info, float *out, sl_err *err)
{
    return sl_st_to_f32(f, sl_st_find(f, info->name), out, err);
}

const sl_tensors_fmt sl_tensors_safetensors = {
    .name = "safetensors",
    .single = "model.safetensors",
    .index = "model.safetensors.index.json",
    .open_file = st_open,
    .close_file = st_close,
    .file_name = st_name,
    .count = st_count,
    .at = st_at,
    .find = st_find,
    .read_f32 = st_read_f32,
};
