/* Sequence-length warmup schedules: parsing the --warmup SPEC and resolving
 * each stage's batch, steps and start token. Grammar and semantics:
 * docs/shards.md section 3. */
#ifndef SLUICE_SHARD_WARMUP_H
#define SLUICE_SHARD_WARMUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_AMOUNT_EPOCHS = 0, SL_AMOUNT_STEPS = 1, SL_AMOUNT_TOKENS = 2, SL_AMOUNT_OPEN = 3 };

typedef struct sl_stage {
    uint32_t seq_len;
    uint64_t batch;           /* rows per step */
    uint64_t tokens_per_step; /* batch * seq_len */
    int amount_kind;          /* SL_AMOUNT_* as given */
    double amount;            /* epochs, steps or tokens as given */
    int64_t steps;            /* resolved; -1 = open-ended (last stage of linear/root) */
    uint64_t start_token;     /* resolved: tokens consumed by earlier stages */
} sl_stage;

typedef struct sl_warmup {
    uint32_t max_len;
    size_t n;
    sl_stage *stages;
} sl_warmup;

/* Parses SPEC; lengths and batches are final, steps are resolved later.
 * The message names the SPEC position on error. */
int sl_warmup_parse(const char *spec, sl_warmup *w, sl_err *err);
/* The schedule of a shard without --warmup: one stage of seq_len x batch, one epoch. */
void sl_warmup_single(sl_warmup *w, uint32_t seq_len, uint64_t batch);
/* Resolves steps (epochs and tokens need the split's token count D) and start tokens. */
int sl_warmup_resolve(sl_warmup *w, uint64_t data_tokens, sl_err *err);
void sl_warmup_free(sl_warmup *w);

#ifdef __cplusplus
}
#endif

#endif
