/* sl_detok (tokenize/detok.h) over the tokenizers this module loads: a
 * byte-level BPE (tokenizer.json, vocab.json + merges.txt) or a character
 * vocabulary file written by `sluice tokenize char`. */
#include <stdlib.h>
#include <string.h>

#include "tokenize/bpe.h"
#include "tokenize/chartok.h"
#include "tokenize/detok.h"

struct sl_detok {
    sl_bpe *bpe;
    sl_charvocab *chars;
};

sl_detok *sl_detok_open(const char *path, sl_err *err)
{
    sl_detok *d = sl_xcalloc(1, sizeof *d);
    if (sl_charvocab_is_file(path)) {
        d->chars = sl_charvocab_load(path, err);
    } else {
        d->bpe = sl_bpe_load(path, err);
    }
    if (!d->bpe && !d->chars) {
        free(d);
        return NULL;
    }
    return d;
}

int sl_detok_decode(sl_detok *d, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    return d->bpe ? sl_bpe_decode(d->bpe, ids, n, out, err) : sl_charvocab_decode(d->chars, ids, n, out, err);
}

void sl_detok_close(sl_detok *d)
{
    if (!d)
        return;
    sl_bpe_free(d->bpe);
    sl_charvocab_free(d->chars);
    free(d);
}
