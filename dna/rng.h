/* A small deterministic random number generator (SplitMix64, Steele et al.
 * 2014): every random choice in the DNA stages comes from it, seeded by
 * --seed, so the same inputs and seed give the same output on any machine. */
#ifndef SLUICE_DNA_RNG_H
#define SLUICE_DNA_RNG_H

#include <stdint.h>

static inline uint64_t dna_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n) without modulo bias (rejection sampling). */
static inline uint64_t dna_rng_below(uint64_t *state, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t x = dna_splitmix64(state);
        if (x < limit)
            return x % n;
    }
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double dna_rng_unit(uint64_t *state) { return (double)(dna_splitmix64(state) >> 11) * 0x1.0p-53; }

/* The k-th value of the stream seeded by `seed`, independent of any other
 * draw (for per-document choices that must not depend on thread timing). */
static inline double dna_rng_unit_at(uint64_t seed, uint64_t k)
{
    uint64_t s = seed ^ (k * 0xD1B54A32D192ED03ull);
    dna_splitmix64(&s);
    return dna_rng_unit(&s);
}

#endif
