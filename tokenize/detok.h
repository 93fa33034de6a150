/* Token stream -> text documents: the stage behind `sluice detokenize
 * text`. Each document becomes one JSON object per line,
 * {"id":...,"text":...,<metadata fields>} (the form `sluice read` writes),
 * with the text decoded by a tokenizer of tokenizer.h. Byte sequences that
 * are not valid UTF-8 (ids that end inside a character) are written as
 * U+FFFD and counted. */
#ifndef SLUICE_TOKENIZE_DETOK_H
#define SLUICE_TOKENIZE_DETOK_H

#include <stdint.h>

#include "base/err.h"
#include "tokenize/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_detok_opts {
    /* the tokenizer's path (sl_tokenizer_load); NULL: the one the stream's
     * header carries (sl_tokenizer_from_header) */
    const char *tokenizer;
    /* a tiktoken rank file's pattern and special tokens "NAME=ID,..." (as
     * `tokenize text` takes them); NULL: those the stream's header records */
    const char *pattern, *specials;
    int skip_special; /* leave out the header's eos/bos/pad ids */
    int force;        /* decode even when the fingerprints differ */
    /* a progress line (stream/progress.h) named `progress` in mode
     * progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
} sl_detok_opts;
#define SL_DETOK_OPTS_INIT                                                                                             \
    {                                                                                                                  \
        NULL, NULL, NULL, 0, 0, NULL, 0                                                                                \
    }

typedef struct sl_detok_stats {
    uint64_t docs;
    uint64_t repaired; /* invalid UTF-8 sequences written as U+FFFD */
} sl_detok_stats;

/* Failures of sl_detok_run that a caller may explain further. */
enum {
    SL_DETOK_FAIL = -1,         /* anything else: err says what */
    SL_DETOK_MISMATCH = -2,     /* the tokenizer's fingerprint is not the stream's (see `force`) */
    SL_DETOK_NO_TOKENIZER = -3, /* no tokenizer given and none in the stream's header */
};

/* Decodes the token stream at input (NULL or "-": standard input) into
 * output (NULL or "-": standard output). Returns 0, or one of the codes
 * above with err naming the stream and the document; nothing is left at
 * output on failure. stats may be NULL. */
int sl_detok_run(const sl_detok_opts *o, const char *input, const char *output, sl_detok_stats *stats, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
