/* What the files that load a byte-level BPE tokenizer share (bpe_vocab.c,
 * bpe_load.c, bpe_pretok_load.c, bpe_files.c). Internal. */
#ifndef SLUICE_TOKENIZE_BPE_LOAD_H
#define SLUICE_TOKENIZE_BPE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "tokenize/models/bpe_internal.h"

/* A string -> id table used only while loading (open addressing). The
 * key's first 8 bytes are in its slot: most keys (9 in 10 of GPT-2's merge
 * lookups) are told apart without reading the string. */
typedef struct {
    const char *s;
    uint32_t n; /* keys are shorter than 4 GiB: the token pools take 32-bit offsets */
    uint32_t id;
    uint64_t head; /* s[0..min(n, 8)), zero after */
} sl_bpe_slot;

typedef struct {
    sl_bpe_slot *slots;
    size_t mask;
} sl_bpe_map;

void sl_bpe_map_init(sl_bpe_map *m, size_t n);
/* The slot of s[0..n): its entry, or the empty slot where it would go. */
sl_bpe_slot *sl_bpe_map_find(sl_bpe_map *m, const char *s, size_t n);
/* Fills slot (found empty for s[0..n)) with the entry s[0..n) -> id; s must
 * outlive the map. */
void sl_bpe_map_set(sl_bpe_slot *slot, const char *s, size_t n, uint32_t id);

/* 1 when every character of s is in the byte alphabet; the bytes in out. */
int sl_bpe_byte_level_only(const char *s, size_t n, sl_buf *out);

/* An empty model named name (regex split on, no unk). */
sl_bpe *sl_bpe_new(const char *name);
/* A vocabulary entry: its text (decoded; NUL after it only where it had
 * an escape), the offset of its key in the file, its id (below 2^31). */
typedef struct sl_bpe_vent {
    const char *key;
    size_t len, off;
    uint32_t id;
} sl_bpe_vent;
/* A merge of model.merges: its two tokens' texts. */
typedef struct sl_bpe_ment {
    const char *l, *r;
    size_t ln, rn;
} sl_bpe_ment;
/* A vocabulary object and (one-pass reader) a merges array as lists, in
 * file order (bpe_vlist.c). The texts point into the tree or the file's
 * text, or into the pools (escaped strings decoded). */
typedef struct sl_bpe_lists {
    sl_bpe_vent *v;
    size_t nv;
    sl_bpe_ment *m;
    size_t nm;
    char *vpool, *mpool;
} sl_bpe_lists;
/* The entries of a parsed vocab object, each id checked (an integer in
 * [0, 2^31)); the message names the first that is not. */
int sl_bpe_vocab_list(const sl_bpe *b, const sl_json *vocab, sl_bpe_lists *L, sl_err *err);
/* One element of a parsed model.merges: "a b" (exactly one space) or
 * ["a", "b"]; the message names it when it is neither. */
int sl_bpe_merge_of(const sl_bpe *b, const sl_json *m, sl_bpe_ment *out, sl_err *err);
/* The one-pass readers of the value at text[at, at + len) (nothing else
 * but blanks there): 1 with the vocab entries or the merges in L; 0, with
 * nothing reported, when the value is not the plain case (the whole file
 * must then be parsed, and its tree read, for the parser's messages). */
int sl_bpe_vocab_read(const char *text, size_t at, size_t len, sl_bpe_lists *L);
int sl_bpe_merges_read(const char *text, size_t at, size_t len, sl_bpe_lists *L);
void sl_bpe_lists_free(sl_bpe_lists *L);

/* Fills ids, the byte table and map (text -> id) from the vocab entries
 * v[0..n); the vocab texts are kept in txt for lookups (the map points
 * into v's texts, which must outlive it). */
int sl_bpe_load_vocab(sl_bpe *b, const sl_bpe_vent *v, size_t n, uint32_t extra_max, sl_bpe_map *map, sl_buf *txt,
                      sl_err *err);
/* Adds the merge of l and r at rank; where/pos name it in messages. */
int sl_bpe_add_merge(sl_bpe *b, sl_bpe_map *map, const char *l, size_t ln, const char *r, size_t rn, size_t rank,
                     const char *where, size_t pos, sl_err *err);
/* After the vocab and the merges: the added tokens' decode bytes and
 * tries, txt taken over, the pre-tokenizer compiled. */
int sl_bpe_finish(sl_bpe *b, sl_buf *txt, sl_err *err);

/* The start of a load from JSON text: its parse (NULL with err set; the
 * values at skip[0..n_skip), read already, stepped over as sl_json_opts
 * says) and an empty model named name in *b. */
sl_json_doc *sl_bpe_load_begin(const char *text, size_t len, const sl_json_skip *skip, size_t n_skip, const char *name,
                               sl_bpe **b, sl_err *err);
/* Frees what a load that failed made: the model, the map, the texts, the
 * parsed file. */
void sl_bpe_load_abort(sl_bpe *b, sl_bpe_map *map, sl_buf *txt, sl_json_doc *doc);

/* bpe_pretok_load.c: a tokenizer.json's pre_tokenizer value. */
int sl_bpe_load_pre_tokenizer(sl_bpe *b, const sl_json *p, sl_err *err);
/* bpe_load.c: a tokenizer.json's bytes (no fingerprint yet). */
sl_bpe *sl_bpe_load_json(const char *text, size_t len, const char *name, sl_err *err);

#endif
