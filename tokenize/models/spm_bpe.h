/* SentencePiece's BPE model (a .model file with model_type BPE): symbols
 * start as characters (user-defined pieces as one frozen symbol), and the
 * adjacent pair whose concatenation is a piece with the highest score is
 * merged first (ties: the leftmost), until no pair is a piece; unused
 * pieces are split back into what made them. Also the piece -> id lookup
 * of a .model file (SentencePiece's PieceToId). Internal (not installed). */
#ifndef SLUICE_TOKENIZE_SPM_BPE_H
#define SLUICE_TOKENIZE_SPM_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "tokenize/added.h"
#include "tokenize/models/sp_proto.h"
#include "tokenize/models/unigram.h"

typedef struct sl_spm_vocab sl_spm_vocab;

/* The pieces of m: normal ones (NORMAL, USER_DEFINED, UNUSED) and reserved
 * ones (the rest). Refuses a piece defined twice among either, naming it. */
sl_spm_vocab *sl_spm_vocab_new(const sl_spm_proto *m, const char *name, sl_err *err);
void sl_spm_vocab_free(sl_spm_vocab *v);
/* PieceToId: a reserved piece, else a normal one, else unk_id. */
int64_t sl_spm_piece_id(const sl_spm_vocab *v, const char *s, size_t n, int64_t unk_id);
/* A normal piece's id, or -1. */
int64_t sl_spm_normal_id(const sl_spm_vocab *v, const char *s, size_t n);

typedef struct sl_spm_bpe_scratch {
    void *sym, *heap, *rev;
    size_t sym_cap, heap_cap, heap_n, rev_cap;
} sl_spm_bpe_scratch;
void sl_spm_bpe_scratch_free(sl_spm_bpe_scratch *sc);

/* BPE of s[0..n) into out->pieces (sl_uni_piece: byte ranges and ids;
 * PieceToId of each final symbol, so unk_id for an unknown one). user: the
 * user-defined pieces (NULL: none). */
void sl_spm_bpe_encode(const sl_spm_proto *m, const sl_spm_vocab *v, const sl_trie *user, sl_spm_bpe_scratch *sc,
                       const char *s, size_t n, int64_t unk_id, sl_uni_scratch *out);

/* spm_decode.c: the text of ids[0..n) appended to out (byte_val: per id,
 * the byte of a BYTE piece, else -1); an id out of range is an error
 * naming `name`. */
int sl_spm_decode(const sl_spm_proto *m, const sl_spm_vocab *v, const int16_t *byte_val, const char *name,
                  const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);

#endif
