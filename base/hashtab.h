/* A generic hash table: open addressing with linear probing over a
 * power-of-two array of fixed-size entries stored inline.
 *
 * An entry is `entry_size` bytes; its first `key_size` bytes are all zero in
 * an empty slot and never all zero in a used one (store an index + 1, or map
 * a zero hash to 1). Two ways to key it:
 *
 * - a fixed-size key: eq NULL; the first key_size bytes of an entry are the
 *   key, compared with memcmp and hashed with hash (NULL: XXH3), and a
 *   lookup key is key_size bytes laid out the same way;
 * - the caller's hash and compare (hash and eq set): hash(key) of a lookup key, eq(key, entry)
 *   whether an entry holds that key, and entry_hash(entry) the hash of a
 *   stored entry's key (to move it when the table grows; NULL: hash(entry),
 *   for tables whose lookup key is laid out as the entry). The lookup key is
 *   whatever the callbacks agree on (a string and its length, a 64-bit id);
 *   an entry may hold only an index into the caller's own array, reached
 *   through ctx.
 *
 * The table grows (doubles, entries moved in slot order) before an insertion
 * that would take it past max_load percent. Entries move when it grows: a
 * pointer to an entry is good until the next sl_htab_put.
 *
 * The type is passed on every call, as a `static const` object: lookups and
 * insertions are always inlined, so the compiler specializes the probe loop
 * for the type (its callbacks inlined, its sizes constants) and the table
 * costs what a hand-written one does.
 *
 *   static const sl_htab_type ids = {.entry_size = 16, .key_size = 16};
 *   sl_htab h;
 *   sl_htab_init(&h, NULL);
 *   int fresh;
 *   sl_htab_put(&h, &ids, key16, &fresh);   // fresh: 1 the first time
 *   sl_htab_find(&h, &ids, key16);          // the entry, or NULL
 *   sl_htab_free(&h);
 *
 * Not thread-safe for writers; any number of readers may share a table no one
 * writes. Memory: capacity x entry_size, capacity at most twice what
 * max_load needs. */
#ifndef SLUICE_BASE_HASHTAB_H
#define SLUICE_BASE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

typedef struct sl_htab_type {
    size_t entry_size; /* bytes per entry: the key (or the used mark) first, then any value */
    size_t key_size;   /* 1..entry_size: all zero exactly in an empty slot; with eq NULL, the key */
    uint64_t (*hash)(const void *key, const void *ctx);         /* NULL: XXH3 of the key_size bytes */
    uint64_t (*entry_hash)(const void *entry, const void *ctx); /* NULL: hash(entry) */
    int (*eq)(const void *key, const void *entry, const void *ctx);
    unsigned max_load; /* percent, 10..90; 0: 75 */
    size_t min_cap;    /* the first capacity, a power of two; 0: 16 */
} sl_htab_type;

typedef struct sl_htab {
    const void *ctx; /* passed to the callbacks */
    unsigned char *slots;
    size_t cap, n;
} sl_htab;

/* An empty table (allocates on the first sl_htab_put). */
void sl_htab_init(sl_htab *h, const void *ctx);
/* Frees the slots (not what entries point to: walk them first). */
void sl_htab_free(sl_htab *h);
/* Entries held. */
static inline size_t sl_htab_count(const sl_htab *h)
{
    return h->n;
}

/* ---- inline lookups; the rest of the file is the implementation ---------- */

void *sl_htab_alloc_(size_t cap, size_t entry_size);
void sl_htab_release_(void *slots);

static inline __attribute__((always_inline)) int sl_htab_empty_(const unsigned char *e, size_t k)
{
    uint64_t w, u;
    uint32_t v;
    switch (k) {
    case 4: memcpy(&v, e, 4); return v == 0;
    case 8: memcpy(&w, e, 8); return w == 0;
    case 16:
        memcpy(&w, e, 8);
        memcpy(&u, e + 8, 8);
        return (w | u) == 0;
    default:
        for (size_t i = 0; i < k; i++)
            if (e[i])
                return 0;
        return 1;
    }
}

static inline __attribute__((always_inline)) uint64_t sl_htab_hash_(const sl_htab *h, const sl_htab_type *t,
                                                                    const void *key)
{
    return t->hash ? t->hash(key, h->ctx) : XXH3_64bits(key, t->key_size);
}

