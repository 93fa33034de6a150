/* SplitMix64: the seeded generator behind every random choice in shard/
 * (shuffle windows). Small, fast, and fully determined by the seed. */
#ifndef SLUICE_SHARD_RNG_H
#define SLUICE_SHARD_RNG_H

#include <stdint.h>

static inline uint64_t sl_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n) (Lemire's multiply-shift; the bias is < n / 2^64). */
static inline uint64_t sl_rng_below(uint64_t *state, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)sl_splitmix64(state) * n) >> 64);
}

static inline void sl_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void sl_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t sl_get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t sl_get_le64(const unsigned char *p)
{
    return (uint64_t)sl_get_le32(p) | (uint64_t)sl_get_le32(p + 4) << 32;
}

#endif
