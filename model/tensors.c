/* Tensor sources (tensors.h): one checkpoint file or the shards of an
 * index, for every file format of the table (tensors_impl.h). */
#include "model/tensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_impl.h"
#include "model/tensors_impl.h"
#include "stream/io.h"
#include "base/json.h"

/* In the order they are tried: safetensors first, as transformers does. */
static const sl_tensors_fmt *const formats[] = {&sl_tensors_safetensors, &sl_tensors_pytorch};

struct sl_tensors {
    const sl_tensors_fmt *fmt;
    void **files;
    size_t nfiles;
    /* sharded: weight_map name -> file index */
    char **map_names;
    size_t *map_file;
    size_t nmap;
};

static int file_exists(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

void sl_tensors_close(sl_tensors *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nfiles; i++)
        if (c->files[i])
            c->fmt->close_file(c->files[i]);
    free(c->files);
    for (size_t i = 0; i < c->nmap; i++)
        free(c->map_names[i]);
    free(c->map_names);
    free(c->map_file);
    free(c);
}

/* The sharded form: the index's weight_map. */
static int open_index(sl_tensors *c, const char *dir, const char *index, sl_err *err)
{
    const sl_tensors_fmt *fmt = c->fmt;
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
            c->files[f] = fmt->open_file(p, err);
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
    for (size_t i = 0; i < c->nmap; i++) {
        sl_tensor_info t;
        if (!fmt->find(c->files[c->map_file[i]], c->map_names[i], &t))
            return sl_errf(err, "%s: weight_map puts '%s' in %s, which does not contain it", index, c->map_names[i],
                           fmt->file_name(c->files[c->map_file[i]]));
    }
    return 0;
}

sl_tensors *sl_tensors_open(const char *dir, sl_err *err)
{
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        const sl_tensors_fmt *fmt = formats[k];
        char *single = sl_model_path(dir, fmt->single);
        char *index = sl_model_path(dir, fmt->index);
        int has_single = file_exists(single), has_index = !has_single && file_exists(index);
        sl_tensors *c = NULL;
        if (has_single || has_index) {
            c = sl_xcalloc(1, sizeof *c);
            c->fmt = fmt;
            int rc;
            if (has_single) {
                c->files = sl_xcalloc(1, sizeof *c->files);
                rc = (c->files[0] = fmt->open_file(single, err)) ? 0 : -1;
                c->nfiles = 1;
            } else {
                rc = open_index(c, dir, index, err);
            }
            if (rc < 0) {
                sl_tensors_close(c);
                c = NULL;
            }
        }
        free(single);
        free(index);
        if (has_single || has_index)
            return c;
    }
    sl_errf(err,
            "%s: no model.safetensors or model.safetensors.index.json, nor pytorch_model.bin or "
            "pytorch_model.bin.index.json",
            dir);
    return NULL;
}

const char *sl_tensors_format(const sl_tensors *ts)
{
    return ts->fmt->name;
}

const char *sl_tensors_name(const sl_tensors *ts)
{
    return ts->nfiles && ts->files[0] ? ts->fmt->file_name(ts->files[0]) : "checkpoint";
}

size_t sl_tensors_count(const sl_tensors *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nfiles; i++)
        n += c->fmt->count(c->files[i]);
    return n;
}

void sl_tensors_at(const sl_tensors *c, size_t i, sl_tensor_info *info)
{
    size_t f = 0;
    while (f + 1 < c->nfiles && i >= c->fmt->count(c->files[f]))
        i -= c->fmt->count(c->files[f++]);
    c->fmt->at(c->files[f], i, info);
}

/* The file that holds name (sharded: as the index says), or NULL. */
static const void *holder(const sl_tensors *c, const char *name)
{
    if (!c->nmap)
        return c->files[0];
    for (size_t i = 0; i < c->nmap; i++)
        if (!strcmp(c->map_names[i], name))
            return c->files[c->map_file[i]];
    return NULL;
}

int sl_tensors_find(const sl_tensors *c, const char *name, sl_tensor_info *info)
{
    const void *f = holder(c, name);
    return f ? c->fmt->find(f, name, info) : 0;
}

int sl_tensors_read_f32(const sl_tensors *c, const char *name, float *out, sl_err *err)
{
    sl_tensor_info t;
    const void *f = holder(c, name);
    if (!f || !c->fmt->find(f, name, &t))
        return sl_errf(err, "%s: missing tensor '%s'", sl_tensors_name(c), name);
    if (t.dtype == SL_TENSOR_OTHER)
        return sl_errf(err, "%s: tensor '%s' has dtype %s; F32, F16 or BF16 expected", t.file, name, t.dtype_name);
    return c->fmt->read_f32(f, &t, out, err);
}
