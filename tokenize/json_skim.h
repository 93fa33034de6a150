/* A cheap first look into a tokenizer.json: the families probe every file
 * before one of them loads it, and parsing all of a 2-20 MB vocabulary only
 * to read model.type cost a third of a load per family. The skim steps over
 * values without building them. It gives up (-1) on anything unexpected, so
 * a caller falls back to the full parse and the answer is always that of the
 * full parse. Internal. */
#ifndef SLUICE_TOKENIZE_JSON_SKIM_H
#define SLUICE_TOKENIZE_JSON_SKIM_H

#include <stddef.h>

#include "base/err.h"
#include "base/json.h"
#include "tokenize/tokenizer.h"
#include "tokenize/tokenizer_impl.h"

/* model.type of the tokenizer.json text: 1 with the type in out (cap bytes,
 * NUL-terminated); 0 when the file has no model object or no type string;
 * -1 when the skim cannot tell. */
int sl_tokjson_model_type(const char *text, size_t len, char *out, size_t cap);

/* The spans of sl_tokjson_spans in one pass over the tokenizer.json text
 * (the model object is skimmed for its type as it is stepped over; each
 * span is that of the last value of a repeated key, as the parser keeps):
 * 0, or -1 when the skim cannot tell. */
int sl_tokjson_skim(const char *text, size_t len, sl_tokjson_spans *sp);

/* The spans of the (last) values of keys[0..nkeys) in the (last) top-level
 * model object ({0, 0}: absent): 0, or -1 when the skim cannot tell. */
int sl_tokjson_skim_model(const char *text, size_t len, const char *const *keys, sl_skim_span *out, size_t nkeys);

/* --- what the tokenizer.json families share ------------------------------ */

/* The parse of a tokenizer file's JSON (invalid UTF-8 is an error), or NULL
 * with the message starting with name. */
sl_json_doc *sl_tokjson_parse(const char *text, size_t len, const char *name, sl_err *err);
/* The same with the values at skip[0..n_skip) stepped over (sl_json_opts). */
sl_json_doc *sl_tokjson_parse_skip(const char *text, size_t len, const sl_json_skip *skip, size_t n_skip,
                                   const char *name, sl_err *err);
/* The tokenizer.json of src (read at the first call): 0 with its text, or
 * -1 when it cannot be read (a probe then says no; the load reports it). */
int sl_tok_src_json(sl_tok_src *src, const char **text, size_t *len);
/* The skim of src's tokenizer.json, made at the first call for all the
 * probes: NULL when the file cannot be read or the skim cannot tell. */
const sl_tokjson_spans *sl_tok_src_skim(sl_tok_src *src);
/* A probe's first look: 1 for a directory, or when the file starts with
 * '{' after blanks. */
int sl_tokjson_head_is_object(const sl_tok_src *src);
/* The probe of a family known by its model type: 1 when the tokenizer.json
 * of src has a model.type among types (NULL-terminated), as the full parse
 * would say (the skim first, once for all the probes). */
int sl_tokjson_probe_model(sl_tok_src *src, const char *const *types);
/* The SentencePiece-style BPE family's probe (tok_spbpe.c): a tokenizer.json
 * whose model.type is BPE and whose pre-tokenizer and decoder are not
 * byte-level (the skim of three small values first; every byte-level file
 * is probed here before its own family loads it). */
int sl_tokjson_probe_spbpe(sl_tok_src *src);
/* A family's load: the tokenizer.json of src (read once) handed to
 * load_mem (the name it gets is the file's path). */
typedef sl_tokenizer *(*sl_tokjson_load_mem_fn)(const char *text, size_t len, const char *name,
                                                const sl_tokenizer_opts *o, sl_err *err);
sl_tokenizer *sl_tokjson_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err, sl_tokjson_load_mem_fn fn);

#endif
