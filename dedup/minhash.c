/* MinHash signatures as datatrove 0.10.1 computes them (dedup/minhash.h). */
#include "dedup/minhash.h"
#include "base/byteorder.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "text/textnorm.h"
#include "text/wordtok.h"

#define MERSENNE ((UINT64_C(1) << 61) - 1)

struct sl_minhash {
    sl_minhash_config c;
    int nperm;
    uint64_t *a, *b;
    sl_wordtok *tok;
};

struct sl_minhash_work {
    sl_textnorm tn;
    sl_buf norm, gram;
    sl_wordtok_work *tw;
    uint64_t *sh;
    uint32_t *run; /* run[i]: how many words after word i follow one space apart */
    size_t shcap;
};

int sl_minhash_bits(int hash)
{
    return hash == SL_MH_XXHASH32 || hash == SL_MH_SHA1_32 ? 32 : 64;
}

const char *sl_minhash_hash_name(int hash)
{
    static const char *const names[] = {"xxhash64", "xxhash32", "sha1-64", "sha1-32"};
    return hash >= 0 && hash < 4 ? names[hash] : "?";
}

/* --- numpy's RandomState -------------------------------------------------- */

void sl_mt19937_seed(sl_mt19937 *s, uint32_t seed)
{
    for (int i = 0; i < 624; i++) {
        s->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
    s->pos = 624;
}

static void mt_generate(sl_mt19937 *s)
{
    uint32_t *k = s->key, y;
    int i;
    for (i = 0; i < 624 - 397; i++) {
        y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
        k[i] = k[i + 397] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
    }
    for (; i < 623; i++) {
        y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
        k[i] = k[i + 397 - 624] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
    }
    y = (k[623] & 0x80000000u) | (k[0] & 0x7fffffffu);
    k[623] = k[396] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
    s->pos = 0;
}

uint32_t sl_mt19937_next32(sl_mt19937 *s)
{
    if (s->pos == 624)
        mt_generate(s);
    uint32_t y = s->key[s->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

void sl_np_randint_u64(sl_mt19937 *s, uint64_t low, uint64_t high, size_t n, uint64_t *out)
{
    /* random_bounded_uint64_fill with use_masked (RandomState's legacy
     * method) for a range above 2^32: a 64-bit draw is two 32-bit ones,
     * the first the high half; drawn values above the range are rejected */
    uint64_t rng = high - low - 1, mask = rng;
    mask |= mask >> 1, mask |= mask >> 2, mask |= mask >> 4;
    mask |= mask >> 8, mask |= mask >> 16, mask |= mask >> 32;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        do {
            uint64_t hi = sl_mt19937_next32(s);
            v = (hi << 32 | sl_mt19937_next32(s)) & mask;
        } while (v > rng);
        out[i] = low + v;
    }
}

/* --- signatures ----------------------------------------------------------- */

sl_minhash *sl_minhash_new(const sl_minhash_config *c, sl_err *err)
{
    if (c->ngram < 1 || c->ngram > 1000)
        return sl_err_set(err, SL_E_OPTION, "ngram", "`ngram` %d: must be 1..1000", c->ngram), NULL;
    if (c->buckets < 1 || c->buckets > 1024)
        return sl_err_set(err, SL_E_OPTION, "buckets", "`buckets` %d: must be 1..1024", c->buckets), NULL;
    if (c->rows < 1 || c->rows > 1024 || c->buckets * c->rows > 65536)
        return sl_err_set(err, SL_E_OPTION, "rows", "`rows` %d: must be 1..1024, and buckets x rows at most 65536",
                          c->rows),
               NULL;
    if (c->seed > UINT32_MAX)
        return sl_err_set(err, SL_E_OPTION, "seed", "`seed` %llu: must be below 2^32 (numpy's RandomState)",
                          (unsigned long long)c->seed),
               NULL;
    if (c->hash < 0 || c->hash > 3)
        return sl_err_set(err, SL_E_OPTION, "hash", "`hash` %d: unknown", c->hash), NULL;
    sl_wordtok *tok = sl_wordtok_new(c->language ? c->language : "en", err);
    if (!tok)
        return NULL;
    sl_minhash *m = sl_xcalloc(1, sizeof *m);
    m->c = *c;
    m->tok = tok;
    m->nperm = c->buckets * c->rows;
    m->a = sl_xmalloc((size_t)m->nperm * sizeof *m->a);
    m->b = sl_xmalloc((size_t)m->nperm * sizeof *m->b);
    sl_mt19937 mt;
    sl_mt19937_seed(&mt, (uint32_t)c->seed);
    sl_np_randint_u64(&mt, 1, MERSENNE, (size_t)m->nperm, m->a);
    sl_np_randint_u64(&mt, 0, MERSENNE, (size_t)m->nperm, m->b);
    return m;
}

void sl_minhash_free(sl_minhash *m)
{
    if (!m)
        return;
    sl_wordtok_free(m->tok);
    free(m->a);
    free(m->b);
    free(m);
}

const sl_minhash_config *sl_minhash_config_of(const sl_minhash *m)
{
    return &m->c;
}

const uint64_t *sl_minhash_a(const sl_minhash *m)
{
    return m->a;
}

const uint64_t *sl_minhash_b(const sl_minhash *m)
{
    return m->b;
}

sl_minhash_work *sl_minhash_work_new(const sl_minhash *m)
{
    sl_minhash_work *w = sl_xcalloc(1, sizeof *w);
    w->tw = sl_wordtok_work_new(m->tok);
    return w;
}

void sl_minhash_work_free(sl_minhash_work *w)
{
    if (!w)
        return;
    sl_textnorm_free(&w->tn);
    sl_buf_free(&w->norm);
    sl_buf_free(&w->gram);
    sl_wordtok_work_free(w->tw);
    free(w->sh);
    free(w->run);
    free(w);
}

static uint64_t hash_gram(int hash, const char *s, size_t n)
{
    uint8_t d[20];
    switch (hash) {
    case SL_MH_XXHASH64: return XXH64(s, n, 0);
    case SL_MH_XXHASH32: return XXH32(s, n, 0);
    case SL_MH_SHA1_64: sl_sha1(s, n, d); return sl_get_le64(d);
    default: sl_sha1(s, n, d); return sl_get_le32(d);
    }
}

/* x mod (2^61 - 1) for any 64-bit x: 2^61 = 1 (mod p), so x = hi*2^61 + lo
 * = hi + lo, at most p + 7. */
static inline uint64_t mod_mersenne(uint64_t x)
{
    uint64_t r = (x & MERSENNE) + (x >> 61);
    return r >= MERSENNE ? r - MERSENNE : r;
}

/* The permutations' minima: the same integers from every version below.
 * perm_min_scalar is the definition; perm_min takes 8 permutations a pass in
 * GCC vector extensions (any CPU); x86-64 adds AVX2 and AVX-512 versions,
 * picked at run time (sl_minhash_perm_minima). Every value reduced mod
 * 2^61 - 1 is below 2^61, so signed 64-bit compares order them. */
#if defined(__GNUC__) && defined(__x86_64__)
#define MH_X86 1
#include <immintrin.h>
#endif

typedef uint64_t v8u64 __attribute__((vector_size(64)));

static void perm_min_scalar(const uint64_t *sh, size_t ns, const uint64_t *a, const uint64_t *b, int j, int nperm,
                            uint64_t mask, uint64_t *sig)
{
    for (; j < nperm; j++) {
        uint64_t aj = a[j], bj = b[j], lo = UINT64_MAX;
        for (size_t i = 0; i < ns; i++) {
            uint64_t v = mod_mersenne(sh[i] * aj + bj) & mask;
            lo = v < lo ? v : lo;
        }
        sig[j] = lo;
    }
}

static void perm_min(const uint64_t *sh, size_t ns, const uint64_t *a, const uint64_t *b, int nperm, uint64_t mask,
                     uint64_t *sig)
{
    int j = 0;
    const v8u64 M = (v8u64){0} + MERSENNE, MK = (v8u64){0} + mask;
    for (; j + 8 <= nperm; j += 8) {
        v8u64 A, B, lo = (v8u64){0} + UINT64_MAX;
        memcpy(&A, a + j, sizeof A);
        memcpy(&B, b + j, sizeof B);
        for (size_t i = 0; i < ns; i++) {
            v8u64 x = A * sh[i] + B; /* wraps, as numpy's uint64 */
            v8u64 r = (x & M) + (x >> 61);
            r -= M & (v8u64)(r >= M);
            r &= MK;
            v8u64 c = (v8u64)(r < lo);
            lo = (r & c) | (lo & ~c);
        }
        memcpy(sig + j, &lo, sizeof lo);
    }
    perm_min_scalar(sh, ns, a, b, j, nperm, mask, sig);
}

#ifdef MH_X86
/* AVX2 has neither a 64-bit multiply nor an unsigned 64-bit compare (GCC
 * lowers perm_min's to scalar code lane by lane): the low 64 bits of a * s
 * from three 32 x 32 -> 64 products, a_lo s_lo + (a_hi s_lo + a_lo s_hi) << 32,
 * and signed compares of the reduced values. 16 permutations a pass. */
#define MH_STEP2(k)                                                                                                    \
    do {                                                                                                               \
        __m256i A_ = _mm256_loadu_si256((const __m256i *)(a + j + 4 * (k)));                                           \
        __m256i B_ = _mm256_loadu_si256((const __m256i *)(b + j + 4 * (k)));                                           \
        __m256i cross_ = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(A_, 32), S), _mm256_mul_epu32(A_, SH));   \
        __m256i x_ = _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epu32(A_, S), _mm256_slli_epi64(cross_, 32)), B_);   \
        __m256i r_ = _mm256_add_epi64(_mm256_and_si256(x_, M), _mm256_srli_epi64(x_, 61));                             \
        r_ = _mm256_sub_epi64(r_, _mm256_and_si256(_mm256_cmpgt_epi64(r_, M1), M));                                    \
        r_ = _mm256_and_si256(r_, MK);                                                                                 \
        lo[k] = _mm256_blendv_epi8(lo[k], r_, _mm256_cmpgt_epi64(lo[k], r_));                                          \
    } while (0)

__attribute__((target("avx2"))) static void perm_min_avx2(const uint64_t *sh, size_t ns, const uint64_t *a,
                                                          const uint64_t *b, int nperm, uint64_t mask, uint64_t *sig)
{
    if (ns == 0) { /* every minimum UINT64_MAX, as the others give */
        perm_min_scalar(sh, ns, a, b, 0, nperm, mask, sig);
        return;
    }
    int j = 0;
    const __m256i M = _mm256_set1_epi64x((long long)MERSENNE), M1 = _mm256_set1_epi64x((long long)MERSENNE - 1);
    const __m256i MK = _mm256_set1_epi64x((long long)mask), TOP = _mm256_set1_epi64x(INT64_MAX);
    for (; j + 16 <= nperm; j += 16) {
        __m256i lo[4] = {TOP, TOP, TOP, TOP};
        for (size_t i = 0; i < ns; i++) {
            __m256i S = _mm256_set1_epi64x((long long)sh[i]), SH = _mm256_set1_epi64x((long long)(sh[i] >> 32));
            MH_STEP2(0);
            MH_STEP2(1);
            MH_STEP2(2);
            MH_STEP2(3);
        }
        for (int k = 0; k < 4; k++)
            _mm256_storeu_si256((__m256i *)(sig + j + 4 * k), lo[k]);
    }
    for (; j + 4 <= nperm; j += 4) {
        __m256i lo[1] = {TOP};
        for (size_t i = 0; i < ns; i++) {
            __m256i S = _mm256_set1_epi64x((long long)sh[i]), SH = _mm256_set1_epi64x((long long)(sh[i] >> 32));
            MH_STEP2(0);
        }
        _mm256_storeu_si256((__m256i *)(sig + j), lo[0]);
    }
    perm_min_scalar(sh, ns, a, b, j, nperm, mask, sig);
}

