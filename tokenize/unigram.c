/* Unigram Viterbi (unigram.h), written from SentencePiece's description of
 * its optimized encoder: the best path ending at each byte position is kept
 * (score, start, id); from each character start, every vocabulary piece
 * that is a prefix of the rest extends the best path ending there, and
 * when no single-character piece matches, the unk piece covers the
 * character. The vocabulary is a byte trie whose edges live in one
 * open-addressing table keyed by (node, byte). */
#include "tokenize/unigram.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/err.h"

#define UNK_PENALTY 10.0
/* SentencePiece (0.2.3) keeps path scores in float but takes the score of
 * the path so far off every score ahead once its magnitude passes 1e5
 * (kScoreResetThreshold), so that a long document's sums keep float's
 * precision; without that, paths 180k characters in differ in the last bit
 * and a tie goes the other way. */
#define RESET_AT 100000.0f

typedef struct edge {
    uint32_t key1; /* (node << 8 | byte) + 1; 0 = empty */
    uint32_t child;
} edge;

/* A position of the double array: the child of position p for byte c is
 * q = cell[p].base + c when cell[q].check == p; id: the piece ending at q
 * that takes part in the lattice (not unused), or -1; fscore its score as
 * the lattice adds it in float (SentencePiece's: a user-defined piece's
 * bonus folded in), dscore[q] in double; both scores are -inf where id is
 * -1, so such a step's candidate never wins and the walk needs no branch
 * on it. One 16-byte cell per step of the walk instead of five arrays. */
typedef struct cell {
    int32_t base, check, id;
    float fscore;
} cell;

struct sl_unigram {
    /* the lattice's trie as a double array (built by sl_unigram_set; base,
     * check, val while building, then cell and dscore) */
    int32_t *base, *check, *val;
    cell *cell;
    double *dscore;
    size_t da_n;
    edge *edges;
    size_t n_edges, mask;
    int64_t *value; /* per trie node: id or -1 */
    size_t n_nodes, node_cap;
    uint32_t n_ids;
    double *score;
    uint32_t *len;  /* per id: the piece's length in bytes */
    size_t max_len; /* the longest string added, in bytes (the trie's depth) */
    uint8_t *kind;
    int hf;
    int64_t unk_id;
    double min_score;
};

static inline uint32_t h32(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x7feb352dU;
    k ^= k >> 15;
    k *= 0x846ca68bU;
    k ^= k >> 16;
    return k;
}

static inline int64_t child_of(const sl_unigram *u, uint32_t node, uint8_t c)
{
    uint32_t key = (node << 8 | c) + 1;
    for (size_t h = h32(key) & u->mask;; h = (h + 1) & u->mask) {
        if (u->edges[h].key1 == key)
            return u->edges[h].child;
        if (!u->edges[h].key1)
            return -1;
    }
}

static void grow_edges(sl_unigram *u)
{
    size_t cap = u->mask ? 2 * (u->mask + 1) : 1024;
    edge *e = sl_xcalloc(cap, sizeof *e);
    for (size_t i = 0; u->mask && i <= u->mask; i++) {
        if (!u->edges[i].key1)
            continue;
        size_t h = h32(u->edges[i].key1) & (cap - 1);
        while (e[h].key1)
            h = (h + 1) & (cap - 1);
        e[h] = u->edges[i];
    }
    free(u->edges);
    u->edges = e;
    u->mask = cap - 1;
}

static uint32_t new_node(sl_unigram *u)
{
    if (u->n_nodes == u->node_cap) {
        u->node_cap = u->node_cap ? 2 * u->node_cap : 1024;
        u->value = sl_xrealloc(u->value, u->node_cap * sizeof *u->value);
    }
    u->value[u->n_nodes] = -1;
    return (uint32_t)u->n_nodes++;
}

sl_unigram *sl_unigram_new(uint32_t n_ids, int hf)
{
    sl_unigram *u = sl_xcalloc(1, sizeof *u);
    u->n_ids = n_ids;
    u->score = sl_xcalloc(n_ids ? n_ids : 1, sizeof *u->score);
    u->kind = sl_xcalloc(n_ids ? n_ids : 1, 1);
    u->len = sl_xcalloc(n_ids ? n_ids : 1, sizeof *u->len);
    u->hf = hf;
    u->unk_id = -1;
    grow_edges(u);
    new_node(u);
    return u;
}

