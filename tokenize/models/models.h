/* The vocabulary-lookup models of tokenizer.json files: WordPiece
 * (model_wordpiece.c) and WordLevel (model_wordlevel.c). Each turns one
 * pre-tokenized piece into ids over an sl_vocab. Internal. */
#ifndef SLUICE_TOKENIZE_MODELS_H
#define SLUICE_TOKENIZE_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "tokenize/tokenizer.h"
#include "tokenize/vocab.h"

typedef struct sl_vocab_model {
    int kind; /* SL_MODEL_WORDPIECE or SL_MODEL_WORDLEVEL */
    sl_vocab vocab;
    int64_t unk_id; /* -1: unk_token not in the vocab (an error when it is needed, as in HF) */
    char *unk;      /* unk_token */
    char *prefix;   /* WordPiece continuing_subword_prefix */
    size_t prefix_len;
    size_t max_chars; /* WordPiece max_input_chars_per_word */
} sl_vocab_model;

enum { SL_MODEL_WORDPIECE = 1, SL_MODEL_WORDLEVEL };

/* Reads a "model" object of type WordPiece (vocab, unk_token,
 * continuing_subword_prefix, max_input_chars_per_word) or WordLevel (vocab,
 * unk_token). */
int sl_wordpiece_load(sl_vocab_model *m, const sl_json *model, const char *name, sl_err *err);
int sl_wordlevel_load(sl_vocab_model *m, const sl_json *model, const char *name, sl_err *err);
void sl_vocab_model_free(sl_vocab_model *m);

/* Appends the ids of piece p[0..n) (n > 0). Fails only when the unk token
 * is needed and not in the vocabulary (HF's MissingUnkToken). */
int sl_wordpiece_encode(const sl_vocab_model *m, sl_buf *tmp, const char *p, size_t n, sl_ids *out, sl_err *err);
int sl_wordlevel_encode(const sl_vocab_model *m, const char *p, size_t n, sl_ids *out, sl_err *err);

#endif
