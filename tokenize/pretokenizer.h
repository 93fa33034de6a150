/* The splitting pre-tokenizers of Hugging Face tokenizer.json pipelines:
 * BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, Split
 * (string or regex pattern, every behavior, invert) and Sequences of them,
 * exactly as HF splits (its NormalizedString::split, and the Unicode classes
 * of hf_classes.h). They only cut the normalized text into pieces, so a
 * piece is a byte range of it. Independent of any model. Internal. */
#ifndef SLUICE_TOKENIZE_PRETOKENIZER_H
#define SLUICE_TOKENIZE_PRETOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "stream/err.h"
#include "stream/json.h"
#include "tokenize/hf_regex.h"

enum {
    SL_PT_CHARS = 1, /* split on the characters of a class (flags) */
    SL_PT_WHITESPACE,
    SL_PT_SPLIT,
};
/* HF's SplitDelimiterBehavior */
enum { SL_SPLIT_REMOVED = 0, SL_SPLIT_ISOLATED, SL_SPLIT_MERGED_PREV, SL_SPLIT_MERGED_NEXT, SL_SPLIT_CONTIGUOUS };
#define SL_PRETOK_MAX 16

typedef struct sl_pretok_step {
    int kind;
    int behavior;
    int invert;
    uint8_t cls; /* SL_PT_CHARS: the SL_HF_* class that matches */
    char *pat;   /* SL_PT_SPLIT: the literal (re NULL) or the regex source */
    size_t pat_len;
    sl_hf_regex *re;
} sl_pretok_step;

typedef struct sl_pretokenizer {
    sl_pretok_step step[SL_PRETOK_MAX];
    int n; /* 0: the text is one piece */
} sl_pretokenizer;

typedef struct sl_span {
    size_t off, len;
} sl_span;

/* Per-thread scratch (zero-initialised; sl_pretok_scratch_free). */
typedef struct sl_pretok_scratch {
    sl_span *a, *b;
    size_t na, nb, cap_a, cap_b;
    struct sl_pt_match *m; /* matches of one piece */
    size_t nm, cap_m;
    sl_hf_match rx;
} sl_pretok_scratch;
void sl_pretok_scratch_free(sl_pretok_scratch *s);

/* Adds the steps of a tokenizer.json "pre_tokenizer" value (null, one of
 * the pre-tokenizers above or a Sequence of them). Anything else is refused
 * naming it; `name` (the file) starts the message. */
int sl_pretokenizer_load(sl_pretokenizer *p, const sl_json *v, const char *name, sl_err *err);
void sl_pretokenizer_free(sl_pretokenizer *p);

/* Splits s[0..n) (valid UTF-8): on success the pieces, in order and none
 * empty, are sc->a[0..sc->na). Returns 0, or -1 with err (a regex failure). */
int sl_pretokenize(const sl_pretokenizer *p, sl_pretok_scratch *sc, const char *s, size_t n, sl_err *err);

#endif
