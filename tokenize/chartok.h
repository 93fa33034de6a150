/* Character tokenizers: UTF-8 bytes, or Unicode code points with a
 * vocabulary (built from the data or given).
 *
 * A vocabulary is a JSON object, written as the token stream header's
 * `extra` and optionally to a file:
 *   {"type":"char","unit":"byte","specials":["<|endoftext|>","<|bos|>"]}
 *   {"type":"char","unit":"codepoint","vocab":["\n"," ","a",...],
 *    "specials":["<|endoftext|>","<|bos|>","<|unk|>"]}
 * Ids: unit byte: 0..255 are the bytes; unit codepoint: vocab[i] is id i.
 * The specials follow (first special = base size). A vocabulary file
 * starts with the bytes {"type":"char" so it is recognised cheaply
 * (tokenize/tokenizer.h loads it as family "char"). */
#ifndef SLUICE_TOKENIZE_CHARTOK_H
#define SLUICE_TOKENIZE_CHARTOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "tokenize/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_charvocab sl_charvocab;

enum { SL_CHAR_BYTE = 0, SL_CHAR_CODEPOINT = 1 };
enum { SL_CHAR_EOS = 0, SL_CHAR_BOS = 1, SL_CHAR_UNK = 2 }; /* index into specials */

/* The byte vocabulary (256 + <|endoftext|>, <|bos|>). */
sl_charvocab *sl_charvocab_bytes(void);
/* A code point vocabulary from a set of code points (sorted ascending in
 * the vocabulary); present[cp] != 0 for each one, cp < 0x110000. */
sl_charvocab *sl_charvocab_from_set(const uint8_t *present);
/* Parses the JSON form; `name` for messages. */
sl_charvocab *sl_charvocab_parse(const char *json, size_t n, const char *name, sl_err *err);
sl_charvocab *sl_charvocab_load(const char *path, sl_err *err);
/* The code point vocabulary of the documents in files[0..n) (read as ro
 * says; each file is read once). */
struct sl_docreader_opts;
sl_charvocab *sl_charvocab_build(const char *const *files, int n, const struct sl_docreader_opts *ro, sl_err *err);
/* Writes the JSON form and a newline to path (atomically). */
int sl_charvocab_save(const sl_charvocab *v, const char *path, sl_err *err);
/* True when the file starts like a vocabulary written by this module. */
int sl_charvocab_is_file(const char *path);
void sl_charvocab_free(sl_charvocab *v);

int sl_charvocab_unit(const sl_charvocab *v);
uint32_t sl_charvocab_size(const sl_charvocab *v);
/* Id of special k (SL_CHAR_EOS, ...) or -1 when the vocabulary has none. */
int64_t sl_charvocab_special(const sl_charvocab *v, int k);
/* The JSON form (NUL-terminated, owned by v). */
const char *sl_charvocab_json(const sl_charvocab *v);

/* Appends the ids of text[0..n) (valid UTF-8 for unit codepoint; invalid
 * bytes become <|unk|>). */
void sl_charvocab_encode(const sl_charvocab *v, const char *text, size_t n, uint32_t **ids, size_t *n_ids, size_t *cap);
int sl_charvocab_decode(const sl_charvocab *v, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);

/* The tokenizer.h face of v (which it takes over): header name
 * "char:byte" or "char:codepoint", the vocabulary as the header's "extra",
 * fingerprint sha256 of its JSON form, eos/bos/unk its specials. */
sl_tokenizer *sl_chartok_tokenizer(sl_charvocab *v);

#ifdef __cplusplus
}
#endif

#endif
