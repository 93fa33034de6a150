/* The pre-tokenizers of Hugging Face tokenizer.json pipelines (all but
 * ByteLevel, which the byte-level BPE family runs itself):
 * BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, Split
 * (string or regex pattern, every behavior, invert), Metaspace
 * (replacement, prepend_scheme always/first/never, split) and Sequences of
 * them, exactly as HF splits (its NormalizedString::split, and the Unicode
 * classes of hf_classes.h). The splitting steps only cut the text into
 * pieces; a Metaspace step rewrites each piece (spaces become the
 * replacement, which may be prepended), so the pieces are byte ranges of
 * sl_pretok_scratch.text: the input, or a scratch copy after a Metaspace
 * step. Shared by every family. Internal. */
#ifndef SLUICE_TOKENIZE_PRETOKENIZER_H
#define SLUICE_TOKENIZE_PRETOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "tokenize/pre_tokenizers/hf_regex.h"

enum {
    SL_PT_CHARS = 1, /* split on the characters of a class (flags) */
    SL_PT_WHITESPACE,
    SL_PT_SPLIT,
    SL_PT_METASPACE,
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
    /* SL_PT_METASPACE: the replacement (one character), SL_PREPEND_* of
     * decoders.h, and whether a piece starts at each replacement */
    char rep[5];
    size_t rep_len;
    int scheme, split;
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
    sl_span *a; /* sl_pretokenize: the pieces */
    size_t na, cap_a;
    const char *text; /* what the pieces index (set by sl_pretokenize) */
    sl_buf text_copy; /* the pieces' text after a Metaspace step */
    /* a regex match state and a Metaspace text per step */
    sl_hf_match step_rx[SL_PRETOK_MAX];
    sl_buf step_ms[SL_PRETOK_MAX];
} sl_pretok_scratch;
void sl_pretok_scratch_free(sl_pretok_scratch *s);

/* Adds the steps of a tokenizer.json "pre_tokenizer" value (null, one of
 * the pre-tokenizers above or a Sequence of them). Anything else is refused
 * naming it; `name` (the file) starts the message. */
int sl_pretokenizer_load(sl_pretokenizer *p, const sl_json *v, const char *name, sl_err *err);
void sl_pretokenizer_free(sl_pretokenizer *p);

/* Splits s[0..n) (valid UTF-8): on success the pieces, in order and none
 * empty, are sc->a[0..sc->na), byte ranges of sc->text (s itself unless a
 * Metaspace step ran). `first`: how many leading bytes of s HF aligns with
 * offset 0 of the document (0: s does not start it; normalize.h's
 * sl_norm_scratch.lead): a piece starting there gets a Metaspace
 * prepend_scheme "first" replacement. Returns 0, or -1 with err (a regex
 * failure). */
int sl_pretokenize_first(const sl_pretokenizer *p, sl_pretok_scratch *sc, const char *s, size_t n, size_t first,
                         sl_err *err);
/* As sl_pretokenize_first, but each piece is handed to fn(ctx, piece, len,
 * err) in order as soon as it is cut (valid during the call), and memory
 * does not grow with the number of pieces: each piece goes through all the
 * steps before the next is cut (HF splits every piece independently), so
 * what is held is one piece per step (a Metaspace step's text) whatever the
 * length of s. A non-zero return from fn (with err set) stops it: -1. */
typedef int (*sl_pretok_fn)(void *ctx, const char *piece, size_t len, sl_err *err);
int sl_pretokenize_each(const sl_pretokenizer *p, sl_pretok_scratch *sc, const char *s, size_t n, size_t first,
                        sl_pretok_fn fn, void *ctx, sl_err *err);
/* sl_pretokenize_first with first = 0. */
int sl_pretokenize(const sl_pretokenizer *p, sl_pretok_scratch *sc, const char *s, size_t n, sl_err *err);
/* 1 when p has a Metaspace step. */
int sl_pretokenizer_has_metaspace(const sl_pretokenizer *p);

#endif
