/* Where BPE cannot merge across: the pairs of adjacent characters (x, y)
 * that some merge may join.
 *
 * A merge joins two adjacent symbols; a symbol that spans the boundary
 * between characters x and y is first made by a merge whose left symbol
 * ends with x and whose right symbol starts with y. When no merge has that
 * junction, no symbol ever spans the boundary, the merges on either side
 * never compete for a symbol, and BPE on the text gives the same tokens as
 * BPE on each side separately (ties by position stay in the same order on
 * each side). Cutting a stretch there lets each part be cached on its own:
 * code and prose are full of stretches seen once ("self.check(b,") whose
 * parts ("self", ".", "check", "(", "b", ",") recur. This holds for HF's
 * merges by rank and for SentencePiece's merges by score alike; a family
 * adds the junctions of its merges (HF: last character of the left token,
 * first of the right) or every adjacent pair inside its pieces
 * (SentencePiece, a superset), and decides when cutting is exact at all
 * (no affixes, no merge of byte-fallback or unk symbols, no unk fusing
 * across the cut).
 *
 * The set is a bitmap of hashed pairs: a pair no merge joins may test as
 * joined (a cut is missed, the result is the same), never the reverse. */
#ifndef SLUICE_TOKENIZE_JOINS_H
#define SLUICE_TOKENIZE_JOINS_H

#include <stddef.h>
#include <stdint.h>

#define SL_JOINS_BITS 20 /* 2^20 bits: 128 KiB */

typedef struct sl_joins {
    uint64_t *bits; /* NULL: no cutting */
} sl_joins;

void sl_joins_init(sl_joins *j);
void sl_joins_free(sl_joins *j);
void sl_joins_add(sl_joins *j, uint32_t x, uint32_t y);
/* Every pair of adjacent characters in s[0..n) (UTF-8; an invalid byte
 * makes the string join everything: cutting is then turned off). */
void sl_joins_add_inner(sl_joins *j, const char *s, size_t n);
/* The junction of a merge: the last character of l, the first of r. */
void sl_joins_add_junction(sl_joins *j, const char *l, size_t ln, const char *r, size_t rn);

static inline size_t sl_joins_hash(uint32_t x, uint32_t y)
{
    uint64_t k = ((uint64_t)x << 21 | y) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(k >> (64 - SL_JOINS_BITS));
}

static inline int sl_joins_has(const sl_joins *j, uint32_t x, uint32_t y)
{
    size_t h = sl_joins_hash(x, y);
    return (int)(j->bits[h >> 6] >> (h & 63) & 1);
}

/* The length of the first part of p[0..n): the first cut (a boundary
 * between two well-formed characters whose pair no merge joins), or n. */
size_t sl_joins_part(const sl_joins *j, const char *p, size_t n);

/* SentencePiece's words, the first cut of both families: the offset of
 * the first U+2581 after p[0] that follows another character (not
 * U+2581), or n. A byte loop: words are too short for memmem's setup. */
size_t sl_joins_word(const char *p, size_t n);

#endif
