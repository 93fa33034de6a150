/* Unigram Viterbi (unigram.h), written from SentencePiece's description of
 * its optimized encoder: the best path ending at each byte position is kept
 * (score, start, id); from each character start, every vocabulary piece
 * that is a prefix of the rest extends the best path ending there, and
 * when no single-character piece matches, the unk piece covers the
 * character. The vocabulary is a byte trie laid out as a double array
 * (unigram_da.c). */
#include "tokenize/models/unigram.h"
#include "tokenize/models/unigram_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define UNK_PENALTY 10.0
/* SentencePiece (0.2.3) keeps path scores in float but takes the score of
 * the path so far off every score ahead once its magnitude passes 1e5
 * (kScoreResetThreshold), so that a long document's sums keep float's
 * precision; without that, paths 180k characters in differ in the last bit
 * and a tie goes the other way. */
#define RESET_AT 100000.0f

sl_unigram *sl_unigram_new(uint32_t n_ids, int hf)
{
    sl_unigram *u = sl_xcalloc(1, sizeof *u);
    u->n_ids = n_ids;
    u->score = sl_xcalloc(n_ids ? n_ids : 1, sizeof *u->score);
    u->kind = sl_xcalloc(n_ids ? n_ids : 1, 1);
    u->len = sl_xcalloc(n_ids ? n_ids : 1, sizeof *u->len);
    u->hf = hf;
    u->unk_id = -1;
    u->dup_first = u->dup_second = -1;
    return u;
}

void sl_unigram_add(sl_unigram *u, uint32_t id, const char *s, size_t len, double score, int kind)
{
    u->score[id] = score;
    u->kind[id] = (uint8_t)kind;
    u->len[id] = (uint32_t)len;
    if (len > u->max_len)
        u->max_len = len;
    if (u->n_keys == u->key_cap) {
        u->key_cap = u->key_cap ? 2 * u->key_cap : 1024;
        u->key_id = sl_xrealloc(u->key_id, u->key_cap * sizeof *u->key_id);
        u->key_off = sl_xrealloc(u->key_off, u->key_cap * sizeof *u->key_off);
        u->key_len = sl_xrealloc(u->key_len, u->key_cap * sizeof *u->key_len);
    }
    if (u->pool_cap - u->pool_len < len + 16) { /* 16 to spare past the end: the layout reads 16 or 8 at once */
        while (u->pool_cap - u->pool_len < len + 16)
            u->pool_cap = u->pool_cap ? 2 * u->pool_cap : 65536;
        u->pool = sl_xrealloc(u->pool, u->pool_cap);
    }
    if (len)
        memcpy(u->pool + u->pool_len, s, len);
    u->key_id[u->n_keys] = id;
    u->key_off[u->n_keys] = u->pool_len;
    u->key_len[u->n_keys] = (uint32_t)len;
    u->n_keys++;
    u->pool_len += len;
}

/* A piece's score as the lattice adds it (a user-defined piece of len
 * bytes: SentencePiece 0.2.3's GetUserDefinedScore, 0.1 per byte after the
 * first, in float, so that one long user-defined piece beats its parts). */
static double lattice_score(const sl_unigram *u, int64_t id, size_t len)
{
    return u->kind[id] == SL_UNI_USER ? (double)(float)(0.1 * (double)(len - 1)) : u->score[id];
}

/* The scores of the laid-out cells (sl_unigram_build_da set base, check
 * and the id of the piece ending at each cell): an unused piece takes no
 * part (id -1, score -inf). */
static void build_cells(sl_unigram *u)
{
    size_t n = u->da_n;
    u->dscore = u->hf ? sl_xmalloc((n + 257) * sizeof *u->dscore) : NULL; /* (double: Hugging Face's only) */
    for (size_t q = 0; u->dscore && q < n + 257; q++)
        u->dscore[q] = -INFINITY;
    for (size_t q = 0; q < n; q++) {
        int64_t id = u->cell[q].id;
        if (id < 0)
            continue;
        if (u->kind[id] == SL_UNI_UNUSED) {
            u->cell[q].id = -1;
            continue;
        }
        double sc = lattice_score(u, id, u->len[id]);
        u->cell[q].fscore = (float)sc;
        if (u->dscore)
            u->dscore[q] = sc;
    }
}

void sl_unigram_set(sl_unigram *u, int64_t unk_id, double min_score)
{
    u->unk_id = unk_id;
    u->min_score = min_score;
    if (u->cell)
        return; /* laid out once */
    sl_unigram_build_da(u);
    build_cells(u);
    /* the pieces as added served the layout only */
    free(u->pool);
    free(u->key_id);
    free(u->key_off);
    free(u->key_len);
    u->pool = NULL, u->key_id = u->key_len = NULL, u->key_off = NULL;
    u->pool_len = u->pool_cap = u->n_keys = u->key_cap = 0;
}

int sl_unigram_dup(const sl_unigram *u, uint32_t *first, uint32_t *second)
{
    if (u->dup_second < 0)
        return 0;
    *first = (uint32_t)u->dup_first;
    *second = (uint32_t)u->dup_second;
    return 1;
}

void sl_unigram_free(sl_unigram *u)
{
    if (!u)
        return;
    free(u->pool);
    free(u->key_id);
    free(u->key_off);
    free(u->key_len);
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

/* One candidate: the piece of cell Q (id ID) from byte at to byte E. It
 * replaces the entry only when strictly better (ties keep the earliest
 * start). Written as two selects of values in hand, gcc makes the float
 * one conditional moves and the double one a branch on whether it wins
 * (which mostly it does: an entry's first candidate); both measured
 * faster than the masks they replace (0.96 and 0.97 of the lattice's time
 * on the bench corpus, 0.95 and 1.00 on the multilingual fixture). */
#define CANDIDATE(T, SCORE, E, Q, ID)                                                                                  \
    do {                                                                                                               \
        T old_ = score[E];                                                                                             \
        T cand_ = SCORE(Q) + till;                     /* float arithmetic in SentencePiece (measured) */              \
        uint64_t ob_ = back[E], nb_ = back_of(at, ID); /* (both loaded: no conditional store) */                       \
        score[E] = cand_ > old_ ? cand_ : old_;                                                                        \
        back[E] = cand_ > old_ ? nb_ : ob_;                                                                            \
    } while (0)

/* The lattice in one arithmetic, T the stored score type. score[k] is the
 * best path's score to byte k, -inf while none reaches it. Each walk sets
 * the 4 entries just past (at, at + reach] to -inf: at grows by 4 at most,
 * so every entry a piece can reach is set before the walk, with no test
 * and no separate pass over a long document (the array has room for
 * them). The walk's first step, from the root, has no load of the root's
 * base. Whether a piece covers exactly the first character (else the unk
 * piece does) is read after the walk from the cell it reached at that
 * character's end (the dead cell when it stopped before). */
#define VITERBI(T, SCORE, RESET)                                                                                       \
    do {                                                                                                               \
        T *score = sc->best;                                                                                           \
        uint64_t *back = (uint64_t *)((char *)sc->best + back_off);                                                    \
        const cell *cells = u->cell;                                                                                   \
        const size_t root_base = (size_t)cells[0].base;                                                                \
        const size_t dead = u->da_n + 256; /* a cell with no piece, no child and nobody's child */                     \
        score[0] = 0;                                                                                                  \
        for (size_t i = 1; i <= reach; i++)                                                                            \
            score[i] = -INFINITY;                                                                                      \
        const T unk_score = (T)(u->min_score - UNK_PENALTY); /* float in SentencePiece */                              \
        for (size_t at = 0; at < n;) {                                                                                 \
            for (size_t i = 1; i <= 4; i++)                                                                            \
                score[at + reach + i] = -INFINITY;                                                                     \
            T till = score[at];                                                                                        \
            if (RESET && fabs((double)till) > RESET_AT) {                                                              \
                /* every entry from here on less till: -inf stays -inf */                                              \
                for (size_t i = at; i <= at + reach; i++)                                                              \
                    score[i] -= till;                                                                                  \
                till = 0;                                                                                              \
            }                                                                                                          \
            size_t ml = one_char_len((uint8_t)s[at]);                                                                  \
            if (ml > n - at)                                                                                           \
                ml = n - at;                                                                                           \
            size_t at_ml = dead, end_ml = at + ml;                                                                     \
            size_t node = root_base + (uint8_t)s[at], k = n;                                                           \
            if (cells[node].check == 0) { /* a child of the root */                                                    \
                CANDIDATE(T, SCORE, at + 1, node, cells[node].id);                                                     \
                at_ml = ml == 1 ? node : at_ml;                                                                        \
                k = at + 1;                                                                                            \
            }                                                                                                          \
            for (; k < n; k++) {                                                                                       \
                /* q < da_n + 256 always: the cells past da_n are nobody's child */                                    \
                size_t q = (size_t)cells[node].base + (uint8_t)s[k];                                                   \
                if (cells[q].check != (int32_t)node)                                                                   \
                    break;                                                                                             \
                node = q;                                                                                              \
                if (cells[q].id < 0) /* no piece ends here (mid-character, say): a candidate that cannot win */        \
                    continue;                                                                                          \
                CANDIDATE(T, SCORE, k + 1, q, cells[q].id);                                                            \
                at_ml = k + 1 == end_ml ? q : at_ml;                                                                   \
            }                                                                                                          \
            if (cells[at_ml].id < 0) {     /* no piece is this one character */                                        \
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
    const size_t reach = u->max_len > 4 ? u->max_len : 4; /* the longest piece */
    size_t back_off = ((n + reach + 5) * ssz + 63) & ~(size_t)63;
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
