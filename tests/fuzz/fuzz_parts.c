/* libFuzzer target: part file names and --part specs (stream/parts.c). A
 * name either parses to R < 2^60, N and offsets inside the name that frame
 * "<R>-of-<N>", or is rejected; a spec parses to 0 <= R < N or is an error
 * with a one-line message. Never crash or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    uint64_t r, n;
    size_t pre, post;
    if (sl_parts_parse_name(s, &r, &n, &pre, &post)) {
        size_t len = strlen(s);
        if (pre >= post || post > len || !strstr(s + pre, "-of-"))
            abort();
    }
    sl_err err = {{0}};
    sl_part p;
    if (strcmp(s, "slurm")) {
        if (sl_part_parse(s, &p, &err) == 0) {
            if (p.r >= p.n)
                abort();
        } else if (!err.msg[0] || strchr(err.msg, '\n')) {
            abort();
        }
    }
    free(s);
    return 0;
}
