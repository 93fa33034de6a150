/* The SentencePiece family behind tokenizer.h: `.model` files (the
 * ModelProto of sp_proto.h), BPE and Unigram, read directly, with ids equal
 * to the `sentencepiece` library's encode(text) and text equal to its
 * decode(ids).
 *
 * Encoding, as SentencePieceProcessor::Encode does:
 *   1. the normalizer spec (norm_precompiled.h: the precompiled charsmap,
 *      leading/trailing/repeated whitespace removed, a dummy U+2581 prefix,
 *      spaces as U+2581; user-defined pieces are left as they are);
 *   2. the model on the whole normalized text: Unigram Viterbi with the
 *      piece scores (unigram.h, float arithmetic, user-defined pieces
 *      favoured) or BPE by piece score (spm_bpe.h);
 *   3. an unknown piece becomes the <0xXX> pieces of its bytes with
 *      byte_fallback, else consecutive unknown pieces are one unk id.
 * Control pieces (<s>, </s>) written in the text are never matched: they
 * are text (sentencepiece's encode never parses them), so --special does
 * not apply. Decoding follows SentencePieceProcessor::Decode: control
 * pieces vanish, unk is unk_surface (" \u2047 "), runs of byte pieces are
 * decoded as UTF-8 with U+FFFD per invalid byte, U+2581 becomes a space and
 * the first one of the text is dropped. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stream/io.h"
#include "tokenize/models/joins.h"
#include "tokenize/normalizers/norm_precompiled.h"
#include "tokenize/scache.h"
#include "tokenize/sha256.h"
#include "tokenize/models/sp_proto.h"
#include "tokenize/models/spm_bpe.h"
#include "tokenize/tokenizer_impl.h"
#include "tokenize/models/unigram.h"

typedef struct spm {
    char *name;
    sl_spm_proto m;
    /* piece -> id; a Unigram model's is made at its first use (decode, a
     * token's id), since encoding needs only the lattice's trie */
    sl_spm_vocab *vocab;
    pthread_mutex_t vocab_mu;
    sl_charsmap cm;
    int has_cm;
    sl_trie user;
    int has_user;
    sl_spm_norm norm;
    sl_unigram *uni;
    int32_t byte_id[256];
    int16_t *byte_val; /* per id: the byte of a BYTE piece, else -1 */
    /* BPE only: 1 when no piece has U+2581 right after another character
     * and none is unused. No merge can then join the text across such a
     * U+2581, so BPE runs on each stretch starting there separately with
     * the same result, and stretches are cached */
    int bpe_cut;
    /* BPE with bpe_cut: every pair of adjacent characters in a piece
     * (joins.h); a stretch missing from the cache is cut where no piece
     * has its two characters side by side, and the parts are cached */
    sl_joins joins;
    sl_scache_shared *cache; /* BPE: the threads' shared short-stretch table */
} spm;

typedef struct spm_state {
    const spm *s;
    sl_buf norm;
    sl_uni_scratch pieces, seg;
    sl_scache cache; /* stretch -> its pieces: (start | end << 8, id) each */
    sl_spm_bpe_scratch bs;
} spm_state;

static void free_spm(spm *s)
{
    if (!s)
        return;
    free(s->name);
    sl_spm_vocab_free(s->vocab);
    pthread_mutex_destroy(&s->vocab_mu);
    sl_spm_proto_free(&s->m);
    sl_charsmap_free(&s->cm);
    sl_trie_free(&s->user);
    sl_unigram_free(s->uni);
    sl_joins_free(&s->joins);
    sl_scache_shared_free(s->cache);
    free(s->byte_val);
    free(s);
}

/* "<0xXX>" -> XX, or -1 (SentencePiece's PieceToByte: upper-case hex). */
static int piece_byte(const char *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    if (n != 6 || memcmp(p, "<0x", 3) || p[5] != '>')
        return -1;
    const char *a = memchr(hex, p[3], 16), *b = memchr(hex, p[4], 16);
    if (!a || !b || !p[3] || !p[4])
        return -1;
    return (int)((a - hex) * 16 + (b - hex));
}

