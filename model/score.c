/* Packed, chunked scoring of documents (see score.h). */
#include "model/score.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
    int32_t *ids, *targets;
    uint8_t *reset;
    float *logp;
    size_t *item; /* which item position t predicts for */
    int64_t *pos; /* index of the prediction inside that item */
    int64_t n;
} pending;

static int flush(sl_model_run *r, pending *p, sl_score_item *items, sl_err *err)
{
    if (!p->n)
        return 0;
    if (sl_model_forward(r, p->ids, p->reset, p->targets, p->n, p->logp, err) < 0)
        return -1;
    for (int64_t t = 0; t < p->n; t++) {
        if (p->targets[t] < 0)
            continue;
        sl_score_item *it = &items[p->item[t]];
        it->nll -= (double)p->logp[t];
        if (it->logp)
            it->logp[p->pos[t]] = p->logp[t];
    }
    p->n = 0;
    return 0;
}

int sl_score_batch(sl_model_run *r, sl_score_item *items, size_t n_items, int64_t reset_every, sl_err *err)
{
    const sl_model_info *k = sl_model_get_info(sl_model_run_model(r));
    int64_t C = sl_model_run_chunk(r);
    for (size_t i = 0; i < n_items; i++) {
        items[i].nll = 0.0;
        items[i].n_pred = items[i].n > 1 ? items[i].n - 1 : 0;
        for (int64_t t = 0; t < items[i].n; t++)
            if (items[i].tokens[t] >= (uint64_t)k->vocab)
                return sl_errf(err, "document '%s': token %lld has id %u, not in the model's vocabulary [0, %lld)",
                               items[i].id ? items[i].id : "?", (long long)t, items[i].tokens[t], (long long)k->vocab);
    }
    pending p = {0};
    p.ids = sl_xmalloc((size_t)C * sizeof *p.ids);
    p.targets = sl_xmalloc((size_t)C * sizeof *p.targets);
    p.reset = sl_xmalloc((size_t)C);
    p.logp = sl_xmalloc((size_t)C * sizeof *p.logp);
    p.item = sl_xmalloc((size_t)C * sizeof *p.item);
    p.pos = sl_xmalloc((size_t)C * sizeof *p.pos);
    int rc = 0;
    for (size_t i = 0; i < n_items && rc == 0; i++) {
        const sl_score_item *it = &items[i];
        /* a one-token document predicts nothing: skip it entirely */
        for (int64_t t = 0; t + 1 < it->n; t++) {
            p.ids[p.n] = (int32_t)it->tokens[t];
            p.targets[p.n] = (int32_t)it->tokens[t + 1];
            p.reset[p.n] = t == 0 || (reset_every > 0 && t % reset_every == 0);
            p.item[p.n] = i;
            p.pos[p.n] = t;
            if (++p.n == C && (rc = flush(r, &p, items, err)) < 0)
                break;
        }
    }
    if (rc == 0)
        rc = flush(r, &p, items, err);
    free(p.ids);
    free(p.targets);
    free(p.reset);
    free(p.logp);
    free(p.item);
    free(p.pos);
    return rc;
}
