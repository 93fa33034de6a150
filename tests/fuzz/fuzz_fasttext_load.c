/* libFuzzer target: fastText model files (model/fasttext.c) on arbitrary
 * bytes. The loader must return a model or a one-line error naming the
 * file, never read out of bounds nor allocate beyond what the bytes can
 * hold; a model that loads must predict sample texts (labels in range, at
 * most k of them, best first) with any k. Seeds: tests/fuzz/corpus/fasttext_load
 * (the quantized topic models of tests/data/classify and a truncated one). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/fasttext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const samples[] = {"Hello world, the DNA tokenizer",
                                          "",
                                          "  \t ",
                                          "__label__x y </s> z",
                                          "\xe4\xb8\xad\xf0\x9f\x99\x82 \xff\xfe a",
                                          "line one\nline two"};
    sl_err e;
    sl_ft_model *m = sl_ft_load_mem(data, size, "fuzz.bin", &e);
    if (!m) {
        if (!strstr(e.msg, "fuzz.bin") || strchr(e.msg, '\n'))
            abort();
        return 0;
    }
    sl_ft_info info;
    sl_ft_get_info(m, &info);
    sl_ft_state *s = sl_ft_state_new(m);
    sl_ft_pred *out = malloc(((size_t)info.nlabels + 1) * sizeof *out);
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        for (int k = -1; k <= 3; k += 2) {
            int n = sl_ft_predict(m, s, samples[i], strlen(samples[i]), k, 0.0f, out, &e);
            if (n < 0)
                continue; /* NaN in the weights: an error, not a crash */
            if (n > info.nlabels || (k > 0 && n > k))
                abort();
            for (int j = 0; j < n; j++) {
                if (out[j].label < 0 || out[j].label >= info.nlabels)
                    abort();
                size_t len;
                if (!sl_ft_label(m, out[j].label, &len))
                    abort();
                if (j && out[j].prob > out[j - 1].prob)
                    abort();
            }
        }
    free(out);
    sl_ft_state_free(s);
    sl_ft_free(m);
    return 0;
}