#define META "\xE2\x96\x81" /* U+2581 */

/* The model's vocabulary (made on first use for a Unigram model; a model
 * with a piece defined twice never loads, so making it cannot fail). */
static const sl_spm_vocab *vocab_of(const spm *cs)
{
    spm *s = (spm *)cs;
    sl_spm_vocab *v = __atomic_load_n(&s->vocab, __ATOMIC_ACQUIRE);
    if (v)
        return v;
    pthread_mutex_lock(&s->vocab_mu);
    if (!s->vocab) {
        sl_err e;
        v = sl_spm_vocab_new(&s->m, s->name, &e);
        if (!v) /* cannot be: unigram_dups refused the model at load */
            abort();
        __atomic_store_n(&s->vocab, v, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&s->vocab_mu);
    return s->vocab;
}

typedef struct rpiece {
    const char *s;
    uint32_t len, i;
} rpiece;

static int rpiece_cmp(const void *a, const void *b)
{
    const rpiece *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    int c = memcmp(x->s, y->s, x->len);
    return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* What sl_spm_vocab_new refuses, for a Unigram model without making the
 * vocabulary: a string defined twice among the normal pieces (normal,
 * user-defined, unused: from the lattice's trie, whose layout sorts them)
 * or among the others (control, unknown, byte: few, sorted here). The
 * same message, for the same piece: the lowest index that repeats an
 * earlier piece of its kind. */
static int unigram_dups(const spm *s, const char *name, sl_err *err)
{
    const sl_spm_proto *m = &s->m;
    uint32_t a, b;
    int64_t first = -1, second = -1;
    if (sl_unigram_dup(s->uni, &a, &b))
        first = a, second = b;
    rpiece *r = sl_xmalloc((m->n_pieces + 1) * sizeof *r);
    size_t nr = 0;
    for (size_t i = 0; i < m->n_pieces; i++) {
        if (!sl_spm_normal_kind(m->pieces[i].type))
            r[nr++] = (rpiece){m->pieces[i].s ? m->pieces[i].s : "", m->pieces[i].len, (uint32_t)i};
    }
    qsort(r, nr, sizeof *r, rpiece_cmp);
    for (size_t g = 0, j; g < nr; g = j) { /* each run of one string: its first two */
        for (j = g + 1; j < nr && r[j].len == r[g].len && !memcmp(r[j].s, r[g].s, r[g].len);)
            j++;
        if (j - g > 1 && (second < 0 || r[g + 1].i < second))
            first = r[g].i, second = r[g + 1].i;
    }
    free(r);
    if (second < 0)
        return 0;
    const sl_spm_piece *p = &m->pieces[second];
    char q[SL_QUOTE_MAX];
    return sl_errf(err, "%s: piece %lld '%s' is already defined (piece %lld)", name, (long long)second,
                   sl_err_quote(p->s, p->len, q, sizeof q), (long long)first);
}

static spm *load_model(const uint8_t *data, size_t len, const char *name, sl_err *err)
{
    spm *s = sl_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->vocab_mu, NULL);
    s->name = sl_xstrdup(name);
    if (sl_spm_proto_parse(data, len, name, &s->m, err))
        goto fail;
    sl_spm_proto *m = &s->m;
    if (m->model_type != SL_SPM_UNIGRAM && m->model_type != SL_SPM_BPE) {
        sl_errf(err, "%s: trainer_spec.model_type %d (%s) is not supported (only UNIGRAM and BPE)", name, m->model_type,
                m->model_type == SL_SPM_WORD   ? "WORD"
                : m->model_type == SL_SPM_CHAR ? "CHAR"
                                               : "unknown");
        goto fail;
    }
    if (m->n_pieces > INT32_MAX) {
        sl_errf(err, "%s: too many pieces", name);
        goto fail;
    }
    if (m->denorm.charsmap) {
        sl_errf(err, "%s: denormalizer_spec with a charsmap is not supported", name);
        goto fail;
    }
    if (m->model_type == SL_SPM_BPE && !(s->vocab = sl_spm_vocab_new(m, name, err)))
        goto fail;
    int64_t unk = -1;
    for (size_t i = 0; i < 256; i++)
        s->byte_id[i] = -1;
    s->byte_val = sl_xmalloc(m->n_pieces * sizeof *s->byte_val);
    for (size_t i = 0; i < m->n_pieces; i++) {
        const sl_spm_piece *p = &m->pieces[i];
        s->byte_val[i] = -1;
        if (p->type == SL_SPM_UNKNOWN) {
            if (unk >= 0) {
                sl_errf(err, "%s: piece %zu: a second unknown piece (the first is %lld)", name, i, (long long)unk);
                goto fail;
            }
            unk = (int64_t)i;
        } else if (p->type == SL_SPM_BYTE) {
            int b = piece_byte(p->s, p->len);
            if (!m->byte_fallback) {
                sl_errf(err, "%s: piece %zu is a byte piece although trainer_spec.byte_fallback is false", name, i);
                goto fail;
            }
            if (b < 0) {
                char q[SL_QUOTE_MAX];
                sl_errf(err, "%s: piece %zu: byte piece '%s' is not <0xXX>", name, i,
                        sl_err_quote(p->s, p->len, q, sizeof q));
                goto fail;
            }
            s->byte_id[b] = (int32_t)i;
            s->byte_val[i] = (int16_t)b;
        } else if (p->type == SL_SPM_USER_DEFINED) {
            sl_trie_add(&s->user, p->s, p->len, (int32_t)i);
            s->has_user = 1;
        }
    }
    if (unk < 0) {
        sl_errf(err, "%s: the model has no unknown piece (type UNKNOWN)", name);
        goto fail;
    }
    for (int b = 0; m->byte_fallback && b < 256; b++)
        if (s->byte_id[b] < 0) {
            sl_errf(err, "%s: byte_fallback is set but there is no byte piece <0x%02X>", name, b);
            goto fail;
        }
    if (m->unk_id != unk)
        m->unk_id = (int32_t)unk; /* SentencePiece uses the UNKNOWN piece */
    if (m->norm.charsmap) {
        if (sl_charsmap_parse(&s->cm, m->norm.charsmap, m->norm.charsmap_len, name, m->norm.charsmap_off, err))
            goto fail;
        s->has_cm = 1;
    }
    s->norm =
        (sl_spm_norm){s->has_cm ? &s->cm : NULL,        s->has_user ? &s->user : NULL, m->norm.add_dummy_prefix,
                      m->norm.remove_extra_whitespaces, m->norm.escape_whitespaces,    m->treat_whitespace_as_suffix};
    if (m->model_type == SL_SPM_UNIGRAM) {
        s->uni = sl_unigram_new((uint32_t)m->n_pieces, 0);
        float lo = 3.402823466e38f; /* FLT_MAX, as SentencePiece starts it */
        for (size_t i = 0; i < m->n_pieces; i++) {
            const sl_spm_piece *p = &m->pieces[i];
            if (p->type == SL_SPM_NORMAL)
                lo = p->score < lo ? p->score : lo;
            int kind = p->type == SL_SPM_NORMAL         ? SL_UNI_NORMAL
                       : p->type == SL_SPM_USER_DEFINED ? SL_UNI_USER
                       : p->type == SL_SPM_UNUSED       ? SL_UNI_UNUSED
                                                        : 0;
            if (kind)
                sl_unigram_add(s->uni, (uint32_t)i, p->s, p->len, p->score, kind);
        }
        sl_unigram_set(s->uni, unk, lo);
        if (unigram_dups(s, name, err))
            goto fail;
    } else {
        s->bpe_cut = 1;
        for (size_t i = 0; i < m->n_pieces && s->bpe_cut; i++) {
            const sl_spm_piece *p = &m->pieces[i];
            if (p->type == SL_SPM_UNUSED)
                s->bpe_cut = 0;
            else if (p->type == SL_SPM_NORMAL || p->type == SL_SPM_USER_DEFINED)
                s->bpe_cut = sl_joins_word(p->s, p->len) == p->len /* no U+2581 after a character */;
        }
        if (s->bpe_cut) {
            s->cache = sl_scache_shared_new();
            sl_joins_init(&s->joins);
            for (size_t i = 0; i < m->n_pieces; i++)
                if (m->pieces[i].type == SL_SPM_NORMAL || m->pieces[i].type == SL_SPM_USER_DEFINED)
                    sl_joins_add_inner(&s->joins, m->pieces[i].s, m->pieces[i].len);
        }
    }
    return s;
fail:
    free_spm(s);
    return NULL;
}

/* --- encoding ------------------------------------------------------------ */
/* BPE of p[a, b) appended to st->pieces, through the cache. On a miss
 * (cut set) the stretch is cut where no piece joins (joins.h) and each
 * part goes through the cache in turn. */
static void bpe_stretch(const spm *s, spm_state *st, const char *p, uint32_t a, uint32_t b, int cut)
{
    uint32_t n = b - a;
    uint64_t h = 0;
    if (n <= SL_SCACHE_KEY) {
        h = sl_scache_hash(p + a, n);
        size_t nv;
        const uint32_t *v = sl_scache_get(&st->cache, h, p + a, n, &nv);
        if (v) {
            for (size_t i = 0; i + 1 < nv; i += 2)
                sl_uni_push(&st->pieces, a + (v[i] & 0xff), a + (v[i] >> 8), (int32_t)v[i + 1]);
            return;
        }
    }
    size_t first = st->pieces.n;
    uint32_t k = cut && s->joins.bits ? (uint32_t)sl_joins_part(&s->joins, p + a, n) : n;
    if (k < n) {
        for (uint32_t x = a; x < b; x += k) {
            if (x > a)
                k = (uint32_t)sl_joins_part(&s->joins, p + x, b - x);
            bpe_stretch(s, st, p, x, x + k, 0);
        }
    } else {
        sl_spm_bpe_encode(&s->m, s->vocab, s->has_user ? &s->user : NULL, &st->bs, p + a, n, s->m.unk_id, &st->seg);
        for (size_t i = 0; i < st->seg.n; i++)
            sl_uni_push(&st->pieces, a + st->seg.pieces[i].start, a + st->seg.pieces[i].end, st->seg.pieces[i].id);
    }
    size_t got = st->pieces.n - first;
    if (n <= SL_SCACHE_KEY && 2 * got <= SL_SCACHE_VALS) {
        uint32_t v[SL_SCACHE_VALS];
        for (size_t i = 0; i < got; i++) {
            const sl_uni_piece *x = &st->pieces.pieces[first + i];
            v[2 * i] = (x->start - a) | (x->end - a) << 8;
            v[2 * i + 1] = (uint32_t)x->id;
        }
        sl_scache_put(&st->cache, h, p + a, n, v, 2 * got);
    }
}

/* BPE on the stretches of p[0..n) that start at each U+2581 following
 * another character (s->bpe_cut). */
static void bpe_stretches(const spm *s, spm_state *st, const char *p, size_t n)
{
    st->pieces.n = 0;
    for (size_t a = 0, k; a < n; a += k) {
        k = sl_joins_word(p + a, n - a);
        bpe_stretch(s, st, p, (uint32_t)a, (uint32_t)(a + k), 1);
    }
}

static int spm_encode(const sl_tokenizer *t, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const spm *s = t->impl;
    spm_state *st = state;
    sl_spm_normalize(&s->norm, text, n, &st->norm);
    const char *p = st->norm.data ? st->norm.data : "";
    size_t pn = st->norm.len;
    if (pn > INT32_MAX) /* pieces keep 32-bit offsets */
        return sl_errf(err, "a document of %zu bytes (%zu normalized) is too long for %s (at most 2 GiB)", n, pn,
                       s->name);
    sl_uni_scratch *pc = &st->pieces;
    if (s->uni)
        sl_unigram_encode(s->uni, pc, p, pn);
    else if (!s->bpe_cut)
        sl_spm_bpe_encode(&s->m, s->vocab, s->has_user ? &s->user : NULL, &st->bs, p, pn, s->m.unk_id, pc);
    else
        bpe_stretches(s, st, p, pn);
    /* at most one id per byte (a piece has one byte or more; byte fallback
     * gives one id per byte): room for them first, then no check per id */
    while (out->cap - out->n < pn || !out->v) /* (never arithmetic on a NULL out->v) */
        sl_ids_grow(out);
    uint32_t *o = out->v + out->n;
    int prev_unk = 0;
    for (size_t i = 0; i < pc->n; i++) {
        const sl_uni_piece *x = &pc->pieces[i];
        int unk = x->id == s->m.unk_id;
        if (unk && s->m.byte_fallback) {
            for (uint32_t j = x->start; j < x->end; j++)
                *o++ = (uint32_t)s->byte_id[(uint8_t)p[j]];
        } else if (!(unk && prev_unk)) {
            *o++ = (uint32_t)x->id;
        }
        prev_unk = unk;
    }
    out->n = (size_t)(o - out->v);
    return 0;
}

/* --- the family ---------------------------------------------------------- */
static int spm_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const spm *s = t->impl;
    return sl_spm_decode(&s->m, vocab_of(s), s->byte_val, s->name, ids, n, out, err);
}

static void spm_free(void *impl)
{
    free_spm(impl);
}

static void *spm_state_new(const void *impl)
{
    spm_state *st = sl_xcalloc(1, sizeof *st);
    st->s = impl;
    sl_scache_init(&st->cache, st->s->cache);
    return st;
}

static void spm_state_free(void *state)
{
    spm_state *st = state;
    if (!st)
        return;
    sl_buf_free(&st->norm);
    sl_uni_scratch_free(&st->pieces);
    sl_uni_scratch_free(&st->seg);
    sl_scache_free(&st->cache);
    sl_spm_bpe_scratch_free(&st->bs);
    free(st);
}

static int64_t spm_token_id(const sl_tokenizer *t, const char *text)
{
    const spm *s = t->impl;
    return sl_spm_piece_id(vocab_of(s), text, strlen(text), -1);
}

static const sl_tok_ops ops = {spm_free, spm_state_new, spm_state_free, spm_encode, spm_decode, spm_token_id};

/* A ModelProto starts with its first piece: field 1 (key 0x0A), a length,
 * then the SentencePiece message's own field 1 (0x0A). */
static int spm_probe(sl_tok_src *src)
{
    const unsigned char *head = src->head;
    size_t n = src->head_len;
    if (src->is_dir || n < 3 || head[0] != 0x0A)
        return 0;
    size_t i = 1;
    while (i < n && i < 6 && (head[i] & 0x80))
        i++;
    return i + 1 < n && head[i + 1] == 0x0A;
}

static sl_tokenizer *spm_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    const char *path = src->path;
    sl_mapped f;
    if (sl_map_file(path, &f, err))
        return NULL;
    spm *s = load_model((const uint8_t *)f.data, f.len, path, err);
    if (!s) {
        sl_unmap_file(&f);
        return NULL;
    }
    sl_tokenizer *t = sl_tokenizer_new(&sl_tok_family_spm, &ops, s);
    sl_sha256_fingerprint(f.data, f.len, t->fingerprint);
    sl_unmap_file(&f);
    (void)o;
    t->vocab_size = (uint32_t)s->m.n_pieces;
    int64_t sp[SL_TOK_N_SPECIAL] = {s->m.eos_id, s->m.bos_id, s->m.pad_id, s->m.unk_id};
    for (int i = 0; i < SL_TOK_N_SPECIAL; i++)
        t->special[i] = sp[i] >= 0 && (size_t)sp[i] < s->m.n_pieces ? sp[i] : -1;
    const char *base = strrchr(path, '/');
    snprintf(t->name, sizeof t->name, "spm:%s", base && base[1] ? base + 1 : path);
    return t;
}

const sl_tok_family sl_tok_family_spm = {"spm", spm_probe, spm_load, NULL, NULL};
