/* A tokenizer.json model vocabulary ("vocab": {"token": id, ...}) as a hash
 * table string -> id and a table id -> string, with room for the added
 * tokens' strings (sl_vocab_set): the one id <-> string table of the
 * tokenizer.json models (hf_pipeline.h), which decode and token_id read.
 * Internal. */
#ifndef SLUICE_TOKENIZE_VOCAB_H
#define SLUICE_TOKENIZE_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

typedef struct sl_vocab {
    uint32_t n_ids;      /* ids are below this */
    uint32_t *off, *len; /* id -> its string in pool; len UINT32_MAX: no such id */
    sl_buf pool;
    struct sl_vocab_slot {
        uint32_t id1, off, len; /* id + 1 (0: empty), the key's place in pool */
    } * slot;
    uint64_t mask;
    size_t max_len; /* the longest entry, bytes */
} sl_vocab;

/* Reads obj (a JSON object of string -> non-negative integer id, ids
 * dense enough); `name` (the file) and `what` ("model.vocab") start
 * messages. */
int sl_vocab_load(sl_vocab *v, const sl_json *obj, const char *name, sl_err *err);
void sl_vocab_free(sl_vocab *v);
/* An empty table of n_ids ids (none has a string yet) with room for
 * n_entries strings, filled by sl_vocab_put_last (a list vocabulary, as
 * Unigram's "vocab": [[piece, score], ...]). */
void sl_vocab_init(sl_vocab *v, uint32_t n_ids, size_t n_entries);
/* Sets id's string to s[0..n) and maps s to id: of equal strings the last
 * put wins (HF's HashMap insert). id < n_ids. */
void sl_vocab_put_last(sl_vocab *v, uint32_t id, const char *s, size_t n);
/* The id of s[0..n) in the model vocabulary, or -1. */
int64_t sl_vocab_find(const sl_vocab *v, const char *s, size_t n);
/* Sets the string of id (growing the id range); the model vocabulary's
 * lookup is unchanged. Used for added tokens, whose string decodes. */
void sl_vocab_set(sl_vocab *v, uint32_t id, const char *s, size_t n);
/* The string of id, or NULL (*n set). */
const char *sl_vocab_str(const sl_vocab *v, uint32_t id, size_t *n);

#endif
