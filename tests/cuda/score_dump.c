/* score_dump: per-token log-probabilities of documents under a checkpoint,
 * through the library's model and packed scoring (model/), on a chosen
 * backend, as JSON Lines — for scripts/device-check, which compares them
 * with Hugging Face transformers' forward pass on the same GPU
 * (tests/cuda/hf_gpu_compare.py).
 *
 *   score_dump [--device cpu|cuda] [--tf32 0|1] [--chunk N] MODEL_DIR DOCS.jsonl
 *
 * DOCS.jsonl: one {"id": ..., "tokens": [...]} per line (the fixtures'
 * expected.jsonl has that form). Output on stdout, one line per document:
 * {"id": ..., "logp": [...]} with n - 1 values (%.9g: float32 round-trips).
 * All documents are scored packed in one call, state reset at each start. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "model/model.h"
#include "model/score.h"
#include "stream/io.h"
#include "base/json.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: score_dump [--device cpu|cuda] [--tf32 0|1] [--chunk N] MODEL_DIR DOCS.jsonl\n");
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    const char *device = "cuda", *dir = NULL, *docs_path = NULL;
    int tf32 = 1;
    long chunk = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--tf32") && i + 1 < argc)
            tf32 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc)
            chunk = atol(argv[++i]);
        else if (argv[i][0] == '-')
            return usage(stderr);
        else if (!dir)
            dir = argv[i];
        else if (!docs_path)
            docs_path = argv[i];
        else
            return usage(stderr);
    }
    if (!dir || !docs_path)
        return usage(stderr);
    sl_err err = {{0}};
    sl_backend *b = sl_backend_open(device, 0, &err);
    if (!b)
        return fprintf(stderr, "score_dump: %s\n", err.msg), 1;
    sl_cuda_set_tf32(b, tf32);
    sl_model *m = sl_model_load(dir, b, &err);
    if (!m)
        return fprintf(stderr, "score_dump: %s: %s\n", dir, err.msg), 1;
    char *text;
    size_t len;
    if (sl_read_file(docs_path, &text, &len, &err) != 0)
        return fprintf(stderr, "score_dump: %s\n", err.msg), 1;
    size_t cap = 16, n = 0;
    sl_score_item *it = calloc(cap, sizeof *it);
    char **ids = calloc(cap, sizeof *ids);
    for (char *line = text, *nl; line < text + len && *line; line = nl + 1) {
        nl = memchr(line, '\n', (size_t)(text + len - line));
        if (!nl)
            nl = text + len;
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        if (!jd)
            return fprintf(stderr, "score_dump: %s: %s\n", docs_path, err.msg), 1;
        const sl_json *r = sl_json_root(jd), *t = sl_json_get(r, "tokens");
        const char *id = sl_json_get_str(r, "id");
        if (!t || t->type != SL_JSON_ARRAY)
            return fprintf(stderr, "score_dump: %s: a line without \"tokens\"\n", docs_path), 1;
        if (n == cap) {
            cap *= 2;
            it = realloc(it, cap * sizeof *it);
            ids = realloc(ids, cap * sizeof *ids);
        }
        uint32_t *tok = malloc((t->n + 1) * sizeof *tok);
        for (size_t k = 0; k < t->n; k++)
            tok[k] = (uint32_t)t->kids[k]->num;
        ids[n] = strdup(id ? id : "");
        it[n] = (sl_score_item){.id = ids[n], .tokens = tok, .n = (int64_t)t->n};
        it[n].logp = calloc(t->n + 1, sizeof(float));
        n++;
        sl_json_free(jd);
    }
    sl_model_run *run = sl_model_run_new(m, chunk, &err);
    if (!run || sl_score_batch(run, it, n, 0, &err) < 0)
        return fprintf(stderr, "score_dump: %s\n", err.msg), 1;
    for (size_t i = 0; i < n; i++) {
        printf("{\"id\": \"%s\", \"logp\": [", ids[i]);
        for (int64_t t = 0; t + 1 < it[i].n; t++)
            printf("%s%.9g", t ? ", " : "", it[i].logp[t]);
        printf("]}\n");
        free((void *)it[i].tokens), free(it[i].logp), free(ids[i]);
    }
    free(it), free(ids), free(text);
    sl_model_run_free(run);
    sl_model_free(m);
    sl_backend_close(b);
    return 0;
}
