/* fastText supervised models: loader and prediction (model/fasttext.h).
 *
 * File layout (little-endian, fastText 0.9 `FastText::saveModel`):
 *   int32 magic 793712314, int32 version (<= 12)
 *   args: int32 dim, ws, epoch, minCount, neg, wordNgrams, loss, model,
 *         bucket, minn, maxn, lrUpdateRate; double t
 *   dictionary: int32 size, nwords, nlabels; int64 ntokens, pruneidx_size;
 *         size entries (NUL-terminated word, int64 count, int8 type);
 *         pruneidx_size pairs (int32 bucket id, int32 row)
 *   bool quantized input; the input matrix; bool qout; the output matrix
 *   dense matrix: int64 m, n; m*n float32 (row-major)
 *   quantized matrix: bool qnorm; int64 m, n; int32 codesize; codesize
 *         bytes; a product quantizer; with qnorm, m norm codes and a second
 *         product quantizer
 *   product quantizer: int32 dim, nsubq, dsub, lastdsub; dim*256 float32
 *         centroids */
#include "model/fasttext.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashtab.h"
#include "base/buf.h"
#include "stream/io.h"

#define FT_MAGIC 793712314
#define FT_VERSION 12
#define KSUB 256
#define EOS "</s>"
#define LABEL_PREFIX "__label__"
#define MAX_DIM (1 << 16)
#define MAX_WORD_NGRAMS 1000 /* fastText's own tools use 1..5 */
/* Precomputed subword lists of the vocabulary (each word's row and its
 * character n-grams, as fastText keeps them) up to this many entries in
 * all; beyond, a word's n-grams are computed when it is met (the same rows). */
#define DEFAULT_CACHED_SUBWORDS ((size_t)1 << 25)

enum { LOSS_HS = 1, LOSS_NS = 2, LOSS_SOFTMAX = 3, LOSS_OVA = 4 };
enum { MODEL_SUP = 3 };

typedef struct {
    int32_t dim, nsubq, dsub, lastdsub;
    float *centroids; /* dim * KSUB */
} pq;

typedef struct {
    int quant;
    int64_t m, n;
    float *data; /* dense */
    uint8_t *codes;
    pq pq;
    int qnorm;
    uint8_t *norm_codes;
    pq npq;
    /* a quantized input matrix decoded at load (norm x centroids, the very
     * products addRowToVector adds), when it fits DECODE_LIMIT: adding a row
     * is then a plain loop, with bit-identical sums */
    float *decoded;
} matrix;

struct sl_ft_model {
    int32_t version, dim, word_ngrams, loss, model, bucket, minn, maxn;
    int32_t size, nwords, nlabels;
    int64_t pruneidx_size;
    /* the dictionary */
    char *pool;      /* words, each NUL-terminated */
    uint32_t *woff;  /* size + 1 offsets into pool */
    uint32_t *whash; /* fastText's hash of each word */
    int64_t *counts; /* entry counts (the labels' build the Huffman tree) */
    sl_htab words;   /* entries: word id + 1 (uint32_t) */
    /* pruning index: bucket id -> row - nwords (entries: pkey) */
    sl_htab prune;
    /* bit (id & prune_mask) set for every kept bucket id: most n-grams of a
     * text were pruned away (9 in 10 lookups with lid.176), and this
     * bitmap, a fraction of the table's size, answers them without the
     * table's cache misses; it is exact when bucket <= prune_mask + 1 */
    uint64_t *prune_bits;
    uint32_t prune_mask;
    /* cached subword lists: words' rows from sub_off[w] to sub_off[w + 1] */
    int32_t *sub_off, *sub_ids;
    uint64_t bucket_magic; /* for h % bucket by multiplication */
    matrix in, out;
    int32_t osz;
    int32_t *left, *right; /* the Huffman tree (hierarchical softmax) */
    float sigmoid[513];
};

struct sl_ft_state {
    float *hidden, *output;
    sl_ft_pred *heap; /* (log-probability, label) pairs */
    int32_t *stack;   /* tree search: nodes */
    float *stack_score;
    char *word; /* "<" token ">" */
    size_t word_cap;
    uint32_t *ring; /* word hashes of the last wordNgrams words */
    int64_t rows;   /* rows added to hidden */
    /* the n-gram rows of recently seen out-of-vocabulary words (in-vocabulary
     * words have theirs in the model: sub_ids), direct-mapped by word hash:
     * text repeats its words, and hashing every n-gram of every occurrence
     * and probing the pruned-bucket table for each was half the time */
    struct oov_slot *oov;
};

#define OOV_SLOTS 8192 /* power of two */
#define OOV_WORD 32    /* longest word kept, bytes */
#define OOV_ROWS 64    /* most rows kept per word */
typedef struct oov_slot {
    uint32_t h;
    uint16_t n; /* 0: empty (tokens are never empty) */
    uint16_t nrows;
    char w[OOV_WORD];
    int32_t rows[OOV_ROWS];
} oov_slot;

/* quantized input matrices up to this many decoded bytes are decoded at load */
#define DECODE_LIMIT ((uint64_t)256 << 20)

/* ---- hashing ------------------------------------------------------------ */

/* FNV-1a as fastText computes it: each byte is sign-extended (int8 to
 * uint32) before the xor. */
static inline uint32_t ft_hash_step(uint32_t h, unsigned char c)
{
    return (h ^ (uint32_t)(int32_t)(int8_t)c) * 16777619u;
}
static uint32_t ft_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = ft_hash_step(h, (unsigned char)s[i]);
    return h;
}

/* h % bucket without a division (Lemire's fastmod: exact for every 32-bit h). */
static inline uint32_t mod_bucket(const sl_ft_model *m, uint32_t h)
{
    uint64_t low = m->bucket_magic * h;
    return (uint32_t)(((unsigned __int128)low * (uint32_t)m->bucket) >> 64);
}