/* The slot holding key, or the empty slot where it would go (cap > 0). */
static inline __attribute__((always_inline)) unsigned char *sl_htab_slot_(const sl_htab *h, const sl_htab_type *t,
                                                                          const void *key, uint64_t hv)
{
    size_t mask = h->cap - 1;
    for (size_t i = (size_t)hv & mask;; i = (i + 1) & mask) {
        unsigned char *e = h->slots + i * t->entry_size;
        if (sl_htab_empty_(e, t->key_size))
            return e;
        if (t->eq ? t->eq(key, e, h->ctx) : !memcmp(key, e, t->key_size))
            return e;
    }
}

/* Doubles the table, moving the entries in slot order (inline too, so that
 * the move is specialized for the type like the lookups). */
static inline void sl_htab_grow_(sl_htab *h, const sl_htab_type *t)
{
    size_t es = t->entry_size, ks = t->key_size;
    size_t cap = h->cap ? 2 * h->cap : t->min_cap ? t->min_cap : 16;
    unsigned char *old = h->slots, *s = sl_htab_alloc_(cap, es);
    size_t ocap = h->cap;
    h->slots = s;
    h->cap = cap;
    for (size_t i = 0; i < ocap; i++) {
        const unsigned char *e = old + i * es;
        if (sl_htab_empty_(e, ks))
            continue;
        uint64_t hv = t->entry_hash ? t->entry_hash(e, h->ctx) : sl_htab_hash_(h, t, e);
        size_t j = (size_t)hv & (cap - 1);
        while (!sl_htab_empty_(s + j * es, ks))
            j = (j + 1) & (cap - 1);
        memcpy(s + j * es, e, es);
    }
    sl_htab_release_(old);
}

/* Room for n entries without growing (a table of known size: no moves). */
static inline void sl_htab_reserve(sl_htab *h, const sl_htab_type *t, size_t n)
{
    size_t cap = h->cap ? h->cap : t->min_cap ? t->min_cap : 16;
    while (n * 100 > cap * (t->max_load ? t->max_load : 75))
        cap *= 2;
    if (!h->cap) {
        h->slots = sl_htab_alloc_(cap, t->entry_size);
        h->cap = cap;
    }
    while (h->cap < cap)
        sl_htab_grow_(h, t);
}

/* Walks the entries in slot order: start with *pos = 0; NULL at the end. */
static inline void *sl_htab_next(const sl_htab *h, const sl_htab_type *t, size_t *pos)
{
    for (; *pos < h->cap; ++*pos) {
        unsigned char *e = h->slots + *pos * t->entry_size;
        if (!sl_htab_empty_(e, t->key_size)) {
            ++*pos;
            return e;
        }
    }
    return NULL;
}

/* The entry holding key, or NULL. */
static inline __attribute__((always_inline)) void *sl_htab_find(const sl_htab *h, const sl_htab_type *t,
                                                                const void *key)
{
    if (!h->n)
        return NULL;
    unsigned char *e = sl_htab_slot_(h, t, key, sl_htab_hash_(h, t, key));
    return sl_htab_empty_(e, t->key_size) ? NULL : e;
}

/* The entry holding key (*fresh = 0), or a new zeroed one (*fresh = 1). With
 * a fixed-size key (eq NULL) the new entry has the key copied in; otherwise
 * the caller writes its first key_size bytes (not all zero) before the next
 * call. */
static inline __attribute__((always_inline)) void *sl_htab_put(sl_htab *h, const sl_htab_type *t, const void *key,
                                                               int *fresh)
{
    uint64_t hv = sl_htab_hash_(h, t, key);
    unsigned char *e = NULL;
    if (h->cap) {
        e = sl_htab_slot_(h, t, key, hv);
        if (!sl_htab_empty_(e, t->key_size)) {
            *fresh = 0;
            return e;
        }
    }
    if ((h->n + 1) * 100 > h->cap * (t->max_load ? t->max_load : 75)) {
        sl_htab_grow_(h, t);
        e = sl_htab_slot_(h, t, key, hv);
    }
    *fresh = 1;
    h->n++;
    if (!t->eq)
        memcpy(e, key, t->key_size);
    return e;
}

#endif
