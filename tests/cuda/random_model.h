/* Writes a Mamba-1 checkpoint with random weights (config.json in the Hugging
 * Face schema + model.safetensors with the HF tensor names), for GPU tests
 * at shapes larger than the committed fixtures and for bench-cuda at
 * mamba-130m's shape. Initialisation follows mamba_ssm's in spirit (dt bias
 * = softplus^-1 of dt in [1e-3, 0.1], A_log = log(1..N), D = 1, projections
 * scaled by 1/sqrt(fan_in)) so activations stay in a realistic range.
 * Test support, header-only. */
#ifndef SLUICE_TESTS_CUDA_RANDOM_MODEL_H
#define SLUICE_TESTS_CUDA_RANDOM_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rm_shape {
    int64_t d_model, n_layer, vocab, d_state, d_conv, expand, dt_rank;
    int bf16; /* store weights as BF16 (else F32) */
    uint64_t seed;
} rm_shape;

/* tensors per layer that rm_write writes (its RM_T lines) */
#define RM_LAYER_TENSORS 10

typedef struct rm_tensor {
    char name[96];
    int ndim;
    int64_t shape[3];
    int kind; /* 0 uniform(+-scale), 1 constant scale, 2 dt bias, 3 A_log */
    float scale;
} rm_tensor;

