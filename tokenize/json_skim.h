/* A cheap first look into a tokenizer.json: the families probe every file
 * before one of them loads it, and parsing all of a 2-20 MB vocabulary only
 * to read model.type cost a third of a load per family. The skim steps over
 * values without building them. It gives up (-1) on anything unexpected, so
 * a caller falls back to the full parse and the answer is always that of the
 * full parse. Internal. */
#ifndef SLUICE_TOKENIZE_JSON_SKIM_H
#define SLUICE_TOKENIZE_JSON_SKIM_H

#include <stddef.h>

#include "stream/err.h"
#include "tokenize/tokenizer.h"

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

/* --- what the tokenizer.json families share ------------------------------ */

/* The tokenizer.json of path: path itself, or path/tokenizer.json when it
 * is a directory (malloc'd). */
char *sl_tokjson_path(const char *path, int is_dir);
/* A probe's first look: 1 for a directory, or when head[0..n) starts with
 * '{' after blanks. */
int sl_tokjson_head_is_object(int is_dir, const unsigned char *head, size_t n);
/* The probe of a family known by its model type: 1 when the tokenizer.json
 * of path has a model.type among types (NULL-terminated), as the full parse
 * would say (the skim first). */
int sl_tokjson_probe_model(const char *path, int is_dir, const unsigned char *head, size_t n, const char *const *types);
/* A family's load: reads the tokenizer.json of path and hands its bytes to
 * load_mem (the name it gets is the file's path). */
typedef sl_tokenizer *(*sl_tokjson_load_mem_fn)(const char *text, size_t len, const char *name,
                                                const sl_tokenizer_opts *o, sl_err *err);
sl_tokenizer *sl_tokjson_load(const char *path, const sl_tokenizer_opts *o, sl_err *err, sl_tokjson_load_mem_fn fn);

#endif
