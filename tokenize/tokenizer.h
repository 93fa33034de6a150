/* One interface for every text tokenizer.
 *
 * A tokenizer is loaded from its file(s), recognised by their content, not
 * by the command that asks: a character vocabulary written by `sluice
 * tokenize char`, a Hugging Face tokenizer.json, a GPT-2 vocab.json +
 * merges.txt pair (or a directory holding either). Behind the interface
 * each family (tokenize/tok_*.c) loads, encodes and decodes in its own
 * way; callers see the same calls for all of them:
 *
 *   sl_tokenizer *t = sl_tokenizer_load("gpt-neox-20b/tokenizer.json", NULL, &err);
 *   sl_tok_state *s = sl_tok_state_new(t);         one per thread
 *   sl_tokenizer_encode(t, s, text, n, &ids, &err);
 *   sl_tokenizer_decode(t, ids.v, ids.n, &buf, &err);
 *   sl_tokenizer_header(t, &h);                    a token stream header for it
 *
 * A loaded tokenizer is read-only and shared between threads; each thread
 * encodes with its own state. Whole documents go through the document
 * pipeline (tokenize/docpipe.h, sl_tokenize_text) and back through
 * tokenize/detok.h (sl_detok_run). */
#ifndef SLUICE_TOKENIZE_TOKENIZER_H
#define SLUICE_TOKENIZE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h) ------------------------------------------------ */

typedef struct sl_tokenizer sl_tokenizer;
typedef struct sl_tok_state sl_tok_state;

/* A growable id array. A zeroed sl_ids ({0}) is empty; sl_tokenizer_encode
 * appends to it (growing v with realloc), sl_ids_free releases it. */
typedef struct sl_ids {
    uint32_t *v;
    size_t n, cap;
} sl_ids;

/* Frees a->v and zeroes a (not a itself). */
void sl_ids_free(sl_ids *a);

/* How special added tokens (special: true, e.g. <|endoftext|>) written
 * literally in the text are treated. */
typedef enum {
    SL_SPECIAL_PLAIN = 0, /* encoded as ordinary text (HF split_special_tokens=True) */
    SL_SPECIAL_PARSE = 1, /* become their id (HF default) */
    SL_SPECIAL_ERROR = 2, /* the document is an error */
} sl_special_mode;

/* How a tokenizer is loaded: start from SL_TOKENIZER_OPTS_INIT. */
typedef struct sl_tokenizer_opts {
    /* Only this family ("bpe", "char"); NULL: whichever reads the file. */
    const char *family;
    sl_special_mode special; /* literal special tokens in the text */
    int pcre2;               /* pre-tokenize with PCRE2 rather than the hand-written scanners */
    /* tiktoken rank files (tokenize/models/tiktoken.h): the pattern (a name or a
     * regex) and the special tokens "NAME=ID,..."; NULL: from the header */
    const char *pattern, *specials;
    /* the stream being decoded, whose header may record them; or NULL */
    const sl_ts_header *header;
    /* put the special ids of the tokenizer.json post_processor around each
     * text's ids, as HF's encode(text, add_special_tokens=True) */
    int add_special;
} sl_tokenizer_opts;
#define SL_TOKENIZER_OPTS_INIT                                                                                         \
    {                                                                                                                  \
        NULL, SL_SPECIAL_PLAIN, 0, NULL, NULL, NULL, 0                                                                 \
    }

/* Special ids of a tokenizer (sl_tokenizer_special). */
typedef enum { SL_TOK_EOS = 0, SL_TOK_BOS, SL_TOK_PAD, SL_TOK_UNK, SL_TOK_N_SPECIAL } sl_tok_special;

/* Loads the tokenizer at path: a Hugging Face tokenizer.json, a GPT-2
 * vocab.json + merges.txt pair, a SentencePiece .model, a tiktoken rank
 * file, a character vocabulary, or a directory holding one; the family is
 * recognised by content. o may be NULL (defaults). Returns NULL with err set
 * naming the file and what is wrong with it. The tokenizer is read-only
 * once loaded and may be shared by threads; free it with
 * sl_tokenizer_free. */