static uint64_t rm_rng;
static float rm_uniform(void)
{
    uint64_t z = (rm_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((z >> 40) / 16777216.0);
}

static int rm_add(rm_tensor *t, int n, int cap, const char *name, int ndim, int64_t a, int64_t b, int64_t c, int kind,
                  float scale)
{
    if (n >= cap) { /* a table sized for fewer tensors than are written: a bug here, not bad input */
        fprintf(stderr, "random_model: tensor table of %d entries is full at %s\n", cap, name);
        abort();
    }
    snprintf(t[n].name, sizeof t[n].name, "%s", name);
    t[n].ndim = ndim, t[n].shape[0] = a, t[n].shape[1] = b, t[n].shape[2] = c;
    t[n].kind = kind, t[n].scale = scale;
    return n + 1;
}

/* Writes dir/config.json and dir/model.safetensors (dir must exist).
 * Returns 0, or -1 with a message on stderr. */
static int rm_write(const char *dir, const rm_shape *s)
{
    const int64_t d = s->d_model, di = s->expand * d, N = s->d_state, R = s->dt_rank, K = s->d_conv;
    /* the embedding and the final norm, and RM_LAYER_TENSORS per layer: the
     * table once held 4 + 9 per layer, which overflowed the heap from 3
     * layers on (bench_cuda's 24-layer model: malloc() aborted at once) */
    int cap = 2 + RM_LAYER_TENSORS * (int)s->n_layer, n = 0;
    rm_tensor *t = calloc((size_t)cap, sizeof *t);
    char name[96];
    n = rm_add(t, n, cap, "backbone.embeddings.weight", 2, s->vocab, d, 0, 0, 0.1f);
    for (int64_t l = 0; l < s->n_layer; l++) {
#define RM_T(suffix, nd, a, b, c, kind, scale)                                                                         \
    snprintf(name, sizeof name, "backbone.layers.%lld.%s", (long long)l, suffix);                                      \
    n = rm_add(t, n, cap, name, nd, a, b, c, kind, scale)
        RM_T("norm.weight", 1, d, 0, 0, 1, 1.0f);
        RM_T("mixer.in_proj.weight", 2, 2 * di, d, 0, 0, 1.0f / sqrtf((float)d));
        RM_T("mixer.conv1d.weight", 3, di, 1, K, 0, 0.5f);
        RM_T("mixer.conv1d.bias", 1, di, 0, 0, 0, 0.1f);
        RM_T("mixer.x_proj.weight", 2, R + 2 * N, di, 0, 0, 1.0f / sqrtf((float)di));
        RM_T("mixer.dt_proj.weight", 2, di, R, 0, 0, 1.0f / sqrtf((float)R));
        RM_T("mixer.dt_proj.bias", 1, di, 0, 0, 2, 0.0f);
        RM_T("mixer.A_log", 2, di, N, 0, 3, 0.0f);
        RM_T("mixer.D", 1, di, 0, 0, 1, 1.0f);
        RM_T("mixer.out_proj.weight", 2, d, di, 0, 0, 1.0f / sqrtf((float)di * 2.0f * (float)s->n_layer));
#undef RM_T
    }
    n = rm_add(t, n, cap, "backbone.norm_f.weight", 1, d, 0, 0, 1, 1.0f);

    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return fprintf(stderr, "random_model: cannot write %s\n", path), free(t), -1;
    fprintf(f,
            "{\"model_type\": \"mamba\", \"hidden_size\": %lld, \"intermediate_size\": %lld, \"state_size\": %lld,\n"
            " \"num_hidden_layers\": %lld, \"conv_kernel\": %lld, \"expand\": %lld, \"time_step_rank\": %lld,\n"
            " \"vocab_size\": %lld, \"layer_norm_epsilon\": 1e-05, \"use_bias\": false, \"use_conv_bias\": true,\n"
            " \"tie_word_embeddings\": true, \"residual_in_fp32\": true}\n",
            (long long)d, (long long)di, (long long)N, (long long)s->n_layer, (long long)K, (long long)s->expand,
            (long long)R, (long long)s->vocab);
    fclose(f);

    /* header: offsets follow the tensors in order */
    size_t esz = s->bf16 ? 2 : 4, hcap = (size_t)n * 200 + 64, hl = 0;
    char *h = malloc(hcap);
    uint64_t off = 0;
    hl += (size_t)snprintf(h + hl, hcap - hl, "{");
    for (int i = 0; i < n; i++) {
        uint64_t numel = 1;
        for (int k = 0; k < t[i].ndim; k++)
            numel *= (uint64_t)t[i].shape[k];
        hl += (size_t)snprintf(h + hl, hcap - hl, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", t[i].name,
                               s->bf16 ? "BF16" : "F32");
        for (int k = 0; k < t[i].ndim; k++)
            hl += (size_t)snprintf(h + hl, hcap - hl, "%s%lld", k ? "," : "", (long long)t[i].shape[k]);
        hl += (size_t)snprintf(h + hl, hcap - hl, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                               (unsigned long long)(off + numel * esz));
        off += numel * esz;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8)
        h[hl++] = ' ';
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    if (!f)
        return fprintf(stderr, "random_model: cannot write %s\n", path), free(h), free(t), -1;
    uint64_t hlen = hl;
    unsigned char le[8];
    for (int k = 0; k < 8; k++)
        le[k] = (unsigned char)(hlen >> (8 * k));
    fwrite(le, 1, 8, f);
    fwrite(h, 1, hl, f);
    rm_rng = s->seed;
    size_t bufn = 1 << 16;
    unsigned char *buf = malloc(bufn * 4);
    for (int i = 0; i < n; i++) {
        uint64_t numel = 1;
        for (int k = 0; k < t[i].ndim; k++)
            numel *= (uint64_t)t[i].shape[k];
        for (uint64_t j0 = 0; j0 < numel; j0 += bufn) {
            size_t m = numel - j0 < bufn ? (size_t)(numel - j0) : bufn;
            for (size_t j = 0; j < m; j++) {
                uint64_t e = j0 + j;
                float v;
                switch (t[i].kind) {
                case 0: v = (2.0f * rm_uniform() - 1.0f) * t[i].scale; break;
                case 1: v = t[i].scale * (1.0f + 0.1f * (rm_uniform() - 0.5f)); break;
                case 2: { /* softplus^-1(dt), dt log-uniform in [1e-3, 0.1] */
                    float dt = expf(logf(1e-3f) + rm_uniform() * (logf(0.1f) - logf(1e-3f)));
                    v = dt + logf(-expm1f(-dt));
                    break;
                }
                default: v = logf((float)(e % (uint64_t)N + 1)); break; /* A_log = log(1..N) */
                }
                uint32_t u;
                memcpy(&u, &v, 4);
                if (s->bf16) {
                    uint16_t b = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
                    memcpy(buf + 2 * j, &b, 2);
                } else {
                    memcpy(buf + 4 * j, &u, 4);
                }
            }
            fwrite(buf, esz, m, f);
        }
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        fprintf(stderr, "random_model: write error on %s\n", path);
    free(buf), free(h), free(t);
    return bad ? -1 : 0;
}

/* Removes what rm_write wrote, and the folder. */
static inline void rm_remove(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    unlink(path);
    rmdir(dir);
}

#endif
