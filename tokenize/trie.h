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
} sl_trie;

/* Adds s[0..n) (n > 0) as token; of two equal strings the first added wins. */
void sl_trie_add(sl_trie *t, const char *s, size_t n, int32_t token);
/* Longest token matching at text[pos..n) or -1; *len set. */
int32_t sl_trie_longest(const sl_trie *t, const char *text, size_t n, size_t pos, size_t *len);
void sl_trie_free(sl_trie *t);

#endif
