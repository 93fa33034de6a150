/* The stretch cache: a per-thread map from a stretch of text (up to
 * SL_SCACHE_KEY bytes) to what a model made of it (up to SL_SCACHE_VALS
 * 32-bit values: ids, or whatever a family keeps), for models whose result
 * depends on the stretch alone (BPE on a piece, or on a part joins.h cut
 * out). Short stretches (most words) live in a direct-mapped table with
 * the key and values inline, one cache line away; longer ones in an open
 * addressing table over an arena, which is emptied and starts again when
 * it holds SL_SCACHE_MAX entries or its arena is full, so the memory is
 * bounded (about 10 MiB) whatever the corpus. */
#ifndef SLUICE_TOKENIZE_SCACHE_H
#define SLUICE_TOKENIZE_SCACHE_H

#include <stddef.h>
#include <stdint.h>

#define SL_SCACHE_KEY 255
#define SL_SCACHE_VALS 255
#define SL_SCACHE_MAX ((size_t)1 << 16)
#define SL_SCACHE_ARENA ((size_t)6 << 20)

#define SL_SCACHE_SHORT_BITS 14
#define SL_SCACHE_SHORT_KEY 30
#define SL_SCACHE_SHORT_VALS 14

typedef struct sl_scache_short {
    uint8_t len, n; /* len 0: empty (an empty stretch is never cached) */
    char key[SL_SCACHE_SHORT_KEY];
    uint32_t v[SL_SCACHE_SHORT_VALS];
} sl_scache_short;

typedef struct sl_scache_slot {
    uint64_t h;
    uint32_t off; /* in the arena: the key, padded to 4 bytes, then the values */
    uint8_t len, n, used;
} sl_scache_slot;

typedef struct sl_scache {
    sl_scache_short *s;
    sl_scache_slot *t;
    size_t cap, n;
    char *arena;
    size_t arena_len;
} sl_scache;

uint64_t sl_scache_hash(const char *k, size_t n);
/* The values stored for k[0..n) (h: its sl_scache_hash), *nv of them, or
 * NULL. */
const uint32_t *sl_scache_get(const sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv);
/* Stores v[0..nv) for k[0..n); ignored when n or nv is too large. */
void sl_scache_put(sl_scache *c, uint64_t h, const char *k, size_t n, const uint32_t *v, size_t nv);
void sl_scache_free(sl_scache *c);

#endif
