/* A literal-string byte trie, matched longest-first: the added tokens'
 * matcher (added.h), SentencePiece's user-defined symbols (norm_precompiled.h,
 * spm_bpe.h) and the special tokens of sl_tokenizer_find_special. Internal. */
#ifndef SLUICE_TOKENIZE_TRIE_H
#define SLUICE_TOKENIZE_TRIE_H

#include <stddef.h>
#include <stdint.h>

/* A literal-string trie for added tokens (leftmost-longest matching). */
typedef struct sl_trie_node {
    int32_t first_child, next_sibling;
    int32_t token; /* the caller's index of the token, or -1 */
    uint8_t byte;
} sl_trie_node;

typedef struct sl_trie {
    sl_trie_node *nodes;
    size_t n, cap;
    uint8_t first[256]; /* 1 when some token starts with that byte */
    /* bit c1 << 8 | c2 (1 << 16 bits): some token starts with the bytes c1
     * c2, or is c1 alone; made with the first token */
    uint64_t *pair;
    /* the distinct first bytes while there are at most 4 (n_first 5: more),
     * the second bytes likewise (n_second 5 also when a token is one byte) */
    uint8_t n_first, firsts[4], n_second, seconds[4];
} sl_trie;

/* Adds s[0..n) (n > 0) as token; of two equal strings the first added wins. */
void sl_trie_add(sl_trie *t, const char *s, size_t n, int32_t token);
/* Longest token matching at text[pos..n) or -1; *len set. */
int32_t sl_trie_longest(const sl_trie *t, const char *text, size_t n, size_t pos, size_t *len);
/* The first position from pos on (pos <= n) where a token may start, by
 * its first two bytes (SSE2 over 16 positions at a time while the tokens
 * start with at most 4 different bytes); n when none. Every position it
 * passes has no match, so sl_trie_longest need only be asked where it
 * stops. */
size_t sl_trie_next(const sl_trie *t, const char *text, size_t n, size_t pos);
void sl_trie_free(sl_trie *t);

#endif
