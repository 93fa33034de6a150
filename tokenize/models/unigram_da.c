/* The Unigram lattice's trie laid out as a double array (unigram_impl.h),
 * as SentencePiece builds its tries (Darts / darts-clone). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tokenize/models/unigram_impl.h"

/* The double array under construction, with a bitmap of its occupied
 * cells. A node's base is the lowest at which its children's cells are
 * all free and its first child's cell is below the highest occupied one
 * (top) but no more than SEARCH_WINDOW below it; else its first child
 * goes at top. The window is how darts-clone (SentencePiece's double
 * array) fixes all but its last blocks: each node tries at most that many
 * bases, so the layout takes time linear in the trie, and a few cells stay
 * unused. The bitmap tests 64 bases at once: for each child the 64 bits
 * from its cell at the first base, or'ed; a zero bit is a base where all
 * of them are free. */
#define SEARCH_WINDOW 4096

typedef struct da_build {
    cell *c;         /* base, check and the id of the piece ending there (val) */
    uint64_t *occ;   /* bit q: cell q occupied; (cap + 127) / 64 words */
    size_t cap, top; /* top: one past the highest occupied cell */
    size_t low;      /* no free cell in [top - SEARCH_WINDOW, low) */
} da_build;

static void da_grow(da_build *d, size_t need)
{
    if (need <= d->cap)
        return;
    /* by a quarter (the first size is near the end's): a block this size
     * is moved by mremap, not copied, and cells past the last one used are
     * not set (touched) for nothing. (On huge pages: no faster, measured) */
    size_t nc = d->cap + d->cap / 4;
    if (nc < need)
        nc = need;
    d->c = sl_xrealloc(d->c, nc * sizeof *d->c);
    size_t ow = d->cap ? (d->cap + 127) / 64 : 0, nw = (nc + 127) / 64;
    d->occ = sl_xrealloc(d->occ, nw * sizeof *d->occ);
    memset(d->occ + ow, 0, (nw - ow) * sizeof *d->occ);
    for (size_t i = d->cap; i < nc; i++)
        d->c[i] = (cell){0, -1, -1, -INFINITY};
    d->cap = nc;
}

/* The 64 occupancy bits from cell x on (x + 64 <= cap + 64) */
static inline uint64_t occ64(const uint64_t *occ, size_t x)
{
    size_t w = x >> 6, sh = x & 63;
    return sh ? occ[w] >> sh | occ[w + 1] << (64 - sh) : occ[w];
}

static inline void occupy(da_build *d, size_t q, int32_t parent)
{
    d->c[q].check = parent;
    d->occ[q >> 6] |= (uint64_t)1 << (q & 63);
    if (q + 1 > d->top)
        d->top = q + 1;
}

/* The base of a node whose nc children have bytes lab[0] < ... <
 * lab[nc - 1] (the rule above). */
static size_t da_base(da_build *d, const uint8_t *lab, size_t nc)
{
    size_t top = d->top, first = top > SEARCH_WINDOW ? top - SEARCH_WINDOW : 0;
    da_grow(d, top + 256 + 64); /* the bits read: below top + 255 + 64 */
    if (first < d->low)
        first = d->low;
    for (uint64_t w = ~d->occ[first >> 6] & ~(uint64_t)0 << (first & 63);; w = ~d->occ[first >> 6]) {
        if (w) { /* the lowest free cell from first on (cells from top on are free) */
            first = (first & ~(size_t)63) + (size_t)__builtin_ctzll(w);
            break;
        }
        first = (first | 63) + 1;
    }
    d->low = first;
    if (first < lab[0])
        first = lab[0];
    for (size_t bs = first - lab[0]; bs + lab[0] < top; bs += 64) {
        uint64_t bad = 0;
        for (size_t j = 0; j < nc && ~bad; j++)
            bad |= occ64(d->occ, bs + lab[j]);
        size_t room = top - lab[0] - bs; /* bases bs + i with i < room */
        if (room < 64)
            bad |= ~(uint64_t)0 << room;
        if (~bad)
            return bs + (size_t)__builtin_ctzll(~bad);
    }
    return top > lab[0] ? top - lab[0] : 0; /* past top every cell is free */
}

/* Byte d of key k, or -1 past its end (so a prefix sorts first). */
static inline int key_at(const sl_unigram *u, uint32_t k, size_t d)
{
    return d < u->key_len[k] ? (uint8_t)u->pool[u->key_off[k] + d] : -1;
}

/* Keys a and b compared from byte d on: by bytes, then length, then the
 * order they were added in (a string added twice: the first one first). */
static int key_cmp(const sl_unigram *u, uint32_t a, uint32_t b, size_t d)
{
    size_t la = u->key_len[a], lb = u->key_len[b], m = la < lb ? la : lb;
    int c = m > d ? memcmp(u->pool + u->key_off[a] + d, u->pool + u->key_off[b] + d, m - d) : 0;
    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int by_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts the keys a[0..n), which share their first d bytes, by key_cmp:
 * multikey quicksort (Bentley and Sedgewick) on byte d, small ranges by
 * insertion. It recurses on the two smaller parts and loops on the
 * largest, so the stack stays shallow. */
static void key_sort(const sl_unigram *u, uint32_t *a, size_t n, size_t d)
{
    for (;;) {
        if (n < 16) {
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && key_cmp(u, a[j - 1], a[j], d) > 0; j--) {
                    uint32_t t = a[j];
                    a[j] = a[j - 1], a[j - 1] = t;
                }
            return;
        }
        int x = key_at(u, a[0], d), y = key_at(u, a[n / 2], d), z = key_at(u, a[n - 1], d);
        int pv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y); /* the median */
        /* three ways: [0, lt) below the pivot, [lt, gt) equal, [gt, n) above */
        size_t lt = 0, i = 0, gt = n;
        while (i < gt) {
            int c = key_at(u, a[i], d);
            uint32_t t = a[i];
            if (c < pv)
                a[i++] = a[lt], a[lt++] = t;
            else if (c > pv)
                a[i] = a[--gt], a[gt] = t;
            else
                i++;
        }
        size_t mid = gt - lt;
        if (pv < 0) { /* the equal ones end at d: one string added mid times, in order */
            qsort(a + lt, mid, sizeof *a, by_order);
            mid = 0;
        }
        size_t part[3][3] = {{0, lt, d}, {lt, mid, d + 1}, {gt, n - gt, d}}, big = 0;
        for (int k = 1; k < 3; k++)
            if (part[k][1] > part[big][1])
                big = (size_t)k;
        for (size_t k = 0; k < 3; k++)
            if (k != big && part[k][1] > 1)
                key_sort(u, a + part[k][0], part[k][1], part[k][2]);
        a += part[big][0], n = part[big][1], d = part[big][2];
    }
}

/* A key's first 8 bytes (big-endian, zero-padded), its index and length. */
typedef struct pk {
    uint64_t pfx;
    uint32_t k, len;
} pk;

/* All the keys in order (key_cmp) in k: by their first 8 bytes with a
 * radix sort, RADIX_BITS a pass, then each run with the same 8 bytes by
 * key_sort. (The multikey quicksort alone reads a key's bytes from the
 * pool once a level, a cache miss each; the radix passes read the 8 bytes
 * held beside the key, in order.) A pass whose digit is the same for
 * every key moves nothing and is skipped. scratch: room for 2 * (nk + 1)
 * pk. The 8 bytes are one load: the pool keeps 16 bytes to spare past its
 * end (sl_unigram_add). */