sl_tokenizer *sl_tokenizer_load(const char *path, const sl_tokenizer_opts *o, sl_err *err);
/* Frees the tokenizer (after every state made from it). NULL is a no-op. */
void sl_tokenizer_free(sl_tokenizer *t);

/* Every id is below this. */
uint32_t sl_tokenizer_vocab_size(const sl_tokenizer *t);
/* The tokenizer's own special id of that kind, or -1. */
int64_t sl_tokenizer_special(const sl_tokenizer *t, sl_tok_special which);
/* The id of a token given by its text (an added token's content, or a
 * vocabulary entry as the file writes it), or -1. */
int64_t sl_tokenizer_token_id(const sl_tokenizer *t, const char *text);
/* Initialises h (sl_ts_header_init) for a stream of this tokenizer:
 * modality, vocab size, special ids, fingerprint, name and, for families
 * that travel in the header, the vocabulary as "extra". The caller frees h
 * with sl_ts_header_free. */
void sl_tokenizer_header(const sl_tokenizer *t, sl_ts_header *h);

/* A per-thread encode state (scratch memory and caches): each thread that
 * encodes makes its own. Never fails; free it with sl_tok_state_free before
 * the tokenizer. */
sl_tok_state *sl_tok_state_new(const sl_tokenizer *t);
/* Frees the state. NULL is a no-op. */
void sl_tok_state_free(sl_tok_state *s);

/* Appends the ids of text[0..n) (UTF-8; n bytes, no NUL needed) to out, as
 * the reference implementation of the family encodes it (Hugging Face
 * tokenizers' encode(text, add_special_tokens=False) for a tokenizer.json,
 * unless add_special was set). Fails only for what the tokenizer refuses in
 * a text (a literal special token with SL_SPECIAL_ERROR): -1 with err
 * giving the byte offset. */
int sl_tokenizer_encode(const sl_tokenizer *t, sl_tok_state *s, const char *text, size_t n, sl_ids *out, sl_err *err);
/* Appends the bytes of ids[0..n) to out (the caller frees it with
 * sl_buf_free). An id without bytes (outside the vocabulary) is an error
 * naming its position. */
int sl_tokenizer_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

void sl_ids_grow(sl_ids *a);
void sl_ids_append(sl_ids *a, const uint32_t *v, size_t n);

static inline void sl_ids_push(sl_ids *a, uint32_t id)
{
    if (a->n == a->cap)
        sl_ids_grow(a);
    a->v[a->n++] = id;
}

/* The tokenizer a token stream carries in its header (a character
 * vocabulary in "extra"); NULL with err when it carries none. `name`
 * (the stream's) is used in messages. */
sl_tokenizer *sl_tokenizer_from_header(const sl_ts_header *h, const char *name, sl_err *err);
/* 1 when the header carries a tokenizer (sl_tokenizer_from_header). */
int sl_tokenizer_in_header(const sl_ts_header *h);

/* The family: "bpe", "char". */
const char *sl_tokenizer_family(const sl_tokenizer *t);
/* The name recorded in a token stream header: "bpe:tokenizer.json", "char:byte". */
const char *sl_tokenizer_name(const sl_tokenizer *t);
/* "sha256:<hex>" of the tokenizer's definition (the file bytes of a
 * tokenizer.json, vocab.json followed by merges.txt, or a character
 * vocabulary's JSON form). */
const char *sl_tokenizer_fingerprint(const sl_tokenizer *t);

/* The first special token (one that SL_SPECIAL_PARSE would turn into its
 * id, e.g. <|endoftext|>) written as text in text[0..n): its text, with *at
 * its byte offset (leftmost, longest there); NULL when there is none, and
 * for families whose encoding never parses them (SentencePiece .model,
 * character vocabularies). A literal match of the token's text, whatever the
 * token's single_word/lstrip/rstrip/normalized flags. */
const char *sl_tokenizer_find_special(const sl_tokenizer *t, const char *text, size_t n, size_t *at);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
