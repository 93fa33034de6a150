/* `sluice head`: the first documents or tokens of a token stream, as a token
 * stream with the same header (docs/formats.md), like head(1). */
#ifndef SLUICE_STREAM_HEAD_H
#define SLUICE_STREAM_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "stream/io.h"

typedef struct sl_head_opts {
    /* at most this many documents (records; rows of a packed stream);
     * UINT64_MAX: no limit */
    uint64_t docs;
    /* at most this many tokens, the last document cut to fit (its id and
     * metadata kept); UINT64_MAX: no limit. Not for a packed stream, whose
     * rows cannot be cut. */
    uint64_t tokens;
} sl_head_opts;

typedef struct sl_head_stats {
    uint64_t docs, tokens;
    int cut; /* the last document was cut to fit `tokens` */
} sl_head_stats;

/* Copies the head of inputs[0..n) (read as one stream; n = 0: standard input)
 * to out, which it finishes (trailer written) but does not commit. Reading
 * stops as soon as the head is complete: the rest of the input is not read
 * (nor verified). */
int sl_head_run(const sl_head_opts *o, const char *const *inputs, size_t n, sl_output *out, sl_head_stats *st,
                sl_err *err);

#endif