#define RADIX_BITS 16
static void keys_sorted(const sl_unigram *u, uint32_t *k, size_t nk, void *scratch)
{
    pk *a = scratch, *b = a + nk + 1;
    for (size_t i = 0; i < nk; i++) {
        uint64_t x;
        size_t len = u->key_len[i];
        memcpy(&x, u->pool + u->key_off[i], 8);
        x = __builtin_bswap64(x);
        if (len < 8) /* the bytes past the key: zero */
            x = len ? x & ~(~(uint64_t)0 >> (8 * len)) : 0;
        a[i] = (pk){x, (uint32_t)i, (uint32_t)len};
    }
    const size_t nb = (size_t)1 << RADIX_BITS;
    uint32_t *count = sl_xmalloc(nb * sizeof *count);
    for (int shift = 0; shift < 64; shift += RADIX_BITS) { /* stable, low digit first */
        memset(count, 0, nb * sizeof *count);
        for (size_t i = 0; i < nk; i++)
            count[(a[i].pfx >> shift) & (nb - 1)]++;
        if (nk && count[(a[0].pfx >> shift) & (nb - 1)] == nk)
            continue; /* one digit for all */
        for (uint32_t c = 0, sum = 0; c < nb; c++) {
            uint32_t t = count[c];
            count[c] = sum, sum += t;
        }
        for (size_t i = 0; i < nk; i++)
            b[count[(a[i].pfx >> shift) & (nb - 1)]++] = a[i];
        pk *t = a;
        a = b, b = t;
    }
    for (size_t i = 0; i < nk; i++)
        k[i] = a[i].k;
    for (size_t i = 0, j; i < nk; i = j) {
        size_t shortest = a[i].len;
        for (j = i + 1; j < nk && a[j].pfx == a[i].pfx; j++)
            if (a[j].len < shortest)
                shortest = a[j].len;
        /* all of 8 bytes or more: the same first 8; else (zero bytes
         * against padding) from the start */
        if (j - i > 1)
            key_sort(u, k + i, j - i, shortest >= 8 ? 8 : 0);
    }
    free(count);
}

/* A node of the trie to lay out: keys k[lo..hi) of the sorted order are
 * the pieces that start with its string, of depth bytes; pos its cell. */
typedef struct da_node {
    uint32_t lo, hi, depth, pos;
} da_node;

/* Lays the trie of the pieces out as a double array: the keys sorted, so
 * that each node's pieces are a range and its children the runs of that
 * range by the byte at its depth; nodes depth first, children by byte,
 * each node's base by da_base. Depth first, the nodes waiting are a stack
 * of at most 255 a level; breadth first they were a queue as wide as the
 * trie (XLM-R: 5 MB more at load, the same number of cells). */
