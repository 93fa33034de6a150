/* The model interface (model.h): architecture table, config dispatch and the
 * calls that forward to the architecture. */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_impl.h"
#include "stream/io.h"
#include "base/json.h"

struct sl_model {
    const sl_model_ops *ops;
    void *impl;
    sl_model_info info;
    sl_backend *be;
};

struct sl_model_run {
    sl_model *m;
    void *impl;
};

/* The first entry also takes configs without a model_type (mamba_ssm's) and
 * unknown ones: its config parser names what it does not support. */
static const sl_model_arch *const archs[] = {&sl_model_arch_mamba, &sl_model_arch_falcon_mamba, &sl_model_arch_mamba2};

char *sl_model_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = sl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int sl_model_map_file(const char *path, void **map, size_t *len, sl_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_errf(err, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sl_errf(err, "%s: not a regular file", path);
    }
    *len = (size_t)st.st_size;
    *map = NULL;
    if (*len) {
        void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return sl_errf(err, "%s: mmap: %s", path, strerror(e));
        }
        *map = m;
    }
    close(fd);
    return 0;
}

/* config.json's "model_type", or NULL (copied: the JSON is freed). */
static char *model_type(const char *text, size_t len)
{
    sl_err jerr;
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_REPLACE, .nonfinite = 1}; /* as the config parsers */
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &jerr);
    if (!doc)
        return NULL;
    const sl_json *r = sl_json_root(doc);
    const char *mt = r->type == SL_JSON_OBJECT ? sl_json_get_str(r, "model_type") : NULL;
    if (!mt && r->type == SL_JSON_OBJECT) { /* mamba_ssm: the layer type in ssm_cfg */
        const sl_json *ssm = sl_json_get(r, "ssm_cfg");
        const char *layer = ssm && ssm->type == SL_JSON_OBJECT ? sl_json_get_str(ssm, "layer") : NULL;
        if (layer && !strcmp(layer, "Mamba2"))
            mt = "mamba2";
    }
    char *s = mt ? sl_xstrdup(mt) : NULL;
    sl_json_free(doc);
    return s;
}

/* The architecture config.json text names (Mamba-1 when it names none). */
static const sl_model_arch *arch_of(const char *text, size_t len)
{
    char *mt = model_type(text, len);
    const sl_model_arch *a = archs[0];
    for (size_t i = 0; mt && i < sizeof archs / sizeof archs[0]; i++)
        if (!strcmp(archs[i]->model_type, mt))
            a = archs[i];
    free(mt);
    return a;
}

int sl_model_config_check(const char *text, size_t len, const char *name, sl_err *err)
{
    return arch_of(text, len)->check_config(text, len, name, err);
}

sl_model *sl_model_load(const char *dir, sl_backend *be, sl_err *err)
{
    char *cfgpath = sl_model_path(dir, "config.json");
    char *text = NULL;
    size_t len;
    sl_model *m = NULL;
    if (sl_read_file(cfgpath, &text, &len, err) == 0) {
        m = arch_of(text, len)->load(dir, cfgpath, text, len, be, err);
    }
    free(text);
    free(cfgpath);
    return m;
}

sl_model *sl_model_wrap(const sl_model_ops *ops, void *model, const sl_model_info *info, sl_backend *be)
{
    sl_model *m = sl_xcalloc(1, sizeof *m);
    m->ops = ops;
    m->impl = model;
    m->info = *info;
    m->be = be;
    return m;
}

void *sl_model_impl(const sl_model *m, const sl_model_ops *ops)
{
    return m && m->ops == ops ? m->impl : NULL;
}

void sl_model_free(sl_model *m)
{
    if (!m)
        return;
    m->ops->free(m->impl);
    free(m);
}

const sl_model_info *sl_model_get_info(const sl_model *m)
{
    return &m->info;
}

sl_backend *sl_model_backend(const sl_model *m)
{
    return m->be;
}

int64_t sl_model_params(const sl_model *m)
{
    return m->ops->params(m->impl);
}

double sl_model_flops_per_token(const sl_model *m)
{
    return m->ops->flops_per_token(m->impl);
}

sl_model_run *sl_model_run_new(sl_model *m, int64_t chunk, sl_err *err)
{
    void *impl = m->ops->run_new(m->impl, chunk, err);
    if (!impl)
        return NULL;
    sl_model_run *r = sl_xcalloc(1, sizeof *r);
    r->m = m;
    r->impl = impl;
    return r;
}

void sl_model_run_free(sl_model_run *r)
{
    if (!r)
        return;
    r->m->ops->run_free(r->impl);
    free(r);
}

int64_t sl_model_run_chunk(const sl_model_run *r)
{
    return r->m->ops->run_chunk(r->impl);
}

sl_model *sl_model_run_model(const sl_model_run *r)
{
    return r->m;
}

int sl_model_run_reset(sl_model_run *r, sl_err *err)
{
    return r->m->ops->run_reset(r->impl, err);
}

int sl_model_forward(sl_model_run *r, const int32_t *ids, const uint8_t *reset, const int32_t *targets, int64_t n,
                     float *logp, sl_err *err)
{
    return r->m->ops->forward(r->impl, ids, reset, targets, n, logp, err);
}
