/* A generic hash table (base/hashtab.h): what is not inline. */
#include "base/hashtab.h"

#include <stdlib.h>

#include "base/err.h"

void sl_htab_init(sl_htab *h, const void *ctx)
{
    *h = (sl_htab){.ctx = ctx};
}

void sl_htab_free(sl_htab *h)
{
    free(h->slots);
    h->slots = NULL;
    h->cap = h->n = 0;
}

void *sl_htab_alloc_(size_t cap, size_t entry_size)
{
    return sl_xcalloc(cap, entry_size);
}

void sl_htab_release_(void *slots)
{
    free(slots);
}
