/* Decoders of Hugging Face tokenizer.json pipelines: the chain that turns
 * the tokens of a list of ids back into text, exactly as HF's
 * `Tokenizer.decode` does. Each step maps the list of token strings to a
 * new list (HF's decode_chain); the result is the final list joined, or,
 * with no decoder at all, the tokens joined by single spaces (as HF does).
 * Implemented: Replace (string pattern), ByteFallback, Fuse, Strip,
 * Metaspace, WordPiece, BPEDecoder, ByteLevel, and Sequence of them. Independent of any model. Internal. */
#ifndef SLUICE_TOKENIZE_DECODERS_H
#define SLUICE_TOKENIZE_DECODERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

enum {
    SL_DEC_REPLACE = 1,
    SL_DEC_BYTE_FALLBACK,
    SL_DEC_FUSE,
    SL_DEC_STRIP,
    SL_DEC_METASPACE,
    SL_DEC_WORDPIECE,
    SL_DEC_BPE,
    SL_DEC_BYTE_LEVEL
};
/* Metaspace prepend schemes (pre-tokenizer and decoder). */
enum { SL_PREPEND_ALWAYS = 0, SL_PREPEND_FIRST, SL_PREPEND_NEVER };

typedef struct sl_dec_step {
    int kind;
    char *a, *b; /* Replace: pattern, content; Strip: the character; Metaspace: the replacement;
                    WordPiece: the prefix; BPEDecoder: the suffix */
    size_t a_len, b_len;
    size_t start, stop; /* Strip */
    int scheme;         /* Metaspace; WordPiece: cleanup */
} sl_dec_step;

typedef struct sl_decoder {
    sl_dec_step *step;
    size_t n;
    int present; /* 0: no decoder (tokens joined by spaces) */
} sl_decoder;

/* The prepend scheme of a Metaspace object v (pre-tokenizer or decoder):
 * "prepend_scheme", else the older boolean "add_prefix_space", else always.
 * `what` names the component in the message. */
int sl_prepend_scheme(const sl_json *v, const char *name, const char *what, int *scheme, sl_err *err);

/* Reads a tokenizer.json "decoder" value (null, or the steps above; a
 * Sequence is flattened). Anything else is refused naming it; `name` (the
 * file) starts the message. */
int sl_decoder_load(sl_decoder *d, const sl_json *v, const char *name, sl_err *err);
void sl_decoder_free(sl_decoder *d);

/* A list of token strings (the decoder's working form). */
typedef struct sl_toklist {
    sl_buf data;
    size_t *off, *len;
    size_t n, cap;
} sl_toklist;

void sl_toklist_push(sl_toklist *l, const char *s, size_t n);
void sl_toklist_clear(sl_toklist *l);
void sl_toklist_free(sl_toklist *l);

/* Runs the chain on the tokens of in (consumed: left cleared) and appends
 * the joined result to out. tmp is scratch. */
void sl_decoder_run(const sl_decoder *d, sl_toklist *in, sl_toklist *tmp, sl_buf *out);

#endif