void sl_unigram_build_da(sl_unigram *u)
{
    size_t nk = u->n_keys;
    uint32_t *k = sl_xmalloc((nk + 1) * sizeof *k);
    for (size_t i = 0; i < nk; i++)
        k[i] = (uint32_t)i;
    /* one block for the sort's arrays and then for the sorted copy's (a
     * large block freed is unmapped, and a new one faults its pages in
     * again) */
    size_t sort_bytes = 2 * (nk + 1) * sizeof(pk),
           copy_bytes = (nk + 1) * (sizeof(size_t) + 2 * sizeof(uint32_t)) + u->pool_len + 16;
    char *scratch = sl_xmalloc(sort_bytes > copy_bytes ? sort_bytes : copy_bytes);
    keys_sorted(u, k, nk, scratch);
    /* the keys' bytes in sorted order: the runs below read them in order
     * (reading them from the pool through k instead: XLM-R's load 1.17x) */
    size_t *so = (size_t *)(void *)scratch;
    uint32_t *sl = (uint32_t *)(so + nk + 1), *sid = sl + nk + 1;
    uint8_t *sp = (uint8_t *)(sid + nk + 1);
    for (size_t i = 0, o = 0; i < nk; i++) {
        so[i] = o, sl[i] = u->key_len[k[i]], sid[i] = u->key_id[k[i]];
        if (sl[i] <= 16) /* 16 bytes at once, the ones past the key overwritten next (both have room) */
            memcpy(sp + o, u->pool + u->key_off[k[i]], 16);
        else
            memcpy(sp + o, u->pool + u->key_off[k[i]], sl[i]);
        o += sl[i];
    }
#define SORTED_AT(i, d) ((d) < sl[i] ? sp[so[i] + (d)] : -1)
    /* the trie's nodes: each key adds those past what it shares with the
     * key before it; the layout leaves few cells free among them */
    size_t nodes = 1;
    for (size_t i = 0; i < nk; i++) {
        size_t c = 0;
        if (i)
            for (size_t m = sl[i] < sl[i - 1] ? sl[i] : sl[i - 1]; c < m && sp[so[i] + c] == sp[so[i - 1] + c];)
                c++;
        nodes += sl[i] - c;
    }
    da_build d = {0};
    da_grow(&d, nodes + nodes / 32 + 512);
    size_t qcap = 1024, qt = 0;
    da_node *stack = sl_xmalloc(qcap * sizeof *stack);
    occupy(&d, 0, INT32_MAX); /* the root: the child of no position */
    stack[qt++] = (da_node){0, (uint32_t)nk, 0, 0};
    uint8_t lab[256];
    uint32_t from[257];
    while (qt) {
        da_node v = stack[--qt];
        uint32_t i = v.lo;
        /* the pieces that end here come first (a string added twice: the
         * first added first); the node's value is that one */
        if (i < v.hi && sl[i] == v.depth) {
            d.c[v.pos].id = (int32_t)sid[i];
            if (i + 1 < v.hi && sl[i + 1] == v.depth && (u->dup_second < 0 || sid[i + 1] < u->dup_second))
                u->dup_first = sid[i], u->dup_second = sid[i + 1];
        }
        while (i < v.hi && sl[i] == v.depth)
            i++;
        size_t nc = 0;
        /* the children: runs by the byte at depth, which past the keys
         * that end here every key has, in order: each run's end found by
         * doubling steps, then halving (the root's 250k keys in a few
         * hundred runs: a step a key was 40 M instructions of XLM-R's
         * load) */
        const uint8_t *at = sp + v.depth;
        for (; i < v.hi; nc++) {
            uint8_t c = at[so[i]];
            lab[nc] = c, from[nc] = i;
            uint32_t good = i, bad = v.hi; /* at[so[good]] == c; bad: past the run */
            for (uint32_t step = 1; good + step < v.hi; step *= 2) {
                if (at[so[good + step]] != c) {
                    bad = good + step;
                    break;
                }
                good += step;
            }
            while (bad - good > 1) {
                uint32_t mid = good + (bad - good) / 2;
                if (at[so[mid]] == c)
                    good = mid;
                else
                    bad = mid;
            }
            i = bad;
        }
        from[nc] = v.hi;
        if (!nc)
            continue;
        size_t bs = da_base(&d, lab, nc); /* (at most top: da_base grew the array past its children) */
        d.c[v.pos].base = (int32_t)bs;
        if (qt + nc > qcap) {
            while (qt + nc > qcap)
                qcap *= 2;
            stack = sl_xrealloc(stack, qcap * sizeof *stack);
        }
        for (size_t j = 0; j < nc; j++)
            occupy(&d, bs + lab[j], (int32_t)v.pos);
        for (size_t j = nc; j-- > 0;) /* the first child on top: laid out next */
            stack[qt++] = (da_node){from[j], from[j + 1], v.depth + 1, (uint32_t)(bs + lab[j])};
    }
    da_grow(&d, d.top + 257); /* the cells past da_n (unigram_impl.h) */
    u->cell = d.c;
    u->da_n = d.top;
    free(d.occ);
#undef SORTED_AT
    free(k);
    free(scratch);
    free(stack);
}
