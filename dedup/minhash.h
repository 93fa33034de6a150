/* datatrove 0.10.1's MinHash signatures (MinhashDedupSignature), exactly:
 * simplify_text (text/textnorm.h), the language's word tokenizer
 * (text/wordtok.h), word n-grams joined by a space, each hashed (xxhash64
 * by default, or xxhash32, sha1-64, sha1-32: the first bytes of SHA-1,
 * little-endian), then for each of buckets x rows permutations
 * (a*h + b) mod (2^61 - 1) with numpy's uint64 wrap-around of a*h + b,
 * masked to 32 bits for 32-bit hashes, and the minimum over the n-grams.
 * a and b are drawn as datatrove draws them: numpy.random.RandomState(seed)
 * .randint(1, 2^61 - 1, dtype=uint64, size=B*R), then .randint(0, ...). */
#ifndef SLUICE_DEDUP_MINHASH_H
#define SLUICE_DEDUP_MINHASH_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum { SL_MH_XXHASH64 = 0, SL_MH_XXHASH32 = 1, SL_MH_SHA1_64 = 2, SL_MH_SHA1_32 = 3 };

typedef struct sl_minhash_config {
    int ngram;            /* words per shingle (5) */
    int buckets, rows;    /* LSH bands and rows per band (14, 8) */
    uint64_t seed;        /* numpy RandomState seed (1), < 2^32 */
    int hash;             /* SL_MH_* */
    const char *language; /* word tokenizer ("en") */
} sl_minhash_config;

#define SL_MINHASH_CONFIG_INIT                                                                                         \
    {                                                                                                                  \
        .ngram = 5, .buckets = 14, .rows = 8, .seed = 1, .hash = SL_MH_XXHASH64, .language = "en"                      \
    }

/* The hash's width in bits (64 or 32). */
int sl_minhash_bits(int hash);
/* "xxhash64", "xxhash32", "sha1-64", "sha1-32". */
const char *sl_minhash_hash_name(int hash);

typedef struct sl_minhash sl_minhash;
/* Checks the configuration (message names the field) and draws the
 * permutations. */
sl_minhash *sl_minhash_new(const sl_minhash_config *c, sl_err *err);
void sl_minhash_free(sl_minhash *m);
const sl_minhash_config *sl_minhash_config_of(const sl_minhash *m);
/* The permutation parameters a[i], b[i], i < buckets*rows. */
const uint64_t *sl_minhash_a(const sl_minhash *m);
const uint64_t *sl_minhash_b(const sl_minhash *m);

/* Per-thread scratch. */
typedef struct sl_minhash_work sl_minhash_work;
sl_minhash_work *sl_minhash_work_new(const sl_minhash *m);
void sl_minhash_work_free(sl_minhash_work *w);

/* The signature of text[0..n) into sig[buckets*rows] (32-bit hashes: values
 * < 2^32): 1, or 0 when the text has fewer words than the n-gram (no
 * signature, as datatrove writes none). *shingles (when not NULL): the
 * n-gram hashes, count in *nshingles, valid until the next call. */
int sl_minhash_signature(const sl_minhash *m, sl_minhash_work *w, const char *text, size_t n, uint64_t *sig,
                         const uint64_t **shingles, size_t *nshingles);

/* The permutations' minima of datatrove's MinHash: sig[j] = the least
 * ((sh[i] * a[j] + b[j]) mod 2^64) mod (2^61 - 1), masked by mask, over the
 * ns shingle hashes (UINT64_MAX when ns is 0). version: SL_MH_BEST (the
 * fastest this CPU runs) or one of the others, which give the same values
 * (for tests); returns the version used, or -1 when this CPU or build lacks
 * it. */
enum { SL_MH_BEST = -1, SL_MH_SCALAR = 0, SL_MH_VECTOR, SL_MH_AVX2, SL_MH_AVX512 };
int sl_minhash_perm_minima(const uint64_t *sh, size_t ns, const uint64_t *a, const uint64_t *b, int nperm,
                           uint64_t mask, uint64_t *sig, int version);

/* numpy's legacy RandomState: MT19937 seeded with a 32-bit integer, and
 * randint(low, high, dtype=uint64) (masked rejection sampling). */
typedef struct sl_mt19937 {
    uint32_t key[624];
    int pos;
} sl_mt19937;
void sl_mt19937_seed(sl_mt19937 *s, uint32_t seed);
uint32_t sl_mt19937_next32(sl_mt19937 *s);
void sl_np_randint_u64(sl_mt19937 *s, uint64_t low, uint64_t high, size_t n, uint64_t *out);

/* SHA-1 of data (20 bytes). */
void sl_sha1(const void *data, size_t n, uint8_t out[20]);

#endif
