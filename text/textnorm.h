/* datatrove's simplify_text (datatrove 0.10.1, datatrove/utils/text.py) with
 * its default TextNormConfig, exactly: lowercase (str.lower(), Final_Sigma
 * included), each number \p{Nd}+([.,،٫⎖⎗⎘]\p{Nd}+)? -> "0", datatrove's
 * PUNCTUATION characters (and the C0/C1 controls but tab and newline) -> " ",
 * strip, whitespace runs (str.isspace) -> " ", NFD with the nonspacing marks
 * (category Mn) dropped, strip. The Unicode data is the Python's that ran
 * datatrove when text/textnorm_tables.h was generated (SL_TN_UNICODE).
 * Used by `dedup exact --normalize`, `dedup lines` and `dedup minhash`. */
#ifndef SLUICE_TEXT_TEXTNORM_H
#define SLUICE_TEXT_TEXTNORM_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Scratch space reused across calls (zero-initialise; free with
 * sl_textnorm_free); one per thread. */
typedef struct sl_textnorm {
    uint32_t *a, *b;
    size_t cap;
} sl_textnorm;

/* out = simplify_text(s[0..n)) in UTF-8 (out is cleared first). s must be
 * well-formed UTF-8 (what stream/docreader.h gives). */
void sl_simplify_text(sl_textnorm *t, const char *s, size_t n, sl_buf *out);
void sl_textnorm_free(sl_textnorm *t);

/* Properties as simplify_text sees them, for other text code (the word
 * tokenizer's whitespace is str.isspace too). */
int sl_tn_isspace(uint32_t cp);
/* The Python version and Unicode data the tables come from. */
const char *sl_textnorm_unicode_version(void);

#endif