/* ---- reading the file --------------------------------------------------- */

typedef struct {
    const unsigned char *p;
    size_t len, pos;
    const char *name;
    sl_err *err;
} rd;

static int need(rd *r, size_t n, const char *what)
{
    if (r->len - r->pos < n)
        return sl_errf(r->err, "%s: offset %zu: %s runs past the end of the file (%zu bytes; truncated?)", r->name,
                       r->pos, what, r->len);
    return 0;
}
static int rd_i32(rd *r, int32_t *v, const char *what)
{
    if (need(r, 4, what))
        return -1;
    memcpy(v, r->p + r->pos, 4);
    r->pos += 4;
    return 0;
}
static int rd_i64(rd *r, int64_t *v, const char *what)
{
    if (need(r, 8, what))
        return -1;
    memcpy(v, r->p + r->pos, 8);
    r->pos += 8;
    return 0;
}
static int rd_u8(rd *r, uint8_t *v, const char *what)
{
    if (need(r, 1, what))
        return -1;
    *v = r->p[r->pos++];
    return 0;
}
static int bad(rd *r, size_t at, const char *fmt, long long v)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, v);
    return sl_errf(r->err, "%s: offset %zu: %s", r->name, at, msg);
}
/* n floats into a fresh array. */
static float *rd_floats(rd *r, uint64_t n, const char *what)
{
    if (n > (r->len - r->pos) / 4) {
        need(r, (size_t)-1, what);
        return NULL;
    }
    float *f = sl_xmalloc(n ? n * sizeof *f : 1);
    memcpy(f, r->p + r->pos, n * sizeof *f);
    r->pos += n * sizeof *f;
    return f;
}

static int load_pq(rd *r, pq *q, int64_t want_dim, const char *what)
{
    size_t at = r->pos;
    if (rd_i32(r, &q->dim, what) || rd_i32(r, &q->nsubq, what) || rd_i32(r, &q->dsub, what) ||
        rd_i32(r, &q->lastdsub, what))
        return -1;
    if (q->dim != want_dim || q->nsubq < 1 || q->dsub < 1 || q->lastdsub < 1 || q->dsub > q->dim ||
        (int64_t)(q->nsubq - 1) * q->dsub + q->lastdsub != q->dim)
        return bad(r, at, "product quantizer of dimension %lld does not fit its matrix (sub-quantizer sizes)",
                   (long long)q->dim);
    q->centroids = rd_floats(r, (uint64_t)q->dim * KSUB, what);
    return q->centroids ? 0 : -1;
}

static int load_matrix(rd *r, matrix *mx, int quant, const char *what)
{
    mx->quant = quant;
    size_t at = r->pos;
    if (quant) {
        uint8_t qn;
        int32_t codesize;
        if (rd_u8(r, &qn, what) || rd_i64(r, &mx->m, what) || rd_i64(r, &mx->n, what) || rd_i32(r, &codesize, what))
            return -1;
        mx->qnorm = qn != 0;
        if (mx->m < 0 || mx->n < 1 || mx->n > MAX_DIM)
            return bad(r, at, "quantized matrix of %lld rows is malformed", (long long)mx->m);
        if (codesize < 0 || need(r, (size_t)codesize, what))
            return codesize < 0 ? bad(r, at, "quantized matrix with %lld bytes of codes", codesize) : -1;
        mx->codes = sl_xmalloc(codesize ? (size_t)codesize : 1);
        memcpy(mx->codes, r->p + r->pos, (size_t)codesize);
        r->pos += (size_t)codesize;
        if (load_pq(r, &mx->pq, mx->n, what))
            return -1;
        if ((uint64_t)mx->m * (uint64_t)mx->pq.nsubq != (uint64_t)codesize)
            return bad(r, at, "quantized matrix: %lld bytes of codes do not make rows x sub-quantizers", codesize);
        if (mx->qnorm) {
            if (need(r, (size_t)mx->m, what))
                return -1;
            mx->norm_codes = sl_xmalloc(mx->m ? (size_t)mx->m : 1);
            memcpy(mx->norm_codes, r->p + r->pos, (size_t)mx->m);
            r->pos += (size_t)mx->m;
            if (load_pq(r, &mx->npq, 1, what))
                return -1;
        }
        return 0;
    }
    if (rd_i64(r, &mx->m, what) || rd_i64(r, &mx->n, what))
        return -1;
    if (mx->m < 0 || mx->n < 1 || mx->n > MAX_DIM)
        return bad(r, at, "matrix of %lld rows is malformed", (long long)mx->m);
    if ((uint64_t)mx->m > (r->len - r->pos) / 4 / (uint64_t)mx->n)
        return need(r, (size_t)-1, what);
    mx->data = rd_floats(r, (uint64_t)mx->m * (uint64_t)mx->n, what);
    return mx->data ? 0 : -1;
}

static void free_matrix(matrix *mx)
{
    free(mx->decoded);
    free(mx->data);
    free(mx->codes);
    free(mx->pq.centroids);
    free(mx->norm_codes);
    free(mx->npq.centroids);
}

void sl_ft_free(sl_ft_model *m)
{
    if (!m)
        return;
    free(m->pool);
    free(m->woff);
    free(m->whash);
    free(m->counts);
    sl_htab_free(&m->words);
    sl_htab_free(&m->prune);
    free(m->prune_bits);
    free(m->sub_off);
    free(m->sub_ids);
    free_matrix(&m->in);
    free_matrix(&m->out);
    free(m->left);
    free(m->right);
    free(m);
}

/* The word table: the key is a word and fastText's hash of it. */
typedef struct {
    const char *s;
    size_t n;
    uint32_t h;
} wkey;

static uint64_t wkey_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return ((const wkey *)key)->h;
}

static uint64_t word_hash(const void *entry, const void *ctx)
{
    return ((const sl_ft_model *)ctx)->whash[*(const uint32_t *)entry - 1];
}

