/* The BPE merge step for one pre-token: repeatedly merge the adjacent pair
 * with the lowest merge rank, the leftmost one on ties. That is the order
 * HF's Word::merge_all pops its priority queue in (key (rank, position)),
 * so the results are identical.
 *
 * Two implementations of the same rule:
 *  - short pieces (the vast majority): a scan over a small array, O(n^2)
 *    but with n a handful of symbols it beats any bookkeeping;
 *  - long pieces (runs of one character, base64, minified code): a binary
 *    heap of candidate pairs plus a doubly linked list of symbols,
 *    O(n log n). Stale heap entries are skipped when popped.
 * A unit test checks both give the same ids on many pieces. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "tokenize/models/bpe_internal.h"

#define EMPTY UINT64_MAX
/* The scan up to 127 symbols: on the bench corpus's GPT-2 pieces of 48-199
 * bytes the scan took 22-24 % less time than the heap, on pieces of 96-999
 * bytes a threshold of 128 or 192 less than 96, one of 256 more (an
 * interleaved A/B of sl_bpe_encode_piece, 2026-11-28) */
#define HEAP_MIN_SYMBOLS 128

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

/* Bloom filters (the merge table's, the words table's): the three bits of
 * a 64-bit hash h, from bits of h that the table's slot index does not use
 * alone, in a filter of mask + 1 bits. */
#define BLOOM_BITS(mask, h, x, y, z)                                                                                   \
    uint64_t x = ((h) >> 20) & (mask), y = ((h) >> 40) & (mask);                                                       \
    uint64_t z = (((h) >> 40) ^ ((h) >> 8)) & (mask)

static inline void bloom_set(uint64_t *f, uint64_t mask, uint64_t h)
{
    BLOOM_BITS(mask, h, x, y, z);
    f[x >> 6] |= (uint64_t)1 << (x & 63);
    f[y >> 6] |= (uint64_t)1 << (y & 63);
    f[z >> 6] |= (uint64_t)1 << (z & 63);
}

static inline int bloom_may(const uint64_t *f, uint64_t mask, uint64_t h)
{
    BLOOM_BITS(mask, h, x, y, z);
    return (int)((f[x >> 6] >> (x & 63)) & (f[y >> 6] >> (y & 63)) & (f[z >> 6] >> (z & 63)) & 1);
}

/* A filter of about ten bits an entry for n entries (mask in *mask). */
static uint64_t *bloom_new(size_t n, uint64_t *mask)
{
    size_t bits = sl_pow2_cap(512, 10 * n);
    *mask = bits - 1;
    return sl_xcalloc(bits / 64, sizeof(uint64_t));
}

/* The merge filter's hash of a pair (mix alone leaves its high bits weak
 * for keys that differ in few bits). */
static inline uint64_t pair_hash(uint64_t key)
{
    return mix(key) * 0x9E3779B97F4A7C15ULL;
}

void sl_merge_table_init(sl_bpe *b, size_t n)
{
    size_t cap = sl_pow2_cap(16, 2 * n + 16);
    free(b->merges);
    b->merges = sl_xzalloc_touched(cap, sizeof *b->merges);
    for (size_t i = 0; i < cap; i++)
        b->merges[i].key = EMPTY;
    b->merge_mask = cap - 1;
    b->n_merges = 0;
    free(b->merge_bloom);
    b->merge_bloom = bloom_new(n, &b->merge_bloom_mask);
    free(b->merge_grid);
    free(b->merge_rank_id);
    b->merge_grid = sl_xmalloc((size_t)SL_GRID_IDS * SL_GRID_IDS * sizeof *b->merge_grid);
    memset(b->merge_grid, 0xff, (size_t)SL_GRID_IDS * SL_GRID_IDS * sizeof *b->merge_grid);
    b->merge_rank_id = sl_xmalloc((n ? n : 1) * sizeof *b->merge_rank_id);
    b->merge_rank_cap = n;
    b->merge_grid_off = INT64_MIN; /* (set by the first merge) */
    b->merge_grid_ranked = 0;
}

