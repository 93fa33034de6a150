/* Added tokens of Hugging Face tokenizer.json files (the "added_tokens"
 * list: specials such as <|endoftext|>, and tokens matched before the model
 * runs), and the trie that finds them in a text leftmost-longest, as HF's
 * AddedVocabulary does. Independent of any tokenizer model. Internal (not
 * installed). */
#ifndef SLUICE_TOKENIZE_ADDED_H
#define SLUICE_TOKENIZE_ADDED_H

#include <stddef.h>
#include <stdint.h>

#include "stream/err.h"
#include "stream/json.h"

typedef struct sl_added {
    uint32_t id;
    char *content; /* as written in the file */
    size_t len;
    char *match; /* what is matched: content, normalized when `normalized` (set by the family) */
    size_t match_len;
    int special, normalized, lstrip, rstrip, single_word;
} sl_added;

/* Parses an "added_tokens" value (null or an array of objects with
 * content, id and the flags, HF's defaults for absent ones) into *out
 * (*n entries; match left NULL). `name` (the file) starts messages. */
int sl_added_parse(const sl_json *list, const char *name, sl_added **out, size_t *n, sl_err *err);
void sl_added_free(sl_added *a, size_t n);

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
