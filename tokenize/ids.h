/* Pre-tokenized JSON Lines -> token stream: the stage behind `sluice
 * tokenize ids`. Each non-blank line is a JSON object with an array of token
 * ids (field `field`, default "ids"); it becomes one document with the
 * object's "id" (a string or number; else "<source>:<line>"), its
 * "src_bytes" when it is a non-negative integer, and every other field as
 * metadata. */
#ifndef SLUICE_TOKENIZE_IDS_H
#define SLUICE_TOKENIZE_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "stream/partition.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_ids_opts {
    uint32_t vocab_size;   /* required: every id must be below it (it sets the token width) */
    const char *field;     /* the array field; NULL: "ids" */
    int64_t eos, bos, pad; /* special ids recorded in the header; SL_TS_NO_ID: none */
    int modality;          /* SL_MOD_* of the header (default SL_MOD_IDS) */
    const char *tokenizer; /* name recorded in the header; NULL: none */
    const char *fingerprint;
    size_t max_doc_bytes; /* longest accepted line (default 64 MiB) */
    /* a progress line (stream/progress.h) named `progress` in mode
     * progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
    /* --part: read these pieces (whole files and line ranges, stream/partition.h)
     * instead of the inputs; NULL: the inputs */
    const sl_slice *slices;
    size_t n_slices;
    /* every document's ids already end in eos: checked, and recorded in the
     * header (doc_eos) so that pack, shard and export append no second one */
    int ends_with_eos;
} sl_ids_opts;
#define SL_IDS_OPTS_INIT                                                                                               \
    {                                                                                                                  \
        0, NULL, SL_TS_NO_ID, SL_TS_NO_ID, SL_TS_NO_ID, SL_MOD_IDS, NULL, NULL, (size_t)64 << 20, NULL, 0, NULL, 0, 0  \
    }

/* Checks the options: vocab_size given, the special ids below it (messages
 * name `vocab_size`). */
int sl_ids_opts_check(const sl_ids_opts *o, sl_err *err);

/* Reads inputs[0..n) in order (n = 0: standard input) and writes one token
 * stream to output (NULL or "-": standard output). Returns 0, or -1 with
 * err naming the input and line; nothing is left at output on failure. */
int sl_ids_run(const sl_ids_opts *o, const char *const *inputs, size_t n, const char *output, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
