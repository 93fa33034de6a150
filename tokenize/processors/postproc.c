/* See postproc.h. A Sequence applies its processors in order, each around
 * the result of the ones before: the ids before are the last processor's
 * first, the ids after the first processor's first. */
#include "tokenize/processors/postproc.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

static void put(uint32_t **a, size_t *n, const uint32_t *ids, size_t k, int front)
{
    if (k == 0)
        return;
    *a = sl_xrealloc(*a, (*n + k + 1) * sizeof **a);
    if (front) {
        memmove(*a + k, *a, *n * sizeof **a);
        memcpy(*a, ids, k * sizeof **a);
    } else {
        memcpy(*a + *n, ids, k * sizeof **a);
    }
    *n += k;
}

/* ["[CLS]", 101] of BertProcessing / RobertaProcessing */
static int pair_id(const sl_json *v, const char *key, const char *what, uint32_t vocab_size, uint32_t *id,
                   const char *name, sl_err *err)
{
    const sl_json *p = sl_json_get(v, key);
    int64_t x;
    if (!p || p->type != SL_JSON_ARRAY || p->n != 2 || p->kids[0]->type != SL_JSON_STRING ||
        !sl_json_is_int(p->kids[1], &x))
        return sl_errf(err, "%s: post_processor %s: '%s' is not [token, id]", name, what, key);
    if (x < 0 || x >= vocab_size)
        return sl_errf(err, "%s: post_processor %s: id %lld of '%s' is not in the vocabulary (%u ids)", name, what,
                       (long long)x, key, vocab_size);
    *id = (uint32_t)x;
    return 0;
}

static int template_ids(const sl_json *v, const sl_json *special, const sl_json *item, uint32_t vocab_size, sl_buf *ids,
                        const char *name, sl_err *err)
{
    (void)v;
    const sl_json *st = sl_json_get(item, "SpecialToken");
    const sl_json *tid = st && st->type == SL_JSON_OBJECT ? sl_json_get(st, "id") : NULL;
    if (!tid || tid->type != SL_JSON_STRING)
        return sl_errf(err,
                       "%s: post_processor TemplateProcessing: a 'single' item is neither a Sequence nor a "
                       "SpecialToken with an id",
                       name);
    const sl_json *def = special && special->type == SL_JSON_OBJECT ? sl_json_get(special, tid->str) : NULL;
    const sl_json *list = def && def->type == SL_JSON_OBJECT ? sl_json_get(def, "ids") : NULL;
    if (!list || list->type != SL_JSON_ARRAY)
        return sl_errf(err,
                       "%s: post_processor TemplateProcessing: special token '%.60s' has no 'ids' in special_tokens",
                       name, tid->str);
    for (size_t i = 0; i < list->n; i++) {
        int64_t x;
        if (!sl_json_is_int(list->kids[i], &x) || x < 0 || x >= vocab_size)
            return sl_errf(err,
                           "%s: post_processor TemplateProcessing: an id of '%.60s' is not in the vocabulary "
                           "(%u ids)",
                           name, tid->str, vocab_size);
        uint32_t u = (uint32_t)x;
        sl_buf_append(ids, &u, sizeof u);
    }
    return 0;
}

static int load(sl_postproc *pp, const sl_json *v, uint32_t vocab_size, int depth, const char *name, sl_err *err)
{
    if (!v || v->type == SL_JSON_NULL)
        return 0;
    const char *t = type_of(v);
    if (!strcmp(t, "ByteLevel"))
        return 0; /* it changes offsets only */
    if (!strcmp(t, "Sequence")) {
        const sl_json *list = sl_json_get(v, "processors");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: post_processor Sequence has no 'processors' array", name);
        if (depth >= 8)
            return sl_errf(err, "%s: post_processor Sequences nested too deeply", name);
        for (size_t i = 0; i < list->n; i++)
            if (load(pp, list->kids[i], vocab_size, depth + 1, name, err))
                return -1;
        return 0;
    }
    if (!strcmp(t, "BertProcessing") || !strcmp(t, "RobertaProcessing")) {
        uint32_t cls, sep;
        if (pair_id(v, "cls", t, vocab_size, &cls, name, err) || pair_id(v, "sep", t, vocab_size, &sep, name, err))
            return -1;
        put(&pp->pre, &pp->n_pre, &cls, 1, 1);
        put(&pp->post, &pp->n_post, &sep, 1, 0);
        return 0;
    }
    if (!strcmp(t, "TemplateProcessing")) {
        const sl_json *single = sl_json_get(v, "single"), *special = sl_json_get(v, "special_tokens");
        if (!single || single->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: post_processor TemplateProcessing has no 'single' template", name);
        sl_buf before = {0}, after = {0};
        int seen = 0, rc = 0;
        for (size_t i = 0; i < single->n && rc == 0; i++) {
            const sl_json *it = single->kids[i];
            const sl_json *seq = it->type == SL_JSON_OBJECT ? sl_json_get(it, "Sequence") : NULL;
            if (seq) {
                const char *id = seq->type == SL_JSON_OBJECT ? sl_json_get_str(seq, "id") : NULL;
                if (!id || strcmp(id, "A") || seen)
                    rc = sl_errf(err,
                                 "%s: post_processor TemplateProcessing: the 'single' template must hold the "
                                 "sequence A once",
                                 name);
                seen = 1;
            } else {
                rc = template_ids(v, special, it, vocab_size, seen ? &after : &before, name, err);
            }
        }
        if (rc == 0 && !seen)
            rc = sl_errf(err, "%s: post_processor TemplateProcessing: the 'single' template has no sequence A", name);
        if (rc == 0) {
            put(&pp->pre, &pp->n_pre, (const uint32_t *)before.data, before.len / sizeof(uint32_t), 1);
            put(&pp->post, &pp->n_post, (const uint32_t *)after.data, after.len / sizeof(uint32_t), 0);
        }
        sl_buf_free(&before);
        sl_buf_free(&after);
        return rc;
    }
    return sl_errf(err,
                   "%s: post_processor '%s' is not supported (supported: TemplateProcessing, BertProcessing, "
                   "RobertaProcessing, ByteLevel, Sequence)",
                   name, t);
}

int sl_postproc_load(sl_postproc *pp, const sl_json *v, uint32_t vocab_size, const char *name, sl_err *err)
{
    memset(pp, 0, sizeof *pp);
    if (load(pp, v, vocab_size, 0, name, err)) {
        sl_postproc_free(pp);
        return -1;
    }
    return 0;
}

void sl_postproc_free(sl_postproc *pp)
{
    free(pp->pre);
    free(pp->post);
    memset(pp, 0, sizeof *pp);
}
