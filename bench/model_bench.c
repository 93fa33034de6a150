/* Helper for bench/model.sh (compiled by it; not part of libsluice):
 *   model_bench gen DIR [N_LAYER D_MODEL VOCAB]  random Mamba-1 checkpoint (BF16 safetensors, HF names),
 *                                                 mamba-130m's shape by default
 *   model_bench docs N LEN VOCAB SEED            N documents of LEN random ids as JSON Lines
 *   model_bench sgemm THREADS                     OpenBLAS SGEMM GFLOP/s (best of 3) at prefill shapes
 *   model_bench flops N_LAYER D_MODEL VOCAB       forward FLOPs per token (as sl_mamba_flops_per_token)
 *   model_bench gen2 DIR [N_LAYER D_MODEL VOCAB] random Mamba-2 checkpoint (BF16, transformers' names), mamba2-130m's
 *                                                 shape by default (d_state 128, headdim 64, ngroups 1)
 *   model_bench flops2 N_LAYER D_MODEL VOCAB      its forward FLOPs per token (as m2_flops in model/mamba2.c)
 * Weights: in/x/dt/out_proj ~ U(-a, a) with a = 1/sqrt(fan_in), A_log = log(1..16),
 * D = 1, dt bias = inverse softplus of dt in [1e-3, 1e-1], norms 1, embedding ~ U(-0.1, 0.1). */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)(rng >> 40) / (float)(1ull << 24) * 2.0f - 1.0f;
}

typedef struct tensor {
    char name[128];
    int ndim;
    long shape[3];
    int kind; /* 0 uniform(a), 1 A_log, 2 ones, 3 dt bias, 4 zeros */
    float a;
} tensor;

