/* Score a document with a language model: the negative log-likelihood of
 * each token given the ones before it, summed.
 *
 *   ./score tests/data/model/hf_f32 1 2 3
 *   nll 47.431694 over 2 predictions (ppl 1.994e+10)
 *
 * MODEL is a directory with config.json and model.safetensors (Mamba,
 * Falcon-Mamba, Mamba-2); the ids are the document's tokens. A document of
 * n tokens has n - 1 predictions: the first token has no context. */
#include <sluice/sluice.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL ID...\n", argv[0]);
        return 2;
    }
    size_t n = (size_t)argc - 2;
    uint32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = (uint32_t)strtoul(argv[2 + i], NULL, 10);

    sl_err err = {0};
    sl_backend *be = NULL;
    sl_model *model = NULL;
    sl_model_run *run = NULL;
    int rc = -1;
    /* "auto": a CUDA device when there is one, else the CPU (all cores). */
    if (!(be = sl_backend_open("auto", 0, &err)) || !(model = sl_model_load(argv[1], be, &err)) ||
        !(run = sl_model_run_new(model, 2048, &err)))
        goto done;

    /* One document here; a batch of them is scored packed, in one call. */
    sl_score_item doc = {.id = "doc", .tokens = ids, .n = (int64_t)n};
    if ((rc = sl_score_batch(run, &doc, 1, 0, &err)) == 0)
        printf("nll %.9g over %lld predictions (ppl %.4g)\n", doc.nll, (long long)doc.n_pred,
               doc.n_pred ? exp(doc.nll / (double)doc.n_pred) : NAN);

done:
    if (rc)
        fprintf(stderr, "score: %s\n", err.msg);
    sl_model_run_free(run);
    sl_model_free(model);
    sl_backend_close(be);
    free(ids);
    return rc ? 1 : 0;
}
