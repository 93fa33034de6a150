/* Character tokenizers (see chartok.h). */
#include "tokenize/chartok.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/docreader.h"
#include "stream/io.h"
#include "base/json.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/bpe_internal.h"

#define MAX_CP 0x110000

static const char *const SPECIALS[] = {"<|endoftext|>", "<|bos|>", "<|unk|>"};

struct sl_charvocab {
    int unit;
    uint32_t base;  /* ids below are bytes / vocabulary characters */
    uint32_t *cps;  /* codepoint unit: id -> code point */
    int32_t *cp2id; /* codepoint unit: code point -> id or -1 (MAX_CP entries) */
    int n_specials;
    char *json;
};

static void make_json(sl_charvocab *v)
{
    sl_buf b = {0};
    sl_buf_puts(&b, v->unit == SL_CHAR_BYTE ? "{\"type\":\"char\",\"unit\":\"byte\""
                                            : "{\"type\":\"char\",\"unit\":\"codepoint\"");
    if (v->unit == SL_CHAR_CODEPOINT) {
        sl_buf_puts(&b, ",\"vocab\":[");
        sl_buf one = {0};
        for (uint32_t i = 0; i < v->base; i++) {
            sl_buf_clear(&one);
            sl_utf8_put(&one, v->cps[i]);
            if (i)
                sl_buf_putc(&b, ',');
            sl_json_put_str(&b, one.data, one.len);
        }
        sl_buf_free(&one);
        sl_buf_putc(&b, ']');
    }
    sl_buf_puts(&b, ",\"specials\":[");
    for (int i = 0; i < v->n_specials; i++) {
        if (i)
            sl_buf_putc(&b, ',');
        sl_json_put_cstr(&b, SPECIALS[i]);
    }
    sl_buf_puts(&b, "]}");
    v->json = b.data;
}

sl_charvocab *sl_charvocab_bytes(void)
{
    sl_charvocab *v = sl_xcalloc(1, sizeof *v);
    v->unit = SL_CHAR_BYTE;
    v->base = 256;
    v->n_specials = 2;
    make_json(v);
    return v;
}

static sl_charvocab *cp_vocab(uint32_t *cps, uint32_t n)
{
    sl_charvocab *v = sl_xcalloc(1, sizeof *v);
    v->unit = SL_CHAR_CODEPOINT;
    v->cps = cps;
    v->base = n;
    v->n_specials = 3;
    v->cp2id = sl_xmalloc(MAX_CP * sizeof *v->cp2id);
    memset(v->cp2id, 0xff, MAX_CP * sizeof *v->cp2id);
    for (uint32_t i = 0; i < n; i++)
        v->cp2id[cps[i]] = (int32_t)i;
    make_json(v);
    return v;
}

sl_charvocab *sl_charvocab_from_set(const uint8_t *present)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < MAX_CP; c++)
        n += present[c] != 0;
    uint32_t *cps = sl_xmalloc((n ? n : 1) * sizeof *cps);
    n = 0;
    for (uint32_t c = 0; c < MAX_CP; c++)
        if (present[c])
            cps[n++] = c;
    return cp_vocab(cps, n);
}

sl_charvocab *sl_charvocab_parse(const char *json, size_t n, const char *name, sl_err *err)
{
    sl_json_doc *doc = sl_tokjson_parse(json, n, name, err);
    if (!doc)
        return NULL;
    sl_charvocab *v = NULL;
    const sl_json *r = sl_json_root(doc);
    const char *type = r->type == SL_JSON_OBJECT ? sl_json_get_str(r, "type") : NULL;
    const char *unit = type ? sl_json_get_str(r, "unit") : NULL;
    const sl_json *sp = type ? sl_json_get(r, "specials") : NULL;
    if (!type || strcmp(type, "char") || !unit) {
        sl_errf(err, "%s: not a character vocabulary (needs \"type\":\"char\" and \"unit\")", name);
        goto out;
    }
    /* The specials are fixed by this version; a file must list the same. */
    int want = !strcmp(unit, "byte") ? 2 : 3;
    int ok = sp && sp->type == SL_JSON_ARRAY && sp->n == (size_t)want;
    for (int i = 0; ok && i < want; i++)
        ok = sp->kids[i]->type == SL_JSON_STRING && !strcmp(sp->kids[i]->str, SPECIALS[i]);
    if (!ok) {
        sl_errf(err, "%s: \"specials\" must be %s", name,
                want == 2 ? "[\"<|endoftext|>\",\"<|bos|>\"]" : "[\"<|endoftext|>\",\"<|bos|>\",\"<|unk|>\"]");
        goto out;
    }
    if (!strcmp(unit, "byte")) {
        v = sl_charvocab_bytes();
    } else if (!strcmp(unit, "codepoint")) {
        const sl_json *list = sl_json_get(r, "vocab");
        if (!list || list->type != SL_JSON_ARRAY) {
            sl_errf(err, "%s: \"vocab\" must be an array of one-character strings", name);
            goto out;
        }
        uint32_t *cps = sl_xmalloc((list->n ? list->n : 1) * sizeof *cps);
        uint8_t *seen = sl_xcalloc(MAX_CP, 1);
        for (size_t i = 0; i < list->n; i++) {
            const sl_json *e = list->kids[i];
            uint32_t cp;
            if (e->type != SL_JSON_STRING || e->str_len == 0 ||
                sl_utf8_seq((const uint8_t *)e->str, e->str_len, &cp) != e->str_len || seen[cp]) {
                sl_errf(err, "%s: offset %zu: vocab entry %zu is not a single new character", name, e->offset, i);
                free(cps);
                free(seen);
                goto out;
            }
            seen[cp] = 1;
            cps[i] = cp;
        }
        free(seen);
        v = cp_vocab(cps, (uint32_t)list->n);
    } else {
        sl_errf(err, "%s: unit '%s' is not one of byte|codepoint", name, unit);
    }
out:
    sl_json_free(doc);
    return v;
}

