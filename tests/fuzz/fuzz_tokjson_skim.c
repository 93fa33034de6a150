/* libFuzzer target: the skim the tokenizer.json families probe with
 * (tokenize/json_skim.h) on arbitrary bytes. It may give up, but what it
 * says must be what the full parser says: model.type, and each span (model,
 * pre_tokenizer, decoder, model.type) the value the parser keeps for its key
 * (the same JSON once both are written out), or empty when there is none.
 * The parser is run as the loaders run it: invalid UTF-8 is an error (with
 * it repaired, the parsed type would differ from the skim's raw bytes, and
 * neither would name a model). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/json_skim.h"

static void same_value(const char *text, sl_skim_span sp, const sl_json *parent, const char *key)
{
    const sl_json *v = parent && parent->type == SL_JSON_OBJECT ? sl_json_get(parent, key) : NULL;
    if (!v) {
        if (sp.len)
            abort();
        return;
    }
    sl_err e;
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *d = sp.len ? sl_json_parse(text + sp.at, sp.len, &jo, &e) : NULL;
    if (!d)
        abort();
    sl_buf x = {0}, y = {0};
    sl_json_put_value(&x, sl_json_root(d));
    sl_json_put_value(&y, v);
    if (x.len != y.len || memcmp(x.data, y.data, x.len))
        abort();
    sl_buf_free(&x);
    sl_buf_free(&y);
    sl_json_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char type[32];
    int rs = sl_tokjson_model_type(text, size, type, sizeof type);
    sl_tokjson_spans sp;
    int rk = sl_tokjson_skim(text, size, &sp);
    if (rk < 0 && rs >= 0) /* (the type alone may be unreadable: long or escaped) */
        abort();
    sl_err e;
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(text, size, &jo, &e);
    if (rk < 0 || !doc) { /* gave up, or not JSON (the loader reports that) */
        sl_json_free(doc);
        return 0;
    }
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    const char *mt = model && model->type == SL_JSON_OBJECT ? sl_json_get_str(model, "type") : NULL;
    if (rs >= 0 && (rs != (mt ? 1 : 0) || (mt && strcmp(mt, type))))
        abort();
    same_value(text, sp.model, root, "model");
    same_value(text, sp.pre_tokenizer, root, "pre_tokenizer");
    same_value(text, sp.decoder, root, "decoder");
    same_value(text, sp.type, model, "type");
    sl_json_free(doc);
    return 0;
}
