/* The stretch cache: a per-thread map from a stretch of text (up to
 * SL_SCACHE_KEY bytes) to what a model made of it (up to SL_SCACHE_VALS
 * 32-bit values: ids, or whatever a family keeps), for models whose result
 * depends on the stretch alone (BPE on a piece, or on a part joins.h cut
 * out). Short stretches (most words) live in a direct-mapped table with
 * the key and values inline, which the threads of a tokenizer share
 * (sl_scache_shared); longer ones in a per-thread open addressing table
 * over an arena, which is emptied and starts again when it holds
 * SL_SCACHE_MAX entries or its arena is full, so the memory is bounded
 * (8 MiB shared, 8 MiB per thread) whatever the corpus. */
#ifndef SLUICE_TOKENIZE_SCACHE_H
#define SLUICE_TOKENIZE_SCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tokenize/tokenizer.h"

#define SL_SCACHE_KEY 255
#define SL_SCACHE_VALS 255
#define SL_SCACHE_MAX ((size_t)1 << 16)
#define SL_SCACHE_ARENA ((size_t)6 << 20)

/* 2^17 short entries: about the distinct GPT-2 pieces of 50 MB of mixed
 * text (125k); sized when byte-level BPE asked it for every piece its
 * piece cache missed (at 2^15, 171k BPE runs; at 2^17, 141k). Byte-level
 * BPE now asks it only for pieces of 17-24 bytes (bpe_merge.c, piece_slow:
 * a shorter one is encoded again); the SentencePiece families (tok_spm.c,
 * tok_spbpe.c) for their words, at this size, not measured again since. */
#define SL_SCACHE_SHORT_BITS 17
#define SL_SCACHE_SHORT_KEY 24
#define SL_SCACHE_SHORT_VALS 8

/* The short table, shared by the threads of one tokenizer: each entry is
 * one cache line of 16 words, a sequence number (0: empty; odd: being
 * written), len | n << 8, the key (6 words) and the values, all read and
 * written with atomic word operations. A writer that finds an entry being
 * written skips its store; a reader that sees the sequence change under it
 * counts a miss. So every thread gains from the stretches the others have
 * met, and a reader never takes half an entry. */
#define SL_SCACHE_SHORT_KEYW (SL_SCACHE_SHORT_KEY / 4)
#define SL_SCACHE_SHORT_VAL0 (2 + SL_SCACHE_SHORT_KEYW)
#define SL_SCACHE_SHORT_WORDS (SL_SCACHE_SHORT_VAL0 + SL_SCACHE_SHORT_VALS)
#define SL_SCACHE_SHORT_MASK (((size_t)1 << SL_SCACHE_SHORT_BITS) - 1)
typedef struct sl_scache_shared {
    uint32_t (*e)[SL_SCACHE_SHORT_WORDS]; /* on cache line boundaries */
} sl_scache_shared;
sl_scache_shared *sl_scache_shared_new(void);
void sl_scache_shared_free(sl_scache_shared *sh);

typedef struct sl_scache_slot {
    uint64_t h;
    uint32_t off; /* in the arena: the key, padded to 4 bytes, then the values */
    uint8_t len, n, used;
} sl_scache_slot;

/* One thread's cache (zero-initialised, or sl_scache_init to use a shared
 * short table; without one it makes its own at the first store). */
typedef struct sl_scache {
    sl_scache_shared *sh;
    int own_sh;
    uint32_t tmp[SL_SCACHE_SHORT_VALS]; /* a short entry's values, copied out */
    sl_scache_slot *t;
    size_t cap, n;
    char *arena;
    size_t arena_len;
} sl_scache;

void sl_scache_init(sl_scache *c, sl_scache_shared *sh);
uint64_t sl_scache_hash(const char *k, size_t n);
/* The per-thread table's part of sl_scache_get. */
const uint32_t *sl_scache_get_long(const sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv);

/* A seqlock reader (Boehm, "Can seqlocks get along with programming
 * language memory models?", 2012): the key compared and the values copied
 * out word by word, then the sequence checked again. Inline: it is the
 * hot path of every BPE family. */
static inline const uint32_t *sl_scache_short_get(sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv)
{
    uint32_t *w = c->sh->e[h & SL_SCACHE_SHORT_MASK];
    uint32_t seq = __atomic_load_n(&w[0], __ATOMIC_ACQUIRE);
    if (!seq || (seq & 1))
        return NULL;
    uint32_t meta = __atomic_load_n(&w[1], __ATOMIC_RELAXED);
    size_t got = meta >> 8 & 0xff, i = 0;
    if ((meta & 0xff) != n || got > SL_SCACHE_SHORT_VALS)
        return NULL;
    for (; i + 4 <= n; i += 4) {
        uint32_t x;
        memcpy(&x, k + i, 4);
        if (__atomic_load_n(&w[2 + i / 4], __ATOMIC_RELAXED) != x)
            return NULL;
    }
    if (i < n) { /* the last word, zero-padded as the writer stored it */
        unsigned char b[4] = {0};
        for (size_t j = 0; i + j < n; j++)
            b[j] = (unsigned char)k[i + j];
        uint32_t x;
        memcpy(&x, b, 4);
        if (__atomic_load_n(&w[2 + i / 4], __ATOMIC_RELAXED) != x)
            return NULL;
    }
    for (size_t j = 0; j < got; j++)
        c->tmp[j] = __atomic_load_n(&w[SL_SCACHE_SHORT_VAL0 + j], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&w[0], __ATOMIC_RELAXED) != seq)
        return NULL;
    *nv = got;
    return c->tmp;
}

/* The values stored for k[0..n) (h: its sl_scache_hash), *nv of them, or
 * NULL; valid until the next call on c. */
static inline const uint32_t *sl_scache_get(sl_scache *c, uint64_t h, const char *k, size_t n, size_t *nv)
{
    if (n && n <= SL_SCACHE_SHORT_KEY && c->sh) {
        const uint32_t *v = sl_scache_short_get(c, h, k, n, nv);
        if (v)
            return v;
    }
    return c->cap ? sl_scache_get_long(c, h, k, n, nv) : NULL;
}
/* A stretch's ids through the cache, for a model whose ids of k[0..n)
 * depend on k alone: on a hit they are appended to out and 1 returned;
 * else 0, with *h the hash to store them under once the model has made
 * them (sl_scache_put, when n <= SL_SCACHE_KEY). */
static inline int sl_scache_ids(sl_scache *c, const char *k, size_t n, sl_ids *out, uint64_t *h)
{
    *h = 0;
    if (n > SL_SCACHE_KEY)
        return 0;
    *h = sl_scache_hash(k, n);
    size_t nv;
    const uint32_t *v = sl_scache_get(c, *h, k, n, &nv);
    if (v)
        sl_ids_append(out, v, nv);
    return v != NULL;
}

/* Stores v[0..nv) for k[0..n); ignored when n or nv is too large. */
void sl_scache_put(sl_scache *c, uint64_t h, const char *k, size_t n, const uint32_t *v, size_t nv);
/* After a miss of sl_scache_ids (h its hash): stores the ids the model
 * then appended to out, out->v[start..out->n), for k[0..n); nothing when
 * it appended none (out->v may still be NULL) or n is too large. */
static inline void sl_scache_put_ids(sl_scache *c, uint64_t h, const char *k, size_t n, const sl_ids *out, size_t start)
{
    if (n <= SL_SCACHE_KEY && out->n > start)
        sl_scache_put(c, h, k, n, out->v + start, out->n - start);
}
void sl_scache_free(sl_scache *c);

#endif
