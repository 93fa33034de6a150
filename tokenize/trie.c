/* See trie.h. At each position the longest token starting there wins, and
 * scanning resumes after it, as with HF's Aho-Corasick automaton
 * (MatchKind::LeftmostLongest): a plain byte trie gives the same result; its
 * cost per position is the length of the longest partial match, and a
 * first-byte table skips the positions where no token can start. */
#include "tokenize/trie.h"

#include <stdlib.h>

#include "base/err.h"

static int32_t new_node(sl_trie *t, uint8_t byte)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->nodes = sl_xrealloc(t->nodes, t->cap * sizeof *t->nodes);
    }
    t->nodes[t->n] = (sl_trie_node){.first_child = -1, .next_sibling = -1, .token = -1, .byte = byte};
    return (int32_t)t->n++;
}

static int32_t child(const sl_trie *t, int32_t node, uint8_t byte)
{
    for (int32_t c = t->nodes[node].first_child; c >= 0; c = t->nodes[c].next_sibling)
        if (t->nodes[c].byte == byte)
            return c;
    return -1;
}

void sl_trie_add(sl_trie *t, const char *s, size_t n, int32_t token)
{
    if (t->n == 0)
        new_node(t, 0); /* root */
    int32_t cur = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        int32_t nx = child(t, cur, c);
        if (nx < 0) {
            nx = new_node(t, c);
            t->nodes[nx].next_sibling = t->nodes[cur].first_child;
            t->nodes[cur].first_child = nx;
        }
        cur = nx;
    }
    /* Two added tokens with the same text: the first one listed wins. */
    if (t->nodes[cur].token < 0)
        t->nodes[cur].token = token;
    t->first[(uint8_t)s[0]] = 1;
}

int32_t sl_trie_longest(const sl_trie *t, const char *text, size_t n, size_t pos, size_t *len)
{
    if (t->n == 0 || !t->first[(uint8_t)text[pos]])
        return -1;
    int32_t cur = 0, best = -1;
    for (size_t i = pos; i < n; i++) {
        cur = child(t, cur, (uint8_t)text[i]);
        if (cur < 0)
            break;
        if (t->nodes[cur].token >= 0) {
            best = t->nodes[cur].token;
            *len = i + 1 - pos;
        }
    }
    return best;
}

void sl_trie_free(sl_trie *t)
{
    free(t->nodes);
    t->nodes = NULL;
    t->n = t->cap = 0;
}
