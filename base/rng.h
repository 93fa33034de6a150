/* The one random number generator: every random choice in sluice (shard
 * shuffles, DNA species samples, reverse-complement draws) comes from it,
 * seeded by --seed, so the same inputs and seed give byte-identical outputs
 * on any machine and with any thread count.
 *
 * Generator: SplitMix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the constants of Vigna's
 * splitmix64.c). The state is a plain uint64_t, the seed itself.
 *
 * Range method (sl_rng_below): Lemire's multiply-shift with rejection
 * ("Fast random integer generation in an interval", ACM TOMACS 2019):
 * x * n / 2^64 for a 64-bit draw x, redrawing when the low 64 bits of the
 * product fall below 2^64 mod n. The result is exactly uniform on [0, n).
 * A redraw happens with probability (2^64 mod n) / 2^64 < n / 2^64, so for
 * the n sluice draws from (at most billions) the sequence equals plain
 * multiply-shift (what shard shuffles used in 0.1.0) except with negligible
 * probability. docs/formats.md ("Random draws") specifies all of this and
 * records what it changed. */
#ifndef SLUICE_BASE_RNG_H
#define SLUICE_BASE_RNG_H

#include <stdint.h>

/* The next 64-bit output; advances *state. */
static inline uint64_t sl_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n); 0 when n is 0 or 1 (and then no draw is made). */
static inline uint64_t sl_rng_below(uint64_t *state, uint64_t n)
{
    if (n <= 1)
        return 0;
    unsigned __int128 m = (unsigned __int128)sl_splitmix64(state) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t threshold = (0 - n) % n; /* 2^64 mod n */
        while (lo < threshold) {
            m = (unsigned __int128)sl_splitmix64(state) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform double in [0, 1) from the top 53 bits of one draw. */
static inline double sl_rng_unit(uint64_t *state)
{
    return (double)(sl_splitmix64(state) >> 11) * 0x1.0p-53;
}

/* The k-th value of the stream seeded by `seed`, independent of any other
 * draw (for per-document choices that must not depend on thread timing). */
static inline double sl_rng_unit_at(uint64_t seed, uint64_t k)
{
    uint64_t s = seed ^ (k * 0xD1B54A32D192ED03ull);
    sl_splitmix64(&s);
    return sl_rng_unit(&s);
}

#endif
