/* SentencePiece BPE (spm_bpe.h), written from the algorithm as
 * SentencePiece describes it: a priority queue of adjacent symbol pairs
 * whose concatenation is a normal piece, best score first and leftmost on
 * ties; a popped pair whose symbols changed since it was queued is
 * skipped. O(n log n) in the length of the text. */
#include "tokenize/models/spm_bpe.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct vslot {
    const char *s;
    uint32_t len;
    int32_t normal, reserved; /* ids, -1 when none */
} vslot;

struct sl_spm_vocab {
    vslot *t;
    size_t mask;
    const sl_spm_proto *m;
};

static vslot *slot_at(const sl_spm_vocab *v, const char *s, size_t n, uint64_t hash)
{
    for (size_t h = hash & v->mask;; h = (h + 1) & v->mask) {
        vslot *e = &v->t[h];
        if (!e->s || (e->len == n && !memcmp(e->s, s, n)))
            return e;
    }
}

static vslot *slot(const sl_spm_vocab *v, const char *s, size_t n)
{
    return slot_at(v, s, n, XXH3_64bits(s, n));
}

sl_spm_vocab *sl_spm_vocab_new(const sl_spm_proto *m, const char *name, sl_err *err)
{
    sl_spm_vocab *v = sl_xcalloc(1, sizeof *v);
    size_t cap = 16;
    while (cap < 2 * m->n_pieces + 16)
        cap *= 2;
    v->t = sl_xcalloc(cap, sizeof *v->t);
    v->mask = cap - 1;
    v->m = m;
    /* each piece's slot asked for 8 pieces ahead: the table is larger
     * than the caches (12 MB for XLM-R), a miss to memory for each */
    enum { AHEAD = 8 };
    uint64_t hs[AHEAD];
    for (size_t i = 0; i < m->n_pieces && i < AHEAD; i++) {
        hs[i] = XXH3_64bits(m->pieces[i].s, m->pieces[i].len);
        __builtin_prefetch(&v->t[hs[i] & v->mask]);
    }
    for (size_t i = 0; i < m->n_pieces; i++) {
        const sl_spm_piece *p = &m->pieces[i];
        vslot *e = slot_at(v, p->s, p->len, hs[i % AHEAD]);
        if (i + AHEAD < m->n_pieces) {
            const sl_spm_piece *ahead = &m->pieces[i + AHEAD];
            hs[i % AHEAD] = XXH3_64bits(ahead->s, ahead->len);
            __builtin_prefetch(&v->t[hs[i % AHEAD] & v->mask]);
        }
        if (!e->s)
            *e = (vslot){p->s, p->len, -1, -1};
        int32_t *id = sl_spm_normal_kind(p->type) ? &e->normal : &e->reserved;
        if (*id >= 0) {
            char q[SL_QUOTE_MAX];
            sl_errf(err, "%s: piece %zu '%s' is already defined (piece %d)", name, i,
                    sl_err_quote(p->s, p->len, q, sizeof q), *id);
            sl_spm_vocab_free(v);
            return NULL;
        }
        *id = (int32_t)i;
    }
    return v;
}

void sl_spm_vocab_free(sl_spm_vocab *v)
{
    if (!v)
        return;
    free(v->t);
    free(v);
}

int64_t sl_spm_piece_id(const sl_spm_vocab *v, const char *s, size_t n, int64_t unk_id)
{
    const vslot *e = slot(v, s, n);
    if (!e->s)
        return unk_id;
    return e->reserved >= 0 ? e->reserved : e->normal >= 0 ? e->normal : unk_id;
}

int64_t sl_spm_normal_id(const sl_spm_vocab *v, const char *s, size_t n)
{
    const vslot *e = slot(v, s, n);
    return e->s ? e->normal : -1;
}

typedef struct sym {
    int32_t prev, next;
    uint32_t start, len; /* len 0: merged away */
    int freeze;
} sym;

typedef struct pair {
    float score;
    int32_t left, right;
    uint32_t size;
} pair;

/* a before b in the queue: higher score, then smaller left */
static int before(const pair *a, const pair *b)
{
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static void heap_push(sl_spm_bpe_scratch *sc, pair p)
{
    if (sc->heap_n == sc->heap_cap) {
        sc->heap_cap = sc->heap_cap ? 2 * sc->heap_cap : 256;
        sc->heap = sl_xrealloc(sc->heap, sc->heap_cap * sizeof(pair));
    }
    pair *h = sc->heap;
    size_t i = sc->heap_n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&p, &h[up]))
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = p;
}

static pair heap_pop(sl_spm_bpe_scratch *sc)
{
    pair *h = sc->heap, top = h[0], last = h[--sc->heap_n];
    size_t i = 0, n = sc->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (n)
        h[i] = last;
    return top;
}

/* rev_merge of unused pieces: piece string -> length of its left part (the
 * last pair that made it, as SentencePiece's map keeps). */
typedef struct rev {
    uint32_t start, len, left; /* the string is s[start, start+len) of this text; len 0 = empty */
} rev;

