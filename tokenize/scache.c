/* The stretch cache of scache.h. */
#include "tokenize/scache.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/err.h"

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

_Static_assert(SL_SCACHE_SHORT_WORDS * 4 == 64, "a short entry is one cache line");

sl_scache_shared *sl_scache_shared_new(void)
{
    sl_scache_shared *sh = sl_xcalloc(1, sizeof *sh);
    sh->e = sl_xzalloc_touched(SL_SCACHE_SHORT_MASK + 1, sizeof *sh->e);
    return sh;
}

void sl_scache_shared_free(sl_scache_shared *sh)
{
    if (!sh)
        return;
    free(sh->e);
    free(sh);
}

void sl_scache_init(sl_scache *c, sl_scache_shared *sh)
{
    memset(c, 0, sizeof *c);
    c->sh = sh;
}

static void short_put(sl_scache *c, uint64_t h, const char *k, size_t n, const uint32_t *v, size_t nv)
{
    uint32_t *w = c->sh->e[h & SL_SCACHE_SHORT_MASK];
    uint32_t seq = __atomic_load_n(&w[0], __ATOMIC_RELAXED), key[SL_SCACHE_SHORT_KEYW] = {0};
    if ((seq & 1) || !__atomic_compare_exchange_n(&w[0], &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return; /* another thread is writing it */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(key, k, n);
    __atomic_store_n(&w[1], (uint32_t)(n | nv << 8), __ATOMIC_RELAXED);
    for (int i = 0; i < SL_SCACHE_SHORT_KEYW; i++)
        __atomic_store_n(&w[2 + i], key[i], __ATOMIC_RELAXED);
    for (size_t i = 0; i < nv; i++)
        __atomic_store_n(&w[SL_SCACHE_SHORT_VAL0 + i], v[i], __ATOMIC_RELAXED);
    seq += 2;
    __atomic_store_n(&w[0], seq ? seq : 2, __ATOMIC_RELEASE); /* (0 means empty) */
}

const uint32_t *sl_scache_get_long(const sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv)
{
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
        if (!c->sh) {
            c->sh = sl_scache_shared_new();
            c->own_sh = 1;
        }
        short_put(c, h, k, n, v, nv);
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
    if (c->own_sh)
        sl_scache_shared_free(c->sh);
    free(c->t);
    free(c->arena);
    memset(c, 0, sizeof *c);
}
