/* The skim of json_skim.h. */
#include <stdlib.h>
#include <string.h>

#include "tokenize/json_skim.h"

#include "base/buf.h"
#include "stream/io.h"
#include "base/json.h"

static void skim_ws(const char *s, size_t n, size_t *i)
{
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r'))
        (*i)++;
}

/* s[*i] is '"': to the byte after the closing quote. */
static int skim_string(const char *s, size_t n, size_t *i)
{
    size_t j = *i + 1;
    for (;;) {
        const char *q = j < n ? memchr(s + j, '"', n - j) : NULL;
        if (!q)
            return -1;
        size_t k = (size_t)(q - s), bs = 0;
        while (k - bs > *i + 1 && s[k - bs - 1] == '\\')
            bs++;
        j = k + 1;
        if (bs % 2 == 0)
            break; /* not escaped */
    }
    *i = j;
    return 0;
}

/* One value at s[*i] (after blanks): to the byte after it. Brackets are
 * counted, not matched: enough to find the end of a valid value. */
static int skim_value(const char *s, size_t n, size_t *i)
{
    if (*i >= n)
        return -1;
    if (s[*i] == '"')
        return skim_string(s, n, i);
    if (s[*i] != '{' && s[*i] != '[') {
        size_t j = *i;
        while (j < n && !strchr(",}] \t\r\n", s[j]))
            j++;
        if (j == *i)
            return -1;
        *i = j;
        return 0;
    }
    size_t depth = 0, j = *i;
    while (j < n) {
        char c = s[j];
        if (c == '"') {
            if (skim_string(s, n, &j) < 0)
                return -1;
            continue;
        }
        j++;
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0) {
            *i = j;
            return 0;
        }
    }
    return -1;
}

/* The members of the object at s[*i] (after blanks): to the byte after it,
 * with the span of the (last) value of each of keys[0..nkeys). With nsub
 * keys, the value of keys[0] is skimmed as an object for sub[0..nsub) in the
 * same pass (each occurrence of keys[0] starts them again, so they are those
 * of its last value; absent when that value is not an object). */
static int skim_members(const char *s, size_t n, size_t *pi, const char *const *keys, sl_skim_span *out, size_t nkeys,
                        const char *const *sub, sl_skim_span *sub_out, size_t nsub)
{
    size_t i = *pi;
    skim_ws(s, n, &i);
    if (i >= n || s[i++] != '{')
        return -1;
    skim_ws(s, n, &i);
    if (i < n && s[i] == '}') {
        *pi = i + 1;
        return 0;
    }
    for (;;) {
        skim_ws(s, n, &i);
        if (i >= n || s[i] != '"')
            return -1;
        size_t k0 = i + 1;
        if (skim_string(s, n, &i) < 0)
            return -1;
        size_t klen = i - 1 - k0;
        if (memchr(s + k0, '\\', klen))
            return -1; /* an escaped key: let the parser decode it */
        skim_ws(s, n, &i);
        if (i >= n || s[i++] != ':')
            return -1;
        skim_ws(s, n, &i);
        size_t v0 = i, k = 0;
        while (k < nkeys && !(strlen(keys[k]) == klen && !memcmp(s + k0, keys[k], klen)))
            k++;
        if (k == 0 && nsub) {
            for (size_t j = 0; j < nsub; j++)
                sub_out[j] = (sl_skim_span){0, 0};
            if (i < n && s[i] == '{') {
                if (skim_members(s, n, &i, sub, sub_out, nsub, NULL, NULL, 0) < 0)
                    return -1;
            } else if (skim_value(s, n, &i) < 0) {
                return -1;
            }
        } else if (skim_value(s, n, &i) < 0) {
            return -1;
        }
        if (k < nkeys)
            out[k] = (sl_skim_span){v0, i - v0};
        skim_ws(s, n, &i);
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}') {
            *pi = i + 1;
            return 0;
        }
        return -1;
    }
}

