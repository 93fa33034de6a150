/* libFuzzer target: the one-pass JSON Lines reading (stream/docreader.c's
 * fast_json_line and stream/json.c's one-loop string decoder) against the
 * parsed tree's reading with strings decoded run by run: for any line both
 * give the same document (text, id, metadata, counts) or the same error,
 * word for word. The first byte picks the invalid-UTF-8 mode and the text
 * field's name ("text" or "body"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/docreader.h"

static int same(const sl_buf *a, const sl_buf *b)
{
    return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    sl_docreader_opts o = {.invalid_utf8 = data[0] % 3, .field = (data[0] / 3) & 1 ? "body" : "text"};
    sl_textdoc a = {0}, b = {0};
    sl_err ea = {{0}}, eb = {{0}};
    int ga = 0, gb = 0;
    size_t ia = 0, ib = 0;
    const char *line = (const char *)data + 1;
    int ra = sl_docreader_json_line(&o, line, size - 1, 0, &a, &ga, &ia, &ea);
    int rb = sl_docreader_json_line(&o, line, size - 1, 1, &b, &gb, &ib, &eb);
    if (ra != rb)
        abort();
    if (ra ? strcmp(ea.msg, eb.msg) != 0
           : ga != gb || ia != ib || a.id_is_string != b.id_is_string || !same(&a.text, &b.text) ||
                 !same(&a.id, &b.id) || !same(&a.meta, &b.meta))
        abort();
    sl_textdoc_free(&a);
    sl_textdoc_free(&b);
    return 0;
}
