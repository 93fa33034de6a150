/* safetensors checkpoint files behind model/tensors.h (tensors_impl.h). */
#include <string.h>

#include "model/safetensors.h"
#include "model/tensors_impl.h"

static void fill_info(const sl_st_file *f, const sl_st_tensor *t, sl_tensor_info *info)
{
    info->name = t->name;
    info->file = sl_st_name(f);
    info->dtype = t->dtype == SL_ST_F32    ? SL_TENSOR_F32
                  : t->dtype == SL_ST_F16  ? SL_TENSOR_F16
                  : t->dtype == SL_ST_BF16 ? SL_TENSOR_BF16
                                           : SL_TENSOR_OTHER;
    info->dtype_name = sl_st_dtype_name(t->dtype);
    info->ndim = t->ndim;
    memset(info->shape, 0, sizeof info->shape);
    for (int i = 0; i < t->ndim && i < SL_TENSOR_MAX_DIMS; i++)
        info->shape[i] = t->shape[i];
    info->numel = t->numel;
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
