/* What a tokenizer family implements behind tokenize/tokenizer.h (not a
 * public interface).
 *
 * A family is one file, tokenize/models/tok_<family>.c, defining an
 * sl_tok_family: how to recognise its files (probe), how to load them, and
 * the operations of a loaded tokenizer. tokenizer.c lists the families in
 * the order they are probed; adding one (SentencePiece .model, tiktoken
 * rank files, another tokenizer.json pipeline) is adding its file and a
 * line there, and the CLI and the stages pick it up. */
#ifndef SLUICE_TOKENIZE_TOKENIZER_IMPL_H
#define SLUICE_TOKENIZE_TOKENIZER_IMPL_H

#include "tokenize/tokenizer.h"
#include "tokenize/trie.h"

typedef struct sl_tok_ops {
    void (*free)(void *impl);
    /* per-thread state; NULL when the family needs none */
    void *(*state_new)(const void *impl);
    void (*state_free)(void *state);
    int (*encode)(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err);
    int (*decode)(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);
    int64_t (*token_id)(const sl_tokenizer *t, const char *text);
} sl_tok_ops;

/* Where a value lies in a JSON text (json_skim.h): len 0 when absent. */
typedef struct sl_skim_span {
    size_t at, len;
} sl_skim_span;

/* What the probes of the tokenizer.json families look at, found by one skim
 * of the file (sl_tokjson_skim): the top-level model, pre_tokenizer and
 * decoder values, and model.type. */
typedef struct sl_tokjson_spans {
    sl_skim_span model, pre_tokenizer, decoder, type;
} sl_tokjson_spans;

/* The file a tokenizer is loaded from, as the probes and the load see it
 * (made by tokenizer.c): its path, whether it is a directory, its first
 * bytes; and the tokenizer.json it names (the path, or path/tokenizer.json
 * for a directory), read and skimmed at most once for all the probes and
 * the load (json_skim.h: sl_tok_src_json, sl_tokjson_probe_model,
 * sl_tokjson_load). */
typedef struct sl_tok_src {
    const char *path;
    int is_dir;
    unsigned char head[64]; /* nothing for a directory */
    size_t head_len;
    char *json_path, *json; /* NULL until read */
    size_t json_len;
    int json_state; /* 0: not read yet, 1: read, -1: unreadable (json_err says why) */
    sl_err json_err;
    int skim_state; /* 0: not skimmed yet, 1: skim holds the spans, -1: the skim could not tell */
    sl_tokjson_spans skim;
} sl_tok_src;

typedef struct sl_tok_family {
    const char *name; /* "bpe", "char" */
    /* 1 when the file is this family's. Probed in list order; the last
     * family takes whatever no other claimed and reports what is wrong
     * with it. */
    int (*probe)(sl_tok_src *src);
    sl_tokenizer *(*load)(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err);
    /* 1 when a stream header carries this family's tokenizer, which
     * from_header then loads; NULL hooks: never in a header */
    int (*in_header)(const sl_ts_header *h);
    sl_tokenizer *(*from_header)(const sl_ts_header *h, const char *name, sl_err *err);
} sl_tok_family;

/* A loaded tokenizer: what every family fills (through sl_tokenizer_new). */
struct sl_tokenizer {
    const sl_tok_family *family;
    const sl_tok_ops *ops;
    void *impl;
    uint32_t vocab_size;
    int64_t special[SL_TOK_N_SPECIAL]; /* -1 = none */
    int modality;                      /* sl_modality */
    sl_special_mode special_mode;
    char name[256];
    char fingerprint[72];
    char *extra; /* header "extra" JSON, or NULL */
    /* ids put around each text's ids (the file's post-processor, with
     * sl_tokenizer_opts.add_special; postproc.h), set by the family's load */
    uint32_t *add_pre, *add_post;
    size_t n_add_pre, n_add_post;
    /* 1 when the family's load read the post-processor (add_pre/add_post
     * set with add_special); 0: the file has none (tokenizer.c refuses
     * add_special) */
    int post_known;
    /* the special added tokens' texts (what --special parse turns into ids),
     * for sl_tokenizer_find_special; set by sl_tokenizer_set_specials */
    sl_trie spec_trie;
    char **spec_text;
    size_t n_spec;
    char spec_pre[8];   /* the text all of them start with (its first 8 bytes at most) */
    size_t spec_prefix; /* its length (0: none) */
    char spec_first[4]; /* the bytes they start with, when there are at most 4 */
    int spec_nfirst;    /* how many (0: more than 4) */
};

/* A tokenizer with no special ids, modality text, owning impl. */
sl_tokenizer *sl_tokenizer_new(const sl_tok_family *f, const sl_tok_ops *ops, void *impl);
/* The families whose added tokens --special applies to give them here (the
 * ones with `special` set are kept, copied) for sl_tokenizer_find_special. */
struct sl_added;
void sl_tokenizer_set_specials(sl_tokenizer *t, const struct sl_added *a, size_t n);

extern const sl_tok_family sl_tok_family_char, sl_tok_family_bpe;
/* SentencePiece-style BPE in a tokenizer.json (tok_spbpe.c): Llama-2, Mistral */
extern const sl_tok_family sl_tok_family_spbpe;
/* That family's loader on the bytes of a tokenizer.json (tests, fuzzing). */
sl_tokenizer *sl_tok_spbpe_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                    sl_err *err);
/* tiktoken rank files and Mistral's tekken JSON (tok_tiktoken.c) */
extern const sl_tok_family sl_tok_family_tiktoken;
/* SentencePiece .model files (tok_spm.c): BPE and Unigram */
extern const sl_tok_family sl_tok_family_spm;
/* Unigram tokenizer.json files (tok_unigram.c): T5 / mT5 / ALBERT style */
extern const sl_tok_family sl_tok_family_unigram;
/* That family's loader on the bytes of a tokenizer.json (tests, fuzzing). */
sl_tokenizer *sl_tok_unigram_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                      sl_err *err);
/* WordPiece / WordLevel tokenizer.json files (tok_wordpiece.c): BERT-style */
extern const sl_tok_family sl_tok_family_wordpiece;
/* That family's loader on the bytes of a tokenizer.json (tests, fuzzing). */
sl_tokenizer *sl_tok_wordpiece_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                        sl_err *err);

#endif