sl_charvocab *sl_charvocab_build(const char *const *files, int n, const sl_docreader_opts *ro, sl_err *err)
{
    sl_docreader *r = sl_docreader_open(files, n, ro, err);
    if (!r)
        return NULL;
    uint8_t *present = sl_xcalloc(MAX_CP, 1);
    sl_textdoc d = {0};
    int rc;
    while ((rc = sl_docreader_next(r, &d, err)) == 1) {
        const uint8_t *t = (const uint8_t *)d.text.data;
        for (size_t i = 0; i < d.text.len;) {
            uint32_t cp;
            size_t k = sl_utf8_seq(t + i, d.text.len - i, &cp); /* docreader text is valid UTF-8 */
            if (!k)
                break;
            present[cp] = 1;
            i += k;
        }
    }
    sl_textdoc_free(&d);
    sl_docreader_close(r);
    sl_charvocab *v = rc < 0 ? NULL : sl_charvocab_from_set(present);
    free(present);
    return v;
}

int sl_charvocab_save(const sl_charvocab *v, const char *path, sl_err *err)
{
    sl_output *o = sl_output_open(path, err);
    if (!o)
        return -1;
    const char *j = v->json;
    if (sl_output_write(o, j, strlen(j), err) || sl_output_write(o, "\n", 1, err)) {
        sl_output_abort(o);
        return -1;
    }
    return sl_output_commit(o, err);
}

sl_charvocab *sl_charvocab_load(const char *path, sl_err *err)
{
    char *t;
    size_t n;
    if (sl_read_file(path, &t, &n, err))
        return NULL;
    sl_charvocab *v = sl_charvocab_parse(t, n, path, err);
    free(t);
    return v;
}

int sl_charvocab_is_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char buf[14];
    size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return got == sizeof buf && !memcmp(buf, "{\"type\":\"char\"", sizeof buf);
}

void sl_charvocab_free(sl_charvocab *v)
{
    if (!v)
        return;
    free(v->cps);
    free(v->cp2id);
    free(v->json);
    free(v);
}

int sl_charvocab_unit(const sl_charvocab *v)
{
    return v->unit;
}
uint32_t sl_charvocab_size(const sl_charvocab *v)
{
    return v->base + (uint32_t)v->n_specials;
}
const char *sl_charvocab_json(const sl_charvocab *v)
{
    return v->json;
}

int64_t sl_charvocab_special(const sl_charvocab *v, int k)
{
    return k < v->n_specials ? (int64_t)v->base + k : -1;
}

static void push(uint32_t **ids, size_t *n, size_t *cap, uint32_t id)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *ids = sl_xrealloc(*ids, *cap * sizeof **ids);
    }
    (*ids)[(*n)++] = id;
}

void sl_charvocab_encode(const sl_charvocab *v, const char *text, size_t n, uint32_t **ids, size_t *n_ids, size_t *cap)
{
    if (v->unit == SL_CHAR_BYTE) {
        for (size_t i = 0; i < n; i++)
            push(ids, n_ids, cap, (uint8_t)text[i]);
        return;
    }
    uint32_t unk = v->base + SL_CHAR_UNK;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sl_utf8_seq((const uint8_t *)text + i, n - i, &cp);
        if (!k) {
            push(ids, n_ids, cap, unk);
            i++;
            continue;
        }
        int32_t id = v->cp2id[cp];
        push(ids, n_ids, cap, id >= 0 ? (uint32_t)id : unk);
        i += k;
    }
}

int sl_charvocab_decode(const sl_charvocab *v, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (id < v->base) {
            if (v->unit == SL_CHAR_BYTE)
                sl_buf_putc(out, (char)id);
            else
                sl_utf8_put(out, v->cps[id]);
        } else if (id - v->base < (uint32_t)v->n_specials) {
            sl_buf_puts(out, SPECIALS[id - v->base]);
        } else {
            return sl_errf(err, "token %zu: id %u is not in the character vocabulary (size %u)", i, id,
                           sl_charvocab_size(v));
        }
    }
    return 0;
}
