/* The safetensors tensor source (tensors_impl.h): one model.safetensors, or
 * the shards listed in model.safetensors.index.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_impl.h"
#include "model/safetensors.h"
#include "model/tensors_impl.h"
#include "stream/io.h"
#include "stream/json.h"

typedef struct st_source {
    sl_tensors base;
    sl_st_file **files;
    size_t nfiles;
    /* sharded: weight_map name -> file index */
    char **map_names;
    size_t *map_file;
    size_t nmap;
} st_source;

static void st_close(sl_tensors *ts)
{
    st_source *c = (st_source *)ts;
    for (size_t i = 0; i < c->nfiles; i++)
        sl_st_close(c->files[i]);
    free(c->files);
    for (size_t i = 0; i < c->nmap; i++)
        free(c->map_names[i]);
    free(c->map_names);
    free(c->map_file);
    free(c);
}

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

static size_t st_count(const sl_tensors *ts)
{
    const st_source *c = (const st_source *)ts;
    size_t n = 0;
    for (size_t i = 0; i < c->nfiles; i++)
        n += sl_st_count(c->files[i]);
    return n;
}

static void st_at(const sl_tensors *ts, size_t i, sl_tensor_info *info)
{
    const st_source *c = (const st_source *)ts;
    size_t f = 0;
    while (f + 1 < c->nfiles && i >= sl_st_count(c->files[f]))
        i -= sl_st_count(c->files[f++]);
    fill_info(c->files[f], sl_st_tensor_at(c->files[f], i), info);
}

static const sl_st_tensor *st_lookup(const st_source *c, const char *name, const sl_st_file **file)
{
    if (!c->nmap) {
        *file = c->files[0];
        return sl_st_find(c->files[0], name);
    }
    for (size_t i = 0; i < c->nmap; i++)
        if (!strcmp(c->map_names[i], name)) {
            *file = c->files[c->map_file[i]];
            return sl_st_find(*file, name);
        }
    return NULL;
}

static int st_find(const sl_tensors *ts, const char *name, sl_tensor_info *info)
{
    const sl_st_file *f = NULL;
    const sl_st_tensor *t = st_lookup((const st_source *)ts, name, &f);
    if (!t)
        return 0;
    fill_info(f, t, info);
    return 1;
}

static int st_read_f32(const sl_tensors *ts, const sl_tensor_info *info, float *out, sl_err *err)
{
    const sl_st_file *f = NULL;
    const sl_st_tensor *t = st_lookup((const st_source *)ts, info->name, &f);
    if (!t)
        return sl_errf(err, "%s: missing tensor '%s'", sl_tensors_name(ts), info->name);
    return sl_st_to_f32(f, t, out, err);
}

static const sl_tensors_ops st_ops = {
    .format = "safetensors",
    .count = st_count,
    .at = st_at,
    .find = st_find,
    .read_f32 = st_read_f32,
    .close = st_close,
};

static int file_exists(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static int st_probe(const char *dir)
{
    char *single = sl_model_path(dir, "model.safetensors");
    char *index = sl_model_path(dir, "model.safetensors.index.json");
    int yes = file_exists(single) || file_exists(index);
    free(single);
    free(index);
    return yes;
}

/* The sharded form: model.safetensors.index.json's weight_map. */
static int open_index(st_source *c, const char *dir, const char *index, sl_err *err)
{
    char *text;
    size_t len;
    if (sl_read_file(index, &text, &len, err) < 0)
        return -1;
    sl_err jerr;
    sl_json_doc *doc = sl_json_parse(text, len, NULL, &jerr);
    free(text);
    if (!doc)
        return sl_errf(err, "%s: %s", index, jerr.msg);
    const sl_json *wm = sl_json_get(sl_json_root(doc), "weight_map");
    if (!wm || wm->type != SL_JSON_OBJECT) {
        sl_json_free(doc);
        return sl_errf(err, "%s: no \"weight_map\" object", index);
    }
    c->map_names = sl_xcalloc(wm->n + 1, sizeof *c->map_names);
    c->map_file = sl_xcalloc(wm->n + 1, sizeof *c->map_file);
    c->files = sl_xcalloc(wm->n + 1, sizeof *c->files);
    char **fnames = sl_xcalloc(wm->n + 1, sizeof *fnames);
    int ok = 1;
    for (size_t i = 0; i < wm->n && ok; i++) {
        const sl_json *v = wm->kids[i];
        if (v->type != SL_JSON_STRING || !v->str_len || memchr(v->str, '/', v->str_len) ||
            memchr(v->str, 0, v->str_len) || (v->str_len == 2 && !memcmp(v->str, "..", 2))) {
            sl_errf(err, "%s:%zu: weight_map value is not a file name in the model directory", index, v->offset);
            ok = 0;
            break;
        }
        size_t f = 0;
        while (f < c->nfiles && !(strlen(fnames[f]) == v->str_len && !memcmp(fnames[f], v->str, v->str_len)))
            f++;
        if (f == c->nfiles) {
            fnames[f] = sl_xstrndup(v->str, v->str_len);
            char *p = sl_model_path(dir, fnames[f]);
            c->files[f] = sl_st_open(p, err);
            free(p);
            c->nfiles++;
            if (!c->files[f]) {
                ok = 0;
                break;
            }
        }
        c->map_names[c->nmap] = sl_xstrndup(wm->keys[i]->str, wm->keys[i]->str_len);
        c->map_file[c->nmap++] = f;
    }
    for (size_t f = 0; f < c->nfiles; f++)
        free(fnames[f]);
    free(fnames);
    sl_json_free(doc);
    if (!ok)
        return -1;
    if (!c->nfiles)
        return sl_errf(err, "%s: weight_map is empty", index);
    /* every mapped tensor must be in its file */
    for (size_t i = 0; i < c->nmap; i++)
        if (!sl_st_find(c->files[c->map_file[i]], c->map_names[i]))
            return sl_errf(err, "%s: weight_map puts '%s' in %s, which does not contain it", index, c->map_names[i],
                           sl_st_name(c->files[c->map_file[i]]));
    return 0;
}

static sl_tensors *st_open(const char *dir, sl_err *err)
{
    st_source *c = sl_xcalloc(1, sizeof *c);
    c->base.ops = &st_ops;
    char *single = sl_model_path(dir, "model.safetensors");
    char *index = sl_model_path(dir, "model.safetensors.index.json");
    int rc;
    if (file_exists(single)) {
        c->files = sl_xcalloc(1, sizeof *c->files);
        rc = (c->files[0] = sl_st_open(single, err)) ? 0 : -1;
        c->nfiles = rc == 0;
    } else {
        rc = open_index(c, dir, index, err);
    }
    free(single);
    free(index);
    if (rc < 0) {
        st_close(&c->base);
        return NULL;
    }
    c->base.name = sl_st_name(c->files[0]);
    return &c->base;
}

const sl_tensors_fmt sl_tensors_safetensors = {.name = "safetensors", .probe = st_probe, .open = st_open};
