/* A cheap first look into a tokenizer.json: the families probe every file
 * before one of them loads it, and parsing all of a 2-20 MB vocabulary only
 * to read model.type cost a third of a load per family. The skim steps over
 * values without building them. It gives up (-1) on anything unexpected, so
 * a caller falls back to the full parse and the answer is always that of the
 * full parse. Internal. */
#ifndef SLUICE_TOKENIZE_JSON_SKIM_H
#define SLUICE_TOKENIZE_JSON_SKIM_H

#include <stddef.h>

typedef struct sl_skim_span {
    size_t at, len; /* len 0: the key is absent */
} sl_skim_span;

/* For the JSON object s[0..n): the span of the (last) value of each of
 * keys[0..nkeys) (keys without escapes). 0, or -1 when the skim cannot tell
 * (not an object, escaped keys, malformed). */
int sl_json_skim_object(const char *s, size_t n, const char *const *keys, sl_skim_span *out, size_t nkeys);

/* model.type of the tokenizer.json text: 1 with the type in out (cap bytes,
 * NUL-terminated); 0 when the file has no model object or no type string;
 * -1 when the skim cannot tell. */
int sl_tokjson_model_type(const char *text, size_t len, char *out, size_t cap);

#endif
