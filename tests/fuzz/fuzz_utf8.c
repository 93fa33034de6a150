/* libFuzzer target: sl_utf8_check (16 bytes at a time with SSSE3) on
 * arbitrary bytes against the sequence-by-sequence decoder (sl_utf8_seq):
 * the same first ill-formed offset, at every suffix of the input (which
 * moves the 16-byte blocks across it); and sl_utf8_repair of a valid input
 * changes nothing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

static size_t by_seq(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = p[i] < 0x80 ? 1 : sl_utf8_seq(p + i, n - i, &cp);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t s = 0; s < size && s < 17; s++)
        if (sl_utf8_check((const char *)data + s, size - s) != by_seq(data + s, size - s))
            abort();
    if (sl_utf8_check((const char *)data, size) == size) {
        sl_buf b = {0};
        if (sl_utf8_repair(&b, (const char *)data, size, SL_UTF8_REPLACE) || b.len != size ||
            (size && memcmp(b.data, data, size)))
            abort();
        sl_buf_free(&b);
    }
    return 0;
}
