/* Lists the entries of a CUDA fat binary (the raw .nv_fatbin section of an
 * object file, on stdin) as "ELF sm_NN" / "PTX compute_NN" lines — what
 * `make cuda-check` needs from cuobjdump, for toolkits that lack it. The
 * format is described in fatbin_parse.h. Reads at most 256 MiB. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/cuda/fatbin_parse.h"

static void print_entry(void *ctx, unsigned kind, unsigned sm)
{
    (void)ctx;
    if (kind == 2)
        printf("ELF sm_%u\n", sm);
    else if (kind == 1)
        printf("PTX compute_%u\n", sm);
    else
        printf("kind%u sm_%u\n", kind, sm);
}

int main(void)
{
    size_t cap = 1 << 20, len = 0, got;
    unsigned char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap) {
            if (cap >= (256u << 20))
                return fprintf(stderr, "fatbin_list: input larger than 256 MiB\n"), 1;
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb, cap *= 2;
        }
    }
    if (!buf)
        return fprintf(stderr, "fatbin_list: out of memory\n"), 1;
    char msg[128];
    int n = fatbin_parse(buf, len, print_entry, NULL, msg, sizeof msg);
    free(buf);
    if (n < 0)
        return fprintf(stderr, "fatbin_list: <stdin>: %s\n", msg), 1;
    return 0;
}
