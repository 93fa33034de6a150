/* The Megatron stages: a document token stream to a Megatron-LM / GPT-NeoX
 * indexed dataset (`sluice export megatron`) and back (`sluice import
 * megatron`), with the PREFIX.documents.jsonl sidecar that keeps document
 * ids and metadata (megatron.h, docs/shards.md section 5). Messages name
 * the option fields in backquotes (`eos`, `vocab_size`, ...). */
#ifndef SLUICE_SHARD_MEGATRON_STAGE_H
#define SLUICE_SHARD_MEGATRON_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "shard/meta.h"
#include "stream/tokstream.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_export_megatron_opts {
    /* the end-of-document token appended to every document (and counted, as
     * preprocess_data.py --append-eod): -1 = the stream's eos, which must
     * exist unless no_eos */
    int64_t eos;
    int no_eos;              /* append nothing */
    int no_documents;        /* write no PREFIX.documents.jsonl (an old one is removed) */
    const sl_meta_sel *keep; /* metadata fields the sidecar keeps; NULL: all */
    /* a progress line (stream/progress.h) named `progress` in mode
     * progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
    /* SL_EOS_APPEND: to every document; SL_EOS_KEEP: to none (documents
     * already end in it); -1: where a document does not end in eos already
     * when the header records that documents end in it (doc_eos), else to
     * every document. A document that is only the recorded eos is empty (it
     * came from empty text): dropped, as Megatron drops empty documents. */
    int eos_mode;
} sl_export_megatron_opts;
#define SL_EXPORT_MEGATRON_OPTS_INIT                                                                                   \
    {                                                                                                                  \
        -1, 0, 0, NULL, NULL, 0, -1                                                                                    \
    }

/* Writes the documents of inputs[0..n) (read as one stream; n = 0: standard
 * input) to PREFIX.bin, PREFIX.idx and (unless no_documents)
 * PREFIX.documents.jsonl: one sequence per non-empty document, dtype from
 * the vocab size (sl_mega_dtype_for_vocab). A packed stream is refused.
 * Returns 0, or -1 with err naming the input and document; nothing is left
 * at PREFIX on failure. */
int sl_export_megatron_run(const sl_export_megatron_opts *o, const char *const *inputs, size_t n, const char *prefix,
                           sl_err *err);

typedef struct sl_import_megatron_opts {
    /* recorded as the stream's eos and removed from the end of each document
     * that ends with it (the EOD of --append-eod); -1: none */
    int64_t eos;
    int64_t vocab_size; /* -1: the largest id + 1 (at least eos + 1) */
    int modality;       /* SL_MOD_* of the output header (default SL_MOD_IDS) */
    int no_documents;   /* ignore PREFIX.documents.jsonl */
    const char *progress;
    int progress_mode;
} sl_import_megatron_opts;
#define SL_IMPORT_MEGATRON_OPTS_INIT                                                                                   \
    {                                                                                                                  \
        -1, -1, SL_MOD_IDS, 0, NULL, 0                                                                                 \
    }

/* Reads the dataset PREFIX (.idx checked, .bin, and the sidecar when it
 * exists) and writes one token-stream document per Megatron document to
 * output (NULL or "-": standard output). Ids and metadata come from the
 * sidecar, else the ids are the document numbers. Returns 0, or -1 with
 * err set; nothing is left at output on failure. */
int sl_import_megatron_run(const sl_import_megatron_opts *o, const char *prefix, const char *output, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
