/* libFuzzer target for the audio decoding path: the RIFF chunk walker, then
 * libsndfile through our memory I/O, mixdown, libsoxr resampling, and every
 * quantizer on the result. Any input must give samples or a one-line error,
 * never a crash, a leak or a hang.
 *   make fuzz && build-fuzz/fuzz_wav -max_total_time=60 tests/fuzz/corpus/wav tests/data/audio
 * (the corpus holds small inputs minimized from a run seeded with tests/data/audio). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/decode.h"
#include "audio/quantize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_audio a;
    sl_err err;
    /* Resample to a rate that no test file has, so soxr always runs. */
    sl_audio_opts o = {.rate = 11025, .quality = 0};
    if (sl_audio_decode_mem(data, size, "fuzz.wav", &o, &a, &err) == 0) {
        size_t n = a.n < 65536 ? a.n : 65536;
        uint32_t *codes = malloc((n ? n : 1) * sizeof *codes);
        for (int k = 0; k <= SL_AQ_G711; k++) {
            sl_aq_encode(k, 8, a.x, n, codes);
            for (size_t i = 0; i < n; i++)
                if (codes[i] > 255)
                    abort();
        }
        free(codes);
        sl_audio_free(&a);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        abort(); /* every failure has exactly one line of message */
    }
    return 0;
}
