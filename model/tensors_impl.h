/* Internal: what a tensor source format implements (model/tensors.h).
 *
 * A format is a probe (does the directory have this format's files?) and an
 * open that returns a struct whose first member is an sl_tensors with the
 * format's operations. sl_tensors_open (model/tensors.c) tries the formats
 * of its table in order. Not installed. */
#ifndef SLUICE_MODEL_TENSORS_IMPL_H
#define SLUICE_MODEL_TENSORS_IMPL_H

#include "model/tensors.h"

typedef struct sl_tensors_ops {
    const char *format;
    size_t (*count)(const sl_tensors *ts);
    void (*at)(const sl_tensors *ts, size_t i, sl_tensor_info *info);
    int (*find)(const sl_tensors *ts, const char *name, sl_tensor_info *info);
    int (*read_f32)(const sl_tensors *ts, const sl_tensor_info *info, float *out, sl_err *err);
    void (*close)(sl_tensors *ts);
} sl_tensors_ops;

struct sl_tensors {
    const sl_tensors_ops *ops;
    const char *name; /* sl_tensors_name; owned by the implementation */
};

typedef struct sl_tensors_fmt {
    const char *name;
    int (*probe)(const char *dir); /* 1: the directory has this format's files */
    sl_tensors *(*open)(const char *dir, sl_err *err);
} sl_tensors_fmt;

/* safetensors: model.safetensors or model.safetensors.index.json (tensors_st.c) */
extern const sl_tensors_fmt sl_tensors_safetensors;

#endif
