/* Reader of a CUDA fat binary (the raw .nv_fatbin section of an object
 * file), for `make cuda-check` on toolkits without cuobjdump. Layout as the
 * toolkit writes it: a 16-byte header (u32 magic 0xBA55ED50, u16 version,
 * u16 header size, u64 payload size), then entries, each a header (u16 kind:
 * 1 PTX, 2 ELF; u32 header size at 4; u64 payload size at 8; u32 sm version
 * at 28) followed by its payload. Several fat binaries may follow each other,
 * separated by zero padding. Every size is checked against what is left, so
 * malformed input ends with an error, never a read out of bounds.
 * Header-only; fuzzed by tests/fuzz/fuzz_fatbin.c. */
#ifndef SLUICE_TESTS_CUDA_FATBIN_PARSE_H
#define SLUICE_TESTS_CUDA_FATBIN_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t fatbin_rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Calls emit(ctx, kind, sm) for each entry. Returns the number of entries,
 * or -1 with a message in msg (which names the offset). */
static int fatbin_parse(const unsigned char *buf, size_t len, void (*emit)(void *, unsigned, unsigned), void *ctx,
                        char *msg, size_t msgsz)
{
    size_t off = 0;
    int entries = 0;
    while (off + 16 <= len) {
        if (fatbin_rd(buf + off, 4) == 0) { /* alignment padding between fat binaries */
            off += 8;
            continue;
        }
        if (fatbin_rd(buf + off, 4) != 0xBA55ED50u)
            return snprintf(msg, msgsz, "offset %zu: not a fat binary header", off), -1;
        uint64_t hsz = fatbin_rd(buf + off + 6, 2), fsz = fatbin_rd(buf + off + 8, 8);
        if (hsz < 16 || hsz > len - off || fsz > len - off - hsz)
            return snprintf(msg, msgsz, "offset %zu: fat binary sizes past the end", off), -1;
        size_t e = off + (size_t)hsz, end = off + (size_t)hsz + (size_t)fsz;
        while (e + 32 <= end) {
            uint64_t kind = fatbin_rd(buf + e, 2), ehs = fatbin_rd(buf + e + 4, 4), psz = fatbin_rd(buf + e + 8, 8);
            if (ehs < 32 || ehs > end - e || psz > end - e - ehs)
                return snprintf(msg, msgsz, "offset %zu: entry sizes past the end", e), -1;
            emit(ctx, (unsigned)kind, (unsigned)fatbin_rd(buf + e + 28, 4));
            entries++;
            e += (size_t)(ehs + psz);
        }
        off = end;
    }
    if (!entries)
        return snprintf(msg, msgsz, "no fat binary entries"), -1;
    return entries;
}

#endif
