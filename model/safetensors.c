/* safetensors reader: see safetensors.h for the rules it enforces. */
#include "model/safetensors.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/model_impl.h"
#include "base/json.h"
#include "base/byteorder.h"

struct sl_st_file {
    char *name;
    void *map; /* mmap'ed file, or NULL when parsing caller memory */
    size_t map_len;
    const unsigned char *bytes;
    size_t len;
    const unsigned char *buffer; /* data buffer start */
    uint64_t buffer_len;
    size_t n;
    sl_st_tensor *t; /* sorted by name */
    char *names;     /* storage for all names */
};

static const struct {
    const char *name;
    sl_st_dtype t;
    size_t size;
} dtypes[] = {
    {"BOOL", SL_ST_BOOL, 1},       {"U8", SL_ST_U8, 1},   {"I8", SL_ST_I8, 1},   {"F8_E5M2", SL_ST_F8_E5M2, 1},
    {"F8_E4M3", SL_ST_F8_E4M3, 1}, {"I16", SL_ST_I16, 2}, {"U16", SL_ST_U16, 2}, {"F16", SL_ST_F16, 2},
    {"BF16", SL_ST_BF16, 2},       {"I32", SL_ST_I32, 4}, {"U32", SL_ST_U32, 4}, {"F32", SL_ST_F32, 4},
    {"I64", SL_ST_I64, 8},         {"U64", SL_ST_U64, 8}, {"F64", SL_ST_F64, 8}, {"C64", SL_ST_C64, 8},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

const char *sl_st_dtype_name(sl_st_dtype t)
{
    return (size_t)t < N_DTYPES ? dtypes[t].name : "?";
}
size_t sl_st_dtype_size(sl_st_dtype t)
{
    return (size_t)t < N_DTYPES ? dtypes[t].size : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const sl_st_tensor *)a)->name, ((const sl_st_tensor *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
    const sl_st_tensor *x = *(const sl_st_tensor *const *)a, *y = *(const sl_st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* One tensor entry. `pos` is the entry's byte offset in the file. */
static int parse_entry(sl_st_file *f, sl_st_tensor *t, const sl_json *v, size_t pos, sl_err *err)
{
    const char *nm = t->name;
    if (v->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s:%zu: tensor '%s': entry is not an object", f->name, pos, nm);
    const sl_json *dt = sl_json_get(v, "dtype");
    if (!dt || dt->type != SL_JSON_STRING)
        return sl_errf(err, "%s:%zu: tensor '%s': missing \"dtype\" string", f->name, pos, nm);
    size_t k = 0;
    while (k < N_DTYPES && !(strlen(dtypes[k].name) == dt->str_len && !memcmp(dtypes[k].name, dt->str, dt->str_len)))
        k++;
    if (k == N_DTYPES)
        return sl_errf(err, "%s:%zu: tensor '%s': unsupported dtype \"%.*s\"", f->name, pos, nm,
                       (int)(dt->str_len > 32 ? 32 : dt->str_len), dt->str);
    t->dtype = dtypes[k].t;
    const sl_json *sh = sl_json_get(v, "shape");
    if (!sh || sh->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s:%zu: tensor '%s': missing \"shape\" array", f->name, pos, nm);
    if (sh->n > SL_ST_MAX_DIMS)
        return sl_errf(err, "%s:%zu: tensor '%s': %zu dimensions (at most %d supported)", f->name, pos, nm, sh->n,
                       SL_ST_MAX_DIMS);
    t->ndim = (int)sh->n;
    uint64_t numel = 1;
    for (size_t i = 0; i < sh->n; i++) {
        int64_t d;
        if (!sl_json_is_int(sh->kids[i], &d) || d < 0)
            return sl_errf(err, "%s:%zu: tensor '%s': shape[%zu] is not a non-negative integer", f->name, pos, nm, i);
        t->shape[i] = d;
        if (__builtin_mul_overflow(numel, (uint64_t)d, &numel))
            return sl_errf(err, "%s:%zu: tensor '%s': shape overflows", f->name, pos, nm);
    }
    t->numel = numel;
    const sl_json *off = sl_json_get(v, "data_offsets");
    int64_t b, e;
    if (!off || off->type != SL_JSON_ARRAY || off->n != 2 || !sl_json_is_int(off->kids[0], &b) ||
        !sl_json_is_int(off->kids[1], &e) || b < 0 || e < 0)
        return sl_errf(err, "%s:%zu: tensor '%s': \"data_offsets\" is not [begin, end] of non-negative integers",
                       f->name, pos, nm);
    if (e < b)
        return sl_errf(err, "%s:%zu: tensor '%s': data_offsets [%lld, %lld] end before begin", f->name, pos, nm,
                       (long long)b, (long long)e);
    uint64_t bytes;
    if (__builtin_mul_overflow(numel, (uint64_t)dtypes[k].size, &bytes) || bytes != (uint64_t)(e - b))
        return sl_errf(err,
                       "%s:%zu: tensor '%s': data_offsets [%lld, %lld] hold %lld bytes, dtype %s and shape need %llu",
                       f->name, pos, nm, (long long)b, (long long)e, (long long)(e - b), dtypes[k].name,
                       (unsigned long long)bytes);
    if ((uint64_t)e > f->buffer_len)
        return sl_errf(
            err,
            "%s:%zu: tensor '%s': data_offsets [%lld, %lld] end past the data buffer (%llu bytes; file truncated?)",
            f->name, pos, nm, (long long)b, (long long)e, (unsigned long long)f->buffer_len);
    t->begin = (uint64_t)b;
    t->end = (uint64_t)e;
    t->data = f->buffer + b;
    return 0;
}

static int parse_header(sl_st_file *f, sl_err *err)
{
    if (f->len < 8)
        return sl_errf(err, "%s:0: file too short for a safetensors header (%zu bytes)", f->name, f->len);
    uint64_t hl = sl_get_le64(f->bytes);
    if (hl > SL_ST_MAX_HEADER)
        return sl_errf(err, "%s:0: header length %llu is larger than the limit %llu", f->name, (unsigned long long)hl,
                       SL_ST_MAX_HEADER);
    if (hl > f->len - 8)
        return sl_errf(err, "%s:0: header length %llu runs past the end of the file (%zu bytes; truncated?)", f->name,
                       (unsigned long long)hl, f->len);
    if (hl < 2 || f->bytes[8] != '{')
        return sl_errf(err, "%s:8: header is not a JSON object", f->name);
    f->buffer = f->bytes + 8 + hl;
    f->buffer_len = f->len - 8 - hl;
    sl_json_opts o = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_err jerr;
    sl_json_doc *doc = sl_json_parse((const char *)f->bytes + 8, (size_t)hl, &o, &jerr);
    if (!doc)
        return sl_errf(err, "%s: header JSON (file offset 8 + %s)", f->name, jerr.msg);
    const sl_json *root = sl_json_root(doc);
    int rc = -1;
    if (root->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s:8: header is not a JSON object", f->name);
        goto out;
    }
    size_t names_len = 0;
    for (size_t i = 0; i < root->n; i++)
        names_len += root->keys[i]->str_len + 1;
    f->t = sl_xcalloc(root->n ? root->n : 1, sizeof *f->t);
    f->names = sl_xmalloc(names_len + 1);
    char *np = f->names;
    for (size_t i = 0; i < root->n; i++) {
        const sl_json *key = root->keys[i], *v = root->kids[i];
        size_t pos = 8 + key->offset;
        if (key->str_len == 12 && !memcmp(key->str, "__metadata__", 12)) {
            if (v->type != SL_JSON_OBJECT) {
                sl_errf(err, "%s:%zu: __metadata__ is not an object", f->name, pos);
                goto out;
            }
            for (size_t j = 0; j < v->n; j++)
                if (v->kids[j]->type != SL_JSON_STRING) {
                    sl_errf(err, "%s:%zu: __metadata__ value is not a string", f->name, 8 + v->kids[j]->offset);
                    goto out;
                }
            continue;
        }
        if (memchr(key->str, 0, key->str_len)) {
            sl_errf(err, "%s:%zu: tensor name contains a NUL character", f->name, pos);
            goto out;
        }
        memcpy(np, key->str, key->str_len);
        np[key->str_len] = 0;
        sl_st_tensor *t = &f->t[f->n];
        t->name = np;
        np += key->str_len + 1;
        if (parse_entry(f, t, v, pos, err) < 0)
            goto out;
        f->n++;
    }
    /* duplicates */
    qsort(f->t, f->n, sizeof *f->t, by_name);
    for (size_t i = 1; i < f->n; i++)
        if (!strcmp(f->t[i - 1].name, f->t[i].name)) {
            sl_errf(err, "%s:8: tensor '%s' is listed twice", f->name, f->t[i].name);
            goto out;
        }
    /* overlaps and holes: sorted by offset, each must start where the last ended */
    const sl_st_tensor **ord = sl_xmalloc((f->n ? f->n : 1) * sizeof *ord);
    for (size_t i = 0; i < f->n; i++)
        ord[i] = &f->t[i];
    qsort(ord, f->n, sizeof *ord, by_offset);
    uint64_t at = 0;
    const char *prev = NULL;
    for (size_t i = 0; i < f->n; i++) {
        if (ord[i]->begin < at) {
            sl_errf(err, "%s:8: tensor '%s' (bytes %llu..%llu) overlaps tensor '%s'", f->name, ord[i]->name,
                    (unsigned long long)ord[i]->begin, (unsigned long long)ord[i]->end, prev);
            free(ord);
            goto out;
        }
        if (ord[i]->begin > at) {
            sl_errf(err, "%s:8: data buffer has a hole at bytes %llu..%llu (before tensor '%s')", f->name,
                    (unsigned long long)at, (unsigned long long)ord[i]->begin, ord[i]->name);
            free(ord);
            goto out;
        }
        at = ord[i]->end;
        prev = ord[i]->name;
    }
    free(ord);
    if (at != f->buffer_len) {
        sl_errf(err, "%s:%llu: data buffer has %llu bytes but the tensors cover %llu", f->name,
                (unsigned long long)(8 + hl), (unsigned long long)f->buffer_len, (unsigned long long)at);
        goto out;
    }
    rc = 0;
out:
    sl_json_free(doc);
    return rc;
}

sl_st_file *sl_st_parse(const void *bytes, size_t len, const char *name, sl_err *err)
{
    sl_st_file *f = sl_xcalloc(1, sizeof *f);
    f->name = sl_xstrdup(name ? name : "<memory>");
    f->bytes = bytes;
    f->len = len;
    if (parse_header(f, err) < 0) {
        sl_st_close(f);
        return NULL;
    }
    return f;
}

sl_st_file *sl_st_open(const char *path, sl_err *err)
{
    void *map;
    size_t len;
    if (sl_model_map_file(path, &map, &len, err) < 0)
        return NULL;
    sl_st_file *f = sl_xcalloc(1, sizeof *f);
    f->name = sl_xstrdup(path);
    f->map = map;
    f->map_len = len;
    f->bytes = map ? map : (const unsigned char *)"";
    f->len = len;
    if (parse_header(f, err) < 0) {
        sl_st_close(f);
        return NULL;
    }
    return f;
}

void sl_st_close(sl_st_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->map_len);
    free(f->t);
    free(f->names);
    free(f->name);
    free(f);
}

size_t sl_st_count(const sl_st_file *f)
{
    return f->n;
}
const sl_st_tensor *sl_st_tensor_at(const sl_st_file *f, size_t i)
{
    return i < f->n ? &f->t[i] : NULL;
}
const char *sl_st_name(const sl_st_file *f)
{
    return f->name;
}

const sl_st_tensor *sl_st_find(const sl_st_file *f, const char *name)
{
    sl_st_tensor key = {.name = name};
    return bsearch(&key, f->t, f->n, sizeof *f->t, by_name);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, ex = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (ex == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else if (ex) {
        bits = sign | ((ex + 112) << 23) | (man << 13);
    } else if (man) { /* subnormal: normalize */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int sl_st_to_f32(const sl_st_file *f, const sl_st_tensor *t, float *out, sl_err *err)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case SL_ST_F32:
        memcpy(out, p, t->numel * 4); /* little-endian host assumed (x86-64, arm64) */
        return 0;
    case SL_ST_F16:
        for (uint64_t i = 0; i < t->numel; i++)
            out[i] = half_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        return 0;
    case SL_ST_BF16:
        for (uint64_t i = 0; i < t->numel; i++) {
            uint32_t bits = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
            memcpy(&out[i], &bits, 4);
        }
        return 0;
    default:
        return sl_errf(err, "%s: tensor '%s' has dtype %s; F32, F16 or BF16 expected", f->name, t->name,
                       sl_st_dtype_name(t->dtype));
    }
}
