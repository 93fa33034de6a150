/* The Unigram lattice's trie laid out as a double array (unigram_impl.h),
 * as SentencePiece builds its tries (Darts / darts-clone). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tokenize/models/unigram_impl.h"

/* Free cells of the double array under construction: a doubly linked list
 * in index order (the technique of Darts / darts-clone, which SentencePiece
 * builds its tries with), so finding a base visits free cells only, never
 * the occupied ones. Free cells more than SEARCH_WINDOW below the highest
 * occupied one are dropped from the list when the search passes them, as
 * darts-clone fixes all but its last blocks: each node then tries at most
 * SEARCH_WINDOW bases, and the layout takes time linear in the trie (a few
 * cells stay unused). */
#define SEARCH_WINDOW 4096

typedef struct da_build {
    int32_t *base, *check, *val;
    int32_t *next, *prev; /* the free list; -1 ends it */
    int32_t head, tail;
    size_t cap, top; /* top: one past the highest occupied cell */
} da_build;

static void da_grow(da_build *d, size_t need)
{
    if (need <= d->cap)
        return;
    size_t nc = d->cap;
    while (nc < need)
        nc *= 2;
    d->base = sl_xrealloc(d->base, nc * sizeof *d->base);
    d->check = sl_xrealloc(d->check, nc * sizeof *d->check);
    d->val = sl_xrealloc(d->val, nc * sizeof *d->val);
    d->next = sl_xrealloc(d->next, nc * sizeof *d->next);
    d->prev = sl_xrealloc(d->prev, nc * sizeof *d->prev);
    for (size_t i = d->cap; i < nc; i++) { /* the new cells join the list's end */
        d->base[i] = 0, d->check[i] = -1, d->val[i] = -1;
        d->next[i] = -1;
        d->prev[i] = d->tail;
        if (d->tail >= 0)
            d->next[d->tail] = (int32_t)i;
        else
            d->head = (int32_t)i;
        d->tail = (int32_t)i;
    }
    d->cap = nc;
}

/* Takes cell i off the free list (nothing when it is off already: cells
 * dropped behind the window still take children that fit there). */
static void da_unlink(da_build *d, int32_t i)
{
    int32_t n = d->next[i], p = d->prev[i];
    if (p == -2)
        return;
    d->prev[i] = -2;
    if (p >= 0)
        d->next[p] = n;
    else
        d->head = n;
    if (n >= 0)
        d->prev[n] = p;
    else
        d->tail = p;
}

/* Lays the hash trie out as a double array: nodes in breadth-first order,
 * each given the first base on the free list at which all its children's
 * cells are free. */
void sl_unigram_build_da(sl_unigram *u)
{
    size_t nn = u->n_nodes;
    /* children of each node, sorted by byte: counting sort of the edges */
    uint32_t *first = sl_xcalloc(nn + 1, sizeof *first), *kid = sl_xmalloc((u->n_edges + 1) * sizeof *kid);
    uint8_t *lab = sl_xmalloc(u->n_edges + 1);
    for (size_t i = 0; i <= u->mask; i++)
        if (u->edges[i].key1)
            first[((u->edges[i].key1 - 1) >> 8) + 1]++;
    for (size_t i = 0; i < nn; i++)
        first[i + 1] += first[i];
    uint32_t *fill = sl_xmalloc((nn + 1) * sizeof *fill);
    memcpy(fill, first, (nn + 1) * sizeof *fill);
    for (size_t i = 0; i <= u->mask; i++)
        if (u->edges[i].key1) {
            uint32_t par = (u->edges[i].key1 - 1) >> 8;
            uint32_t at = fill[par]++;
            kid[at] = u->edges[i].child;
            lab[at] = (uint8_t)((u->edges[i].key1 - 1) & 0xff);
        }
    for (size_t v = 0; v < nn; v++) /* insertion sort by label (a node has at most 256 children) */
        for (uint32_t i = first[v] + 1; i < first[v + 1]; i++)
            for (uint32_t j = i; j > first[v] && lab[j - 1] > lab[j]; j--) {
                uint8_t tl = lab[j];
                lab[j] = lab[j - 1], lab[j - 1] = tl;
                uint32_t tk = kid[j];
                kid[j] = kid[j - 1], kid[j - 1] = tk;
            }
    da_build d = {.head = -1, .tail = -1, .cap = 256};
    size_t cap0 = 2 * nn + 512;
    d.base = sl_xmalloc(d.cap * sizeof *d.base); /* da_grow fills from cap on: start from an empty list */
    d.check = sl_xmalloc(d.cap * sizeof *d.check);
    d.val = sl_xmalloc(d.cap * sizeof *d.val);
    d.next = sl_xmalloc(d.cap * sizeof *d.next);
    d.prev = sl_xmalloc(d.cap * sizeof *d.prev);
    for (size_t i = 0; i < d.cap; i++) {
        d.base[i] = 0, d.check[i] = -1, d.val[i] = -1;
        d.prev[i] = (int32_t)i - 1;
        d.next[i] = i + 1 < d.cap ? (int32_t)i + 1 : -1;
    }
    d.head = 0, d.tail = (int32_t)d.cap - 1;
    da_grow(&d, cap0);
    uint32_t *pos = sl_xmalloc(nn * sizeof *pos), *queue = sl_xmalloc(nn * sizeof *queue);
    size_t qh = 0, qt = 0;
    pos[0] = 0;
    d.check[0] = INT32_MAX; /* occupied, and the child of no position */
    d.val[0] = (int32_t)u->value[0];
    da_unlink(&d, 0);
    d.top = 1;
    queue[qt++] = 0;
    while (qh < qt) {
        uint32_t v = queue[qh++], a = first[v], b = first[v + 1];
        if (a == b)
            continue;
        /* drop free cells too far behind to be worth another try */
        while (d.head >= 0 && (size_t)d.head + SEARCH_WINDOW < d.top)
            da_unlink(&d, d.head);
        size_t bs = 0;
        int found = 0;
        for (int32_t f = d.head; f >= 0 && (size_t)f < d.top; f = d.next[f]) {
            if ((size_t)f < lab[a])
                continue;
            bs = (size_t)f - lab[a];
            da_grow(&d, bs + 256);
            uint32_t i = a + 1;
            while (i < b && d.check[bs + lab[i]] < 0)
                i++;
            if (i == b) {
                found = 1;
                break;
            }
        }
        if (!found) { /* past top every cell is free */
            bs = d.top > lab[a] ? d.top - lab[a] : 0;
            da_grow(&d, bs + 256);
        }
        d.base[pos[v]] = (int32_t)bs;
        for (uint32_t i = a; i < b; i++) {
            size_t q = bs + lab[i];
            d.check[q] = (int32_t)pos[v];
            d.val[q] = (int32_t)u->value[kid[i]];
            da_unlink(&d, (int32_t)q);
            pos[kid[i]] = (uint32_t)q;
            queue[qt++] = kid[i];
            if (q + 1 > d.top)
                d.top = q + 1;
        }
    }
    u->base = d.base;
    u->check = d.check;
    u->val = d.val;
    u->da_n = d.top;
    free(d.next);
    free(d.prev);
    free(first);
    free(kid);
    free(lab);
    free(fill);
    free(pos);
    free(queue);
}
