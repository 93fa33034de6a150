/* Clip windows over a decoded file, and the file-level train/valid/test split.
 *
 * Clips follow SaShiMi's create_examples: windows of clip_len samples starting
 * at 0, hop = clip_len - overlap (SaShiMi has no overlap: hop = clip_len);
 * a final shorter clip holds the samples the full windows left out, unless
 * drop_last (YouTubeMix sets drop_last, SC09 does not).
 *
 * The split assigns whole files, as SaShiMi's YouTubeMix loader does: by
 * position in natural-sorted order (train = [0, int(f0 n)), valid =
 * [int(f0 n), int(f1 n)), test = the rest; f0 = A / (A+B+C), f1 = f0 + (1 - f0)
 * B / (B+C), which is s4's train_percentage + (1 - train_percentage) / 2 when
 * B = C), or by a
 * hash of the file name (XXH64 with a seed), which keeps a file's part
 * stable when files are added. */
#ifndef SLUICE_AUDIO_CLIPS_H
#define SLUICE_AUDIO_CLIPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_clip {
    size_t start, len;
} sl_clip;

/* Returns the number of clips over n samples and stores them in *out
 * (malloc'd; free it). clip_len 0 means one clip of all n samples.
 * Requires overlap < clip_len when clip_len > 0. */
size_t sl_clips_plan(size_t n, size_t clip_len, size_t overlap, int drop_last, sl_clip **out);

enum { SL_AUDIO_SPLIT_TRAIN = 0, SL_AUDIO_SPLIT_VALID = 1, SL_AUDIO_SPLIT_TEST = 2 };
extern const char *const sl_audio_split_names[]; /* "train", "valid", "test", NULL */

/* Parses "88:6:6" (three non-negative numbers, positive sum). 0 ok, -1 bad. */
int sl_audio_split_parse(const char *s, double w[3]);
/* The part of file i of n (sorted order). */
int sl_audio_split_by_index(size_t i, size_t n, const double w[3]);
/* The part of a file named key. */
int sl_audio_split_by_hash(const char *key, uint64_t seed, const double w[3]);

/* Natural order ("a2" < "a10"), as Python's natsort sorts file names; ties
 * broken by strcmp so the order is total. */
int sl_natcmp(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif
