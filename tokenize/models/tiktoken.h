/* tiktoken rank files and Mistral's tekken JSON (tokenize/models/tok_tiktoken.c),
 * family "tiktoken" of tokenizer.h. Internal (not installed).
 *
 * A rank file (`.tiktoken`) has one token a line: its bytes in base64, a
 * space, its rank; the ranks are 0..N-1 and a token's id is its rank. The
 * pattern that splits the text is not in the file: o->pattern names it
 * (gpt2, cl100k, llama3, qwen2, o200k, tekken) or is a regex; special tokens
 * come from o->specials ("NAME=ID,NAME=ID"). OpenAI's own files (r50k_base,
 * p50k_base, cl100k_base, o200k_base, known by their sha256 as tiktoken pins
 * them) default to their pattern and special tokens.
 *
 * A tekken file (JSON: config {pattern, default_vocab_size,
 * default_num_special_tokens}, vocab [{rank, token_bytes}], special_tokens)
 * carries both; its first default_num_special_tokens ids are the special
 * tokens and a vocabulary rank r is id r + that number, as Mistral's
 * Tekkenizer does.
 *
 * Ids equal tiktoken's encode_ordinary (with the special mode plain), its
 * encode(allowed_special="all") (parse) or its refusal of special tokens in
 * the text (error); decoding gives tiktoken's decode bytes. */
#ifndef SLUICE_TOKENIZE_TIKTOKEN_H
#define SLUICE_TOKENIZE_TIKTOKEN_H

#include <stddef.h>

#include "tokenize/tokenizer.h"

/* The same as sl_tokenizer_load of a file holding data[0..n): `name` is
 * the file's (messages, header name). */
sl_tokenizer *sl_tiktoken_load_mem(const char *data, size_t n, const char *name, const sl_tokenizer_opts *o,
                                   sl_err *err);

#endif
