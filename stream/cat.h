/* Token stream -> JSON Lines: the stage behind `sluice cat` (for token
 * streams; shard/cat.h prints shard directories). Each document becomes
 *   {"id":..., "ids":[...], "src_bytes":N, "text":..., <metadata fields>}
 * ("src_bytes" only when known, "text" only with a decoder); or the header
 * alone as one object. */
#ifndef SLUICE_STREAM_CAT_H
#define SLUICE_STREAM_CAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "stream/tokstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends the text of ids[0..n) to out (e.g. sl_tokenizer_decode). */
typedef int (*sl_cat_decode_fn)(void *ctx, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err);

typedef struct sl_cat_opts {
    int no_ids;      /* leave out the "ids" array */
    int header_only; /* print the stream header as one object and stop */
    /* when set, a "text" field decoded by decode(decode_ctx, ...) */
    sl_cat_decode_fn decode;
    void *decode_ctx;
    /* a progress line (stream/progress.h) named `progress` in mode
     * progress_mode (0 = none) */
    const char *progress;
    int progress_mode;
} sl_cat_opts;
#define SL_CAT_OPTS_INIT                                                                                               \
    {                                                                                                                  \
        0, 0, NULL, NULL, NULL, 0                                                                                      \
    }

/* Prints the documents of inputs[0..n) (read as one stream; n = 0: standard
 * input) to output (NULL or "-": standard output). Returns 0, or -1 with err
 * naming the input and document (a truncated or corrupt stream, metadata
 * that is not a JSON object, a failed decode); the output is then discarded
 * (a file is not written; standard output keeps what was printed). */
int sl_cat_run(const sl_cat_opts *o, const char *const *inputs, size_t n, const char *output, sl_err *err);

/* Appends the header object line (with its newline) of h read from `name`:
 * {"file":...,"version":...,"modality":...,"vocab_size":...,"token_bytes":...,
 *  "eos":...,"bos":...,"pad":...,"unk":...,"fingerprint":...,"tokenizer":...,"extra":...} */
void sl_cat_put_header(sl_buf *b, const sl_ts_header *h, const char *name);

#ifdef __cplusplus
}
#endif

#endif
