/* The stretch cache of scache.h. */
#include "tokenize/scache.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stream/err.h"

uint64_t sl_scache_hash(const char *k, size_t n)
{
    return XXH3_64bits(k, n);
}

static sl_scache_slot *find(const sl_scache *c, uint64_t h, const char *k, size_t n)
{
    size_t mask = c->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        sl_scache_slot *s = &c->t[i];
        if (!s->used || (s->h == h && s->len == n && !memcmp(c->arena + s->off, k, n)))
            return s;
    }
}

const uint32_t *sl_scache_get(const sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv)
{
    if (n <= SL_SCACHE_SHORT_KEY) {
        const sl_scache_short *e = c->s ? &c->s[h & (((size_t)1 << SL_SCACHE_SHORT_BITS) - 1)] : NULL;
        if (e && e->len == n && n && !memcmp(e->key, k, n)) {
            *nv = e->n;
            return e->v;
        }
    }
    if (!c->cap || n > SL_SCACHE_KEY)
        return NULL;
    const sl_scache_slot *s = find(c, h, k, n);
    if (!s->used)
        return NULL;
    *nv = s->n;
    return (const uint32_t *)(void *)(c->arena + ((s->off + s->len + 3) & ~(size_t)3));
}

static void empty(sl_scache *c)
{
    memset(c->t, 0, c->cap * sizeof *c->t);
    c->n = 0;
    c->arena_len = 0;
}

void sl_scache_put(sl_scache *c, uint64_t h, const char *k, size_t n, const uint32_t *v, size_t nv)
{
    if (n <= SL_SCACHE_SHORT_KEY && nv <= SL_SCACHE_SHORT_VALS) {
        if (!n)
            return;
        if (!c->s)
            c->s = sl_xzalloc_touched((size_t)1 << SL_SCACHE_SHORT_BITS, sizeof *c->s);
        sl_scache_short *e = &c->s[h & (((size_t)1 << SL_SCACHE_SHORT_BITS) - 1)];
        e->len = (uint8_t)n;
        e->n = (uint8_t)nv;
        memcpy(e->key, k, n);
        if (nv)
            memcpy(e->v, v, nv * sizeof *v);
        return;
    }
    if (n > SL_SCACHE_KEY || nv > SL_SCACHE_VALS)
        return;
    if (!c->arena)
        c->arena = sl_xmalloc(SL_SCACHE_ARENA);
    if (c->n + 1 > c->cap / 2) {
        if (c->cap >= 2 * SL_SCACHE_MAX) {
            empty(c);
        } else { /* grow */
            size_t cap = c->cap ? 2 * c->cap : 4096;
            sl_scache_slot *old = c->t;
            size_t oc = c->cap;
            c->t = sl_xzalloc_touched(cap, sizeof *c->t);
            c->cap = cap;
            for (size_t i = 0; i < oc; i++)
                if (old[i].used) {
                    size_t j = old[i].h & (cap - 1);
                    while (c->t[j].used)
                        j = (j + 1) & (cap - 1);
                    c->t[j] = old[i];
                }
            free(old);
        }
    }
    size_t need = ((n + 3) & ~(size_t)3) + nv * sizeof *v;
    if (c->arena_len + need > SL_SCACHE_ARENA)
        empty(c);
    sl_scache_slot *s = find(c, h, k, n);
    if (s->used) /* already there (a caller that did not look first) */
        return;
    size_t off = c->arena_len;
    memcpy(c->arena + off, k, n);
    if (nv)
        memcpy(c->arena + ((off + n + 3) & ~(size_t)3), v, nv * sizeof *v);
    c->arena_len = off + need;
    *s = (sl_scache_slot){h, (uint32_t)off, (uint8_t)n, (uint8_t)nv, 1};
    c->n++;
}

void sl_scache_free(sl_scache *c)
{
    free(c->s);
    free(c->t);
    free(c->arena);
    memset(c, 0, sizeof *c);
}
