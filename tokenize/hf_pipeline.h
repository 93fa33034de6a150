/* The tokenizer.json pipeline (as Hugging Face's TokenizerImpl), shared by
 * every tokenizer.json model: one parse of the file owns the truncation and
 * padding checks, the added tokens, the normalizer (normalize.h), the
 * pre-tokenizer (pretokenizer.h, or the Metaspace fast path here), the
 * post-processor (postproc.h, kept for --add-special-tokens) and the decoder
 * (decoders.h); the model is an adapter behind sl_hf_model.
 *
 * Encoding (HF's encode(text, add_special_tokens=False)):
 *   1. added tokens that are not normalized are split out of the raw text
 *      (added.h; special ones per sl_special_mode);
 *   2. each remaining stretch goes through the normalizer;
 *   3. normalized added tokens are split out of it;
 *   4. the pre-tokenizer cuts each remaining stretch into pieces;
 *   5. the model turns each piece into ids (sl_hf_model.encode).
 * Decoding is the decoder chain on each id's string in the one vocabulary
 * (vocab.h), where an added token's string (normalized when it is
 * normalized, as HF 0.23) replaces the model's.
 *
 * Adding a model: a file in models/ beside the others that
 * defines an sl_hf_model, and a family entry in tokenizer.c. Internal. */
#ifndef SLUICE_TOKENIZE_HF_PIPELINE_H
#define SLUICE_TOKENIZE_HF_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/json.h"
#include "tokenize/tokenizer_impl.h"
#include "tokenize/vocab.h"

/* What encode does with a byte of invalid UTF-8 (callers normally repair
 * it first): the families differ, as the files they follow do. */
enum {
    SL_HF_BAD_PIECE = 0, /* the byte is a piece of its own, given to the model */
    SL_HF_BAD_FFFD,      /* the byte is U+FFFD, through the whole pipeline */
    SL_HF_BAD_SKIP,      /* the byte is dropped */
};

/* What the model's load sees of the file. */
typedef struct sl_hf_src {
    const char *name; /* the file, for messages */
    const char *text; /* the whole tokenizer.json */
    size_t len;
    void *pre; /* what the adapter's read_ahead made (the parse stepped over those values), or NULL */
} sl_hf_src;

/* A model adapter (HF's Model trait). */
typedef struct sl_hf_model {
    /* the tokenizer's name is "<prefix>:<file name>" */
    const char *name_prefix;
    /* EOS, BOS and PAD: the id of the first of these token texts found */
    const char *specials[3][2];
    /* 1: none or one Metaspace pre-tokenizer runs on the pipeline's fast
     * path (no pretokenizer.h pieces) */
    int metaspace_fast;
    int bad_utf8;    /* SL_HF_BAD_* */
    size_t max_text; /* the longest text the model takes (0: any) */
    /* added token ids may reach mult * (ids + added tokens) + slack */
    uint32_t added_mult, added_slack;

    /* Optional: the values of the model object's keys ahead[0..n_ahead)
     * (at most 4; spans {0, 0} where absent) read from the text before the
     * parse, into what it returns (handed to load as src->pre, then freed
     * by free_ahead); NULL to parse them (the tree then has them). Where
     * it reads them, the parse steps over those values (a large
     * vocabulary's tree is most of a load's time and memory). */
    const char *const *ahead;
    size_t n_ahead;
    void *(*read_ahead)(const char *text, size_t len, const sl_skim_span *spans);
    void (*free_ahead)(void *pre);
    /* Reads the "model" object; NULL with err set on error. */
    void *(*load)(const sl_json *model, const sl_hf_src *src, sl_err *err);
    void (*free)(void *model);
    /* its vocabulary: the pipeline adds the added tokens' strings */
    sl_vocab *(*vocab)(void *model);
    int64_t (*unk_id)(const void *model);
    /* per-thread state (NULL hooks: none) */
    void *(*state_new)(const void *model);
    void (*state_free)(void *state);
    /* Appends the ids of one pre-tokenized piece p[0..n). */
    int (*encode)(const void *model, void *state, const char *p, size_t n, sl_ids *out, sl_err *err);
} sl_hf_model;

/* 0: never read_ahead (tests: both ways give the same tokenizer); and
 * the loads that read ahead so far. */
extern int sl_hf_read_ahead;
extern size_t sl_hf_read_ahead_loads;

/* Loads a tokenizer.json's bytes with model adapter `m` as family `fam`. */
sl_tokenizer *sl_hf_load_mem(const sl_hf_model *m, const sl_tok_family *fam, const char *text, size_t len,
                             const char *name, const sl_tokenizer_opts *o, sl_err *err);

/* Helpers for the adapters' loads. 1 when v is absent or null. */
int sl_hf_is_null(const sl_json *v);
/* v's "type" string, or "?". */
const char *sl_hf_type_of(const sl_json *v);

#endif
