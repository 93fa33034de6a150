/* Helpers the tokenizer unit tests share (tests/unit/support_tokenize.c,
 * linked into every test program): reading fixtures, comparing with the
 * reference's JSON Lines, checking decodes against a reference. They fail
 * the running cmocka test on error. */
#ifndef SLUICE_TESTS_SUPPORT_TOKENIZE_H
#define SLUICE_TESTS_SUPPORT_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "base/json.h"
#include "tokenize/tokenizer.h"

/* The whole file at path (malloc'd, *n its length); fails the test when it
 * cannot be read. */
char *sl_tt_slurp(const char *path, size_t *n);
/* The tokenizer at path loaded with o (NULL: the defaults); fails the test
 * when it does not load or, family not NULL, is not of that family. */
sl_tokenizer *sl_tt_load(const char *path, const sl_tokenizer_opts *o, const char *family);
/* Whether got holds exactly the integers of the JSON array arr. */
int sl_tt_ids_equal(const sl_ids *got, const sl_json *arr);
/* The next line of *p (advanced past it) as parsed JSON; fails the test when
 * there is none or it does not parse. */
sl_json_doc *sl_tt_next_line(char **p, const char *end);
/* Whether b holds exactly the JSON string s. */
int sl_tt_str_equal(const sl_buf *b, const sl_json *s);
/* The integers of the JSON array arr into ids; fails the test when arr holds
 * more than cap or a non-integer. */
void sl_tt_json_ids(const sl_json *arr, uint32_t *ids, size_t cap);
/* Encodes every {"text"} line of texts_path with t and compares with the
 * same line of want_path ({"ids", "decoded"}, optionally "plain"): ids with
 * "ids" (with "plain" where plain and the line has it), and, unless plain,
 * the decode of those ids with "decoded". label names t in messages.
 * Returns the number of texts checked. */
size_t sl_tt_check_texts(sl_tokenizer *t, const char *label, const char *texts_path, const char *want_path, int plain);
/* Decodes every {"ids"} line of want_path (want_lines lines, at most 64 ids
 * each) with t and compares with its "decoded"; ref names the reference in
 * messages. */
void sl_tt_check_decodes(sl_tokenizer *t, const char *label, const char *want_path, const char *ref, size_t want_lines);
/* An id outside t's vocabulary fails to decode, naming its position. */
void sl_tt_check_outside_id(sl_tokenizer *t);

/* pat compiled by PCRE2 (UTF, JIT where it can); fails the test when it
 * does not compile. */
pcre2_code *sl_tt_pcre2_compile(const char *pat);

#endif
