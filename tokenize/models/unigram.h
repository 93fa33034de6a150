/* The Unigram language model of SentencePiece and Hugging Face: the best
 * segmentation of a normalized string by the sum of piece scores (Viterbi
 * over the lattice of vocabulary matches), a character no piece starts
 * with being the unk piece at min_score - 10. Two arithmetic flavours:
 * SentencePiece (0.2.3) keeps path scores in float, takes the path's score
 * off every score ahead once it passes 1e5 in magnitude (so a long document
 * keeps float's precision), and scores a user-defined piece of L bytes
 * 0.1 * (L - 1); Hugging Face keeps them in double. Ties go to the candidate found first (the earliest
 * start), as in both. Byte fallback and unk fusing are the caller's (they
 * differ between the two). Internal (not installed). */
#ifndef SLUICE_TOKENIZE_UNIGRAM_H
#define SLUICE_TOKENIZE_UNIGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* How a piece takes part in the lattice. */
enum { SL_UNI_NORMAL = 1, SL_UNI_USER, SL_UNI_UNUSED };

typedef struct sl_unigram sl_unigram;

/* A model with room for ids below n_ids; hf selects the arithmetic. */
sl_unigram *sl_unigram_new(uint32_t n_ids, int hf);
/* Adds piece s[0..len) as id with its score (kind: SL_UNI_*). A string
 * added twice keeps the first id. */
void sl_unigram_add(sl_unigram *u, uint32_t id, const char *s, size_t len, double score, int kind);
/* Sets the unk id and the lowest score (the unk piece's score is
 * min_score - 10). Call it after the last sl_unigram_add: the first call
 * lays the trie out for encoding, in time linear in the trie (pieces added
 * after it take no part). */
void sl_unigram_set(sl_unigram *u, int64_t unk_id, double min_score);
/* After sl_unigram_set: 1 when a string was added more than once, with
 * the ids of its first two additions in *first and *second (of all such
 * strings, the one whose second id is lowest); else 0. */
int sl_unigram_dup(const sl_unigram *u, uint32_t *first, uint32_t *second);
void sl_unigram_free(sl_unigram *u);

/* One piece of a segmentation: bytes [start, end) of the string, its id
 * (the unk id for an unknown character). */
typedef struct sl_uni_piece {
    uint32_t start, end;
    int64_t id;
} sl_uni_piece;

/* Per-thread scratch (zero-initialised; sl_uni_scratch_free). */
typedef struct sl_uni_scratch {
    void *best;
    size_t cap;
    sl_uni_piece *pieces;
    size_t n, pcap;
} sl_uni_scratch;
void sl_uni_scratch_free(sl_uni_scratch *sc);
/* Appends the piece [a, b) with its id to sc->pieces. */
static inline void sl_uni_push(sl_uni_scratch *sc, uint32_t a, uint32_t b, int64_t id)
{
    if (sc->n == sc->pcap) {
        sc->pcap = sc->pcap ? 2 * sc->pcap : 256;
        sc->pieces = sl_xrealloc(sc->pieces, sc->pcap * sizeof *sc->pieces);
    }
    sc->pieces[sc->n++] = (sl_uni_piece){a, b, id};
}

/* The best segmentation of s[0..n): sc->pieces[0..sc->n). */
void sl_unigram_encode(const sl_unigram *u, sl_uni_scratch *sc, const char *s, size_t n);

#endif
