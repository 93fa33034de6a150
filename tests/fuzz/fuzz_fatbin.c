/* libFuzzer target: the fat binary reader behind `make cuda-check`
 * (tests/cuda/fatbin_parse.h) must reject any malformed input with a
 * message, never read out of bounds or loop forever. Seed corpus:
 * tests/fuzz/corpus/fatbin/ (nvcc 13.0 output for a one-line kernel built for
 * sm_80/86/89/90 + compute_90). */
#include <stddef.h>
#include <stdint.h>

#include "tests/cuda/fatbin_parse.h"

static void ignore(void *ctx, unsigned kind, unsigned sm)
{
    (void)ctx, (void)kind, (void)sm;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[128];
    fatbin_parse(data, size, ignore, NULL, msg, sizeof msg);
    return 0;
}
