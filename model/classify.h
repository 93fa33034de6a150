/* The `classify` stage: documents in, the same documents out as JSON Lines
 * with a fastText model's top labels and probabilities in their metadata.
 *
 * Each document's text is prepared as datatrove prepares it before it
 * calls fastText's predict (SL_CLASSIFY_PREP_LANGID: every "\n" becomes a
 * space, as its LanguageFilter / FastTextLID does; SL_CLASSIFY_PREP_CLASSIFIER:
 * Python's str.strip() then every "\n" removed, as its
 * FastTextClassifierFilter does with its default newline_replacement ""),
 * then classified by model/fasttext.h. The output line is
 * {"id":...,"text":...,<the other fields>,P:LABEL,P_score:PROB} with P the
 * field prefix and LABEL the best label without fastText's "__label__"
 * prefix (null, with a null score, when the model gives none); with k other
 * than 1 also P_labels and P_scores, the arrays of every returned label and
 * probability, best first. Fields of those names already in the document
 * are replaced.
 *
 * Documents are classified in parallel batches (stream/batch.h) and written
 * in input order, so the output does not depend on the thread count. */
#ifndef SLUICE_MODEL_CLASSIFY_H
#define SLUICE_MODEL_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "model/fasttext.h"
#include "stream/docreader.h"
#include "base/err.h"
#include "stream/io.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SL_CLASSIFY_PREP_LANGID = 0, SL_CLASSIFY_PREP_CLASSIFIER = 1 };

typedef struct sl_classify_opts {
    const char *field_prefix; /* default "lang" */
    int k;                    /* labels per document (default 1); -1 = all */
    float threshold;          /* keep labels with a probability >= this (default 0) */
    int prepare;              /* SL_CLASSIFY_PREP_* */
    int threads;              /* 0 = all */
    size_t batch_bytes;       /* text per batch (default 8 MiB, capped per thread as the readers') */
    int progress;             /* sl_progress mode */
} sl_classify_opts;

#define SL_CLASSIFY_OPTS_INIT                                                                                          \
    {                                                                                                                  \
        .field_prefix = "lang", .k = 1                                                                                 \
    }

/* Prepares text[0..len) for the model into out (replacing its contents). */
void sl_classify_prepare(int prepare, const char *text, size_t len, sl_buf *out);

/* Classifies every document of r and writes the lines to out (not
 * committed: the caller commits or aborts it). Counts go to *docs. */
int sl_classify_run(const sl_ft_model *m, sl_docreader *r, const sl_classify_opts *o, sl_output *out, uint64_t *docs,
                    sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
