/* SentencePiece's precompiled charsmap (normalizer_spec.precompiled_charsmap
 * of a .model file, the "Precompiled" normalizer of a tokenizer.json): a
 * Darts double-array trie of source strings whose values index a blob of
 * NUL-terminated replacement strings. Two users, two ways of applying it:
 *  - sl_spm_normalize: SentencePiece's own Normalizer (longest match at each
 *    position, user-defined symbols untouched, dummy prefix, extra
 *    whitespace removal, spaces escaped as U+2581);
 *  - sl_precompiled_hf: Hugging Face's Precompiled normalizer (per extended
 *    grapheme cluster: a cluster shorter than 6 bytes is replaced whole by
 *    the shortest rule matching its start, else each character is).
 * Internal (not installed). */
#ifndef SLUICE_TOKENIZE_NORM_PRECOMPILED_H
#define SLUICE_TOKENIZE_NORM_PRECOMPILED_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "tokenize/trie.h"

typedef struct sl_charsmap {
    uint32_t *units;
    size_t n_units;
    char *norm; /* replacement strings; one extra NUL at the end */
    size_t norm_len;
    uint8_t first[256]; /* 1 when some rule starts with that byte */
    /* ASCII byte c followed by an ASCII byte (or nothing): no longer rule
     * can match, so the result is ascii_rep[c] (NULL: c itself) when
     * ascii_fast[c] */
    uint8_t ascii_fast[128];
    const char *ascii_rep[128];
    uint8_t ascii_rep_len[128];
} sl_charsmap;

/* Parses blob[0..n) (<uint32 LE trie size><trie units><strings>) and checks
 * every reachable trie node and value. Errors name `name` and the file
 * offset (base = the blob's offset in its file). */
int sl_charsmap_parse(sl_charsmap *cm, const uint8_t *blob, size_t n, const char *name, size_t base, sl_err *err);
void sl_charsmap_free(sl_charsmap *cm);

/* The rule matching a prefix of s[0..n): the longest (longest = 1) or the
 * shortest; returns its source length (0: none) and sets *rep. */
size_t sl_charsmap_match(const sl_charsmap *cm, const char *s, size_t n, int longest, const char **rep);

/* SentencePiece's NormalizerSpec behaviour. */
typedef struct sl_spm_norm {
    const sl_charsmap *cm; /* NULL: identity */
    const sl_trie *user;   /* user-defined symbols, matched before the charsmap; NULL: none */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, ws_suffix;
} sl_spm_norm;

/* Normalizes s[0..n) into out (cleared first) as SentencePiece does. */
void sl_spm_normalize(const sl_spm_norm *nz, const char *s, size_t n, sl_buf *out);
/* Test hook: 0 makes sl_spm_normalize take every byte its one-at-a-time
 * way, without the 16-byte way for stretches of plain ASCII (1, the
 * default); both must give the same bytes (test_tokenize_spm). */
extern int sl_spm_norm_fast;

/* Hugging Face's Precompiled normalizer on s[0..n) (valid UTF-8), appended
 * to out. Returns 0, or -1 with err when ICU fails. */
int sl_precompiled_hf(const sl_charsmap *cm, const char *s, size_t n, sl_buf *out, sl_err *err);

#endif
