/* Byte-level BPE: the GPT-2 / GPT-NeoX-20B family of tokenizers.
 *
 * Loads a Hugging Face tokenizer.json (model BPE + ByteLevel pre-tokenizer)
 * or a GPT-2 vocab.json + merges.txt pair, and encodes exactly as Hugging
 * Face `tokenizers` does (`encode(text, add_special_tokens=False)`):
 *   1. split out added tokens that are not normalized (specials such as
 *      <|endoftext|>) in the raw text, leftmost-longest;
 *   2. run the normalizer (NFC, NFKC, Lowercase, Sequence of them) on each
 *      remaining piece;
 *   3. split out normalized added tokens (GPT-NeoX's runs of 2..24 spaces);
 *   4. split each remaining piece with the GPT-2 regex (or, for Llama-3 and
 *      Qwen2 files, the regex of their Split pre-tokenizer), map
 *      bytes to the byte-level alphabet and apply the merges by rank (with
 *      ignore_merges, a piece that is a vocabulary entry is that entry).
 * Features the encoder does not implement are refused at load time with a
 * message naming them, never ignored.
 *
 * A loaded sl_bpe is shared between threads, read-only but for the table
 * of short pieces they share (scache.h); each thread encodes with its own
 * sl_bpe_state (regex match data, longer pieces' cache).
 * Callers that need not know the family use tokenize/tokenizer.h, which
 * loads these files too (family "bpe"). */
#ifndef SLUICE_TOKENIZE_BPE_H
#define SLUICE_TOKENIZE_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "tokenize/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_bpe sl_bpe;
typedef struct sl_bpe_state sl_bpe_state;

/* path: a tokenizer.json file, a directory with tokenizer.json or with
 * vocab.json + merges.txt, or a vocab.json whose merges.txt is beside it. */
sl_bpe *sl_bpe_load(const char *path, sl_err *err);
/* The same from memory: json = tokenizer.json text, or (json = vocab.json,
 * merges = merges.txt) when merges != NULL. `name` is used in messages. */
sl_bpe *sl_bpe_load_mem(const char *json, size_t json_len, const char *merges, size_t merges_len, const char *name,
                        sl_err *err);
void sl_bpe_free(sl_bpe *b);

/* Number of ids (model vocab and added tokens): every id is < this. */
uint32_t sl_bpe_vocab_size(const sl_bpe *b);
/* Id of a token given by its text (an added token's content or a model
 * vocab entry in byte-level form), or -1. */
int64_t sl_bpe_token_id(const sl_bpe *b, const char *text);
/* "sha256:<hex>" of the definition file bytes (tokenizer.json, or
 * vocab.json followed by merges.txt). */
const char *sl_bpe_fingerprint(const sl_bpe *b);

sl_bpe_state *sl_bpe_state_new(const sl_bpe *b);
void sl_bpe_state_free(sl_bpe_state *s);

/* Appends the ids of text[0..n) to out. The text should be valid UTF-8
 * (invalid bytes never crash the encoder; bytes without a token are
 * dropped, as HF does). Fails only with SL_SPECIAL_ERROR when the text
 * contains a special token: the message gives its byte offset. */
int sl_bpe_encode(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_special_mode mode, sl_ids *out,
                  sl_err *err);

/* Appends the bytes of ids[0..n) to out (byte-level decoding; added tokens
 * are their literal content). Fails on an id >= vocab size. */
int sl_bpe_decode(const sl_bpe *b, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);
/* Bytes of one id (NULL when the id has none); *len set. */
const char *sl_bpe_id_bytes(const sl_bpe *b, uint32_t id, size_t *len);

/* Chooses the pre-tokenizer: the hand-written scanner (1, the default;
 * HF's character classes) or the PCRE2 pattern (0; the same split for every
 * character of Unicode 14.0, which is all PCRE2 10.42 knows). */
void sl_bpe_set_scanner(sl_bpe *b, int on);

/* The tokenizer.h face of b (which it takes over): header name
 * "bpe:<last part of path>", eos <|endoftext|> (else Llama-3's
 * <|end_of_text|>), bos <|begin_of_text|>, pad <|padding|> when the
 * vocabulary has them; o (may be NULL) sets the special mode and scanner. */
sl_tokenizer *sl_bpe_tokenizer(sl_bpe *b, const char *path, const sl_tokenizer_opts *o);

#ifdef __cplusplus
}
#endif

#endif
