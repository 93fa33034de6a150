/* Stage views (docs/shards.md section 3): a stored row of Lmax tokens seen
 * at a stage length l. The split's rows form one token sequence; view row v
 * holds its tokens [v*l, (v+1)*l), so a stored piece is cut wherever it
 * crosses a multiple of l. */
#ifndef SLUICE_SHARD_VIEW_H
#define SLUICE_SHARD_VIEW_H

#include "shard/pack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives one view piece: its view row, and p with offset/doc_offset/length
 * of the view piece; tok points at its tokens. */
typedef int (*sl_view_fn)(void *ctx, uint64_t view_row, const sl_piece *p, const uint32_t *tok, sl_err *err);

/* Cuts the pieces of `row` (stored at length L) at multiples of l. */
int sl_view_row(const sl_row *row, uint32_t L, uint32_t l, sl_view_fn fn, void *ctx, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