static int word_eq(const void *key, const void *entry, const void *ctx)
{
    const sl_ft_model *m = ctx;
    const wkey *k = key;
    uint32_t w = *(const uint32_t *)entry - 1;
    return m->whash[w] == k->h && m->woff[w + 1] - m->woff[w] - 1 == k->n && !memcmp(m->pool + m->woff[w], k->s, k->n);
}

static const sl_htab_type word_type = {.entry_size = sizeof(uint32_t),
                                       .key_size = sizeof(uint32_t),
                                       .hash = wkey_hash,
                                       .entry_hash = word_hash,
                                       .eq = word_eq,
                                       .max_load = 50};

/* The pruning index: the key is the bucket id + 1, the value its row - nwords. */
typedef struct {
    uint32_t key1;
    int32_t val;
} pkey;

static uint64_t pkey_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return (*(const uint32_t *)key - 1) * 2654435761u;
}

static const sl_htab_type prune_type = {
    .entry_size = sizeof(pkey), .key_size = sizeof(uint32_t), .hash = pkey_hash, .max_load = 50};

/* The word id of s[0..n) with hash h, or -1. */
static inline int32_t find_word(const sl_ft_model *m, const char *s, size_t n, uint32_t h)
{
    const uint32_t *e = sl_htab_find(&m->words, &word_type, &(wkey){s, n, h});
    return e ? (int32_t)*e - 1 : -1;
}

/* Row of n-gram bucket id (fastText's pushHash): -1 when pruned away. */
static inline int32_t ngram_row(const sl_ft_model *m, uint32_t id)
{
    if (m->pruneidx_size < 0)
        return m->nwords + (int32_t)id;
    uint32_t bit = id & m->prune_mask;
    if (!(m->prune_bits[bit >> 6] >> (bit & 63) & 1))
        return -1;
    const pkey *e = sl_htab_find(&m->prune, &prune_type, &(uint32_t){id + 1});
    return e ? m->nwords + e->val : -1;
}

/* Calls add(ctx, row) for each character n-gram of w[0..n) (the word with
 * "<" and ">" around it), in fastText's order. */
#define FOR_EACH_NGRAM(m, w, n, ROW_STMT)                                                                              \
    do {                                                                                                               \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                                          \
            if (((unsigned char)(w)[i_] & 0xC0) == 0x80)                                                               \
                continue;                                                                                              \
            uint32_t h_ = 2166136261u;                                                                                 \
            size_t j_ = i_;                                                                                            \
            for (int32_t k_ = 1; j_ < (n) && k_ <= (m)->maxn; k_++) {                                                  \
                h_ = ft_hash_step(h_, (unsigned char)(w)[j_++]);                                                       \
                while (j_ < (n) && ((unsigned char)(w)[j_] & 0xC0) == 0x80)                                            \
                    h_ = ft_hash_step(h_, (unsigned char)(w)[j_++]);                                                   \
                if (k_ >= (m)->minn && !(k_ == 1 && (i_ == 0 || j_ == (n)))) {                                         \
                    int32_t row = ngram_row((m), mod_bucket((m), h_));                                                 \
                    if (row >= 0) {                                                                                    \
                        ROW_STMT;                                                                                      \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* How many n-grams (before pruning) a word of n bytes has at most. */
static uint64_t ngram_bound(const sl_ft_model *m, size_t n)
{
    if (m->maxn <= 0)
        return 0;
    uint64_t cps = n + 2; /* code points of "<w>" at most */
    return cps * (uint64_t)(m->maxn < (int64_t)cps ? (uint64_t)m->maxn : cps);
}

static void decode_matrix(matrix *mx);

static void cache_subwords(sl_ft_model *m, size_t limit)
{
    if (m->maxn <= 0)
        return;
    uint64_t total = 0;
    for (int32_t w = 0; w < m->nwords; w++) {
        total += 1 + ngram_bound(m, m->woff[w + 1] - m->woff[w] - 1);
        if (total > limit)
            return;
    }
    m->sub_off = sl_xmalloc(((size_t)m->nwords + 1) * sizeof *m->sub_off);
    m->sub_ids = sl_xmalloc((total ? total : 1) * sizeof *m->sub_ids);
    char *buf = NULL;
    size_t cap = 0, k = 0;
    for (int32_t w = 0; w < m->nwords; w++) {
        m->sub_off[w] = (int32_t)k;
        m->sub_ids[k++] = w;
        const char *s = m->pool + m->woff[w];
        size_t n = m->woff[w + 1] - m->woff[w] - 1;
        if (n == 4 && !memcmp(s, EOS, 4))
            continue;
        if (n + 2 > cap) {
            cap = 2 * (n + 2);
            buf = sl_xrealloc(buf, cap);
        }
        buf[0] = '<';
        memcpy(buf + 1, s, n);
        buf[n + 1] = '>';
        FOR_EACH_NGRAM(m, buf, n + 2, m->sub_ids[k++] = row);
    }
    m->sub_off[m->nwords] = (int32_t)k;
    free(buf);
}

/* fastText's Huffman tree over the label counts (HierarchicalSoftmaxLoss::buildTree). */
static void build_tree(sl_ft_model *m)
{
    int32_t osz = m->osz, nn = 2 * osz - 1;
    int64_t *count = sl_xmalloc((size_t)nn * sizeof *count);
    m->left = sl_xmalloc((size_t)nn * sizeof *m->left);
    m->right = sl_xmalloc((size_t)nn * sizeof *m->right);
    for (int32_t i = 0; i < nn; i++) {
        m->left[i] = m->right[i] = -1;
        count[i] = (int64_t)1e15;
    }
    for (int32_t i = 0; i < osz; i++)
        count[i] = m->counts[m->nwords + i];
    int32_t leaf = osz - 1, node = osz;
    for (int32_t i = osz; i < nn; i++) {
        int32_t mini[2] = {0, 0};
        for (int j = 0; j < 2; j++) {
            /* a node not built yet counts 1e15 in fastText (counts that
             * large are not real: it is not taken) */
            if (leaf >= 0 && (node >= i || count[leaf] < count[node]))
                mini[j] = leaf--;
            else
                mini[j] = node++;
        }
        m->left[i] = mini[0];
        m->right[i] = mini[1];
        count[i] = (int64_t)((uint64_t)count[mini[0]] + (uint64_t)count[mini[1]]); /* wraps, never UB */
    }
    free(count);
}

sl_ft_model *sl_ft_load_mem_cached(const void *data, size_t len, const char *name, size_t cached_subwords, sl_err *err);

sl_ft_model *sl_ft_load_mem(const void *data, size_t len, const char *name, sl_err *err)
{
    return sl_ft_load_mem_cached(data, len, name, DEFAULT_CACHED_SUBWORDS, err);
}

sl_ft_model *sl_ft_load_mem_cached(const void *data, size_t len, const char *name, size_t cached_subwords, sl_err *err)
{
    rd r = {.p = data, .len = len, .name = name, .err = err};
    sl_ft_model *m = sl_xcalloc(1, sizeof *m);
    int32_t magic, a[12];
    double t;
    if (len < 4 || memcmp(&(int32_t){FT_MAGIC}, data, 4)) {
        sl_errf(err, "%s: offset 0: not a fastText model (no fastText magic number)", name);
        goto fail;
    }
    if (rd_i32(&r, &magic, "the header") || rd_i32(&r, &m->version, "the header"))
        goto fail;
    if (m->version > FT_VERSION) {
        bad(&r, 4, "fastText model version %lld is newer than this reader (12)", m->version);
        goto fail;
    }
    for (int i = 0; i < 12; i++)
        if (rd_i32(&r, &a[i], "the model arguments"))
            goto fail;
    if (need(&r, 8, "the model arguments"))
        goto fail;
    memcpy(&t, r.p + r.pos, 8);
    r.pos += 8;
    m->dim = a[0];
    m->word_ngrams = a[5];
    m->loss = a[6];
    m->model = a[7];
    m->bucket = a[8];
    m->minn = a[9];
    m->maxn = a[10];
    if (m->model != MODEL_SUP) {
        bad(&r, 36, "not a supervised model (model type %lld: word vectors), nothing to classify with", m->model);
        goto fail;
    }
    if (m->version == 11)
        m->maxn = 0; /* old supervised models have no character n-grams */
    if (m->loss < LOSS_HS || m->loss > LOSS_OVA) {
        bad(&r, 32, "unknown loss %lld", m->loss);
        goto fail;
    }
    if (m->dim < 1 || m->dim > MAX_DIM) {
        bad(&r, 8, "dimension %lld is out of range", m->dim);
        goto fail;
    }
    if (m->word_ngrams > MAX_WORD_NGRAMS) {
        bad(&r, 28, "word n-gram length %lld is out of range", m->word_ngrams);
        goto fail;
    }
    int ngrams = (m->maxn > 0 && m->minn <= m->maxn) || m->word_ngrams > 1;
    if (m->bucket < 0 || (ngrams && m->bucket == 0)) {
        bad(&r, 40, "bucket count %lld does not allow the model's n-grams", m->bucket);
        goto fail;
    }
    if (m->bucket > 0)
        m->bucket_magic = UINT64_MAX / (uint32_t)m->bucket + 1;

    /* the dictionary */
    size_t at = r.pos;
    int64_t ntokens;
    if (rd_i32(&r, &m->size, "the dictionary") || rd_i32(&r, &m->nwords, "the dictionary") ||
        rd_i32(&r, &m->nlabels, "the dictionary") || rd_i64(&r, &ntokens, "the dictionary") ||
        rd_i64(&r, &m->pruneidx_size, "the dictionary"))
        goto fail;
    if (m->nwords < 0 || m->nlabels < 1 || m->size != (int64_t)m->nwords + m->nlabels) {
        bad(&r, at, "dictionary of %lld entries is not its words plus at least one label", m->size);
        goto fail;
    }
    if ((size_t)m->size > (r.len - r.pos) / 10) { /* an entry is at least 10 bytes */
        need(&r, (size_t)-1, "the dictionary");
        goto fail;
    }
    m->woff = sl_xmalloc(((size_t)m->size + 1) * sizeof *m->woff);
    m->whash = sl_xmalloc(((size_t)m->size ? (size_t)m->size : 1) * sizeof *m->whash);
    m->counts = sl_xmalloc((size_t)m->size * sizeof *m->counts);
    sl_buf pool = {0};
    for (int32_t i = 0; i < m->size; i++) {
        size_t s = r.pos;
        const unsigned char *z = memchr(r.p + s, 0, r.len - s);
        if (!z) {
            sl_buf_free(&pool);
            need(&r, (size_t)-1, "a dictionary word");
            goto fail;
        }
        size_t n = (size_t)(z - (r.p + s));
        if (pool.len + n + 1 > UINT32_MAX) {
            sl_buf_free(&pool);
            bad(&r, s, "the dictionary's words exceed %lld bytes", (long long)UINT32_MAX);
            goto fail;
        }
        m->woff[i] = (uint32_t)pool.len;
        sl_buf_append(&pool, r.p + s, n + 1);
        m->whash[i] = ft_hash((const char *)r.p + s, n);
        r.pos = s + n + 1;
        uint8_t type;
        if (rd_i64(&r, &m->counts[i], "a dictionary entry") || rd_u8(&r, &type, "a dictionary entry")) {
            sl_buf_free(&pool);
            goto fail;
        }
        if (type != (i >= m->nwords)) {
            sl_buf_free(&pool);
            bad(&r, r.pos - 1, "dictionary entry of type %lld out of place (words come first, then labels)", type);
            goto fail;
        }
    }
    m->woff[m->size] = (uint32_t)pool.len;
    m->pool = pool.data ? pool.data : sl_xstrdup("");
    /* the tables are made as large as fastText's (twice the entries, rounded
     * up to a power of two: a load of 50%), so they never grow */
    sl_htab_init(&m->words, m);
    sl_htab_init(&m->prune, NULL);
    sl_htab_reserve(&m->words, &word_type, (size_t)m->size);
    for (int32_t i = 0; i < m->size; i++) {
        /* a word twice: the later entry wins, as in fastText's word2int */
        const char *s = m->pool + m->woff[i];
        size_t n = m->woff[i + 1] - m->woff[i] - 1;
        int fresh;
        uint32_t *e = sl_htab_put(&m->words, &word_type, &(wkey){s, n, m->whash[i]}, &fresh);
        *e = (uint32_t)i + 1;
    }
    at = r.pos;
    if (m->pruneidx_size < 0)
        m->pruneidx_size = -1;
    if (m->pruneidx_size > 0 && (uint64_t)m->pruneidx_size > (r.len - r.pos) / 8) {
        need(&r, (size_t)-1, "the pruning index");
        goto fail;
    }
    if (m->pruneidx_size >= 0) {
        /* the bitmap: 64 bits per kept n-gram (a false positive in 64 at
         * most, when inexact), no more than the buckets need */
        uint64_t nbits = 64;
        while (nbits < (uint64_t)m->pruneidx_size * 64 && nbits < (uint64_t)m->bucket)
            nbits *= 2;
        m->prune_mask = (uint32_t)(nbits - 1);
        m->prune_bits = sl_xcalloc(nbits / 64, sizeof *m->prune_bits);
    }
    if (m->pruneidx_size > 0) {
        sl_htab_reserve(&m->prune, &prune_type, (size_t)m->pruneidx_size);
        for (int64_t i = 0; i < m->pruneidx_size; i++) {
            int32_t k, v;
            rd_i32(&r, &k, "the pruning index");
            rd_i32(&r, &v, "the pruning index");
            if (k < 0)
                continue; /* never looked up (bucket ids are not negative) */
            int fresh;
            pkey *e = sl_htab_put(&m->prune, &prune_type, &(uint32_t){(uint32_t)k + 1}, &fresh);
            e->val = v; /* a key twice: the later value wins, as in fastText */
            uint32_t bit = (uint32_t)k & m->prune_mask;
            m->prune_bits[bit >> 6] |= (uint64_t)1 << (bit & 63);
        }
    }

    /* the matrices */
    uint8_t qin, qout;
    if (rd_u8(&r, &qin, "the input matrix") || load_matrix(&r, &m->in, qin != 0, "the input matrix"))
        goto fail;
    if (!qin && m->pruneidx_size >= 0) {
        bad(&r, at, "a pruned dictionary (%lld n-grams kept) needs a quantized input matrix", m->pruneidx_size);
        goto fail;
    }
    if (m->in.n != m->dim) {
        bad(&r, at, "input matrix of width %lld does not match the model's dimension", m->in.n);
        goto fail;
    }
    /* every row a text can reach must exist */
    int64_t rows_needed = m->nwords + (m->pruneidx_size < 0 && ngrams ? (int64_t)m->bucket : 0);
    if (m->in.m < rows_needed) {
        bad(&r, at, "input matrix of %lld rows is smaller than the words plus the n-gram buckets", m->in.m);
        goto fail;
    }
    size_t pos = 0;
    for (const pkey *e; (e = sl_htab_next(&m->prune, &prune_type, &pos));)
        if (e->val < 0 || (int64_t)m->nwords + e->val >= m->in.m) {
            bad(&r, at, "pruning index maps an n-gram to row %lld, outside the input matrix",
                (long long)m->nwords + e->val);
            goto fail;
        }
    at = r.pos;
    if (rd_u8(&r, &qout, "the output matrix") || load_matrix(&r, &m->out, qin && qout, "the output matrix"))
        goto fail;
    if (m->out.n != m->dim || m->out.m != m->nlabels) {
        bad(&r, at, "output matrix of %lld rows does not match the labels and the model's dimension", m->out.m);
        goto fail;
    }
    m->osz = m->nlabels;
    if (m->loss == LOSS_HS)
        build_tree(m);
    for (int i = 0; i <= 512; i++) { /* Loss::t_sigmoid_ */
        float x = (float)(i * 2 * 8) / 512.0f - 8.0f;
        m->sigmoid[i] = (float)(1.0 / (1.0 + (double)expf(-x)));
    }
    cache_subwords(m, cached_subwords);
    decode_matrix(&m->in);
    return m;
fail:
    sl_ft_free(m);
    return NULL;
}

sl_ft_model *sl_ft_load(const char *path, sl_err *err)
{
    /* an uncompressed regular file is mapped (a model of gigabytes is not
     * read into memory beside the copy the model keeps); others are read */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 4) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED && sl_compression_sniff(p, (size_t)st.st_size) == SL_COMP_NONE) {
            close(fd);
            sl_ft_model *m = sl_ft_load_mem(p, (size_t)st.st_size, path, err);
            munmap(p, (size_t)st.st_size);
            return m;
        }
        if (p != MAP_FAILED)
            munmap(p, (size_t)st.st_size);
    }
    if (fd >= 0)
        close(fd);
    char *data;
    size_t len;
    if (sl_read_file(path, &data, &len, err))
        return NULL;
    sl_ft_model *m = sl_ft_load_mem(data, len, path, err);
    free(data);
    return m;
}

void sl_ft_get_info(const sl_ft_model *m, sl_ft_info *info)
{
    static const char *const losses[] = {"", "hs", "ns", "softmax", "ova"};
    *info = (sl_ft_info){.dim = m->dim,
                         .nwords = m->nwords,
                         .nlabels = m->nlabels,
                         .minn = m->minn,
                         .maxn = m->maxn,
                         .word_ngrams = m->word_ngrams,
                         .bucket = m->bucket,
                         .loss = losses[m->loss],
                         .quantized = m->in.quant,
                         .qout = m->out.quant,
                         .pruned = m->pruneidx_size};
}

const char *sl_ft_label(const sl_ft_model *m, int i, size_t *len)
{
    int32_t w = m->nwords + i;
    if (len)
        *len = m->woff[w + 1] - m->woff[w] - 1;
    return m->pool + m->woff[w];
}

/* ---- prediction --------------------------------------------------------- */

sl_ft_state *sl_ft_state_new(const sl_ft_model *m)
{
    sl_ft_state *s = sl_xcalloc(1, sizeof *s);
    s->hidden = sl_xmalloc((size_t)m->dim * sizeof *s->hidden);
    s->output = sl_xmalloc((size_t)m->osz * sizeof *s->output);
    s->heap = sl_xmalloc(((size_t)m->osz + 1) * sizeof *s->heap);
    s->stack = sl_xmalloc((2 * (size_t)m->osz + 1) * sizeof *s->stack);
    s->stack_score = sl_xmalloc((2 * (size_t)m->osz + 1) * sizeof *s->stack_score);
    s->ring = sl_xmalloc(((size_t)(m->word_ngrams > 1 ? m->word_ngrams : 1)) * sizeof *s->ring);
    s->oov = sl_xcalloc(OOV_SLOTS, sizeof *s->oov);
    return s;
}

void sl_ft_state_free(sl_ft_state *s)
{
    if (!s)
        return;
    free(s->hidden);
    free(s->output);
    free(s->heap);
    free(s->stack);
    free(s->stack_score);
    free(s->word);
    free(s->ring);
    free(s->oov);
    free(s);
}

static inline const float *centroids(const pq *q, int32_t sub, uint8_t code)
{
    if (sub == q->nsubq - 1)
        return &q->centroids[(size_t)sub * KSUB * q->dsub + (size_t)code * q->lastdsub];
    return &q->centroids[((size_t)sub * KSUB + code) * q->dsub];
}

/* x += r, element by element (the same additions in any order of j: each is
 * one float add); restrict and the fixed-length case let the compiler use
 * vector registers (lid.176's dim is 16) */
static inline void add_vec(float *restrict x, const float *restrict r, int32_t n)
{
    if (n == 16) {
        for (int j = 0; j < 16; j++)
            x[j] += r[j];
        return;
    }
    for (int32_t j = 0; j < n; j++)
        x[j] += r[j];
}

/* hidden += row r of the input matrix (addRowToVector) */
static inline void add_row(const sl_ft_model *m, sl_ft_state *s, int32_t r)
{
    const matrix *mx = &m->in;
    float *x = s->hidden;
    s->rows++;
    if (!mx->quant) {
        const float *row = mx->data + (size_t)r * (size_t)mx->n;
        for (int32_t j = 0; j < m->dim; j++)
            x[j] += row[j];
        return;
    }
    if (mx->decoded) {
        add_vec(x, mx->decoded + (size_t)r * (size_t)mx->n, m->dim);
        return;
    }
    float norm = 1;
    if (mx->qnorm)
        norm = centroids(&mx->npq, 0, mx->norm_codes[r])[0];
    const pq *q = &mx->pq;
    const uint8_t *code = mx->codes + (size_t)q->nsubq * (size_t)r;
    int32_t d = q->dsub;
    for (int32_t sub = 0; sub < q->nsubq; sub++) {
        const float *c = centroids(q, sub, code[sub]);
        if (sub == q->nsubq - 1)
            d = q->lastdsub;
        float *xs = x + (size_t)sub * q->dsub;
        for (int32_t n = 0; n < d; n++)
            xs[n] += norm * c[n];
    }
}

/* Decodes a quantized input matrix row by row into mx->decoded: element
 * (r, j) = norm(r) * centroid(r, j), the product add_row would add. */
static void decode_matrix(matrix *mx)
{
    if (!mx->quant || (uint64_t)mx->m * (uint64_t)mx->n * sizeof(float) > DECODE_LIMIT)
        return;
    mx->decoded = sl_xmalloc((size_t)mx->m * (size_t)mx->n * sizeof(float) + 1);
    const pq *q = &mx->pq;
    for (int64_t r = 0; r < mx->m; r++) {
        float norm = 1;
        if (mx->qnorm)
            norm = centroids(&mx->npq, 0, mx->norm_codes[r])[0];
        const uint8_t *code = mx->codes + (size_t)q->nsubq * (size_t)r;
        float *row = mx->decoded + (size_t)r * (size_t)mx->n;
        int32_t d = q->dsub;
        for (int32_t sub = 0; sub < q->nsubq; sub++) {
            const float *c = centroids(q, sub, code[sub]);
            if (sub == q->nsubq - 1)
                d = q->lastdsub;
            for (int32_t n = 0; n < d; n++)
                row[(size_t)sub * q->dsub + n] = norm * c[n];
        }
    }
}

/* row r of the output matrix . hidden (dotRow); NaN from a dense matrix is
 * reported (fastText raises EncounteredNaNError) */
static inline float dot_row(const sl_ft_model *m, const float *x, int32_t r, int *nan)
{
    const matrix *mx = &m->out;
    if (!mx->quant) {
        const float *row = mx->data + (size_t)r * (size_t)mx->n;
        float d = 0;
        for (int32_t j = 0; j < m->dim; j++)
            d += row[j] * x[j];
        if (isnan(d))
            *nan = 1;
        return d;
    }
    float norm = 1;
    if (mx->qnorm)
        norm = centroids(&mx->npq, 0, mx->norm_codes[r])[0];
    const pq *q = &mx->pq;
    const uint8_t *code = mx->codes + (size_t)q->nsubq * (size_t)r;
    float res = 0;
    int32_t d = q->dsub;
    for (int32_t sub = 0; sub < q->nsubq; sub++) {
        const float *c = centroids(q, sub, code[sub]);
        if (sub == q->nsubq - 1)
            d = q->lastdsub;
        const float *xs = x + (size_t)sub * q->dsub;
        for (int32_t n = 0; n < d; n++)
            res += xs[n] * c[n];
    }
    return res * norm;
}

/* The tokens of a line as fastText's Dictionary::readWord reads text + "\n":
 * runs of bytes between the separators; the "\n" (appended, or the first
 * one in the text) gives the end-of-sentence token. Returns 1 with the
 * token in *tok, *n (EOS as "</s>"), 0 after the end. */
typedef struct {
    const char *p;
    size_t len, pos;
    int done;
} words;

static inline int is_sep(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == 0;
}

static inline int next_word(words *w, const char **tok, size_t *n)
{
    if (w->done)
        return 0;
    while (w->pos < w->len && is_sep((unsigned char)w->p[w->pos]) && w->p[w->pos] != '\n')
        w->pos++;
    if (w->pos >= w->len || w->p[w->pos] == '\n') {
        *tok = EOS;
        *n = 4;
        w->done = 1;
        return 1;
    }
    size_t s = w->pos;
    while (w->pos < w->len && !is_sep((unsigned char)w->p[w->pos]))
        w->pos++;
    *tok = w->p + s;
    *n = w->pos - s;
    if (*n == 4 && !memcmp(*tok, EOS, 4)) /* a literal "</s>" ends the line too */
        w->done = 1;
    return 1;
}

/* The type of a token: its word id (-1: not in the dictionary) and whether
 * it is a word (fastText's getType: labels are in the dictionary after
 * the words, or start with "__label__"). */
static inline int32_t lookup(const sl_ft_model *m, const char *tok, size_t n, uint32_t *h, int *is_word)
{
    *h = ft_hash(tok, n);
    int32_t wid = find_word(m, tok, n, *h);
    if (wid >= 0)
        *is_word = wid < m->nwords;
    else
        *is_word = !(n >= sizeof LABEL_PREFIX - 1 && !memcmp(tok, LABEL_PREFIX, sizeof LABEL_PREFIX - 1));
    return wid;
}

static void add_subwords(const sl_ft_model *m, sl_ft_state *s, const char *tok, size_t n, int32_t wid, uint32_t h)
{
    oov_slot *slot = NULL;
    if (wid < 0 && m->maxn > 0 && n <= OOV_WORD && !(n == 4 && !memcmp(tok, EOS, 4))) {
        slot = &s->oov[h & (OOV_SLOTS - 1)];
        if (slot->n == n && slot->h == h && !memcmp(slot->w, tok, n)) {
            for (int i = 0; i < slot->nrows; i++)
                add_row(m, s, slot->rows[i]);
            return;
        }
    }
    if (wid >= 0 && (m->maxn <= 0 || m->sub_off)) {
        if (m->maxn <= 0) {
            add_row(m, s, wid);
            return;
        }
        for (int32_t i = m->sub_off[wid]; i < m->sub_off[wid + 1]; i++)
            add_row(m, s, m->sub_ids[i]);
        return;
    }
    if (wid >= 0)
        add_row(m, s, wid);
    if (m->maxn <= 0 || (n == 4 && !memcmp(tok, EOS, 4)))
        return;
    if (n + 2 > s->word_cap) {
        s->word_cap = 2 * (n + 2);
        s->word = sl_xrealloc(s->word, s->word_cap);
    }
    char *w = s->word;
    w[0] = '<';
    memcpy(w + 1, tok, n);
    w[n + 1] = '>';
    if (!slot) {
        FOR_EACH_NGRAM(m, w, n + 2, add_row(m, s, row));
        return;
    }
    int cnt = 0;
    FOR_EACH_NGRAM(m, w, n + 2, {
        add_row(m, s, row);
        if (cnt < OOV_ROWS)
            slot->rows[cnt] = row;
        cnt++;
    });
    if (cnt <= OOV_ROWS) {
        slot->h = h, slot->n = (uint16_t)n, slot->nrows = (uint16_t)cnt;
        memcpy(slot->w, tok, n);
    } else {
        slot->n = 0; /* its rows were overwritten */
    }
}

/* Word n-grams (Dictionary::addWordNgrams) over the word hashes of the
 * line, read again: hash i with the next wordNgrams - 1, with fastText's
 * sign extension of the int32 hashes to 64 bits. */
static void add_word_ngrams(const sl_ft_model *m, sl_ft_state *s, const char *text, size_t len)
{
    int32_t wn = m->word_ngrams;
    words it = {.p = text, .len = len};
    const char *tok;
    size_t n;
    int64_t have = 0, first = 0; /* hashes read; index of the oldest in the ring */
    int more = 1;
    for (;;) {
        /* read until hashes first .. first + wn - 1 are in, or the line ends */
        while (more && have - first < wn) {
            if (!next_word(&it, &tok, &n)) {
                more = 0;
                break;
            }
            uint32_t h;
            int is_word;
            lookup(m, tok, n, &h, &is_word);
            if (is_word)
                s->ring[have++ % wn] = h;
        }
        if (first >= have)
            break;
        uint64_t h = (uint64_t)(int64_t)(int32_t)s->ring[first % wn];
        for (int64_t j = first + 1; j < have && j < first + wn; j++) {
            h = h * 116049371u + (uint64_t)(int64_t)(int32_t)s->ring[j % wn];
            int32_t row = ngram_row(m, (uint32_t)(h % (uint64_t)(uint32_t)m->bucket));
            if (row >= 0)
                add_row(m, s, row);
        }
        first++;
    }
}

/* libstdc++'s heap algorithms with fastText's comparePairs (a.first >
 * b.first: the heap's front is the smallest), so that equal scores come out
 * in fastText's order. */
static inline int cmp_pairs(const sl_ft_pred *a, const sl_ft_pred *b)
{
    return a->prob > b->prob;
}
static void heap_sift_up(sl_ft_pred *h, long hole, long top, sl_ft_pred v)
{
    long parent = (hole - 1) / 2;
    while (hole > top && cmp_pairs(&h[parent], &v)) {
        h[hole] = h[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    h[hole] = v;
}
static void heap_push(sl_ft_pred *h, long n) /* h[n-1] is new */
{
    heap_sift_up(h, n - 1, 0, h[n - 1]);
}
static void heap_adjust(sl_ft_pred *h, long hole, long len, sl_ft_pred v)
{
    long top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (cmp_pairs(&h[child], &h[child - 1]))
            child--;
        h[hole] = h[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    heap_sift_up(h, hole, top, v);
}
static void heap_pop(sl_ft_pred *h, long n) /* the front goes to h[n-1] */
{
    if (n > 1) {
        sl_ft_pred v = h[n - 1];
        h[n - 1] = h[0];
        heap_adjust(h, 0, n - 1, v);
    }
}
static void heap_sort(sl_ft_pred *h, long n)
{
    while (n > 1) {
        heap_pop(h, n);
        n--;
    }
}
/* push (score, label) and keep the k best */
static inline void heap_add(sl_ft_pred *h, long *n, long k, float score, int32_t label)
{
    h[*n] = (sl_ft_pred){score, label};
    ++*n;
    heap_push(h, *n);
    if (*n > k) {
        heap_pop(h, *n);
        --*n;
    }
}

static inline float std_log(float x)
{
    return (float)log((double)x + 1e-5);
}

static int predict_hs(const sl_ft_model *m, sl_ft_state *s, long k, float threshold, long *nh)
{
    float floor = std_log(threshold);
    int nan = 0;
    long sp = 0;
    s->stack[sp] = 2 * m->osz - 2;
    s->stack_score[sp++] = 0;
    while (sp > 0) {
        sp--;
        int32_t node = s->stack[sp];
        float score = s->stack_score[sp];
        if (score < floor)
            continue;
        if (*nh == k && score < s->heap[0].prob)
            continue;
        if (m->left[node] == -1 && m->right[node] == -1) {
            heap_add(s->heap, nh, k, score, node);
            continue;
        }
        float f = dot_row(m, s->hidden, node - m->osz, &nan);
        f = (float)(1. / (double)(1.0f + expf(-f)));
        /* left first: pushed last */
        s->stack[sp] = m->right[node];
        s->stack_score[sp++] = score + std_log(f);
        s->stack[sp] = m->left[node];
        s->stack_score[sp++] = score + std_log((float)(1.0 - (double)f));
    }
    return nan ? -1 : 0;
}

static int predict_flat(const sl_ft_model *m, sl_ft_state *s, long k, float threshold, long *nh)
{
    int nan = 0;
    float *out = s->output;
    int32_t osz = m->osz;
    for (int32_t i = 0; i < osz; i++)
        out[i] = dot_row(m, s->hidden, i, &nan);
    if (nan)
        return -1;
    if (m->loss == LOSS_SOFTMAX) {
        float max = out[0], z = 0;
        for (int32_t i = 0; i < osz; i++)
            max = out[i] < max ? max : out[i]; /* std::max(output[i], max) */
        for (int32_t i = 0; i < osz; i++) {
            out[i] = (float)exp((double)(out[i] - max));
            z += out[i];
        }
        for (int32_t i = 0; i < osz; i++)
            out[i] /= z;
    } else {
        for (int32_t i = 0; i < osz; i++) { /* Loss::sigmoid: the table */
            float x = out[i];
            if (x < -8)
                out[i] = 0;
            else if (x > 8)
                out[i] = 1;
            else
                out[i] = m->sigmoid[(int64_t)((x + 8.0f) * 512.0f / 8.0f / 2.0f)];
        }
    }
    for (int32_t i = 0; i < osz; i++) { /* Loss::findKBest */
        if (out[i] < threshold)
            continue;
        float l = std_log(out[i]);
        if (*nh == k && l < s->heap[0].prob)
            continue;
        heap_add(s->heap, nh, k, l, i);
    }
    return 0;
}

int sl_ft_predict(const sl_ft_model *m, sl_ft_state *s, const char *text, size_t len, int k, float threshold,
                  sl_ft_pred *out, sl_err *err)
{
    long kk = k < 0 ? m->osz : k;
    if (kk == 0)
        return 0;
    memset(s->hidden, 0, (size_t)m->dim * sizeof *s->hidden);
    s->rows = 0;
    words it = {.p = text, .len = len};
    const char *tok;
    size_t n;
    while (next_word(&it, &tok, &n)) {
        uint32_t h;
        int is_word;
        int32_t wid = lookup(m, tok, n, &h, &is_word);
        if (is_word)
            add_subwords(m, s, tok, n, wid, h);
    }
    if (m->word_ngrams > 1)
        add_word_ngrams(m, s, text, len);
    if (s->rows == 0)
        return 0;
    float inv = (float)(1.0 / (double)s->rows);
    for (int32_t j = 0; j < m->dim; j++)
        s->hidden[j] *= inv;
    long nh = 0;
    int rc = m->loss == LOSS_HS ? predict_hs(m, s, kk, threshold, &nh) : predict_flat(m, s, kk, threshold, &nh);
    if (rc)
        return sl_errf(err, "the model computes NaN (its weights hold NaN or infinities)");
    heap_sort(s->heap, nh);
    for (long i = 0; i < nh; i++) {
        out[i].prob = expf(s->heap[i].prob);
        out[i].label = s->heap[i].label;
    }
    return (int)nh;
}
