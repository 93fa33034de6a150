/* Lists the entries of a CUDA fat binary (the raw .nv_fatbin section of an
 * object file, on stdin) as "ELF sm_NN" / "PTX compute_NN" lines — what
 * `make cuda-check` needs from cuobjdump, for machines whose CUDA toolkit
 * lacks it. Layout as the toolkit writes it: a 16-byte header (magic
 * 0xBA55ED50, version, header size, payload size), then entries, each a
 * header (u16 kind: 1 PTX, 2 ELF; u32 header size at 4; u64 payload size at
 * 8; u32 sm version at 28) followed by its payload. Several fat binaries may
 * follow each other in one section. Reads at most 256 MiB and checks every
 * size against what is left, so a malformed input ends with an error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

int main(void)
{
    size_t cap = 1 << 20, len = 0, got;
    unsigned char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap) {
            if (cap >= (256u << 20)) {
                fprintf(stderr, "fatbin_list: input larger than 256 MiB\n");
                return 1;
            }
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    if (!buf) return fprintf(stderr, "fatbin_list: out of memory\n"), 1;
    size_t off = 0;
    int entries = 0;
    while (off + 16 <= len) {
        if (rd(buf + off, 4) == 0) { /* alignment padding between fat binaries */
            off += 8;
            continue;
        }
        if (rd(buf + off, 4) != 0xBA55ED50u)
            return fprintf(stderr, "fatbin_list: offset %zu: not a fat binary header\n", off), 1;
        uint64_t hsz = rd(buf + off + 6, 2), fsz = rd(buf + off + 8, 8);
        if (hsz < 16 || hsz > len - off || fsz > len - off - hsz)
            return fprintf(stderr, "fatbin_list: offset %zu: fat binary sizes past the end\n", off), 1;
        size_t e = off + hsz, end = off + hsz + fsz;
        while (e + 32 <= end) {
            uint64_t kind = rd(buf + e, 2), ehs = rd(buf + e + 4, 4), psz = rd(buf + e + 8, 8), sm = rd(buf + e + 28, 4);
            if (ehs < 32 || ehs > end - e || psz > end - e - ehs)
                return fprintf(stderr, "fatbin_list: offset %zu: entry sizes past the end\n", e), 1;
            if (kind == 2) printf("ELF sm_%u\n", (unsigned)sm);
            else if (kind == 1) printf("PTX compute_%u\n", (unsigned)sm);
            else printf("kind%u sm_%u\n", (unsigned)kind, (unsigned)sm);
            entries++;
            e += ehs + psz;
        }
        off = end;
    }
    free(buf);
    if (!entries) return fprintf(stderr, "fatbin_list: no fat binary entries\n"), 1;
    return 0;
}
