/* The heuristic quality filters of datatrove 0.10.1, exactly as datatrove
 * runs them, quirks included (docs/filter.md):
 *
 *   gopher-quality     GopherQualityFilter (Rae et al. 2021)
 *   gopher-repetition  GopherRepetitionFilter (Rae et al. 2021, table A1)
 *   c4                 C4QualityFilter (Raffel et al. 2020), which rewrites
 *                      the text it keeps (the lines it keeps, joined)
 *   fineweb            FineWebQualityFilter (Penedo et al. 2024)
 *
 * Texts are Python strings to datatrove: lengths count code points, and
 * str.isspace/isalpha/splitlines/lower and re's \d are Python 3.11's
 * (text/rules_tables.h, text/textnorm_tables.h). Words are datatrove's
 * English words (text/wordtok.h), sentences its spaCy sentencizer
 * (text/sentsplit.h). A rule list is configured once and shared read-only
 * by threads; each thread has its own sl_rules_work. */
#ifndef SLUICE_TEXT_RULES_H
#define SLUICE_TEXT_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum { SL_RULE_GOPHER_QUALITY, SL_RULE_GOPHER_REPETITION, SL_RULE_C4, SL_RULE_FINEWEB, SL_RULE_KINDS };

typedef struct sl_rules sl_rules;
typedef struct sl_rules_work sl_rules_work;

sl_rules *sl_rules_new(void);
void sl_rules_free(sl_rules *r);
/* Adds the rules of a comma-separated list ("gopher-quality,c4"), in order;
 * a rule already there stays where it is. */
int sl_rules_add(sl_rules *r, const char *list, sl_err *err);
/* "NAME:KEY=VALUE,KEY=VALUE...": sets parameters of rule NAME (added at
 * the end when it is not there yet). Values are numbers, true/false, or
 * none (= datatrove's None: the check is off). */
int sl_rules_set(sl_rules *r, const char *spec, sl_err *err);
/* Loads what the rules need (the word tokenizer); after the last set. */
int sl_rules_ready(sl_rules *r, sl_err *err);
size_t sl_rules_count(const sl_rules *r);
/* The name of rule i ("gopher-quality", ...). */
const char *sl_rules_name(const sl_rules *r, size_t i);
/* The parameters of rule i with their values, as a JSON object. */
void sl_rules_params_json(const sl_rules *r, size_t i, sl_buf *out);

sl_rules_work *sl_rules_work_new(const sl_rules *r);
void sl_rules_work_free(sl_rules_work *w);

typedef struct sl_rules_verdict {
    int rule;         /* the rule (index) that drops the document; -1: kept */
    char reason[48];  /* datatrove's reason, e.g. "gopher_short_doc" */
    const char *text; /* the text to write: the input's, or c4's rewrite */
    size_t text_len;  /* (valid until the next call with w) */
    int rewritten;    /* text differs from the input */
} sl_rules_verdict;

/* Runs the rules in order on text[0..n) (valid UTF-8), each on the text the
 * one before passed on, until one drops the document. With annotate, no
 * rule drops or rewrites: every rule sees the input text, and its signals
 * and its reason (null when it would keep the document) are appended to
 * signals as JSON object members (",\"name\":value..."); v->rule is then
 * the rule that would have dropped it first. */
void sl_rules_apply(const sl_rules *r, sl_rules_work *w, const char *text, size_t n, int annotate, sl_buf *signals,
                    sl_rules_verdict *v);

/* The names of the signals --annotate writes, one call per name (for
 * replacing fields of those names that the metadata already has). */
void sl_rules_signal_names(const sl_rules *r, void (*fn)(void *ctx, const char *name), void *ctx);

#endif
