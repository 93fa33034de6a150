/* Decoding token ids back to text, for `sluice cat --text` and
 * `sluice detokenize`. Implemented by the BPE/char tokenizer module. */
#ifndef SLUICE_TOKENIZE_DETOK_H
#define SLUICE_TOKENIZE_DETOK_H

#include <stddef.h>
#include <stdint.h>

#include "stream/buf.h"
#include "stream/err.h"

typedef struct sl_detok sl_detok;

/* path: a tokenizer.json, a directory holding vocab.json + merges.txt, or
 * any other tokenizer file the tokenize module understands. */
sl_detok *sl_detok_open(const char *path, sl_err *err);
/* Appends the text of ids[0..n) to out. Ids outside the vocab are an error. */
int sl_detok_decode(sl_detok *d, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);
void sl_detok_close(sl_detok *d);

#endif