/* r mod (2^61 - 1) (see mod_mersenne) masked: r - M wraps above r unless
 * r >= M, so the minimum of the two is the reduced value. */
#define MH_STEP(A, B, lo)                                                                                              \
    do {                                                                                                               \
        __m512i x_ = _mm512_add_epi64(_mm512_mullo_epi64(A, s), B);                                                    \
        __m512i r_ = _mm512_add_epi64(_mm512_and_si512(x_, M), _mm512_srli_epi64(x_, 61));                             \
        r_ = _mm512_min_epu64(r_, _mm512_sub_epi64(r_, M));                                                            \
        if (masked)                                                                                                    \
            r_ = _mm512_and_si512(r_, MK);                                                                             \
        lo = _mm512_min_epu64(lo, r_);                                                                                 \
    } while (0)

__attribute__((target("avx512f,avx512dq"), always_inline)) static inline void
perm_min_avx512_body(const uint64_t *sh, size_t ns, const uint64_t *a, const uint64_t *b, int nperm, uint64_t mask,
                     uint64_t *sig, const int masked)
{
    int j = 0;
    const __m512i M = _mm512_set1_epi64((long long)MERSENNE), MK = _mm512_set1_epi64((long long)mask);
    for (; j + 16 <= nperm; j += 16) {
        __m512i A0 = _mm512_loadu_si512(a + j), B0 = _mm512_loadu_si512(b + j);
        __m512i A1 = _mm512_loadu_si512(a + j + 8), B1 = _mm512_loadu_si512(b + j + 8);
        __m512i lo0 = _mm512_set1_epi64(-1), lo1 = lo0;
        for (size_t i = 0; i < ns; i++) {
            __m512i s = _mm512_set1_epi64((long long)sh[i]);
            MH_STEP(A0, B0, lo0);
            MH_STEP(A1, B1, lo1);
        }
        _mm512_storeu_si512(sig + j, lo0);
        _mm512_storeu_si512(sig + j + 8, lo1);
    }
    for (; j + 8 <= nperm; j += 8) {
        __m512i A0 = _mm512_loadu_si512(a + j), B0 = _mm512_loadu_si512(b + j), lo0 = _mm512_set1_epi64(-1);
        for (size_t i = 0; i < ns; i++) {
            __m512i s = _mm512_set1_epi64((long long)sh[i]);
            MH_STEP(A0, B0, lo0);
        }
        _mm512_storeu_si512(sig + j, lo0);
    }
    perm_min_scalar(sh, ns, a, b, j, nperm, mask, sig);
}

