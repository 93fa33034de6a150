/* Sentences as datatrove 0.10.1 splits English text (split_into_sentences,
 * SpaCyTokenizer.span_tokenize): spaCy's Sentencizer over the tokens of
 * `spacy.blank("en")` (text/wordtok.h, sl_wordtok_doc: whitespace tokens
 * included, datatrove's "IS_ALPHA" retry too). The Sentencizer starts a
 * sentence at a token after one whose text is one of its punctuation
 * characters, unless that token is punctuation itself (all its code points
 * of Unicode category P*) or one of those characters. Tables:
 * text/sentsplit_en_tables.h, generated from spaCy by
 * text/gen_sentsplit_en.py (MIT License). Used by the C4 rule
 * (text/rules.h). */
#ifndef SLUICE_TEXT_SENTSPLIT_H
#define SLUICE_TEXT_SENTSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "text/wordtok.h"

/* Growable list of spans (zero-initialise; free with sl_sents_free). */
typedef struct sl_sents {
    sl_word *v;
    size_t n, cap;
} sl_sents;
void sl_sents_free(sl_sents *s);

/* spaCy's sentences (Doc.sents) of text[0..n): s->v[i] is sentence i from
 * its first token's start to its last token's end (start_char, end_char),
 * in bytes into *base (text, or datatrove's copy without "IS_ALPHA"). A
 * text without tokens has none. Returns s->n. */
size_t sl_sentsplit_spans(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, sl_sents *s,
                          const char **base);

/* datatrove's split_into_sentences: text cut at the ends of the spans
 * above but the last, so that the pieces cover it ([0, e1), [e1, e2), ...,
 * [e(k-1), n)); one piece (the text) when there is no span. Offsets are
 * into text (after the "IS_ALPHA" retry, the ends are those of the
 * shortened copy in code points, as datatrove slices). Returns s->n. */
size_t sl_sentsplit_pieces(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, sl_sents *s);

/* The Sentencizer's tests on a token's text: one of its punctuation
 * characters; every code point of category P* (Token.is_punct). */
int sl_sentsplit_is_punct_char(const char *s, size_t n);
int sl_sentsplit_is_punct(const char *s, size_t n);

#endif
