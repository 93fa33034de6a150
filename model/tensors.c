/* Tensor sources: the format table and the calls every format shares
 * (see tensors.h, tensors_impl.h). */
#include "model/tensors.h"

#include <stdio.h>

#include "model/model_impl.h"
#include "model/tensors_impl.h"

/* In the order they are tried. */
static const sl_tensors_fmt *const formats[] = {&sl_tensors_safetensors};

sl_tensors *sl_tensors_open(const char *dir, sl_err *err)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i]->probe(dir))
            return formats[i]->open(dir, err);
    sl_errf(err, "%s: no model.safetensors or model.safetensors.index.json (only safetensors checkpoints are read)",
            dir);
    return NULL;
}

void sl_tensors_close(sl_tensors *ts)
{
    if (ts)
        ts->ops->close(ts);
}

const char *sl_tensors_format(const sl_tensors *ts)
{
    return ts->ops->format;
}

const char *sl_tensors_name(const sl_tensors *ts)
{
    return ts->name ? ts->name : "checkpoint";
}

size_t sl_tensors_count(const sl_tensors *ts)
{
    return ts->ops->count(ts);
}

void sl_tensors_at(const sl_tensors *ts, size_t i, sl_tensor_info *info)
{
    ts->ops->at(ts, i, info);
}

int sl_tensors_find(const sl_tensors *ts, const char *name, sl_tensor_info *info)
{
    return ts->ops->find(ts, name, info);
}

int sl_tensors_read_f32(const sl_tensors *ts, const char *name, float *out, sl_err *err)
{
    sl_tensor_info t;
    if (!ts->ops->find(ts, name, &t))
        return sl_errf(err, "%s: missing tensor '%s'", sl_tensors_name(ts), name);
    if (t.dtype == SL_TENSOR_OTHER)
        return sl_errf(err, "%s: tensor '%s' has dtype %s; F32, F16 or BF16 expected", t.file, name, t.dtype_name);
    return ts->ops->read_f32(ts, &t, out, err);
}
