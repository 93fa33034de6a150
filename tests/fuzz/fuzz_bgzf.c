/* libFuzzer target: BGZF random access (.gzi parsing, block headers, inflate)
 * on arbitrary bytes. Input: u16 length of the .gzi part, the .gzi bytes, then
 * the BGZF bytes; both become memory files. Errors are fine; crashes, hangs
 * and out-of-bounds reads are not. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dna/bgzf.h"

static int memfile(const uint8_t *p, size_t n, char *path, size_t cap)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return -1;
    if (n && write(fd, p, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t glen = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (glen > size)
        glen = size;
    char gp[64], dp[64];
    int gfd = memfile(data, glen, gp, sizeof gp), dfd = memfile(data + glen, size - glen, dp, sizeof dp);
    if (gfd >= 0 && dfd >= 0) {
        sl_err err;
        dna_bgzf *z = dna_bgzf_open(dp, gp, &err);
        if (z) {
            char buf[256];
            for (uint64_t off = 0; off < 3 * 65536; off += 40000)
                dna_bgzf_read_at(z, off, buf, sizeof buf, &err);
            dna_bgzf_close(z);
        }
    }
    if (gfd >= 0)
        close(gfd);
    if (dfd >= 0)
        close(dfd);
    return 0;
}
