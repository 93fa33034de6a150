/* Added tokens of Hugging Face tokenizer.json files (the "added_tokens"
 * list: specials such as <|endoftext|>, and tokens matched before the model
 * runs), and the trie that finds them in a text leftmost-longest, as HF's
 * AddedVocabulary does. Independent of any tokenizer model. Internal (not
 * installed). */
#ifndef SLUICE_TOKENIZE_ADDED_H
#define SLUICE_TOKENIZE_ADDED_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/json.h"
#include "tokenize/tokenizer.h"
#include "tokenize/trie.h"

typedef struct sl_added {
    uint32_t id;
    char *content; /* as written in the file */
    size_t len;
    char *match; /* what is matched: content, normalized when `normalized` (set by the family) */
    size_t match_len;
    int special, normalized, lstrip, rstrip, single_word;
} sl_added;

/* Parses an "added_tokens" value (null or an array of objects with
 * content, id and the flags, HF's defaults for absent ones) into *out
 * (*n entries; match left NULL). `name` (the file) starts messages. */
int sl_added_parse(const sl_json *list, const char *name, sl_added **out, size_t *n, sl_err *err);
void sl_added_free(sl_added *a, size_t n);

/* A stretch of text between added tokens: t[0..n), at byte offset `off` of
 * the text given to sl_added_split. Returns 0, or -1 with err set. */
typedef int (*sl_added_gap_fn)(void *ctx, const char *t, size_t n, size_t off, sl_err *err);

/* Splits t[0..n) on the tokens of trie (indices into added[]): calls gap()
 * for the text between them and appends the tokens' ids to out, as HF's
 * AddedVocabulary::find_matches does, including single_word (a match inside
 * a word is skipped), lstrip and rstrip (the token absorbs whitespace on that
 * side). Special tokens follow `mode` (SL_SPECIAL_PLAIN: left in the text;
 * SL_SPECIAL_ERROR: an error giving byte offset base + their position). */
int sl_added_split(const sl_added *added, const sl_trie *trie, const char *t, size_t n, size_t base,
                   sl_special_mode mode, sl_added_gap_fn gap, void *ctx, sl_ids *out, sl_err *err);

#endif