int sl_tokjson_skim(const char *text, size_t len, sl_tokjson_spans *sp)
{
    static const char *const top[] = {"model", "pre_tokenizer", "decoder"}, *const in_model[] = {"type"};
    sl_skim_span t[3] = {{0, 0}, {0, 0}, {0, 0}};
    size_t i = 0;
    *sp = (sl_tokjson_spans){{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    if (skim_members(text, len, &i, top, t, 3, in_model, &sp->type, 1) < 0)
        return -1;
    sp->model = t[0], sp->pre_tokenizer = t[1], sp->decoder = t[2];
    return 0;
}

int sl_tokjson_skim_model(const char *text, size_t len, const char *const *keys, sl_skim_span *out, size_t nkeys)
{
    static const char *const top[] = {"model"};
    sl_skim_span model = {0, 0};
    size_t i = 0;
    for (size_t k = 0; k < nkeys; k++)
        out[k] = (sl_skim_span){0, 0};
    return skim_members(text, len, &i, top, &model, 1, keys, out, nkeys) < 0 ? -1 : 0;
}

/* model.type from the skim's spans (as sl_tokjson_model_type says). */
static int type_of_spans(const char *text, const sl_tokjson_spans *sp, char *out, size_t cap)
{
    if (!sp->model.len || text[sp->model.at] != '{' || !sp->type.len || text[sp->type.at] != '"')
        return 0;
    size_t n = sp->type.len - 2;
    if (n + 1 > cap || memchr(text + sp->type.at + 1, '\\', n))
        return -1; /* long or escaped: let the parser read it */
    memcpy(out, text + sp->type.at + 1, n);
    out[n] = 0;
    return 1;
}

int sl_tokjson_model_type(const char *text, size_t len, char *out, size_t cap)
{
    sl_tokjson_spans sp;
    if (sl_tokjson_skim(text, len, &sp) < 0)
        return -1;
    return type_of_spans(text, &sp, out, cap);
}

/* The path of the tokenizer.json: src's, or src's/tokenizer.json. */
static char *json_path(const sl_tok_src *src)
{
    if (!src->is_dir)
        return sl_xstrdup(src->path);
    sl_buf b = {0};
    sl_buf_printf(&b, "%s/tokenizer.json", src->path);
    return b.data;
}

static int read_json(sl_tok_src *src, sl_err *err)
{
    if (src->json_state == 0) {
        free(src->json_path);
        src->json_path = json_path(src);
        src->json_state = sl_read_file(src->json_path, &src->json, &src->json_len, &src->json_err) == 0 ? 1 : -1;
    }
    if (src->json_state < 0 && err)
        *err = src->json_err;
    return src->json_state > 0 ? 0 : -1;
}

int sl_tok_src_json(sl_tok_src *src, const char **text, size_t *len)
{
    if (read_json(src, NULL))
        return -1;
    *text = src->json;
    *len = src->json_len;
    return 0;
}

const sl_tokjson_spans *sl_tok_src_skim(sl_tok_src *src)
{
    const char *text;
    size_t len;
    if (src->skim_state == 0)
        src->skim_state =
            sl_tok_src_json(src, &text, &len) == 0 && sl_tokjson_skim(text, len, &src->skim) == 0 ? 1 : -1;
    return src->skim_state > 0 ? &src->skim : NULL;
}

int sl_tokjson_head_is_object(const sl_tok_src *src)
{
    if (src->is_dir)
        return 1;
    size_t i = 0;
    while (i < src->head_len &&
           (src->head[i] == ' ' || src->head[i] == '\n' || src->head[i] == '\r' || src->head[i] == '\t'))
        i++;
    return i < src->head_len && src->head[i] == '{';
}

static int type_in(const char *t, const char *const *types)
{
    for (size_t i = 0; t && types[i]; i++)
        if (!strcmp(t, types[i]))
            return 1;
    return 0;
}

int sl_tokjson_probe_model(sl_tok_src *src, const char *const *types)
{
    const char *text;
    size_t len;
    if (!sl_tokjson_head_is_object(src) || sl_tok_src_json(src, &text, &len))
        return 0;
    const sl_tokjson_spans *sp = sl_tok_src_skim(src);
    char type[32];
    int known = sp ? type_of_spans(text, sp, type, sizeof type) : -1;
    if (known >= 0)
        return known && type_in(type, types);
    /* the skim could not tell: the full parse decides */
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
    const sl_json *root = doc ? sl_json_root(doc) : NULL;
    const sl_json *model = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    int mine = type_in(model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL, types);
    sl_json_free(doc);
    return mine;
}

sl_tokenizer *sl_tokjson_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err, sl_tokjson_load_mem_fn fn)
{
    if (read_json(src, err))
        return NULL;
    return fn(src->json, src->json_len, src->json_path, o, err);
}

/* --- the SentencePiece-style BPE family's probe ----------------------------- */
static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

/* 1 when a pre_tokenizer or decoder value is or contains ByteLevel. */
static int has_byte_level(const sl_json *v, const char *list_key)
{
    if (!strcmp(type_of(v), "ByteLevel"))
        return 1;
    const sl_json *list = v && v->type == SL_JSON_OBJECT ? sl_json_get(v, list_key) : NULL;
    for (size_t i = 0; list && list->type == SL_JSON_ARRAY && i < list->n; i++)
        if (has_byte_level(list->kids[i], list_key))
            return 1;
    return 0;
}

/* The decision on the parsed document: model.type is "BPE" and neither the
 * pre-tokenizer nor the decoder is byte-level. */
static int sp_mine(const sl_json *root)
{
    const sl_json *model = root && root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
    return mt && !strcmp(mt, "BPE") && !has_byte_level(sl_json_get(root, "pre_tokenizer"), "pretokenizers") &&
           !has_byte_level(sl_json_get(root, "decoder"), "decoders");
}

/* ---- a cheap first look: every byte-level tokenizer.json (GPT-2, GPT-NeoX,
 * Llama-3, Qwen2) is probed here before its own family loads it, and
 * parsing all of it (a 2.5 MB vocabulary and merge list) only to read three
 * small values cost about a third of the load. The skim (json_skim.h) steps
 * over values without building them and parses only the three it needs. On
 * anything unexpected it gives up (-1) and the whole file is parsed as
 * before, so the answer is always that of the full parse. */

/* 1 or 0 as sp_mine would say on the whole file, or -1 when the skim cannot
 * tell. */
static int sp_skim(const char *text, const sl_tokjson_spans *sp)
{
    if (!sp->model.len || text[sp->model.at] != '{')
        return 0; /* no model object: not BPE */
    if (!sp->type.len)
        return 0;
    /* a small document of the three values, parsed as the full parse would */
    sl_buf b = {0};
    sl_buf_append(&b, "{\"model\":{\"type\":", 17);
    sl_buf_append(&b, text + sp->type.at, sp->type.len);
    if (sp->pre_tokenizer.len) {
        sl_buf_append(&b, "},\"pre_tokenizer\":", 18);
        sl_buf_append(&b, text + sp->pre_tokenizer.at, sp->pre_tokenizer.len);
    } else {
        sl_buf_append(&b, "}", 1);
    }
    if (sp->decoder.len) {
        sl_buf_append(&b, ",\"decoder\":", 11);
        sl_buf_append(&b, text + sp->decoder.at, sp->decoder.len);
    }
    sl_buf_append(&b, "}", 1);
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(b.data, b.len, NULL, &e);
    int mine = doc ? sp_mine(sl_json_root(doc)) : -1;
    sl_json_free(doc);
    sl_buf_free(&b);
    return mine;
}

/* See json_skim.h: the SentencePiece-style BPE family's probe. */
int sl_tokjson_probe_spbpe(sl_tok_src *src)
{
    const char *text;
    size_t len;
    if (!sl_tokjson_head_is_object(src) || sl_tok_src_json(src, &text, &len))
        return 0;
    const sl_tokjson_spans *sp = sl_tok_src_skim(src);
    int mine = sp ? sp_skim(text, sp) : -1;
    if (mine < 0) {
        /* the skim could not tell: the whole file decides (also whether it
         * is valid JSON at all; when the skim says yes, the load's parse
         * reports a file that is not) */
        sl_err e = {{0}};
        sl_json_doc *doc = sl_json_parse(text, len, NULL, &e);
        mine = doc ? sp_mine(sl_json_root(doc)) : 0;
        sl_json_free(doc);
    }
    return mine;
}

sl_json_doc *sl_tokjson_parse(const char *text, size_t len, const char *name, sl_err *err)
{
    return sl_tokjson_parse_skip(text, len, NULL, 0, name, err);
}

sl_json_doc *sl_tokjson_parse_skip(const char *text, size_t len, const sl_json_skip *skip, size_t n_skip,
                                   const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR, .skip = skip, .n_skip = n_skip};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, err);
    if (!doc)
        sl_err_prefix(err, "%s", name);
    return doc;
}
