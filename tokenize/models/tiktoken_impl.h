/* What the tiktoken family's files share (tok_tiktoken.c, tok_tekken.c,
 * tiktoken_build.c). Internal. */
#ifndef SLUICE_TOKENIZE_TIKTOKEN_IMPL_H
#define SLUICE_TOKENIZE_TIKTOKEN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "tokenize/models/bpe_internal.h"

typedef struct special {
    char *name;
    size_t len;
    uint32_t id;
} special;

typedef struct tiktoken {
    sl_bpe *b;
    uint32_t offset; /* id of rank 0 (tekken: its number of special tokens) */
    uint32_t n_ranks;
    special *sp;
    size_t n_sp;
} tiktoken;

/* tiktoken_build.c */
void sl_tt_free_specials(special *sp, size_t n);
void sl_tt_alloc_ids(sl_bpe *b, uint32_t n_ids);
void sl_tt_set_bytes(sl_bpe *b, uint32_t id, const char *s, size_t n);
int64_t sl_tt_add_token(sl_bpe *b, uint32_t id, const char *s, size_t n);
void sl_tt_set_merges(sl_bpe *b, uint32_t first, uint32_t n_ranks);
size_t sl_tt_line_of(const char *text, size_t off);
/* the value of a base64 character, or -1 */
int sl_tt_b64_val(unsigned char c);
int sl_tt_b64_decode(const char *s, size_t n, sl_buf *out);
int sl_tt_load_ranks(sl_bpe *b, const char *text, size_t len, const char *name, uint32_t *n_ranks, sl_err *err);
int sl_tt_parse_specials(const char *spec, const char *name, special **out, size_t *n, sl_err *err);
int sl_tt_add_specials(tiktoken *t, const char *name, sl_err *err);
/* tok_tekken.c */
int sl_tt_load_tekken(tiktoken *t, const char *text, size_t len, const char *name, const char **pattern,
                      sl_json_doc **doc, sl_err *err);

#endif
