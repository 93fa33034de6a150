/* Word tokenizers as datatrove 0.10.1 assigns them to languages
 * (load_word_tokenizer): for "en", spaCy's rule-based tokenizer as
 * `spacy.blank("en")` runs it, with datatrove's strip_strings after it
 * (tokens that are only whitespace dropped). The algorithm is spaCy's
 * Tokenizer (spacy/tokenizer.pyx): text split at whitespace, then per span
 * the exceptions (special cases), prefixes and suffixes stripped in turn,
 * the URL match, infixes; then the exceptions matched again over the tokens
 * (its PhraseMatcher step). Rule tables: text/wordtok_en_tables.h,
 * generated from spaCy by text/gen_wordtok_en.py (MIT License). The
 * regexes run on PCRE2 with Python re's \w \d \s spelled out. Used by
 * `dedup minhash` and by the rule filters (text/rules.h). */
#ifndef SLUICE_TEXT_WORDTOK_H
#define SLUICE_TEXT_WORDTOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct sl_wordtok sl_wordtok; /* compiled rules: read-only, shared by threads */

/* A token: len bytes at text + off (every token is a piece of the text). */
typedef struct sl_word {
    uint32_t off, len;
} sl_word;

/* Per-thread state (match data, token arrays). */
typedef struct sl_wordtok_work sl_wordtok_work;

/* lang: "en" (the one language so far); NULL with err for others. */
sl_wordtok *sl_wordtok_new(const char *lang, sl_err *err);
void sl_wordtok_free(sl_wordtok *t);
sl_wordtok_work *sl_wordtok_work_new(const sl_wordtok *t);
void sl_wordtok_work_free(sl_wordtok_work *w);

/* The words of text[0..n) (well-formed UTF-8, n < 4 GiB), whitespace tokens
 * dropped: returns their count; *words points into w (valid until the next
 * call). */
size_t sl_wordtok_run(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **words);

/* What datatrove's SpaCyTokenizer gives in a long run: spaCy's Doc tokens
 * (whitespace tokens included; *toks valid until the next call), with
 * datatrove's retry: spaCy fails (an AssertionError in Vocab.get, inside the
 * memory zone datatrove opens) on a token "IS_ALPHA" each time but the
 * first in a process, and datatrove then tokenizes the text with every
 * "IS_ALPHA" removed. The offsets are into *base: text, or that shortened
 * copy (kept in w). A retry that meets "IS_ALPHA" again (datatrove raises)
 * keeps its tokens. */
size_t sl_wordtok_doc(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **toks,
                      const char **base);
/* datatrove's word_tokenize: sl_wordtok_doc's tokens without the whitespace
 * ones (strip_strings). */
size_t sl_wordtok_words(const sl_wordtok *t, sl_wordtok_work *w, const char *text, size_t n, const sl_word **words,
                        const char **base);

#endif
