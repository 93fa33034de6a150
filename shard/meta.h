/* Per-document metadata on its way into shard directories, packed streams
 * and Megatron sidecars (docs/shards.md sections 2.1 and 4): choosing fields
 * (--keep-fields / --drop-fields) and finding duplicate document ids. */
#ifndef SLUICE_SHARD_META_H
#define SLUICE_SHARD_META_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- stable API (sluice.h): the field selection of the shard stage ---------- */

/* Which top-level metadata fields to keep: all (no list), only those of a
 * keep list, or all but those of a drop list. */
typedef struct sl_meta_sel {
    int mode; /* SL_META_ALL, SL_META_KEEP or SL_META_DROP */
    size_t n;
    char **names;
} sl_meta_sel;
enum { SL_META_ALL = 0, SL_META_KEEP = 1, SL_META_DROP = 2 };

#ifdef SLUICE_UNSTABLE_API
/* --- unstable ------------------------------------------------------------- */

/* Sets sel from a comma-separated list of field names (empty names are an
 * error naming the list). */
int sl_meta_sel_parse(sl_meta_sel *sel, int mode, const char *list, sl_err *err);
void sl_meta_sel_free(sl_meta_sel *sel);

/* Appends the selected fields of `meta` (a JSON object text, or NULL/empty
 * for none) to out as one compact JSON object; appends nothing when no field
 * is left. Returns 0, or -1 when meta is not a JSON object (err: "metadata:
 * ..."; the caller adds the document). */
int sl_meta_select(const sl_meta_sel *sel, const char *meta, size_t len, sl_buf *out, sl_err *err);

/* 1 when s[0..n) is one JSON object written compactly (no whitespace
 * outside strings; strings valid UTF-8 with valid escapes, no surrogate
 * escapes; nesting at most 64 deep), as sl_meta_select writes it. */
int sl_meta_compact_object(const char *s, size_t n);

/* Appends one documents.jsonl line (with its newline):
 * {"doc":N,"id":"…","split":"…"[,"long":"truncated"|"dropped"][,"meta":{…}]}.
 * long_status is SL_DOC_* (shard/pack.h); meta a one-line JSON object or
 * NULL / 0 for none. */
void sl_meta_doc_line(sl_buf *b, uint64_t ordinal, const char *id, size_t id_len, const char *split, int long_status,
                      const char *meta, size_t meta_len);

/* A set of document ids (a 128-bit hash of each: exact up to a hash
 * collision, about 2^-128 per pair; 16 bytes per slot, at most 3/4 full). */
typedef struct sl_idset sl_idset;
sl_idset *sl_idset_new(void);
/* 1 when the id was added before, else 0 (and it is added). */
int sl_idset_add(sl_idset *s, const char *id, size_t len);
uint64_t sl_idset_count(const sl_idset *s);
void sl_idset_free(sl_idset *s);

/* A stage's per-document metadata bookkeeping: the chosen fields of each
 * document's metadata and the ids seen so far (duplicates counted, or an
 * error when unique_ids is set). The ids go through a spill (stream/spill.h:
 * a 128-bit hash, the ordinal and the id per document, sorted on disk past
 * SL_DOCMETA_BUDGET), so memory does not grow with the number of documents;
 * repeats are found by sl_docmeta_finish, at the end of the input.
 * Zero-initialise; sl_docmeta_free. */
typedef struct sl_spill sl_spill;
#define SL_DOCMETA_BUDGET ((size_t)32 << 20)
typedef struct sl_docmeta {
    sl_meta_sel sel;
    int unique_ids; /* a repeated id is an error */
    sl_spill *ids;
    char *src; /* the input named in a unique_ids error (the first seen) */
    uint64_t dups, first_dup_doc;
    char *first_dup; /* the first repeated id, quoted for messages */
    sl_buf buf;      /* the selected metadata of the current document */
} sl_docmeta;

/* Selects the fields of a document's metadata into m->buf (empty: none);
 * errors name src and the document. */
int sl_docmeta_select(sl_docmeta *m, const char *meta, size_t len, const char *src, const char *id, size_t id_len,
                      sl_err *err);
/* Records an id with its document ordinal (src names the input in messages). */
int sl_docmeta_id(sl_docmeta *m, const char *id, size_t len, uint64_t ordinal, const char *src, sl_err *err);
/* After the last id: counts the repeated ones (dups; first_dup and
 * first_dup_doc: the repeat with the lowest ordinal), or with unique_ids
 * fails naming src, that document's ordinal and its id. */
int sl_docmeta_finish(sl_docmeta *m, sl_err *err);
void sl_docmeta_free(sl_docmeta *m);
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif
