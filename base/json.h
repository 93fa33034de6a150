/* JSON: a small DOM parser and a writer.
 *
 * The parser is strict RFC 8259 with two deliberate choices:
 *  - strings are decoded to UTF-8; "\u" escapes with lone surrogates become
 *    U+FFFD (as Python's json + errors="replace" would render them);
 *  - raw invalid UTF-8 inside strings is handled per `invalid` mode (see
 *    sl_json_parse_opts): rejected, or replaced by U+FFFD and counted.
 * Numbers keep their source text and a double; integers up to 2^53 are exact.
 * Objects keep key order and duplicate keys (lookup returns the last one,
 * like Python). Nesting depth is limited (SL_JSON_MAX_DEPTH) so a hostile
 * input cannot overflow the stack. All nodes live in one arena freed by
 * sl_json_free. */
#ifndef SLUICE_BASE_JSON_H
#define SLUICE_BASE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/utf8.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_JSON_MAX_DEPTH 512
/* sl_json_opts.nonfinite: NaN, Infinity and -Infinity, not "__float__" objects */
#define SL_JSON_NONFINITE_WORDS 2

typedef enum {
    SL_JSON_NULL,
    SL_JSON_FALSE,
    SL_JSON_TRUE,
    SL_JSON_NUMBER,
    SL_JSON_STRING,
    SL_JSON_ARRAY,
    SL_JSON_OBJECT
} sl_json_type;

typedef struct sl_json sl_json;
struct sl_json {
    sl_json_type type;
    /* STRING: decoded UTF-8 (may contain NUL), str_len bytes.
     * NUMBER: source text in str/str_len, value in num. */
    const char *str;
    size_t str_len;
    double num;
    /* ARRAY / OBJECT: n children in kids[]; for OBJECT keys[i] names kids[i]. */
    size_t n;
    sl_json **kids;
    sl_json **keys; /* STRING nodes */
    /* Byte offset of the value in the input (for error messages). */
    size_t offset;
};

typedef struct sl_json_doc sl_json_doc; /* owns the arena */

typedef struct sl_json_opts {
    int invalid_utf8;     /* SL_UTF8_*; default REPLACE */
    size_t invalid_count; /* out: number of invalid sequences repaired */
    /* 1: accept Infinity, -Infinity and NaN as numbers (text kept as is,
     * num = +-inf / nan), as Python's json writes them (model config.json),
     * and transformers 5's {"__float__": "Infinity"} (or "-Infinity",
     * "NaN"): a NUMBER node (text the word, offset the object's) in place
     * of the object; SL_JSON_NONFINITE_WORDS: the three words only, as
     * Python's json.loads reads them (JSON Lines: such an object stays an
     * object); default off: strict JSON, such an object an object */
    int nonfinite;
    /* values stepped over: an object or array that starts at skip[k].at
     * stands in the tree as an empty one, and parsing goes on at
     * skip[k].at + skip[k].len (the caller has read it, and vouches it is
     * one valid value there) */
    const struct sl_json_skip *skip;
    size_t n_skip;
} sl_json_opts;
typedef struct sl_json_skip {
    size_t at, len;
} sl_json_skip;

/* Parses exactly one JSON value (surrounding whitespace allowed). On error
 * returns NULL and sets err to "offset N: what" (the caller adds the file). */
sl_json_doc *sl_json_parse(const char *text, size_t len, sl_json_opts *opts, sl_err *err);
/* The same for the one value at the start of text[0..len) (whitespace
 * before it allowed), with anything after it: *end is the offset just past
 * the value. */
sl_json_doc *sl_json_parse_prefix(const char *text, size_t len, size_t *end, sl_json_opts *opts, sl_err *err);
sl_json *sl_json_root(sl_json_doc *doc);
void sl_json_free(sl_json_doc *doc);

/* ---- reading without a tree (JSON Lines) ---- */

/* Error codes of sl_json_str_decode. */
enum { SL_JSTR_UNTERMINATED = 1, SL_JSTR_CONTROL, SL_JSTR_ESCAPE, SL_JSTR_UTF8, SL_JSTR_U_TRUNC, SL_JSTR_U_HEX };
/* Or-ed into an invalid-UTF-8 mode (sl_json_str_decode, sl_json_opts): only
 * the run-by-run way, the reference of the one-loop way (tests). */
#define SL_JSTR_CAREFUL 0x100

/* Decodes the JSON string whose text starts at s[*pos] (just after its
 * opening '"') and appends it to b as sl_json_parse decodes strings
 * (invalid_utf8 an SL_UTF8_* mode; *invalid counts the repaired sequences
 * and lone surrogates). Returns 0 with *pos just after the closing '"' and
 * *changed (when not NULL) 1 if an escape or a repair made the decoding
 * differ from the raw bytes; else an SL_JSTR_* code with *pos at the fault,
 * b's contents past its old length unspecified. One pass: runs of plain
 * bytes are found 16 bytes at a time and stored as they are scanned. */
int sl_json_str_decode(const char *s, size_t n, size_t *pos, sl_buf *b, int invalid_utf8, size_t *invalid,
                       int *changed);
/* Appends to out the value at s[*pos] (leading whitespace skipped) written
 * as sl_json_put_value writes it after an sl_json_parse with nonfinite
 * SL_JSON_NONFINITE_WORDS (compact, strings re-escaped, numbers as their
 * source text); tmp is scratch. Returns 0 with *pos after the value, or -1
 * (out's contents past its old length unspecified) when the value is
 * malformed or one left to the tree: nesting deeper than 64. */
int sl_json_put_canon(sl_buf *out, const char *s, size_t n, size_t *pos, sl_buf *tmp, int invalid_utf8,
                      size_t *invalid);

/* Lookup helpers; return NULL when absent or of another type. */
sl_json *sl_json_get(const sl_json *obj, const char *key);
const char *sl_json_get_str(const sl_json *obj, const char *key);       /* NUL-terminated */
int sl_json_get_int(const sl_json *obj, const char *key, int64_t *out); /* 0 ok, -1 absent/not integer */
int sl_json_get_num(const sl_json *obj, const char *key, double *out);
int sl_json_get_bool(const sl_json *obj, const char *key, int *out);
int sl_json_is_int(const sl_json *v, int64_t *out);

/* Writer helpers: append JSON text to a buffer. Strings are escaped per RFC
 * 8259 (control characters as \uXXXX, '"' and '\\' escaped, UTF-8 passed
 * through unchanged). */
void sl_json_put_str(sl_buf *b, const char *s, size_t n);
void sl_json_put_cstr(sl_buf *b, const char *s);
void sl_json_put_num(sl_buf *b, double v); /* shortest round-trip form; NaN/Inf as null */
void sl_json_put_int(sl_buf *b, int64_t v);
/* Re-serializes a parsed value compactly (keys in their original order). */
void sl_json_put_value(sl_buf *b, const sl_json *v);

#ifdef __cplusplus
}
#endif

#endif
