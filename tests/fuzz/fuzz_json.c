/* libFuzzer target: the JSON parser (base/json.c).
 * Any input must parse or fail with a message, never crash; a parsed value
 * re-serialized by sl_json_put_value must parse again to the same text
 * (the writer's output is a fixed point). The first byte picks the
 * invalid-UTF-8 mode and whether non-finite numbers (Infinity, NaN and
 * transformers 5's {"__float__": "NaN"}; the config readers' mode) are
 * accepted; a re-serialized value parses again in that mode. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int nonfinite = (data[0] / 3) & 1;
    sl_json_opts o = {.invalid_utf8 = data[0] % 3, .nonfinite = nonfinite};
    sl_err err = {{0}};
    sl_json_doc *d = sl_json_parse((const char *)data + 1, size - 1, &o, &err);
    if (!d) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            abort(); /* a failure always has a one-line message */
        return 0;
    }
    sl_buf a = {0}, b = {0};
    sl_json_put_value(&a, sl_json_root(d));
    sl_json_free(d);
    /* the writer emits valid UTF-8 only, so the strict mode must accept it */
    sl_json_opts strict = {.invalid_utf8 = SL_UTF8_ERROR, .nonfinite = nonfinite};
    d = sl_json_parse(a.data, a.len, &strict, &err);
    if (!d || strict.invalid_count)
        abort();
    sl_json_put_value(&b, sl_json_root(d));
    if (a.len != b.len || memcmp(a.data, b.data, a.len))
        abort();
    sl_json_free(d);
    sl_buf_free(&a);
    sl_buf_free(&b);
    return 0;
}
