/* libFuzzer target: the rule filters (text/rules.h) and the --rule parameter
 * parser on arbitrary bytes. Input: the first line is a --rule spec (tried
 * with sl_rules_set), the rest a text (made valid UTF-8 as the reader makes
 * it); the four rules run on it, in full (--annotate) and as datatrove runs
 * them. Whatever the text, a verdict comes back and the rewritten text is
 * no longer than the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "text/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t sl = nl ? (size_t)(nl - data) : 0;
    sl_err err;
    sl_rules *r = sl_rules_new();
    if (sl_rules_add(r, "gopher-quality,gopher-repetition,c4,fineweb", &err) < 0)
        abort();
    char *spec = malloc(sl + 1);
    memcpy(spec, data, sl);
    spec[sl] = 0;
    (void)sl_rules_set(r, spec, &err);
    free(spec);
    if (sl_rules_ready(r, &err) < 0)
        abort();
    sl_buf text = {0}, sig = {0};
    size_t off = nl ? sl + 1 : 0;
    sl_utf8_repair(&text, (const char *)data + off, size - off, SL_UTF8_REPLACE);
    sl_rules_work *w = sl_rules_work_new(r);
    for (int annotate = 0; annotate <= 1; annotate++) {
        sl_rules_verdict v;
        sl_buf_clear(&sig);
        sl_rules_apply(r, w, text.data ? text.data : "", text.len, annotate, &sig, &v);
        if (v.text_len > text.len || (annotate && v.text_len != text.len) || v.rule >= (int)sl_rules_count(r))
            abort();
        if (v.rule >= 0 && !v.reason[0])
            abort();
    }
    sl_rules_work_free(w);
    sl_rules_free(r);
    sl_buf_free(&text);
    sl_buf_free(&sig);
    return 0;
}