void sl_merge_insert(sl_bpe *b, uint32_t left, uint32_t right, uint32_t rank, uint32_t id)
{
    uint64_t key = (uint64_t)left << 32 | right;
    bloom_set(b->merge_bloom, b->merge_bloom_mask, pair_hash(key));
    uint64_t i = mix(key) & b->merge_mask;
    while (b->merges[i].key != EMPTY && b->merges[i].key != key)
        i = (i + 1) & b->merge_mask;
    if (b->merges[i].key == EMPTY)
        b->n_merges++;
    b->merges[i] = (sl_merge_slot){key, rank, id};
    if (!b->merge_grid)
        return;
    if (rank >= b->merge_rank_cap) { /* (no caller does this) */
        free(b->merge_grid);
        free(b->merge_rank_id);
        b->merge_grid = b->merge_rank_id = NULL;
        return;
    }
    int64_t off = (int64_t)id - (int64_t)rank;
    if (b->merge_grid_off == INT64_MIN)
        b->merge_grid_off = off;
    b->merge_grid_ranked |= off != b->merge_grid_off;
    b->merge_rank_id[rank] = id;
    if (left < SL_GRID_IDS && right < SL_GRID_IDS)
        b->merge_grid[(size_t)left * SL_GRID_IDS + right] = rank;
}

static inline __attribute__((always_inline)) int merge_lookup(const sl_bpe *b, uint32_t left, uint32_t right,
                                                              uint32_t *rank, uint32_t *id)
{
    uint64_t key = (uint64_t)left << 32 | right;
    if (!bloom_may(b->merge_bloom, b->merge_bloom_mask, pair_hash(key)))
        return 0;
    uint64_t i = mix(key) & b->merge_mask;
    for (;;) {
        const sl_merge_slot *s = &b->merges[i];
        if (s->key == key) {
            *rank = s->rank;
            *id = s->id;
            return 1;
        }
        if (s->key == EMPTY)
            return 0;
        i = (i + 1) & b->merge_mask;
    }
}

/* lazy_merges: the token (l, r) merges into by tiktoken's rule, or -1.
 * The pair covers bytes [from, to) of the piece: read from s->bytes where
 * set, else the two tokens' bytes are put together. */
static int64_t lazy_token(const sl_bpe *b, sl_bpe_state *s, uint32_t left, uint32_t right, size_t from, size_t to)
{
    if (s->bytes)
        return to - from <= b->max_len ? sl_bpe_find_word(b, s->bytes + from, to - from) : -1;
    uint32_t nl = b->tok_len[left], nr = b->tok_len[right];
    if ((uint64_t)nl + nr > b->max_len)
        return -1;
    memcpy(s->cat, b->pool + b->tok_off[left], nl);
    memcpy(s->cat + nl, b->pool + b->tok_off[right], nr);
    return sl_bpe_find_word(b, (const uint8_t *)s->cat, (size_t)nl + nr);
}

/* A pair not yet in the thread's memo */
static int __attribute__((noinline)) memo_miss(const sl_bpe *b, sl_bpe_state *s, sl_merge_slot *e, uint64_t key,
                                               size_t from, size_t to, uint32_t *rank, uint32_t *id)
{
    int64_t t = lazy_token(b, s, (uint32_t)(key >> 32), (uint32_t)key, from, to);
    e->key = key;
    e->id = t >= 0 ? (uint32_t)t : 0;
    e->rank = t >= 0 ? (uint32_t)t - b->rank0 : UINT32_MAX;
    *rank = e->rank;
    *id = e->id;
    return t >= 0;
}

