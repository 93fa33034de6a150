/* See vocab.h. */
#include "tokenize/vocab.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static void set_string(sl_vocab *v, uint32_t id, const char *s, size_t n)
{
    v->off[id] = (uint32_t)v->pool.len;
    v->len[id] = (uint32_t)n;
    sl_buf_append(&v->pool, s, n);
    sl_buf_putc(&v->pool, 0);
}

int64_t sl_vocab_find(const sl_vocab *v, const char *s, size_t n)
{
    if (!v->slot || n > v->max_len)
        return -1;
    for (uint64_t h = XXH3_64bits(s, n) & v->mask; v->slot[h].id1; h = (h + 1) & v->mask) {
        const struct sl_vocab_slot *e = &v->slot[h];
        if (e->len == n && !memcmp(v->pool.data + e->off, s, n))
            return e->id1 - 1;
    }
    return -1;
}

int sl_vocab_load(sl_vocab *v, const sl_json *vocab, const char *name, sl_err *err)
{
    memset(v, 0, sizeof *v);
    if (!vocab || vocab->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: model.vocab is missing or not a JSON object", name);
    if (vocab->n == 0)
        return sl_errf(err, "%s: model.vocab is empty", name);
    uint32_t max_id = 0;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        if (!sl_json_is_int(vocab->kids[i], &id) || id < 0 || id >= (int64_t)1 << 31)
            return sl_errf(err, "%s: offset %zu: model.vocab entry '%.60s' has no valid integer id", name,
                           vocab->kids[i]->offset, vocab->keys[i]->str);
        if ((uint32_t)id + 1 > max_id)
            max_id = (uint32_t)id + 1;
    }
    if ((uint64_t)max_id > 2 * (uint64_t)vocab->n + 256)
        return sl_errf(err, "%s: model.vocab ids are not dense (id %u with %zu entries)", name, max_id - 1, vocab->n);
    v->n_ids = max_id;
    v->off = sl_xcalloc(max_id ? max_id : 1, sizeof *v->off);
    v->len = sl_xmalloc((max_id ? max_id : 1) * sizeof *v->len);
    for (uint32_t i = 0; i < max_id; i++)
        v->len[i] = UINT32_MAX;
    size_t cap = 16;
    while (cap < 2 * vocab->n + 16)
        cap *= 2;
    v->slot = sl_xcalloc(cap, sizeof *v->slot);
    v->mask = cap - 1;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        sl_json_is_int(vocab->kids[i], &id);
        const sl_json *k = vocab->keys[i];
        if (k->str_len > UINT32_MAX / 2)
            return sl_errf(err, "%s: offset %zu: model.vocab entry too long", name, k->offset);
        if (v->len[id] != UINT32_MAX)
            return sl_errf(err, "%s: offset %zu: id %lld is used twice in model.vocab", name, k->offset, (long long)id);
        if (k->str_len > v->max_len)
            v->max_len = k->str_len;
        if (sl_vocab_find(v, k->str, k->str_len) >= 0)
            return sl_errf(err, "%s: offset %zu: model.vocab entry '%.60s' appears twice", name, k->offset, k->str);
        set_string(v, (uint32_t)id, k->str, k->str_len);
        uint64_t h = XXH3_64bits(k->str, k->str_len) & v->mask;
        while (v->slot[h].id1)
            h = (h + 1) & v->mask;
        v->slot[h] = (struct sl_vocab_slot){(uint32_t)id + 1, v->off[id], v->len[id]};
    }
    return 0;
}

void sl_vocab_init(sl_vocab *v, uint32_t n_ids, size_t n_entries)
{
    memset(v, 0, sizeof *v);
    v->n_ids = n_ids;
    v->off = sl_xcalloc(n_ids ? n_ids : 1, sizeof *v->off);
    v->len = sl_xmalloc((n_ids ? n_ids : 1) * sizeof *v->len);
    for (uint32_t i = 0; i < n_ids; i++)
        v->len[i] = UINT32_MAX;
    size_t cap = 16;
    while (cap < 2 * n_entries + 16)
        cap *= 2;
    v->slot = sl_xcalloc(cap, sizeof *v->slot);
    v->mask = cap - 1;
}

void sl_vocab_put_last(sl_vocab *v, uint32_t id, const char *s, size_t n)
{
    set_string(v, id, s, n);
    if (n > v->max_len)
        v->max_len = n;
    uint64_t h = XXH3_64bits(s, n) & v->mask;
    for (; v->slot[h].id1; h = (h + 1) & v->mask)
        if (v->slot[h].len == n && !memcmp(v->pool.data + v->slot[h].off, s, n))
            break;
    v->slot[h] = (struct sl_vocab_slot){id + 1, v->off[id], v->len[id]};
}

void sl_vocab_set(sl_vocab *v, uint32_t id, const char *s, size_t n)
{
    if (id >= v->n_ids) {
        v->off = sl_xrealloc(v->off, ((size_t)id + 1) * sizeof *v->off);
        v->len = sl_xrealloc(v->len, ((size_t)id + 1) * sizeof *v->len);
        for (uint32_t i = v->n_ids; i <= id; i++)
            v->off[i] = 0, v->len[i] = UINT32_MAX;
        v->n_ids = id + 1;
    }
    set_string(v, id, s, n);
}

const char *sl_vocab_str(const sl_vocab *v, uint32_t id, size_t *n)
{
    if (id >= v->n_ids || v->len[id] == UINT32_MAX)
        return NULL;
    *n = v->len[id];
    return v->pool.data + v->off[id];
}

void sl_vocab_free(sl_vocab *v)
{
    free(v->off);
    free(v->len);
    free(v->slot);
    sl_buf_free(&v->pool);
    memset(v, 0, sizeof *v);
}
