/* Vocabulary lists read in one pass from a tokenizer.json's text, without
 * a tree (bpe_vlist.c; the BPE ones are in bpe_load.h). Each reader takes
 * the common case only and says 0 on anything else, and the caller then
 * parses the whole file, whose tree gives the message. Internal. */
#ifndef SLUICE_TOKENIZE_VLIST_H
#define SLUICE_TOKENIZE_VLIST_H

#include <stddef.h>

/* One entry of a Unigram model.vocab, [piece, score]: the piece's decoded
 * bytes (in the text, or in the list's pool when escaped), the offset of
 * the entry's '[' and of the score's first character. */
typedef struct sl_uni_vent {
    const char *s;
    size_t len, off, num;
} sl_uni_vent;

typedef struct sl_uni_vlist {
    sl_uni_vent *v;
    size_t n;
    char *pool;
} sl_uni_vlist;

/* model.vocab at text[at, at + len) (its value, '[' first): 1 with its
 * entries in L (at least one, each a string and a number in JSON's
 * syntax), else 0 (the tree's way). Free with sl_uni_vlist_free. */
int sl_uni_vocab_read(const char *text, size_t at, size_t len, sl_uni_vlist *L);
void sl_uni_vlist_free(sl_uni_vlist *L);

#endif