/* A pair of ids below SL_GRID_IDS not yet in the thread's grid */
#define GRID_UNKNOWN 0xFEFEFEFEu /* (memset of 0xfe bytes) */
static int __attribute__((noinline)) grid_miss(const sl_bpe *b, sl_bpe_state *s, uint32_t left, uint32_t right,
                                               size_t from, size_t to, uint32_t *rank, uint32_t *id)
{
    int64_t t = lazy_token(b, s, left, right, from, to);
    uint32_t r = t >= 0 ? (uint32_t)t - b->rank0 : UINT32_MAX;
    s->grid[(size_t)left * SL_GRID_IDS + right] = r;
    *rank = r;
    *id = t >= 0 ? (uint32_t)t : 0;
    return t >= 0;
}

/* (inlined: a call for each of the 20 lookups of a run cost 2-3 % of it) */
static inline __attribute__((always_inline)) int merge_find(const sl_bpe *b, sl_bpe_state *s, uint32_t left,
                                                            uint32_t right, size_t from, size_t to, uint32_t *rank,
                                                            uint32_t *id)
{
    if (!b->lazy_merges) {
        if (b->merge_grid && (left | right) < SL_GRID_IDS) {
            uint32_t r = b->merge_grid[(size_t)left * SL_GRID_IDS + right];
            if (r == UINT32_MAX)
                return 0;
            *rank = r;
            *id = b->merge_grid_ranked ? b->merge_rank_id[r] : (uint32_t)((int64_t)r + b->merge_grid_off);
            return 1;
        }
        return b->merges && merge_lookup(b, left, right, rank, id);
    }
    if ((left | right) < SL_GRID_IDS) { /* the thread's grid: tiktoken's rule as the table's grid */
        uint32_t r = s->grid[(size_t)left * SL_GRID_IDS + right];
        if (r == GRID_UNKNOWN)
            return grid_miss(b, s, left, right, from, to, rank, id);
        *rank = r;
        *id = r + b->rank0;
        return r != UINT32_MAX;
    }
    uint64_t key = (uint64_t)left << 32 | right;
    sl_merge_slot *e = &s->memo[mix(key) & (((uint64_t)1 << SL_MEMO_BITS) - 1)];
    if (e->key != key)
        return memo_miss(b, s, e, key, from, to, rank, id);
    *rank = e->rank;
    *id = e->id;
    return e->rank != UINT32_MAX;
}

static void memo_make(const sl_bpe *b, sl_bpe_state *s)
{
    if (!b->lazy_merges || s->memo)
        return;
    s->memo = sl_xmalloc(((size_t)1 << SL_MEMO_BITS) * sizeof *s->memo);
    for (size_t i = 0; i < (size_t)1 << SL_MEMO_BITS; i++)
        s->memo[i].key = EMPTY;
    s->grid = sl_xmalloc((size_t)SL_GRID_IDS * SL_GRID_IDS * sizeof *s->grid);
    memset(s->grid, 0xfe, (size_t)SL_GRID_IDS * SL_GRID_IDS * sizeof *s->grid); /* GRID_UNKNOWN */
    s->cat = sl_xmalloc(b->max_len + 1);
}

static void reserve_syms(sl_bpe_state *s, size_t n)
{
    if (n <= s->sym_cap)
        return;
    size_t cap = s->sym_cap ? s->sym_cap : 256;
    while (cap < n)
        cap *= 2;
    s->sym = sl_xrealloc(s->sym, cap * sizeof *s->sym);
    s->prev = sl_xrealloc(s->prev, cap * sizeof *s->prev);
    s->next = sl_xrealloc(s->next, cap * sizeof *s->next);
    s->link = sl_xrealloc(s->link, 2 * cap * sizeof *s->link);
    s->sym_cap = cap;
}

/* Simple scan over the symbols where they stand: pair i is symbol i and
 * the next one alive (nxt), its rank in rank[i] (UINT32_MAX: none, or
 * symbol i merged away), the id it merges into in nid[i]. A merge marks
 * its right symbol dead and looks up only the two pairs around it, so
 * nothing moves; the leftmost lowest rank over all positions is the
 * leftmost lowest among the live pairs, as positions keep their order.
 * The links are in s->link (nxt) and after them (prv). */
