/* The rule-filter stage (`sluice filter --rules`): documents from a
 * document reader (stream/docreader.h) through the rules of text/rules.h,
 * on the ordered-parallel engine of stream/batch.h (threads from OpenMP;
 * the output does not depend on their number). Kept documents are written
 * as `sluice read` writes them (with c4's rewritten text); with annotate
 * every document is written with the rules' signals added to its fields. */
#ifndef SLUICE_TEXT_RULES_STAGE_H
#define SLUICE_TEXT_RULES_STAGE_H

#include <stdint.h>

#include "stream/docreader.h"
#include "stream/io.h"
#include "text/rules.h"

typedef struct sl_rules_stage_opts {
    int annotate;      /* drop nothing; write every rule's signals */
    const char *field; /* the reader's text field: with another than "text", an input "text" field is dropped */
    int progress;      /* sl_progress mode */
    int threads;       /* 0 = omp_get_max_threads() */
} sl_rules_stage_opts;

typedef struct sl_rules_reason {
    char name[48];
    uint64_t n;
} sl_rules_reason;

typedef struct sl_rules_stats {
    uint64_t docs, kept, dropped, rewritten;
    /* per rule: documents it dropped, by reason */
    uint64_t *rule_dropped;
    sl_rules_reason **reasons;
    size_t *n_reasons;
    size_t n_rules;
} sl_rules_stats;
void sl_rules_stats_free(sl_rules_stats *s);

/* Runs the stage until the reader ends. rejected (may be NULL) gets one
 * JSON line per dropped document: {"id":...,"rule":...,"reason":...}.
 * Neither output is committed here. */
int sl_rules_run(const sl_rules *r, sl_docreader *rd, const sl_rules_stage_opts *o, sl_output *out, sl_output *rejected,
                 sl_rules_stats *st, sl_err *err);

/* The counts as JSON: documents, kept, dropped, and per rule its
 * parameters, the documents it dropped and why. */
void sl_rules_stats_json(const sl_rules *r, const sl_rules_stats *st, int annotate, sl_buf *b);
/* One line of text (the CLI prints it on stderr). */
void sl_rules_stats_text(const sl_rules *r, const sl_rules_stats *st, int annotate, sl_buf *b);

#endif
