/* Text normalizers of Hugging Face tokenizer.json pipelines: NFC, NFKC and
 * Lowercase, alone or in a Sequence, exactly as HF applies them (see
 * normalize.c for the Unicode versions). Independent of any tokenizer
 * model: a family keeps an sl_normalizer, and each encoding thread an
 * sl_norm_scratch. Internal (not installed). */
#ifndef SLUICE_TOKENIZE_NORMALIZE_H
#define SLUICE_TOKENIZE_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "stream/buf.h"
#include "stream/err.h"
#include "stream/json.h"

/* Normalizer steps, applied in order. */
enum { SL_NORM_NFC = 1, SL_NORM_NFKC, SL_NORM_LOWER };
#define SL_NORM_MAX 8

typedef struct sl_normalizer {
    int step[SL_NORM_MAX];
    int n; /* 0: the text passes unchanged */
} sl_normalizer;

/* Per-thread scratch space (zero-initialised; sl_norm_scratch_free). */
typedef struct sl_norm_scratch {
    sl_buf tmp;
    uint16_t *u16a, *u16b;
    size_t u16_cap;
} sl_norm_scratch;

/* Adds the steps of a tokenizer.json "normalizer" value (null, NFC, NFKC,
 * Lowercase or a Sequence of them) to nz. Anything else is refused with a
 * message naming it; `name` (the file) starts the message. */
int sl_normalizer_load(sl_normalizer *nz, const sl_json *n, const char *name, sl_err *err);

/* Applies the steps to s[0..n) (valid UTF-8), result in out (cleared
 * first). Returns 0, or -1 with err when ICU fails. */
int sl_normalize(const sl_normalizer *nz, sl_norm_scratch *sc, const char *s, size_t n, sl_buf *out, sl_err *err);
void sl_norm_scratch_free(sl_norm_scratch *sc);

/* White_Space, and the Rust regex \w class (HF's tests for added tokens'
 * lstrip, rstrip and single_word). */
int sl_uc_is_space(uint32_t c);
int sl_uc_is_word(uint32_t c);

#endif