static long numel(const tensor *t)
{
    long n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

static uint16_t bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

/* Mamba-2 (mamba2 = 1): mamba2-130m's layer shape (d_state 128, headdim 64,
 * ngroups 1, expand 2), transformers' names and config. */
static int gen(const char *dir, int nl, int d, int vocab, int mamba2)
{
    int di = 2 * d, n = mamba2 ? 128 : 16, r = (d + 15) / 16, k = 4;
    int nh = di / 64, cd = di + 2 * n, dip = di + cd + nh;
    int cap = 2 + nl * 10, nt = 0;
    tensor *t = calloc((size_t)cap, sizeof *t);
#define ADD(nm, nd, s0, s1, s2, kd, aa)                                                                                \
    do {                                                                                                               \
        tensor *x = &t[nt++];                                                                                          \
        snprintf(x->name, sizeof x->name, "%s", nm);                                                                   \
        x->ndim = nd, x->shape[0] = s0, x->shape[1] = s1, x->shape[2] = s2, x->kind = kd, x->a = aa;                   \
    } while (0)
    char nm[128];
    ADD("backbone.embeddings.weight", 2, vocab, d, 0, 0, 0.1f);
    for (int i = 0; i < nl; i++) {
#define L(s) (snprintf(nm, sizeof nm, "backbone.layers.%d.%s", i, s), nm)
        if (mamba2) {
            ADD(L("norm.weight"), 1, d, 0, 0, 2, 0);
            ADD(L("mixer.in_proj.weight"), 2, dip, d, 0, 0, 1.0f / sqrtf((float)d));
            ADD(L("mixer.conv1d.weight"), 3, cd, 1, k, 0, 0.5f);
            ADD(L("mixer.conv1d.bias"), 1, cd, 0, 0, 0, 0.1f);
            ADD(L("mixer.dt_bias"), 1, nh, 0, 0, 3, 0);
            ADD(L("mixer.A_log"), 1, nh, 0, 0, 1, 0);
            ADD(L("mixer.D"), 1, nh, 0, 0, 2, 0);
            ADD(L("mixer.norm.weight"), 1, di, 0, 0, 2, 0);
            ADD(L("mixer.out_proj.weight"), 2, d, di, 0, 0, 1.0f / sqrtf((float)di));
            continue;
        }
        ADD(L("norm.weight"), 1, d, 0, 0, 2, 0);
        ADD(L("mixer.in_proj.weight"), 2, 2 * di, d, 0, 0, 1.0f / sqrtf((float)d));
        ADD(L("mixer.conv1d.weight"), 3, di, 1, k, 0, 0.5f);
        ADD(L("mixer.conv1d.bias"), 1, di, 0, 0, 0, 0.1f);
        ADD(L("mixer.x_proj.weight"), 2, r + 2 * n, di, 0, 0, 1.0f / sqrtf((float)di));
        ADD(L("mixer.dt_proj.weight"), 2, di, r, 0, 0, 1.0f / sqrtf((float)r));
        ADD(L("mixer.dt_proj.bias"), 1, di, 0, 0, 3, 0);
        ADD(L("mixer.A_log"), 2, di, n, 0, 1, 0);
        ADD(L("mixer.D"), 1, di, 0, 0, 2, 0);
        ADD(L("mixer.out_proj.weight"), 2, d, di, 0, 0, 1.0f / sqrtf((float)di));
#undef L
    }
    ADD("backbone.norm_f.weight", 1, d, 0, 0, 2, 0);
    /* header */
    size_t hcap = (size_t)nt * 200 + 64, hl = 0;
    char *h = malloc(hcap);
    hl += (size_t)snprintf(h + hl, hcap - hl, "{\"__metadata__\":{\"format\":\"pt\"}");
    long off = 0;
    for (int i = 0; i < nt; i++) {
        hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"BF16\",\"shape\":[", t[i].name);
        for (int j = 0; j < t[i].ndim; j++)
            hl += (size_t)snprintf(h + hl, hcap - hl, "%s%ld", j ? "," : "", t[i].shape[j]);
        long bytes = numel(&t[i]) * 2;
        hl += (size_t)snprintf(h + hl, hcap - hl, "],\"data_offsets\":[%ld,%ld]}", off, off + bytes);
        off += bytes;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8)
        h[hl++] = ' ';
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint64_t hl64 = hl;
    fwrite(&hl64, 8, 1, f);
    fwrite(h, 1, hl, f);
    uint16_t *buf = malloc(1 << 20);
    for (int i = 0; i < nt; i++) {
        long m = numel(&t[i]);
        for (long j = 0; j < m;) {
            long c = m - j < (1 << 19) ? m - j : (1 << 19);
            for (long q = 0; q < c; q++) {
                float v;
                long e = j + q;
                switch (t[i].kind) {
                case 0: v = t[i].a * frand(); break;
                case 1: v = logf((float)(e % 16 + 1)); break; /* A in 1..16 */
                case 2: v = 1.0f; break;
                case 3: { /* inverse softplus of dt log-uniform in [1e-3, 1e-1] */
                    float dt = expf(logf(1e-3f) + (0.5f + 0.5f * frand()) * (logf(1e-1f) - logf(1e-3f)));
                    v = dt + logf(-expm1f(-dt));
                    break;
                }
                default: v = 0.0f;
                }
                buf[q] = bf16(v);
            }
            fwrite(buf, 2, (size_t)c, f);
            j += c;
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/config.json", dir);
    f = fopen(path, "w");
    if (mamba2)
        fprintf(f,
                "{\"architectures\":[\"Mamba2ForCausalLM\"],\"model_type\":\"mamba2\",\"hidden_size\":%d,"
                "\"num_hidden_layers\":%d,\"vocab_size\":%d,\"state_size\":%d,\"conv_kernel\":%d,\"expand\":2,"
                "\"num_heads\":%d,\"head_dim\":64,\"n_groups\":1,\"chunk_size\":256,\"layer_norm_epsilon\":1e-05,"
                "\"use_bias\":false,\"use_conv_bias\":true,\"time_step_limit\":[0.0,Infinity],"
                "\"pad_vocab_size_multiple\":8,\"tie_word_embeddings\":true}\n",
                d, nl, vocab, n, k, nh);
    else
        fprintf(f,
                "{\"architectures\":[\"MambaForCausalLM\"],\"model_type\":\"mamba\",\"hidden_size\":%d,"
                "\"num_hidden_layers\":%d,\"vocab_size\":%d,\"state_size\":%d,\"conv_kernel\":%d,\"expand\":2,"
                "\"time_step_rank\":%d,\"layer_norm_epsilon\":1e-05,\"use_bias\":false,\"use_conv_bias\":true,"
                "\"pad_vocab_size_multiple\":8,\"tie_word_embeddings\":true}\n",
                d, nl, vocab, n, k, r);
    fclose(f);
    free(buf);
    free(h);
    free(t);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* SGEMM at the shapes of a 2048-token prefill of mamba-130m, OpenBLAS' own
 * threading: the practical fp32 ceiling of this machine. */
static int sgemm(int threads)
{
    openblas_set_num_threads(threads);
    const int M = 2048, shapes[][2] = {{3072, 768}, {768, 1536}, {50280, 768}};
    double best_total = 0, best_cpu_total = 0;
    for (int s = 0; s < 3; s++) {
        int N = shapes[s][0], K = shapes[s][1];
        int Mr = s == 2 ? 256 : M; /* lm_head in row tiles, as the model does */
        float *a = malloc((size_t)Mr * K * 4), *b = malloc((size_t)N * K * 4), *c = malloc((size_t)Mr * N * 4);
        for (long i = 0; i < (long)Mr * K; i++)
            a[i] = frand();
        for (long i = 0; i < (long)N * K; i++)
            b[i] = frand();
        double best = 1e30, best_cpu = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now(), c0 = cpu_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Mr, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
            double dt = now() - t0, dc = cpu_now() - c0;
            best = dt < best ? dt : best;
            best_cpu = dc < best_cpu ? dc : best_cpu;
        }
        double gf = 2.0 * Mr * N * K / best / 1e9, gc = 2.0 * Mr * N * K / best_cpu / 1e9;
        printf("sgemm %dx%dx%d: %.1f GFLOP/s wall, %.1f GFLOP per CPU-second\n", Mr, N, K, gf, gc);
        best_total = gf > best_total ? gf : best_total;
        best_cpu_total = gc > best_cpu_total ? gc : best_cpu_total;
        free(a), free(b), free(c);
    }
    printf("ceiling %.1f %.1f\n", best_total, best_cpu_total);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && (!strcmp(argv[1], "gen") || !strcmp(argv[1], "gen2")))
        return gen(argv[2], argc > 3 ? atoi(argv[3]) : 24, argc > 4 ? atoi(argv[4]) : 768,
                   argc > 5 ? atoi(argv[5]) : 50280, !strcmp(argv[1], "gen2"));
    if (argc == 6 && !strcmp(argv[1], "docs")) {
        int n = atoi(argv[2]), len = atoi(argv[3]), v = atoi(argv[4]);
        rng ^= (uint64_t)atoll(argv[5]) * 0x2545F4914F6CDD1Dull;
        for (int i = 0; i < n; i++) {
            printf("{\"id\":\"bench%d\",\"ids\":[", i);
            for (int j = 0; j < len; j++)
                printf("%s%d", j ? "," : "", (int)((frand() * 0.5f + 0.5f) * (float)(v - 1)));
            printf("]}\n");
        }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "sgemm"))
        return sgemm(atoi(argv[2]));
    if (argc == 5 && !strcmp(argv[1], "flops")) {
        double nl = atof(argv[2]), d = atof(argv[3]), v = atof(argv[4]), di = 2 * d, n = 16, r = ceil(d / 16);
        double mm = 2.0 * (2 * di * d + (r + 2 * n) * di + di * r + d * di);
        double v8 = ceil(v / 8) * 8;
        printf("%.0f\n", nl * (mm + 2.0 * 4 * di + 6.0 * di * n + 4.0 * di) + 2.0 * d * v8);
        return 0;
    }
    if (argc == 5 && !strcmp(argv[1], "flops2")) { /* as m2_flops in model/mamba2.c */
        double nl = atof(argv[2]), d = atof(argv[3]), v = atof(argv[4]), ds = 2 * d, n = 128, nh = ds / 64;
        double cd = ds + 2 * n, dip = ds + cd + nh;
        double mm = 2.0 * (dip * d + d * ds), v8 = ceil(v / 8) * 8;
        printf("%.0f\n", nl * (mm + 2.0 * 4 * cd + 6.0 * ds * n + 4.0 * ds) + 2.0 * d * v8);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of bench/model_bench.c\n");
    return 2;
}
