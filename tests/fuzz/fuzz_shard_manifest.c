/* libFuzzer target: opening a shard directory whose manifest.json and
 * documents.jsonl are arbitrary bytes (split at the first NUL), and reading
 * every row when it opens. A directory that opens must read without a crash
 * and end cleanly or with an error message. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shard/shard.h"

static char dir[64];

static void put(const char *name, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(p, 1, n, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/sluice-fuzz-shard-%ld", (long)getpid());
        mkdir(dir, 0700);
        /* small fixed data files the manifest may point at */
        static const uint8_t tok[64] = {1, 0, 2, 0, 3, 0};
        static const uint8_t bnd[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
        put("train-00000.tokens", tok, sizeof tok);
        put("train-00000.bounds", bnd, sizeof bnd);
    }
    const uint8_t *z = memchr(data, 0, size);
    size_t n1 = z ? (size_t)(z - data) : size;
    put("manifest.json", data, n1);
    put("documents.jsonl", z ? z + 1 : data, z ? size - n1 - 1 : 0);
    sl_err err;
    sl_shard *s = sl_shard_open(dir, 1, &err);
    if (!s)
        return 0;
    for (int k = 0; k < SL_SPLIT_N; k++) {
        sl_shard_iter *it = sl_shard_get_split(s, k)->present ? sl_shard_iter_open(s, k, &err) : NULL;
        sl_row row;
        while (it && sl_shard_iter_next(it, &row, &err) == 1)
            ;
        sl_shard_iter_close(it);
    }
    sl_shard_close(s);
    return 0;
}
