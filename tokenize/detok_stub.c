/* Placeholder until the BPE tokenizer lands: decoding is not available. */
#include "tokenize/detok.h"

sl_detok *sl_detok_open(const char *path, sl_err *err)
{
    sl_errf(err, "%s: decoding text needs the BPE tokenizer, which is not built yet", path);
    return NULL;
}

int sl_detok_decode(sl_detok *d, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    (void)d, (void)ids, (void)n, (void)out;
    return sl_errf(err, "decoding is not available");
}

void sl_detok_close(sl_detok *d) { (void)d; }
