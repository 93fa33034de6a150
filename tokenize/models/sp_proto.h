/* SentencePiece model files (`.model`): the protobuf ModelProto read by a
 * small hand-written protobuf reader (no protobuf library). Only the fields
 * encoding and decoding need are kept: the pieces (string, score, type), the
 * trainer spec's model type, byte_fallback, special ids and pieces and
 * unk_surface, and the normalizer spec (precompiled charsmap and the three
 * whitespace flags). Other fields are skipped by their wire type. Internal
 * (not installed). */
#ifndef SLUICE_TOKENIZE_SP_PROTO_H
#define SLUICE_TOKENIZE_SP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* ModelProto.SentencePiece.Type */
enum { SL_SPM_NORMAL = 1, SL_SPM_UNKNOWN, SL_SPM_CONTROL, SL_SPM_USER_DEFINED, SL_SPM_UNUSED, SL_SPM_BYTE };
/* TrainerSpec.ModelType */
enum { SL_SPM_UNIGRAM = 1, SL_SPM_BPE, SL_SPM_WORD, SL_SPM_CHAR };

/* A piece of the normal kind (normal, user-defined, unused), as opposed to
 * the reserved ones (control, unknown, byte): sentencepiece keeps the two
 * kinds' strings apart, and a string may be defined once in each. */
static inline int sl_spm_normal_kind(int type)
{
    return type == SL_SPM_NORMAL || type == SL_SPM_USER_DEFINED || type == SL_SPM_UNUSED;
}

typedef struct sl_spm_piece {
    char *s; /* NUL-terminated copy (in the model's piece_bytes) */
    uint32_t len;
    float score;
    int type;
} sl_spm_piece;

typedef struct sl_spm_normspec {
    char *name;        /* NULL when absent */
    uint8_t *charsmap; /* precompiled_charsmap, NULL when absent or empty */
    size_t charsmap_len;
    size_t charsmap_off; /* its byte offset in the file (messages) */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
    int present;
} sl_spm_normspec;

typedef struct sl_spm_proto {
    sl_spm_piece *pieces;
    size_t n_pieces;
    char *piece_bytes; /* the pieces' strings, each NUL-terminated */
    size_t piece_bytes_len;
    int model_type, byte_fallback, treat_whitespace_as_suffix;
    int32_t unk_id, bos_id, eos_id, pad_id;
    char *unk_surface; /* NULL: the default " \xE2\x81\x87 " */
    sl_spm_normspec norm, denorm;
} sl_spm_proto;

/* Parses a ModelProto from p[0..n). Errors name `name` and the byte offset
 * of the problem: a truncated varint or field, a length past the end of its
 * message, a wire type that does not fit the field. */
int sl_spm_proto_parse(const uint8_t *p, size_t n, const char *name, sl_spm_proto *out, sl_err *err);
void sl_spm_proto_free(sl_spm_proto *m);
/* 0: each piece read by the field loop alone, without the fast way for the
 * usual layout (for tests, which compare the two; default 1). */
extern int sl_spm_proto_fast;
/* 1 when two parsed models hold the same values (pieces byte for byte,
 * scores bit for bit), else 0 (for tests). */
int sl_spm_proto_same(const sl_spm_proto *a, const sl_spm_proto *b);

#endif
