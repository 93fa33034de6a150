/* Clip windows and file splits; see clips.h. */
#include "audio/clips.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/err.h"

size_t sl_clips_plan(size_t n, size_t clip_len, size_t overlap, int drop_last, sl_clip **out)
{
    if (clip_len == 0 || clip_len >= n) {
        /* One clip (the whole file), or a file shorter than one window, which
         * SaShiMi keeps as a short example unless drop_last. */
        if (clip_len && clip_len > n && drop_last) {
            *out = NULL;
            return 0;
        }
        *out = sl_xmalloc(sizeof **out);
        (*out)[0] = (sl_clip){0, n};
        return 1;
    }
    size_t hop = clip_len - overlap;
    size_t full = (n - clip_len) / hop + 1; /* windows that fit entirely */
    size_t next = full * hop;               /* where the next window would start */
    /* A short tail clip only when it holds samples no full window covered. */
    int tail = !drop_last && next + overlap < n;
    *out = sl_xmalloc((full + (size_t)tail) * sizeof **out);
    for (size_t i = 0; i < full; i++)
        (*out)[i] = (sl_clip){i * hop, clip_len};
    if (tail)
        (*out)[full] = (sl_clip){next, n - next};
    return full + (size_t)tail;
}

const char *const sl_audio_split_names[] = {"train", "valid", "test", NULL};

int sl_audio_split_parse(const char *s, double w[3])
{
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (!p || !isdigit((unsigned char)*p))
            return -1;
        w[i] = strtod(p, &end);
        if (end == p || !(w[i] >= 0) || w[i] > 1e12)
            return -1;
        if (i < 2 && *end != ':')
            return -1;
        if (i == 2 && *end)
            return -1;
        p = end + 1;
    }
    return w[0] + w[1] + w[2] > 0 ? 0 : -1;
}

int sl_audio_split_by_index(size_t i, size_t n, const double w[3])
{
    /* Written as s4 computes its ratios (train_percentage f0, then valid up to
     * f0 + (1 - f0) / 2): with equal valid and test weights the doubles, and so the
     * cut points, are the same as s4's bit for bit. */
    double f0 = w[0] / (w[0] + w[1] + w[2]);
    double f1 = w[1] + w[2] > 0 ? f0 + (1 - f0) * (w[1] / (w[1] + w[2])) : 1.0;
    size_t cut1 = (size_t)(f0 * (double)n);
    size_t cut2 = (size_t)(f1 * (double)n);
    return i < cut1 ? SL_AUDIO_SPLIT_TRAIN : i < cut2 ? SL_AUDIO_SPLIT_VALID : SL_AUDIO_SPLIT_TEST;
}

int sl_audio_split_by_hash(const char *key, uint64_t seed, const double w[3])
{
    double sum = w[0] + w[1] + w[2];
    double u = (double)(XXH64(key, strlen(key), seed) >> 11) * 0x1.0p-53; /* uniform in [0, 1) */
    return u < w[0] / sum ? SL_AUDIO_SPLIT_TRAIN : u < (w[0] + w[1]) / sum ? SL_AUDIO_SPLIT_VALID : SL_AUDIO_SPLIT_TEST;
}

int sl_natcmp(const char *a, const char *b)
{
    const char *p = a, *q = b;
    while (*p && *q) {
        if (isdigit((unsigned char)*p) && isdigit((unsigned char)*q)) {
            /* Compare digit runs by value: skip leading zeros, then length, then digits. */
            while (*p == '0')
                p++;
            while (*q == '0')
                q++;
            size_t lp = 0, lq = 0;
            while (isdigit((unsigned char)p[lp]))
                lp++;
            while (isdigit((unsigned char)q[lq]))
                lq++;
            if (lp != lq)
                return lp < lq ? -1 : 1;
            int c = memcmp(p, q, lp);
            if (c)
                return c < 0 ? -1 : 1;
            p += lp;
            q += lq;
            continue;
        }
        if (*p != *q)
            return (unsigned char)*p < (unsigned char)*q ? -1 : 1;
        p++;
        q++;
    }
    if (*p || *q)
        return *p ? 1 : -1;
    int c = strcmp(a, b);
    return c < 0 ? -1 : c > 0;
}
