/* A generic hash table (base/hashtab.h). */
#include "base/hashtab.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stream/err.h"

static int is_empty(const unsigned char *e, size_t k)
{
    uint64_t w;
    switch (k) {
    case 4: {
        uint32_t v;
        memcpy(&v, e, 4);
        return v == 0;
    }
    case 8: memcpy(&w, e, 8); return w == 0;
    case 16: {
        uint64_t u;
        memcpy(&w, e, 8);
        memcpy(&u, e + 8, 8);
        return (w | u) == 0;
    }
    default:
        for (size_t i = 0; i < k; i++)
            if (e[i])
                return 0;
        return 1;
    }
}

static uint64_t hash_key(const sl_htab *h, const void *key)
{
    const sl_htab_type *t = h->type;
    return t->hash ? t->hash(key, h->ctx) : XXH3_64bits(key, t->key_size);
}

static uint64_t hash_entry(const sl_htab *h, const void *e)
{
    const sl_htab_type *t = h->type;
    if (t->entry_hash)
        return t->entry_hash(e, h->ctx);
    return hash_key(h, e);
}

static int matches(const sl_htab *h, const void *key, const void *e)
{
    const sl_htab_type *t = h->type;
    return t->eq ? t->eq(key, e, h->ctx) : !memcmp(key, e, t->key_size);
}

void sl_htab_init(sl_htab *h, const sl_htab_type *type, const void *ctx)
{
    *h = (sl_htab){.type = type, .ctx = ctx};
}

void sl_htab_free(sl_htab *h)
{
    free(h->slots);
    h->slots = NULL;
    h->cap = h->n = 0;
}

/* The slot holding key, or the empty slot where it would go. */
static unsigned char *slot_of(const sl_htab *h, const void *key, uint64_t hv)
{
    size_t es = h->type->entry_size, ks = h->type->key_size, mask = h->cap - 1;
    for (size_t i = (size_t)hv & mask;; i = (i + 1) & mask) {
        unsigned char *e = h->slots + i * es;
        if (is_empty(e, ks) || matches(h, key, e))
            return e;
    }
}

void *sl_htab_find(const sl_htab *h, const void *key)
{
    if (!h->n)
        return NULL;
    unsigned char *e = slot_of(h, key, hash_key(h, key));
    return is_empty(e, h->type->key_size) ? NULL : e;
}

static void grow(sl_htab *h)
{
    const sl_htab_type *t = h->type;
    size_t es = t->entry_size, ks = t->key_size;
    size_t cap = h->cap ? 2 * h->cap : t->min_cap ? t->min_cap : 16;
    unsigned char *old = h->slots, *s = sl_xcalloc(cap, es);
    size_t ocap = h->cap;
    h->slots = s;
    h->cap = cap;
    for (size_t i = 0; i < ocap; i++) {
        const unsigned char *e = old + i * es;
        if (is_empty(e, ks))
            continue;
        size_t j = (size_t)hash_entry(h, e) & (cap - 1);
        while (!is_empty(s + j * es, ks))
            j = (j + 1) & (cap - 1);
        memcpy(s + j * es, e, es);
    }
    free(old);
}

void *sl_htab_put(sl_htab *h, const void *key, int *fresh)
{
    const sl_htab_type *t = h->type;
    unsigned load = t->max_load ? t->max_load : 75;
    uint64_t hv = hash_key(h, key);
    unsigned char *e = NULL;
    if (h->cap) {
        e = slot_of(h, key, hv);
        if (!is_empty(e, t->key_size)) {
            *fresh = 0;
            return e;
        }
    }
    if ((h->n + 1) * 100 > h->cap * load) {
        grow(h);
        e = slot_of(h, key, hv);
    }
    *fresh = 1;
    h->n++;
    if (!t->eq)
        memcpy(e, key, t->key_size);
    return e;
}

void *sl_htab_next(const sl_htab *h, size_t *pos)
{
    size_t es = h->type->entry_size, ks = h->type->key_size;
    for (; *pos < h->cap; ++*pos) {
        unsigned char *e = h->slots + *pos * es;
        if (!is_empty(e, ks)) {
            ++*pos;
            return e;
        }
    }
    return NULL;
}