static void merge_scan(const sl_bpe *b, sl_bpe_state *s, size_t n, sl_ids *out)
{
    int32_t *sym = s->sym;
    uint32_t *rank = (uint32_t *)s->prev, *nid = (uint32_t *)s->next;
    uint32_t *nxt = s->link, *prv = s->link + s->sym_cap;
    memo_make(b, s);
    for (size_t i = 0; i < n; i++) {
        nxt[i] = (uint32_t)(i + 1);
        prv[i] = (uint32_t)(i - 1);
        if (i + 1 == n || !merge_find(b, s, (uint32_t)sym[i], (uint32_t)sym[i + 1], i, i + 2, &rank[i], &nid[i]))
            rank[i] = UINT32_MAX;
    }
    for (;;) {
        /* the lowest (rank, position), with no branch per position:
         * which one wins is what the predictor cannot know */
        uint64_t best = UINT64_MAX;
        s->work += n;
        for (size_t i = 0; i + 1 < n; i++) {
            uint64_t v = (uint64_t)rank[i] << 32 | i;
            best = v < best ? v : best;
        }
        if (best >> 32 == UINT32_MAX)
            break;
        size_t at = (uint32_t)best, j = nxt[at], k = nxt[j];
        sym[at] = (int32_t)nid[at];
        rank[j] = UINT32_MAX;
        nxt[at] = (uint32_t)k;
        if (k < n) {
            prv[k] = (uint32_t)at;
            if (!merge_find(b, s, (uint32_t)sym[at], (uint32_t)sym[k], at, nxt[k], &rank[at], &nid[at]))
                rank[at] = UINT32_MAX;
        } else {
            rank[at] = UINT32_MAX;
        }
        if (at > 0) {
            size_t p = prv[at];
            if (!merge_find(b, s, (uint32_t)sym[p], (uint32_t)sym[at], p, k, &rank[p], &nid[p]))
                rank[p] = UINT32_MAX;
        }
    }
    for (size_t i = 0; i < n; i = nxt[i])
        sl_ids_push(out, (uint32_t)sym[i]);
}

/* Heap entries pack (rank << 32 | position): the minimum is the lowest
 * rank, then the leftmost position, as required. */