void sl_unigram_add(sl_unigram *u, uint32_t id, const char *s, size_t len, double score, int kind)
{
    u->score[id] = score;
    u->kind[id] = (uint8_t)kind;
    u->len[id] = (uint32_t)len;
    if (len > u->max_len)
        u->max_len = len;
    uint32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        int64_t c = child_of(u, node, (uint8_t)s[i]);
        if (c < 0) {
            if (2 * (u->n_edges + 1) > u->mask + 1)
                grow_edges(u);
            uint32_t nn = new_node(u);
            uint32_t key = (node << 8 | (uint8_t)s[i]) + 1;
            size_t h = h32(key) & u->mask;
            while (u->edges[h].key1)
                h = (h + 1) & u->mask;
            u->edges[h] = (edge){key, nn};
            u->n_edges++;
            c = nn;
        }
        node = (uint32_t)c;
    }
    if (u->value[node] < 0)
        u->value[node] = id;
}

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
static void build_da(sl_unigram *u)
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

/* A piece's score as the lattice adds it (a user-defined piece of len
 * bytes: SentencePiece 0.2.3's GetUserDefinedScore, 0.1 per byte after the
 * first, in float, so that one long user-defined piece beats its parts). */
static double lattice_score(const sl_unigram *u, int64_t id, size_t len)
{
    return u->kind[id] == SL_UNI_USER ? (double)(float)(0.1 * (double)(len - 1)) : u->score[id];
}

/* The cells from base/check/val, with each piece's score. */
static void build_cells(sl_unigram *u)
{
    size_t n = u->da_n;
    free(u->cell);
    free(u->dscore);
    u->cell = sl_xmalloc((n + 256) * sizeof *u->cell);
    u->dscore = sl_xmalloc((n + 256) * sizeof *u->dscore);
    for (size_t q = 0; q < n + 256; q++) {
        u->cell[q] = (cell){q < n ? u->base[q] : 0, q < n ? u->check[q] : -1, -1, -INFINITY};
        u->dscore[q] = -INFINITY;
    }
    for (size_t q = 0; q < n; q++) {
        int64_t id = u->val[q];
        if (id < 0 || u->kind[id] == SL_UNI_UNUSED)
            continue;
        double sc = lattice_score(u, id, u->len[id]);
        u->cell[q].id = (int32_t)id;
        u->cell[q].fscore = (float)sc;
        u->dscore[q] = sc;
    }
    free(u->base); /* (built again by a later sl_unigram_set) */
    free(u->check);
    free(u->val);
    u->base = u->check = u->val = NULL;
}

void sl_unigram_set(sl_unigram *u, int64_t unk_id, double min_score)
{
    if (!u->base)
        build_da(u);
    u->unk_id = unk_id;
    u->min_score = min_score;
    build_cells(u);
}

void sl_unigram_free(sl_unigram *u)
{
    if (!u)
        return;
    free(u->edges);
    free(u->value);
    free(u->base);
    free(u->check);
    free(u->val);
    free(u->cell);
    free(u->dscore);
    free(u->score);
    free(u->len);
    free(u->kind);
    free(u);
}

void sl_uni_scratch_free(sl_uni_scratch *sc)
{
    free(sc->best);
    free(sc->pieces);
    memset(sc, 0, sizeof *sc);
}

int64_t sl_unigram_find(const sl_unigram *u, const char *s, size_t n)
{
    int64_t best = -1;
    uint32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t c = child_of(u, node, (uint8_t)s[i]);
        if (c < 0)
            break;
        node = (uint32_t)c;
        if (u->value[node] >= 0)
            best = u->value[node];
    }
    return best;
}

/* SentencePiece's OneCharLen: the length the lead byte announces. */
static size_t one_char_len(uint8_t c)
{
    return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4];
}

/* How the best path reaches a position: the start of its last piece and
 * the piece's id, packed in one word (start low, id high) so that a better
 * candidate replaces it with a conditional move. */
static inline uint64_t back_of(size_t start, int64_t id)
{
    return (uint32_t)start | (uint64_t)(uint32_t)id << 32;
}

/* The lattice in one arithmetic, T the stored score type. score[k] is the
 * best path's score to byte k, -inf while none reaches it; the entries
 * ahead of the walk are set to -inf only as far as a piece can reach
 * (hi), so a long document costs no separate pass. A candidate replaces
 * the entry only when strictly better: ties keep the earliest start. */