static void rev_put(sl_spm_bpe_scratch *sc, const char *s, uint32_t start, uint32_t len, uint32_t left, size_t cap_hint)
{
    if (!sc->rev_cap || cap_hint * 2 > sc->rev_cap) {
        /* sized once per text: at most one entry per merge */
        size_t cap = 64;
        while (cap < 8 * cap_hint + 64)
            cap *= 2;
        if (cap > sc->rev_cap) {
            rev *old = sc->rev;
            size_t oc = sc->rev_cap;
            sc->rev = sl_xcalloc(cap, sizeof(rev));
            sc->rev_cap = cap;
            for (size_t i = 0; i < oc; i++)
                if (old[i].len)
                    rev_put(sc, s, old[i].start, old[i].len, old[i].left, 0);
            free(old);
        }
    }
    rev *t = sc->rev;
    size_t mask = sc->rev_cap - 1;
    for (size_t h = XXH3_64bits(s + start, len) & mask;; h = (h + 1) & mask) {
        if (!t[h].len || (t[h].len == len && !memcmp(s + t[h].start, s + start, len))) {
            t[h] = (rev){start, len, left};
            return;
        }
    }
}

static int64_t rev_get(const sl_spm_bpe_scratch *sc, const char *s, uint32_t start, uint32_t len)
{
    const rev *t = sc->rev;
    size_t mask = sc->rev_cap - 1;
    if (!sc->rev_cap)
        return -1;
    for (size_t h = XXH3_64bits(s + start, len) & mask; t[h].len; h = (h + 1) & mask)
        if (t[h].len == len && !memcmp(s + t[h].start, s + start, len))
            return t[h].left;
    return -1;
}

static void resegment(const sl_spm_proto *m, const sl_spm_vocab *v, const sl_spm_bpe_scratch *sc, const char *s,
                      uint32_t start, uint32_t len, int64_t unk_id, sl_uni_scratch *o, int depth)
{
    int64_t id = sl_spm_piece_id(v, s + start, len, unk_id);
    int64_t left;
    if (id < 0 || m->pieces[id].type != SL_SPM_UNUSED || depth > 64 || (left = rev_get(sc, s, start, len)) < 0) {
        sl_uni_push(o, start, start + len, id);
        return;
    }
    resegment(m, v, sc, s, start, (uint32_t)left, unk_id, o, depth + 1);
    resegment(m, v, sc, s, start + (uint32_t)left, len - (uint32_t)left, unk_id, o, depth + 1);
}

void sl_spm_bpe_scratch_free(sl_spm_bpe_scratch *sc)
{
    free(sc->sym);
    free(sc->heap);
    free(sc->rev);
    memset(sc, 0, sizeof *sc);
}

void sl_spm_bpe_encode(const sl_spm_proto *m, const sl_spm_vocab *v, const sl_trie *user, sl_spm_bpe_scratch *sc,
                       const char *s, size_t n, int64_t unk_id, sl_uni_scratch *out)
{
    out->n = 0;
    sc->heap_n = 0;
    if (sc->rev_cap)
        memset(sc->rev, 0, sc->rev_cap * sizeof(rev));
    if (!n)
        return;
    if (n + 1 > sc->sym_cap) {
        free(sc->sym);
        sc->sym_cap = n + 1;
        sc->sym = sl_xmalloc(sc->sym_cap * sizeof(sym));
    }
    sym *y = sc->sym;
    int32_t k = 0;
    for (size_t i = 0; i < n; k++) {
        size_t len = 0;
        int freeze = 0;
        if (user && user->first[(uint8_t)s[i]] && sl_trie_longest(user, s, n, i, &len) >= 0)
            freeze = 1;
        else {
            len = "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[(uint8_t)s[i] >> 4];
            if (len > n - i)
                len = n - i;
        }
        y[k] = (sym){k - 1, -1, (uint32_t)i, (uint32_t)len, freeze};
        i += len;
        if (i < n)
            y[k].next = k + 1;
    }
    int has_unused = 0;
#define TRY_PAIR(L, R)                                                                                                 \
    do {                                                                                                               \
        int32_t l_ = (L), r_ = (R);                                                                                    \
        if (l_ >= 0 && r_ >= 0 && !y[l_].freeze && !y[r_].freeze) {                                                    \
            uint32_t sz = y[l_].len + y[r_].len;                                                                       \
            int64_t id = sl_spm_normal_id(v, s + y[l_].start, sz);                                                     \
            if (id >= 0) {                                                                                             \
                heap_push(sc, (pair){m->pieces[id].score, l_, r_, sz});                                                \
                if (m->pieces[id].type == SL_SPM_UNUSED) {                                                             \
                    rev_put(sc, s, y[l_].start, sz, y[l_].len, n);                                                     \
                    has_unused = 1;                                                                                    \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)
    for (int32_t i = 1; i < k; i++)
        TRY_PAIR(i - 1, i);
    while (sc->heap_n) {
        pair top = heap_pop(sc);
        sym *l = &y[top.left], *r = &y[top.right];
        if (!l->len || !r->len || l->len + r->len != top.size)
            continue;
        l->len += r->len;
        l->next = r->next;
        if (r->next >= 0)
            y[r->next].prev = top.left;
        r->len = 0;
        TRY_PAIR(l->prev, top.left);
        TRY_PAIR(top.left, l->next);
    }
#undef TRY_PAIR
    for (int32_t i = 0; i >= 0 && i < k; i = y[i].next) {
        if (has_unused)
            resegment(m, v, sc, s, y[i].start, y[i].len, unk_id, out, 0);
        else
            sl_uni_push(out, y[i].start, y[i].start + y[i].len, sl_spm_piece_id(v, s + y[i].start, y[i].len, unk_id));
    }
}
