/* Text normalizers of Hugging Face tokenizer.json pipelines: NFC, NFD,
 * NFKC, NFKD, Lowercase, BertNormalizer, StripAccents, Strip, Replace
 * (string or regex), Prepend, Precompiled (SentencePiece's charsmap, HF's
 * per-grapheme way: norm_precompiled.h), and Sequences of them, exactly as
 * HF applies them (see normalize.c for the Unicode versions). The one
 * normalizer engine of every tokenizer.json family (byte-level BPE,
 * SentencePiece-style BPE, Unigram, WordPiece, WordLevel). Independent of
 * any tokenizer model: a family keeps an sl_normalizer, and each encoding
 * thread an sl_norm_scratch. Internal (not installed). */
#ifndef SLUICE_TOKENIZE_NORMALIZE_H
#define SLUICE_TOKENIZE_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "tokenize/pre_tokenizers/hf_regex.h"
#include "tokenize/normalizers/norm_precompiled.h"

/* Normalizer steps, applied in order. */
enum {
    SL_NORM_NFC = 1,
    SL_NORM_NFKC,
    SL_NORM_LOWER,
    SL_NORM_NFD,
    SL_NORM_NFKD,
    SL_NORM_BERT,
    SL_NORM_STRIP,
    SL_NORM_STRIP_ACCENTS,
    SL_NORM_REPLACE,
    SL_NORM_PREPEND,
    SL_NORM_PRECOMPILED,
};
#define SL_NORM_MAX 16
/* BertNormalizer options (sl_norm_step.flags) */
enum { SL_BERT_CLEAN = 1, SL_BERT_CHINESE = 2, SL_BERT_STRIP_ACCENTS = 4, SL_BERT_LOWER = 8 };
/* Strip sides (sl_norm_step.flags) */
enum { SL_STRIP_LEFT = 1, SL_STRIP_RIGHT = 2 };

typedef struct sl_norm_step {
    int kind;
    unsigned flags;
    char *a, *b; /* Replace: pattern, content; Prepend: a */
    size_t a_len, b_len;
    sl_hf_regex *re; /* Replace with a Regex pattern */
    sl_charsmap *cm; /* Precompiled */
} sl_norm_step;

typedef struct sl_normalizer {
    sl_norm_step step[SL_NORM_MAX];
    int n; /* 0: the text passes unchanged */
} sl_normalizer;

/* Per-thread scratch space (zero-initialised; sl_norm_scratch_free). */
typedef struct sl_norm_scratch {
    sl_buf tmp, t1, t2;
    uint16_t *u16a, *u16b;
    size_t u16_cap;
    sl_hf_match rx; /* Replace with a regex */
    sl_buf zb;
    /* Set by sl_normalize: how many leading bytes of the result HF aligns
     * with the input's first character (0: a step removed the start:
     * Strip, StripAccents, BertNormalizer, a Replace there). A piece that
     * starts there starts at the text's offset 0 for a Metaspace
     * prepend_scheme "first"; others do not. */
    size_t lead;
} sl_norm_scratch;

/* Adds the steps of a tokenizer.json "normalizer" value (null, one of the
 * normalizers above, or a Sequence of them) to nz. Anything else is refused
 * with a message naming it; `name` (the file) starts the message. */
int sl_normalizer_load(sl_normalizer *nz, const sl_json *n, const char *name, sl_err *err);
void sl_normalizer_free(sl_normalizer *nz);

/* Applies the steps to s[0..n) (valid UTF-8), result in out (cleared
 * first); sets sc->lead. Returns 0, or -1 with err when ICU or a regex
 * fails. */
int sl_normalize(const sl_normalizer *nz, sl_norm_scratch *sc, const char *s, size_t n, sl_buf *out, sl_err *err);
void sl_norm_scratch_free(sl_norm_scratch *sc);

/* White_Space, and the Rust regex \w class (HF's tests for added tokens'
 * lstrip, rstrip and single_word), at HF's Unicode version (hf_classes.h),
 * whatever the system ICU's. */
int sl_uc_is_space(uint32_t c);
int sl_uc_is_word(uint32_t c);

#endif
