/* The end of a forward pass, shared by the architectures (model/model_impl.h). */
#include "model/model_impl.h"

int sl_model_head_logp(sl_backend *be, const sl_model_head *h, const int32_t *targets, int64_t n, float *logp,
                       sl_err *err)
{
    sl_norm_args fa = {.L = n,
                       .D = h->d,
                       .x = h->hidden,
                       .residual = h->residual,
                       .residual_init = 0,
                       .w = h->norm_f,
                       .eps = (float)h->eps,
                       .out = h->normed};
    if (be->add_rmsnorm(be, &fa, err) < 0)
        return -1;
    /* lm_head in row tiles, each reduced at once to the target's log-prob */
    for (int64_t t0 = 0; t0 < n; t0 += SL_MODEL_LM_TILE) {
        int64_t tn = n - t0 < SL_MODEL_LM_TILE ? n - t0 : SL_MODEL_LM_TILE;
        int any = 0;
        for (int64_t t = t0; t < t0 + tn && !any; t++)
            any = targets[t] >= 0;
        if (!any) {
            if (be->memset0(be, h->logp + t0, (size_t)tn * sizeof(float), err) < 0)
                return -1;
            continue;
        }
        sl_linear_args lh = {
            .L = tn, .x = h->normed + t0 * h->d, .ldx = h->d, .w = h->lm_head, .y = h->logits, .ldy = h->vocab};
        sl_logsoftmax_args ls = {.T = tn,
                                 .V = h->vocab,
                                 .logits = h->logits,
                                 .ld = h->vocab,
                                 .target = h->targets + t0,
                                 .logp = h->logp + t0};
        if (be->linear(be, &lh, err) < 0 || be->logsoftmax_gather(be, &ls, err) < 0)
            return -1;
    }
    if (be->download(be, logp, h->logp, (size_t)n * sizeof(float), err) < 0 || be->sync(be, err) < 0)
        return -1;
    return 0;
}

int sl_model_input_embed(sl_backend *be, const sl_model_input *in, const int32_t *ids, const uint8_t *reset,
                         const int32_t *targets, int64_t n, const uint8_t **rs, sl_err *err)
{
    if (n > in->chunk)
        return sl_errf(err, "model: %lld tokens exceed the chunk size %lld", (long long)n, (long long)in->chunk);
    for (int64_t t = 0; t < n; t++) {
        if (ids[t] < 0 || ids[t] >= in->vocab)
            return sl_errf(err, "token id %d at position %lld is not in the model's vocabulary [0, %lld)", (int)ids[t],
                           (long long)t, (long long)in->vocab);
        if (targets[t] >= in->vocab)
            return sl_errf(err, "token id %d at position %lld is not in the model's vocabulary [0, %lld)",
                           (int)targets[t], (long long)t + 1, (long long)in->vocab);
    }
    if (be->upload(be, in->ids, ids, (size_t)n * sizeof(int32_t), err) < 0 ||
        be->upload(be, in->targets, targets, (size_t)n * sizeof(int32_t), err) < 0)
        return -1;
    *rs = NULL;
    if (reset) {
        if (be->upload(be, in->reset, reset, (size_t)n, err) < 0)
            return -1;
        *rs = in->reset;
    }
    sl_embed_args ea = {.L = n, .ids = in->ids, .emb = in->emb, .out = in->hidden, .ldout = in->d};
    return be->embed(be, &ea, err);
}
