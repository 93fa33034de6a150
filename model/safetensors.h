/* safetensors reader (format: huggingface/safetensors README, "Format").
 *
 * A file is: u64 little-endian header length N, N bytes of JSON (an object
 * of name -> {"dtype", "shape", "data_offsets": [begin, end]} plus an
 * optional "__metadata__" string map), then the data buffer. Offsets are
 * relative to the buffer. The reader checks everything a hostile or
 * truncated file could get wrong: header length against the file size, the
 * JSON, known dtypes, shapes (non-negative, no overflow), end - begin ==
 * numel * dtype size, offsets inside the buffer, no duplicate names, no
 * overlapping tensors and no holes (the buffer must be exactly covered, as
 * the reference implementation requires). Data is memory-mapped, not read. */
#ifndef SLUICE_MODEL_SAFETENSORS_H
#define SLUICE_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_ST_MAX_HEADER 100000000ull /* as the reference's MAX_HEADER_SIZE */
#define SL_ST_MAX_DIMS 8

typedef enum {
    SL_ST_BOOL,
    SL_ST_U8,
    SL_ST_I8,
    SL_ST_F8_E5M2,
    SL_ST_F8_E4M3,
    SL_ST_I16,
    SL_ST_U16,
    SL_ST_F16,
    SL_ST_BF16,
    SL_ST_I32,
    SL_ST_U32,
    SL_ST_F32,
    SL_ST_I64,
    SL_ST_U64,
    SL_ST_F64,
    SL_ST_C64,
} sl_st_dtype;

typedef struct sl_st_tensor {
    const char *name; /* NUL-terminated, owned by the file */
    sl_st_dtype dtype;
    int ndim;
    int64_t shape[SL_ST_MAX_DIMS];
    uint64_t numel;
    uint64_t begin, end; /* byte offsets in the data buffer */
    const void *data;    /* begin of the tensor's bytes (unaligned in general) */
} sl_st_tensor;

typedef struct sl_st_file sl_st_file;

/* Opens and validates a file; errors read "PATH: offset N: what". */
sl_st_file *sl_st_open(const char *path, sl_err *err);
/* Validates a file held in memory (not copied; must outlive the result). */
sl_st_file *sl_st_parse(const void *bytes, size_t len, const char *name, sl_err *err);
void sl_st_close(sl_st_file *f);

size_t sl_st_count(const sl_st_file *f);
const sl_st_tensor *sl_st_tensor_at(const sl_st_file *f, size_t i);
const sl_st_tensor *sl_st_find(const sl_st_file *f, const char *name); /* NULL if absent */
const char *sl_st_name(const sl_st_file *f);

const char *sl_st_dtype_name(sl_st_dtype t);
size_t sl_st_dtype_size(sl_st_dtype t);

/* Converts a F32/F16/BF16 tensor to fp32 (n = numel floats). -1 with a
 * message for other dtypes. */
int sl_st_to_f32(const sl_st_file *f, const sl_st_tensor *t, float *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
