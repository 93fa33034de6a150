/* fastText supervised models (.bin, and .ftz with product-quantized
 * matrices): a loader and the prediction of fastText 0.9's `predict`,
 * written from the file format and the algorithm, so that labels and
 * probabilities are those of the Python package's `predict(text, k,
 * threshold)`:
 *
 *   - the text is one line: it is split on the bytes ' ', \t, \n, \v, \f,
 *     \r and NUL, and ends with the end-of-sentence token "</s>" (fastText
 *     appends "\n"; a "\n" or a "</s>" in the text also ends it);
 *   - a word in the dictionary contributes its row and its character
 *     n-grams (minn..maxn code points of "<word>", hashed with FNV-1a over
 *     bytes taken as signed chars, modulo bucket, mapped through the pruning
 *     index of a quantized model); a word that is not contributes its
 *     n-grams only; a token that starts with "__label__" and is not in the
 *     dictionary contributes nothing; word n-grams (wordNgrams > 1) hash the
 *     words' hashes as fastText does, sign extension included;
 *   - the hidden vector is the mean of those rows; the losses: hierarchical
 *     softmax (a depth-first search of the Huffman tree of the label counts
 *     that prunes branches whose log-probability is below log(threshold +
 *     1e-5), so fewer than k labels can come back), softmax, and one-vs-all
 *     / negative sampling (fastText's 512-entry sigmoid table);
 *   - the k best are kept in a heap ordered as libstdc++'s std::push_heap /
 *     pop_heap / sort_heap order them (ties come out in fastText's order),
 *     and each probability is exp(log(p + 1e-5)) in single precision, so it
 *     can exceed 1.
 *
 * The arithmetic is fastText's, in single precision and in its order. */
#ifndef SLUICE_MODEL_FASTTEXT_H
#define SLUICE_MODEL_FASTTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_ft_model sl_ft_model;

/* Loads a model file. A file that is not a fastText model, of a newer
 * version, not supervised, truncated, or inconsistent (sizes that do not
 * match, indices out of range) is refused with one line naming the file and
 * the byte offset. */
sl_ft_model *sl_ft_load(const char *path, sl_err *err);
/* The same from memory (name is used in messages). */
sl_ft_model *sl_ft_load_mem(const void *data, size_t len, const char *name, sl_err *err);
/* The same, keeping the subword lists of at most max_cached entries (each
 * vocabulary word's row and its character n-grams, as fastText keeps them;
 * the default is 2^25; beyond, a word's n-grams are computed where it is
 * met: the same rows, more time). */
sl_ft_model *sl_ft_load_mem_cached(const void *data, size_t len, const char *name, size_t max_cached, sl_err *err);
void sl_ft_free(sl_ft_model *m);

/* What the model is, for messages and --help: "hs", "softmax", "ova" or "ns". */
typedef struct sl_ft_info {
    int dim, nwords, nlabels, minn, maxn, word_ngrams, bucket;
    const char *loss;
    int quantized;  /* .ftz: the input matrix is product-quantized */
    int qout;       /* the output matrix too */
    int64_t pruned; /* n-gram buckets kept by quantization's cutoff; -1 = not pruned */
} sl_ft_info;
void sl_ft_get_info(const sl_ft_model *m, sl_ft_info *info);

/* Label i (0 <= i < nlabels) as stored, "__label__" prefix included. */
const char *sl_ft_label(const sl_ft_model *m, int i, size_t *len);

typedef struct sl_ft_pred {
    float prob;    /* exp of the log-probability, as fastText returns it */
    int32_t label; /* index for sl_ft_label */
} sl_ft_pred;

/* Scratch space of one thread. */
typedef struct sl_ft_state sl_ft_state;
sl_ft_state *sl_ft_state_new(const sl_ft_model *m);
void sl_ft_state_free(sl_ft_state *s);

/* The k best labels of text[0..len) (k < 0: all) with a probability of at
 * least threshold, best first, into out (room for min(k, nlabels)
 * entries): their number (0 when the text gives no rows at all), or -1 with
 * err when the model computes NaN (fastText raises then). */
int sl_ft_predict(const sl_ft_model *m, sl_ft_state *s, const char *text, size_t len, int k, float threshold,
                  sl_ft_pred *out, sl_err *err);

#ifdef __cplusplus
}
#endif

#endif
