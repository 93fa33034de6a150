/* libFuzzer target: score summaries (model/summary.c). Any bytes either
 * parse or give a one-line error naming the source; a parsed summary
 * written again reads back to the same bytes (the writer is canonical),
 * merges with itself, and its percentiles are NaN or lie between its
 * minimum and maximum. Never crash or read out of bounds. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/summary.h"
#include "base/byteorder.h"
#include <xxhash.h>

static void one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size);
    if (size >= 16) { /* the same with a valid checksum, to reach the checks behind it */
        uint8_t *c = malloc(size);
        if (!c)
            return 0;
        memcpy(c, data, size);
        sl_put_le64(c + size - 8, XXH64(c, size - 8, 0));
        one(c, size);
        free(c);
    }
    return 0;
}

static void one(const uint8_t *data, size_t size)
{
    sl_err err = {{0}};
    sl_score_summary *s = sl_score_summary_read(data, size, "fuzz", &err);
    if (!s) {
        if (strncmp(err.msg, "fuzz: ", 6) || strchr(err.msg, '\n'))
            abort();
        return;
    }
    sl_buf a = {0}, b = {0};
    sl_score_summary_write(&a, s);
    sl_score_summary *t = sl_score_summary_read(a.data, a.len, "again", &err);
    if (!t)
        abort();
    sl_score_summary_write(&b, t);
    if (a.len != b.len || memcmp(a.data, b.data, a.len))
        abort();
    size_t nf;
    const char **names = sl_score_summary_fields(s, &nf);
    for (size_t i = 0; i < nf; i++) {
        double lo = sl_score_summary_percentile(s, names[i], 0), hi = sl_score_summary_percentile(s, names[i], 100);
        static const double ps[] = {0.5, 10, 30, 50, 60, 90, 99.9};
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
            double v = sl_score_summary_percentile(s, names[i], ps[k]);
            if (!isnan(v) && !(v >= lo && v <= hi))
                abort();
        }
    }
    sl_score_summary_merge(t, s);
    if (sl_score_summary_docs(t) != 2 * sl_score_summary_docs(s) && sl_score_summary_docs(s) < UINT64_MAX / 2)
        abort();
    sl_buf_free(&a);
    sl_buf_free(&b);
    sl_score_summary_free(s);
    sl_score_summary_free(t);
}
