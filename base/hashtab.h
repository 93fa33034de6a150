/* A generic hash table: open addressing with linear probing over a
 * power-of-two array of fixed-size entries stored inline.
 *
 * An entry is `entry_size` bytes; its first `key_size` bytes are all zero in
 * an empty slot and never all zero in a used one (store an index + 1, or map
 * a zero hash to 1). Two ways to key it:
 *
 * - a fixed-size key: hash, entry_hash and eq NULL; the first key_size bytes of an entry
 *   are the key, hashed with XXH3 and compared with memcmp, and a lookup key
 *   is key_size bytes laid out the same way;
 * - the caller's hash and compare (hash and eq both set): hash(key) of a lookup key, eq(key, entry)
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
 *   static const sl_htab_type ids = {.entry_size = 16, .key_size = 16};
 *   sl_htab h;
 *   sl_htab_init(&h, &ids, NULL);
 *   int fresh;
 *   sl_htab_put(&h, key16, &fresh);   // fresh: 1 the first time
 *   sl_htab_find(&h, key16);          // the entry, or NULL
 *   sl_htab_free(&h);
 *
 * Not thread-safe for writers; any number of readers may share a table no one
 * writes. Memory: capacity x entry_size, capacity at most twice what
 * max_load needs. */
#ifndef SLUICE_BASE_HASHTAB_H
#define SLUICE_BASE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_htab_type {
    size_t entry_size; /* bytes per entry: the key (or the used mark) first, then any value */
    size_t key_size;   /* 1..entry_size: all zero exactly in an empty slot; with hash NULL, the key */
    uint64_t (*hash)(const void *key, const void *ctx);
    uint64_t (*entry_hash)(const void *entry, const void *ctx); /* NULL: hash(entry) */
    int (*eq)(const void *key, const void *entry, const void *ctx);
    unsigned max_load; /* percent, 10..90; 0: 75 */
    size_t min_cap;    /* the first capacity, a power of two; 0: 16 */
} sl_htab_type;

typedef struct sl_htab {
    const sl_htab_type *type;
    const void *ctx; /* passed to the callbacks */
    unsigned char *slots;
    size_t cap, n;
} sl_htab;

/* An empty table (allocates on the first sl_htab_put). */
void sl_htab_init(sl_htab *h, const sl_htab_type *type, const void *ctx);
/* Frees the slots (not what entries point to: walk them first). */
void sl_htab_free(sl_htab *h);
/* The entry holding key, or NULL. */
void *sl_htab_find(const sl_htab *h, const void *key);
/* The entry holding key (*fresh = 0), or a new zeroed one (*fresh = 1). With
 * a fixed-size key the new entry has the key copied in; otherwise the caller
 * writes its first key_size bytes (not all zero) before the next call. */
void *sl_htab_put(sl_htab *h, const void *key, int *fresh);
/* Entries held. */
static inline size_t sl_htab_count(const sl_htab *h)
{
    return h->n;
}
/* Walks the entries in slot order: start with *pos = 0; NULL at the end. */
void *sl_htab_next(const sl_htab *h, size_t *pos);

#endif
