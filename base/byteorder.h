/* Byte order: the one place that reads and writes fixed-width integers in
 * file formats (the token stream, shard directories, Megatron .bin/.idx,
 * BGZF indexes, 2bit, WAV). Formats are defined byte by byte, so these work
 * on bytes and never on the host's representation: the same code is right on
 * any host, and compilers turn each into a single load or store (plus a byte
 * swap for big-endian) where the target allows. */
#ifndef SLUICE_BASE_BYTEORDER_H
#define SLUICE_BASE_BYTEORDER_H

#include <stdint.h>

static inline uint16_t sl_get_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t sl_get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t sl_get_le64(const unsigned char *p)
{
    return (uint64_t)sl_get_le32(p) | (uint64_t)sl_get_le32(p + 4) << 32;
}

static inline uint32_t sl_get_be32(const unsigned char *p)
{
    return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static inline uint64_t sl_get_be64(const unsigned char *p)
{
    return (uint64_t)sl_get_be32(p) << 32 | (uint64_t)sl_get_be32(p + 4);
}

static inline void sl_put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
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

static inline void sl_put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static inline void sl_put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (56 - 8 * i));
}

#endif
