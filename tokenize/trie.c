/* See trie.h. At each position the longest token starting there wins, and
 * scanning resumes after it, as with HF's Aho-Corasick automaton
 * (MatchKind::LeftmostLongest): a plain byte trie gives the same result; its
 * cost per position is the length of the longest partial match, and a
 * first-byte table skips the positions where no token can start. */
#include "tokenize/trie.h"

#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* Byte c into a set of at most 4 bytes (set, *count; *count 5: more). */
static void set_add(uint8_t set[4], uint8_t *count, uint8_t c)
{
    for (int k = 0; k < *count && k < 4; k++)
        if (set[k] == c)
            return;
    if (*count < 4)
        set[*count] = c;
    if (*count < 5)
        (*count)++;
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
    uint8_t c = (uint8_t)s[0];
    t->first[c] = 1;
    set_add(t->firsts, &t->n_first, c);
    if (n == 1)
        t->n_second = 5;
    else
        set_add(t->seconds, &t->n_second, (uint8_t)s[1]);
    if (!t->pair)
        t->pair = sl_xcalloc((size_t)1 << 10, sizeof *t->pair);
    if (n == 1) /* c alone: whatever follows */
        for (int k = 0; k < 4; k++)
            t->pair[c << 2 | k] = ~(uint64_t)0;
    else
        t->pair[c << 2 | (uint8_t)s[1] >> 6] |= (uint64_t)1 << ((uint8_t)s[1] & 63);
}

static inline int pair_may(const sl_trie *t, const char *text, size_t n, size_t i)
{
    uint8_t c = (uint8_t)text[i];
    if (i + 1 == n)
        return t->first[c];
    uint8_t d = (uint8_t)text[i + 1];
    return (int)(t->pair[c << 2 | d >> 6] >> (d & 63) & 1);
}

#if defined(__SSE2__)
/* 0xFF in each byte of v that is one of the 4 bytes of set (each repeated
 * in its vector) */
static inline __m128i eq_any(__m128i v, const __m128i set[4])
{
    return _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, set[0]), _mm_cmpeq_epi8(v, set[1])),
                        _mm_or_si128(_mm_cmpeq_epi8(v, set[2]), _mm_cmpeq_epi8(v, set[3])));
}
#endif

size_t sl_trie_next(const sl_trie *t, const char *text, size_t n, size_t pos)
{
    if (t->n == 0)
        return n;
    size_t i = pos;
#if defined(__SSE2__)
    if (t->n_first <= 4) {
        /* candidates: a first byte, followed by a second one where every
         * token has two bytes and their second bytes are few */
        __m128i f[4], g[4];
        int two = t->n_second <= 4;
        for (int k = 0; k < 4; k++) {
            f[k] = _mm_set1_epi8((char)t->firsts[k < t->n_first ? k : 0]);
            g[k] = _mm_set1_epi8((char)t->seconds[two && k < t->n_second ? k : 0]);
        }
        for (; i + 17 <= n; i += 16) {
            __m128i m = eq_any(_mm_loadu_si128((const __m128i *)(const void *)(text + i)), f);
            if (two)
                m = _mm_and_si128(m, eq_any(_mm_loadu_si128((const __m128i *)(const void *)(text + i + 1)), g));
            for (unsigned bits = (unsigned)_mm_movemask_epi8(m); bits; bits &= bits - 1) {
                size_t j = i + (size_t)__builtin_ctz(bits);
                if (pair_may(t, text, n, j))
                    return j;
            }
        }
    }
#endif
    for (; i < n; i++)
        if (t->first[(uint8_t)text[i]] && pair_may(t, text, n, i))
            return i;
    return n;
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
    free(t->pair);
    t->nodes = NULL;
    t->pair = NULL;
    t->n = t->cap = 0;
}