static void heap_push(sl_bpe_state *s, size_t *hn, uint64_t v)
{
    s->work++;
    if (*hn == s->heap_cap) {
        s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 1024;
        s->heap = sl_xrealloc(s->heap, s->heap_cap * sizeof *s->heap);
    }
    uint64_t *h = s->heap;
    size_t i = (*hn)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static uint64_t heap_pop(sl_bpe_state *s, size_t *hn)
{
    s->work++;
    uint64_t *h = s->heap;
    uint64_t top = h[0], v = h[--*hn];
    size_t i = 0, n = *hn;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (n)
        h[i] = v;
    return top;
}

/* The end of the pair at pos whose right symbol is nx (next[nx], or n). */
static inline size_t pair_end(const sl_bpe_state *s, int32_t nx, size_t n)
{
    return s->next[nx] < 0 ? n : (size_t)s->next[nx];
}

static void push_pair(const sl_bpe *b, sl_bpe_state *s, size_t *hn, int32_t pos, size_t n)
{
    int32_t nx = s->next[pos];
    uint32_t r, id;
    s->work++;
    if (nx >= 0 &&
        merge_find(b, s, (uint32_t)s->sym[pos], (uint32_t)s->sym[nx], (size_t)pos, pair_end(s, nx, n), &r, &id))
        heap_push(s, hn, (uint64_t)r << 32 | (uint32_t)pos);
}

static void merge_heap(const sl_bpe *b, sl_bpe_state *s, size_t n, sl_ids *out)
{
    int32_t *sym = s->sym, *prev = s->prev, *next = s->next;
    memo_make(b, s);
    for (size_t i = 0; i < n; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    size_t hn = 0;
    for (size_t i = 0; i + 1 < n; i++)
        push_pair(b, s, &hn, (int32_t)i, n);
    while (hn) {
        uint64_t top = heap_pop(s, &hn);
        uint32_t rank = (uint32_t)(top >> 32);
        int32_t pos = (int32_t)(uint32_t)top;
        int32_t nx = next[pos];
        uint32_t r, id;
        /* Stale when the symbol was merged away (sym < 0) or its pair changed. */
        if (sym[pos] < 0 || nx < 0 ||
            !merge_find(b, s, (uint32_t)sym[pos], (uint32_t)sym[nx], (size_t)pos, pair_end(s, nx, n), &r, &id) ||
            r != rank)
            continue;
        sym[pos] = (int32_t)id;
        sym[nx] = -1;
        next[pos] = next[nx];
        if (next[nx] >= 0)
            prev[next[nx]] = pos;
        if (prev[pos] >= 0)
            push_pair(b, s, &hn, prev[pos], n);
        push_pair(b, s, &hn, pos, n);
    }
    for (int32_t i = 0; i >= 0; i = next[i])
        sl_ids_push(out, (uint32_t)sym[i]);
}

void sl_bpe_encode_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, int heap, sl_ids *out)
{
    reserve_syms(s, n + 1);
    size_t k = 0;
    if (b->affix || b->unk_id >= 0) { /* HF's initial symbols: prefix on all but the first byte, suffix on the last */
        int in_unk = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t id = !b->affix   ? b->byte_id[p[i]]
                         : i + 1 < n ? (i ? b->byte_id_cont : b->byte_id)[p[i]]
                                     : (i ? b->byte_id_both : b->byte_id_end)[p[i]];
            if (id < 0 && b->unk_id >= 0) { /* the unk token; one for a run of them with fuse_unk */
                if (in_unk && b->fuse_unk)
                    continue;
                id = b->unk_id;
                in_unk = 1;
            } else {
                in_unk = 0;
            }
            if (id >= 0)
                s->sym[k++] = id;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            if (b->byte_id[p[i]] >= 0) /* a byte without a token is dropped, as HF does without unk */
                s->sym[k++] = b->byte_id[p[i]];
    }
    if (k == 0)
        return;
    s->bytes = k == n && !b->affix && b->unk_id < 0 ? p : NULL;
    if (heap)
        merge_heap(b, s, k, out);
    else
        merge_scan(b, s, k, out);
    s->bytes = NULL;
}

void sl_words_init(sl_bpe *b, size_t n)
{
    size_t cap = sl_pow2_cap(16, 2 * n + 16);
    free(b->words);
    b->words = sl_xzalloc_touched(cap, sizeof *b->words);
    b->words_mask = cap - 1;
    free(b->bloom);
    b->bloom = bloom_new(n, &b->bloom_mask);
}

/* The slot key of bytes p[0..n): their first 11 bytes, zero after the
 * end, and the length. */
static inline void word_key(const uint8_t *p, size_t n, uint64_t *head, uint32_t *tail)
{
    uint32_t x = 0;
    if (n >= 12)
        memcpy(&x, p + 8, 4);
    else if (n > 8) { /* bytes 8..n-1 from the last four */
        memcpy(&x, p + n - 4, 4);
        x >>= 8 * (12 - n);
    }
    *head = sl_head8(p, n);
    *tail = (x & 0xFFFFFF) | (uint32_t)(n < 255 ? n : 255) << 24;
}

/* The words-table slot of the entry whose bytes are p[0..n) (XXH3 hash,
 * slot key head and tail), or the empty slot where it would go. */
static inline sl_word_slot *word_slot(const sl_bpe *b, const uint8_t *p, size_t n, uint64_t hash, uint64_t head,
                                      uint32_t tail)
{
    uint64_t h = hash & b->words_mask;
    for (;; h = (h + 1) & b->words_mask) {
        sl_word_slot *w = &b->words[h];
        if (!w->id1)
            return w;
        if (w->head != head || w->tail != tail)
            continue;
        if (n <= 11)
            return w;
        uint32_t id = w->id1 - 1;
        if ((n < 255 || b->tok_len[id] == n) && !memcmp(b->pool + b->tok_off[id] + 11, p + 11, n - 11))
            return w;
    }
}

int64_t sl_words_put(sl_bpe *b, uint32_t id, const void *bytes, size_t n, uint64_t hash)
{
    uint64_t head;
    uint32_t tail;
    word_key(bytes, n, &head, &tail);
    sl_word_slot *w = word_slot(b, bytes, n, hash, head, tail);
    if (w->id1)
        return w->id1 - 1;
    *w = (sl_word_slot){head, tail, id + 1};
    bloom_set(b->bloom, b->bloom_mask, hash);
    return -1;
}

int64_t sl_bpe_find_word(const sl_bpe *b, const void *bytes, size_t n)
{
    uint64_t h = XXH3_64bits(bytes, n);
    if (!bloom_may(b->bloom, b->bloom_mask, h))
        return -1;
    uint64_t head;
    uint32_t tail;
    word_key(bytes, n, &head, &tail);
    const sl_word_slot *w = word_slot(b, bytes, n, h, head, tail);
    return w->id1 ? (int64_t)w->id1 - 1 : -1;
}

/* The piece cache's key of p[0..n) (1 <= n <= 16): its bytes in two
 * words, zero after the end. Pieces come in every length at random, so it
 * is made without a branch on n: two loads of 8 bytes, masked, where
 * 16 bytes can be read from p (room), else from a copy. */
static const uint64_t pc_mask_a[17] = {
    0,          0xFF,       0xFFFF,     0xFFFFFF,   0xFFFFFFFF, 0xFFFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF,
    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,   UINT64_MAX,     UINT64_MAX,
    UINT64_MAX};

static inline void pc_key(const uint8_t *p, size_t n, int room, uint64_t *a, uint64_t *b)
{
    uint8_t tmp[16] = {0};
    if (!room) {
        memcpy(tmp, p, n);
        p = tmp;
    }
    memcpy(a, p, 8);
    memcpy(b, p + 8, 8);
    *a &= pc_mask_a[n];
    *b &= pc_mask_a[n > 8 ? n - 8 : 0];
}

static inline uint64_t pc_hash(uint64_t a, uint64_t b, size_t n)
{
    return (a ^ (b << 29 | b >> 35) ^ n) * 0x9E3779B97F4A7C15ULL;
}

/* The first entry of the piece's set in the piece cache: two entries side
 * by side, in one 128-byte block (the table is aligned) */
static inline size_t pc_slot(uint64_t a, uint64_t b, size_t n)
{
    return (size_t)(pc_hash(a, b, n) >> (64 - SL_PCACHE_BITS)) & ~(size_t)1;
}

/* A piece the piece cache does not answer. The stretch cache is asked
 * only for a piece the piece cache cannot hold (stretch set: more than 16
 * bytes): one it can hold and missed is encoded again. The stretch cache's
 * line is a miss to memory that found such a piece about half the time,
 * and with the merge grid encoding it costs less than that: pre-tokenizing
 * and looking up 24 MB took 2.5-4.5 % less time without it (GPT-2, NeoX,
 * cl100k, o200k; 1.5-3.5 % with two threads' states sharing it). */
static void piece_slow(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, int stretch, sl_ids *out)
{
    if (b->words) { /* HF's BPE with ignore_merges: a whole-piece vocabulary entry first */
        int64_t id = sl_bpe_find_word(b, p, n);
        if (id >= 0) {
            sl_ids_push(out, (uint32_t)id);
            return;
        }
    }
    uint64_t h;
    if (stretch && sl_scache_ids(&s->cache, (const char *)p, n, out, &h))
        return;
    size_t start = out->n;
    sl_bpe_encode_piece(b, s, p, n, n >= HEAP_MIN_SYMBOLS, out);
    if (stretch)
        sl_scache_put_ids(&s->cache, h, (const char *)p, n, out, start);
}

/* A miss of the set's first entry e: the second (swapped to the front),
 * the wide table's entry, or the ids by piece_slow, kept in e (up to
 * SL_PCACHE_IDS ids; e's piece moves to the second) or in the wide table. */
static void __attribute__((noinline)) piece_miss(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n,
                                                 sl_pcache_entry *e, uint64_t ka, uint64_t kb, sl_ids *out)
{
    sl_pcache_entry *e1 = e + 1;
    if ((e1->meta & 0xff) == n && e1->a == ka && e1->b == kb) { /* the set's second entry: first from now */
        sl_pcache_entry t = *e;
        *e = *e1;
        *e1 = t;
        sl_ids_append(out, e->ids, e->meta >> 8);
        return;
    }
    sl_pwide_entry *w = &s->pw[(pc_hash(ka, kb, n) >> 20) & (((size_t)1 << SL_PWIDE_BITS) - 1)];
    /* (a piece has at most one id a byte: one of at most SL_PCACHE_IDS
     * bytes is never in the wide table, and its line is not loaded) */
    if (n > SL_PCACHE_IDS && (w->meta & 0xff) == n && w->a == ka && w->b == kb) {
        sl_ids_append(out, w->ids, w->meta >> 8);
        return;
    }
    size_t start = out->n;
    piece_slow(b, s, p, n, 0, out);
    size_t k = out->n - start;
    if (k && k <= SL_PCACHE_IDS) {
        *e1 = *e;
        e->a = ka;
        e->b = kb;
        e->meta = (uint32_t)(n | k << 8);
        memcpy(e->ids, out->v + start, k * sizeof *e->ids);
    } else if (k > SL_PCACHE_IDS && k <= SL_PWIDE_IDS) {
        w->a = ka;
        w->b = kb;
        w->meta = (uint32_t)(n | k << 8);
        memcpy(w->ids, out->v + start, k * sizeof *w->ids);
    }
}

/* One piece: a hit of the piece cache (s->pc made), or piece_miss. A
 * piece of one byte takes the same way: a branch of its own on the
 * length, which pieces take at random, cost more than the lookup. */
static inline __attribute__((always_inline)) void piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n,
                                                        int room, sl_ids *out)
{
    if (n == 0 || n > 16) {
        piece_slow(b, s, p, n, 1, out);
        return;
    }
    uint64_t ka, kb;
    pc_key(p, n, room, &ka, &kb);
    sl_pcache_entry *e = &s->pc[pc_slot(ka, kb, n)];
    if ((e->meta & 0xff) == n && e->a == ka && e->b == kb) {
        if (out->cap - out->n < SL_PCACHE_IDS)
            sl_ids_grow(out);
        memcpy(out->v + out->n, e->ids, SL_PCACHE_IDS * sizeof *e->ids); /* (room checked above) */
        out->n += e->meta >> 8;
        return;
    }
    piece_miss(b, s, p, n, e, ka, kb, out);
}

static void pc_make(sl_bpe_state *s)
{
    if (!s->pc) {
        s->pc = sl_xzalloc_touched((size_t)1 << SL_PCACHE_BITS, sizeof *s->pc);
        s->pw = sl_xzalloc_touched((size_t)1 << SL_PWIDE_BITS, sizeof *s->pw);
    }
}

void sl_bpe_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, sl_ids *out)
{
    pc_make(s);
    piece(b, s, p, n, 0, out);
}

void sl_bpe_pieces(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, size_t start, const size_t *ends,
                   size_t m, sl_ids *out)
{
    pc_make(s);
    for (size_t i = 0; i < m; i++) {
        piece(b, s, p + start, ends[i] - start, start + 16 <= n, out);
        start = ends[i];
    }
}

int32_t *sl_bpe_syms(sl_bpe_state *s, size_t n)
{
    reserve_syms(s, n + 1);
    return s->sym;
}

void sl_bpe_merge_syms(const sl_bpe *b, sl_bpe_state *s, size_t n, sl_ids *out)
{
    if (n == 0)
        return;
    if (n >= HEAP_MIN_SYMBOLS)
        merge_heap(b, s, n, out);
    else
        merge_scan(b, s, n, out);
}
