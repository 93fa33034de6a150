/* Regex patterns of tokenizer.json components (the Replace normalizer's
 * and the Split pre-tokenizer's "Regex"), which HF runs with Oniguruma:
 * compiled here with PCRE2 (UTF, Unicode properties, JIT). The syntax the
 * two share (classes, \p{..}, groups, lookaround, possessive and atomic
 * forms) means the same; Unicode tables may differ for characters added in
 * recent Unicode versions. Internal. */
#ifndef SLUICE_TOKENIZE_HF_REGEX_H
#define SLUICE_TOKENIZE_HF_REGEX_H

#include <stddef.h>

#include "base/err.h"

typedef struct sl_hf_regex sl_hf_regex;

/* NULL with err ("<what>: invalid regex at offset N: ...") on a bad pattern. */
/* 1 when regexes should be JIT-compiled: always, except under valgrind,
 * where PCRE2's JIT code reads a few bytes past the end of the subject
 * (aligned vector loads whose result it ignores) and memcheck reports them;
 * the interpreter gives the same matches and lets memcheck see everything. */
int sl_pcre2_jit_wanted(void);

sl_hf_regex *sl_hf_regex_new(const char *pat, size_t len, const char *what, sl_err *err);
void sl_hf_regex_free(sl_hf_regex *re);

/* Per-thread match scratch. */
typedef struct sl_hf_match {
    void *md; /* pcre2_match_data */
} sl_hf_match;
void sl_hf_match_free(sl_hf_match *m);

/* Calls fn(ctx, start, end) for each match of re in s[0..n) from left to
 * right, as rust-onig's find_iter (an empty match where the last match
 * ended is skipped). Returns 0, or -1 with err on a matching error. */
typedef void (*sl_hf_match_fn)(void *ctx, size_t start, size_t end);
int sl_hf_regex_each(const sl_hf_regex *re, sl_hf_match *m, const char *s, size_t n, sl_hf_match_fn fn, void *ctx,
                     sl_err *err);

#endif