/* the 64-bit hashes need no mask: a version without it */
__attribute__((target("avx512f,avx512dq"))) static void perm_min_avx512(const uint64_t *sh, size_t ns,
                                                                        const uint64_t *a, const uint64_t *b, int nperm,
                                                                        uint64_t mask, uint64_t *sig)
{
    if (mask == UINT64_MAX)
        perm_min_avx512_body(sh, ns, a, b, nperm, mask, sig, 0);
    else
        perm_min_avx512_body(sh, ns, a, b, nperm, mask, sig, 1);
}
#endif

int sl_minhash_perm_minima(const uint64_t *sh, size_t ns, const uint64_t *a, const uint64_t *b, int nperm,
                           uint64_t mask, uint64_t *sig, int version)
{
#ifdef MH_X86
    const int best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? SL_MH_AVX512
                     : __builtin_cpu_supports("avx2")                                        ? SL_MH_AVX2
                                                                                             : SL_MH_VECTOR;
#else
    const int best = SL_MH_VECTOR;
#endif
    if (version == SL_MH_BEST)
        version = best;
    if (version > best || version < SL_MH_SCALAR)
        return -1;
    switch (version) {
    case SL_MH_SCALAR: perm_min_scalar(sh, ns, a, b, 0, nperm, mask, sig); break;
    case SL_MH_VECTOR: perm_min(sh, ns, a, b, nperm, mask, sig); break;
#ifdef MH_X86
    case SL_MH_AVX2: perm_min_avx2(sh, ns, a, b, nperm, mask, sig); break;
    default: perm_min_avx512(sh, ns, a, b, nperm, mask, sig); break;
#endif
    }
    return version;
}

int sl_minhash_signature(const sl_minhash *m, sl_minhash_work *w, const char *text, size_t n, uint64_t *sig,
                         const uint64_t **shingles, size_t *nshingles)
{
    sl_simplify_text(&w->tn, text, n, &w->norm);
    const sl_word *words;
    size_t nw = sl_wordtok_run(m->tok, w->tw, w->norm.data, w->norm.len, &words);
    size_t g = (size_t)m->c.ngram;
    if (nw < g) {
        if (shingles)
            *shingles = NULL, *nshingles = 0;
        return 0;
    }
    size_t ns = nw - g + 1;
    if (w->shcap < nw) {
        free(w->sh);
        free(w->run);
        w->shcap = nw + nw / 2;
        w->sh = sl_xmalloc(w->shcap * sizeof *w->sh);
        w->run = sl_xmalloc(w->shcap * sizeof *w->run);
    }
    const char *t = w->norm.data;
    /* " ".join(words[i:i+g]) is a piece of the text when the g words are
     * one space apart there: run[i] >= g - 1 */
    w->run[nw - 1] = 0;
    for (size_t i = nw - 1; i-- > 0;)
        w->run[i] = words[i + 1].off == words[i].off + words[i].len + 1 && t[words[i + 1].off - 1] == ' '
                        ? w->run[i + 1] + 1
                        : 0;
    for (size_t i = 0; i < ns; i++) {
        const sl_word *x = words + i;
        if (w->run[i] >= g - 1) {
            w->sh[i] = hash_gram(m->c.hash, t + x[0].off, x[g - 1].off + x[g - 1].len - x[0].off);
            continue;
        }
        sl_buf_clear(&w->gram);
        for (size_t j = 0; j < g; j++) {
            if (j)
                sl_buf_putc(&w->gram, ' ');
            sl_buf_append(&w->gram, t + x[j].off, x[j].len);
        }
        w->sh[i] = hash_gram(m->c.hash, w->gram.data, w->gram.len);
    }
    sl_minhash_perm_minima(w->sh, ns, m->a, m->b, m->nperm, sl_minhash_bits(m->c.hash) == 32 ? UINT32_MAX : UINT64_MAX,
                           sig, SL_MH_BEST);
    if (shingles)
        *shingles = w->sh, *nshingles = ns;
    return 1;
}