#define VITERBI(T, SCORE, RESET)                                                                                       \
    do {                                                                                                               \
        T *score = sc->best;                                                                                           \
        uint64_t *back = (uint64_t *)((char *)sc->best + back_off);                                                    \
        const cell *cells = u->cell;                                                                                   \
        const size_t reach = u->max_len > 4 ? u->max_len : 4;                                                          \
        size_t hi = 0;                                                                                                 \
        score[0] = 0;                                                                                                  \
        const T unk_score = (T)(u->min_score - UNK_PENALTY); /* float in SentencePiece */                              \
        for (size_t at = 0; at < n;) {                                                                                 \
            for (size_t lim = at + reach < n ? at + reach : n; hi < lim;)                                              \
                score[++hi] = -INFINITY;                                                                               \
            T till = score[at];                                                                                        \
            if (RESET && (till < -RESET_AT || till > RESET_AT)) {                                                      \
                /* every entry from here on less till: -inf stays -inf */                                              \
                for (size_t i = at; i <= hi; i++)                                                                      \
                    score[i] -= till;                                                                                  \
                till = 0;                                                                                              \
            }                                                                                                          \
            size_t ml = one_char_len((uint8_t)s[at]);                                                                  \
            if (ml > n - at)                                                                                           \
                ml = n - at;                                                                                           \
            int single = 0;                                                                                            \
            size_t node = 0;                                                                                           \
            for (size_t k = at; k < n; k++) {                                                                          \
                /* q < da_n + 256 always: the cells past da_n are nobody's child */                                    \
                size_t q = (size_t)cells[node].base + (uint8_t)s[k];                                                   \
                if (cells[q].check != (int32_t)node)                                                                   \
                    break;                                                                                             \
                node = q;                                                                                              \
                int32_t id = cells[q].id;                                                                              \
                T old = score[k + 1];                                                                                  \
                T cand = SCORE(q) + till;               /* float arithmetic in SentencePiece (measured) */             \
                uint64_t win = -(uint64_t)(cand > old); /* a mask: no branch to mispredict */                          \
                score[k + 1] = cand > old ? cand : old;                                                                \
                back[k + 1] = (back_of(at, id) & win) | (back[k + 1] & ~win);                                          \
                single |= (k + 1 - at == ml) & (id >= 0);                                                              \
            }                                                                                                          \
            if (!single) {                                                                                             \
                T cand = unk_score + till; /* in T: SentencePiece adds two floats here */                              \
                if (cand > score[at + ml]) {                                                                           \
                    score[at + ml] = cand;                                                                             \
                    back[at + ml] = back_of(at, u->unk_id);                                                            \
                }                                                                                                      \
            }                                                                                                          \
            at += ml;                                                                                                  \
        }                                                                                                              \
    } while (0)

void sl_unigram_encode(const sl_unigram *u, sl_uni_scratch *sc, const char *s, size_t n)
{
    sc->n = 0;
    if (!n)
        return;
    size_t ssz = u->hf ? sizeof(double) : sizeof(float);
    size_t back_off = ((n + 1) * ssz + 63) & ~(size_t)63;
    size_t need = back_off + (n + 1) * sizeof(uint64_t);
    if (need > sc->cap) {
        free(sc->best);
        sc->cap = need + need / 2;
        sc->best = sl_xmalloc(sc->cap);
    }
#define FSCORE(q) cells[q].fscore
#define DSCORE(q) u->dscore[q]
    if (u->hf)
        VITERBI(double, DSCORE, 0);
    else
        VITERBI(float, FSCORE, 1);
#undef FSCORE
#undef DSCORE
    /* the path, last piece first, then turned around */
    const uint64_t *back = (const uint64_t *)((char *)sc->best + back_off);
    for (size_t end = n; end > 0;) {
        uint64_t b = back[end];
        uint32_t start = (uint32_t)b;
        sl_uni_push(sc, start, (uint32_t)end, (int32_t)(b >> 32));
        end = start;
    }
    for (size_t i = 0, j = sc->n - 1; i < j; i++, j--) {
        sl_uni_piece t = sc->pieces[i];
        sc->pieces[i] = sc->pieces[j];
        sc->pieces[j] = t;
    }
}
