/* The machine's own 2-thread scaling, printed beside the tokenizers'
 * (bench/spm.sh): two threads each walking its own random cycle through a
 * table (a Sattolo permutation: every load depends on the one before, as a
 * tokenizer's vocabulary and cache lookups do), against one thread doing
 * both walks; and the same for a dependent multiply chain (compute only).
 * Prints the speed-up of 2 threads for each table size.
 * usage: mem_scaling [STEPS]  (default 20000000 loads per walk) */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Seconds for two walks of steps loads each, on threads threads. */
static double walks(uint32_t *const t[2], long steps, int threads, uint64_t *sink)
{
    double t0 = omp_get_wtime();
    uint64_t acc = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : acc)
    for (int w = 0; w < 2; w++) {
        uint32_t p = 0;
        for (long i = 0; i < steps; i++)
            p = t[w][p];
        acc += p;
    }
    *sink += acc;
    return omp_get_wtime() - t0;
}

static double chains(long steps, int threads, uint64_t *sink)
{
    double t0 = omp_get_wtime();
    uint64_t acc = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : acc)
    for (int w = 0; w < 2; w++) {
        uint64_t x = (uint64_t)w + 1;
        for (long i = 0; i < steps; i++)
            x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 13);
        acc += x;
    }
    *sink += acc;
    return omp_get_wtime() - t0;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 20000000L;
    uint64_t rng = 88172645463325252ULL, sink = 0;
    printf("machine's own 2-thread scaling (1-thread time / 2-thread time, best of 3):");
    for (size_t kb = 64; kb <= 16384; kb *= 4) {
        size_t n = kb * 1024 / 4;
        uint32_t *t[2];
        for (int w = 0; w < 2; w++) {
            t[w] = malloc(n * sizeof **t);
            if (!t[w])
                return 1;
            for (size_t i = 0; i < n; i++)
                t[w][i] = (uint32_t)i;
            for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through all */
                size_t j = next(&rng) % i;
                uint32_t x = t[w][i];
                t[w][i] = t[w][j], t[w][j] = x;
            }
        }
        double one = 1e9, two = 1e9;
        for (int r = 0; r < 3; r++) {
            double a = walks(t, steps, 1, &sink), b = walks(t, steps, 2, &sink);
            one = a < one ? a : one;
            two = b < two ? b : two;
        }
        printf(" lookups in %zu KB x%.2f;", kb, one / two);
        free(t[0]);
        free(t[1]);
    }
    double one = 1e9, two = 1e9;
    for (int r = 0; r < 3; r++) {
        double a = chains(4 * steps, 1, &sink), b = chains(4 * steps, 2, &sink);
        one = a < one ? a : one;
        two = b < two ? b : two;
    }
    printf(" compute x%.2f%s\n", one / two, sink == 42 ? " " : "");
    return 0;
}
