/* libFuzzer target: grapheme cluster boundaries (tokenize/normalizers/grapheme.h) on
 * arbitrary bytes, valid UTF-8 or not. Each cluster ends after its start
 * and inside the text, and stepping through it by characters (a byte that
 * is not well-formed UTF-8 counting as one) lands on its end: a boundary
 * never falls inside a character (abort otherwise). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/utf8.h"
#include "tokenize/normalizers/grapheme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t at = 0; at < size;) {
        size_t e = sl_grapheme_end((const char *)data, size, at);
        if (e <= at || e > size)
            abort();
        size_t i = at;
        while (i < e) {
            uint32_t c;
            size_t k = sl_utf8_seq(data + i, size - i, &c);
            i += k ? k : 1;
        }
        if (i != e)
            abort();
        at = e;
    }
    return 0;
}
