/* Post-processors of tokenizer.json pipelines, as HF applies them to one
 * sequence with encode(text, add_special_tokens=True): TemplateProcessing
 * (its "single" template), BertProcessing ([CLS] A [SEP]),
 * RobertaProcessing (<s> A </s>), ByteLevel (no change to ids) and
 * Sequence of them. For one sequence each of them puts fixed ids before
 * and after the text's ids, so a post-processor is those two lists.
 * Independent of any model. Internal. */
#ifndef SLUICE_TOKENIZE_POSTPROC_H
#define SLUICE_TOKENIZE_POSTPROC_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/json.h"

typedef struct sl_postproc {
    uint32_t *pre, *post;
    size_t n_pre, n_post;
} sl_postproc;

/* Reads a "post_processor" value (null: nothing added). Ids must be below
 * vocab_size. Anything else is refused naming it; `name` starts messages. */
int sl_postproc_load(sl_postproc *pp, const sl_json *v, uint32_t vocab_size, const char *name, sl_err *err);
void sl_postproc_free(sl_postproc *pp);

#endif
