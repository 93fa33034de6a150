/* The insides of the Unigram lattice (unigram.c, unigram_da.c). Internal. */
#ifndef SLUICE_TOKENIZE_UNIGRAM_IMPL_H
#define SLUICE_TOKENIZE_UNIGRAM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "tokenize/models/unigram.h"

/* A position of the double array: the child of position p for byte c is
 * q = cell[p].base + c when cell[q].check == p; id: the piece ending at q
 * that takes part in the lattice (not unused), or -1; fscore its score as
 * the lattice adds it in float (SentencePiece's: a user-defined piece's
 * bonus folded in), dscore[q] in double (made for Hugging Face's
 * arithmetic only); both scores are -inf where id is -1, so such a
 * step's candidate never wins (the root's step makes it all the same; the
 * walk's later steps skip it). One 16-byte cell per step of the walk
 * instead of five arrays. */
typedef struct cell {
    int32_t base, check, id;
    float fscore;
} cell;

struct sl_unigram {
    /* the lattice's trie as a double array (laid out by sl_unigram_set) */
    cell *cell;
    double *dscore;
    size_t da_n;
    /* the pieces as added (the k-th: id key_id[k], bytes pool[key_off[k]..]
     * of key_len[k]), from which sl_unigram_set lays out the trie (and
     * frees them) */
    char *pool;
    size_t pool_len, pool_cap;
    uint32_t *key_id, *key_len;
    size_t *key_off;
    size_t n_keys, key_cap;
    uint32_t n_ids;
    double *score;
    uint32_t *len;  /* per id: the piece's length in bytes */
    size_t max_len; /* the longest string added, in bytes (the trie's depth) */
    uint8_t *kind;
    int hf;
    int64_t dup_first, dup_second; /* sl_unigram_dup's, -1: none */
    int64_t unk_id;
    double min_score;
};

/* unigram_da.c: the pieces (pool, key_*) as a double array (cell, da_n;
 * 257 cells past da_n, free): the id of a string's cell is the id added
 * first for it, its score not yet set (-inf). */
void sl_unigram_build_da(sl_unigram *u);

#endif
