/* A minimal protobuf reader for SentencePiece's ModelProto (sp_proto.h),
 * written from the protobuf wire format: each field is a varint key
 * (field number << 3 | wire type) followed by a varint (type 0), 8 bytes
 * (1), a varint length and that many bytes (2) or 4 bytes (5). Groups
 * (3, 4) are not used by the schema and are refused. A repeated or
 * embedded message field may occur several times; scalar fields take the
 * last value, as protobuf does. */
#include "tokenize/models/sp_proto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const uint8_t *p;
    size_t pos, end; /* within the whole file */
    const char *name;
} rd;

static int varint(rd *r, uint64_t *v, sl_err *err)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->end)
            return sl_errf(err, "%s: offset %zu: truncated varint", r->name, r->pos);
        uint8_t b = r->p[r->pos++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return sl_errf(err, "%s: offset %zu: varint longer than 10 bytes", r->name, r->pos);
}

/* One field: its number and wire type; for type 2 the payload [*a, *b);
 * for 0 the value in *v; for 1 and 5 the raw bytes in *v. */
typedef struct field {
    uint32_t num;
    int wt;
    uint64_t v;
    size_t a, b, at;
} field;

static int next_field(rd *r, field *f, sl_err *err)
{
    f->at = r->pos;
    uint64_t key;
    if (varint(r, &key, err))
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    if (f->num == 0 || key >> 3 > 536870911)
        return sl_errf(err, "%s: offset %zu: invalid field number %llu", r->name, f->at,
                       (unsigned long long)(key >> 3));
    switch (f->wt) {
    case 0: return varint(r, &f->v, err);
    case 1:
    case 5: {
        size_t k = f->wt == 1 ? 8 : 4;
        if (r->end - r->pos < k)
            return sl_errf(err, "%s: offset %zu: field %u: truncated %zu-byte value", r->name, f->at, f->num, k);
        f->v = 0;
        for (size_t i = 0; i < k; i++)
            f->v |= (uint64_t)r->p[r->pos + i] << (8 * i);
        r->pos += k;
        return 0;
    }
    case 2: {
        uint64_t len;
        if (varint(r, &len, err))
            return -1;
        if (len > r->end - r->pos)
            return sl_errf(err,
                           "%s: offset %zu: field %u: length %llu runs past the end of its message (%zu bytes left)",
                           r->name, f->at, f->num, (unsigned long long)len, r->end - r->pos);
        f->a = r->pos;
        f->b = r->pos + (size_t)len;
        r->pos = f->b;
        return 0;
    }
    default:
        return sl_errf(err, "%s: offset %zu: field %u: wire type %d is not supported", r->name, f->at, f->num, f->wt);
    }
}

static int want(const rd *r, const field *f, int wt, const char *what, sl_err *err)
{
    if (f->wt == wt)
        return 0;
    return sl_errf(err, "%s: offset %zu: %s (field %u) has wire type %d, expected %d", r->name, f->at, what, f->num,
                   f->wt, wt);
}

static char *dup_bytes(const rd *r, const field *f)
{
    return sl_xstrndup((const char *)r->p + f->a, f->b - f->a);
}

/* The piece's string copied to the end of m's piece_bytes, which has
 * room for all of them: each takes its length and a NUL there, and at
 * least its length and 2 bytes (key, length) of the file. */
static char *piece_copy(sl_spm_proto *m, const rd *r, const field *f)
{
    char *s = m->piece_bytes + m->piece_bytes_len;
    if (f->b > f->a)
        memcpy(s, r->p + f->a, f->b - f->a);
    s[f->b - f->a] = 0;
    m->piece_bytes_len += f->b - f->a + 1;
    return s;
}

int sl_spm_proto_fast = 1;

/* The layout every trainer writes, read without the field loop: the piece
 * (field 1, a length below 128), then its score (2), then its type (3,
 * one byte) if not normal. It stops where the bytes differ, or where a
 * value would need a message (a score that is not finite, a type out of
 * range), and the field loop reads on from there, so every message and
 * every later field is as before. About a third of a 250k-piece model's
 * parse. */
static void piece_prefix(rd *s, sl_spm_proto *m, sl_spm_piece *pc)
{
    const uint8_t *p = s->p;
    size_t at = s->pos;
    if (s->end - at < 2 || p[at] != 0x0A || p[at + 1] >= 0x80 || p[at + 1] > s->end - at - 2)
        return;
    field f = {.num = 1, .wt = 2, .a = at + 2, .b = at + 2 + p[at + 1], .at = at};
    pc->s = piece_copy(m, s, &f);
    pc->len = (uint32_t)(f.b - f.a);
    s->pos = at = f.b;
    if (s->end - at < 5 || p[at] != 0x15)
        return;
    uint32_t bits =
        (uint32_t)p[at + 1] | (uint32_t)p[at + 2] << 8 | (uint32_t)p[at + 3] << 16 | (uint32_t)p[at + 4] << 24;
    float sc;
    memcpy(&sc, &bits, 4);
    if (!isfinite(sc))
        return;
    pc->score = sc;
    s->pos = at += 5;
    if (s->end - at < 2 || p[at] != 0x18 || p[at + 1] < SL_SPM_NORMAL || p[at + 1] > SL_SPM_BYTE)
        return;
    pc->type = p[at + 1];
    s->pos = at + 2;
}

static int parse_piece(rd *r, size_t a, size_t b, sl_spm_proto *m, sl_spm_piece *pc, sl_err *err)
{
    rd s = {r->p, a, b, r->name};
    pc->type = SL_SPM_NORMAL;
    if (sl_spm_proto_fast)
        piece_prefix(&s, m, pc);
    while (s.pos < s.end) {
        field f;
        if (next_field(&s, &f, err))
            return -1;
        if (f.num == 1) {
            if (want(&s, &f, 2, "piece", err))
                return -1;
            pc->s = piece_copy(m, &s, &f);
            pc->len = (uint32_t)(f.b - f.a);
        } else if (f.num == 2) {
            if (want(&s, &f, 5, "score", err))
                return -1;
            uint32_t bits = (uint32_t)f.v;
            memcpy(&pc->score, &bits, 4);
            if (!isfinite(pc->score)) /* sentencepiece refuses such a model too */
                return sl_errf(err, "%s: offset %zu: a piece's score is NaN or infinite", r->name, f.at);
        } else if (f.num == 3) {
            if (want(&s, &f, 0, "type", err))
                return -1;
            if (f.v < SL_SPM_NORMAL || f.v > SL_SPM_BYTE)
                return sl_errf(err, "%s: offset %zu: piece type %llu is not one of 1..6", r->name, f.at,
                               (unsigned long long)f.v);
            pc->type = (int)f.v;
        }
    }
    if (!pc->s || !pc->len)
        return sl_errf(err, "%s: offset %zu: a piece has no string (pieces must not be empty)", r->name, a);
    return 0;
}

static int parse_trainer(rd *r, size_t a, size_t b, sl_spm_proto *m, sl_err *err)
{
    rd s = {r->p, a, b, r->name};
    while (s.pos < s.end) {
        field f;
        if (next_field(&s, &f, err))
            return -1;
        int32_t *id = f.num == 40   ? &m->unk_id
                      : f.num == 41 ? &m->bos_id
                      : f.num == 42 ? &m->eos_id
                      : f.num == 43 ? &m->pad_id
                                    : NULL;
        if (f.num == 3) {
            if (want(&s, &f, 0, "trainer_spec.model_type", err))
                return -1;
            m->model_type = (int)(f.v > 100 ? 100 : f.v);
        } else if (f.num == 35 || f.num == 24) {
            if (want(&s, &f, 0, f.num == 35 ? "trainer_spec.byte_fallback" : "trainer_spec.treat_whitespace_as_suffix",
                     err))
                return -1;
            *(f.num == 35 ? &m->byte_fallback : &m->treat_whitespace_as_suffix) = f.v != 0;
        } else if (id) {
            if (want(&s, &f, 0, "trainer_spec special id", err))
                return -1;
            *id = (int32_t)(uint32_t)f.v; /* int32: negative values are sign-extended varints */
        } else if (f.num == 44) {
            if (want(&s, &f, 2, "trainer_spec.unk_surface", err))
                return -1;
            free(m->unk_surface);
            m->unk_surface = dup_bytes(&s, &f);
        }
    }
    return 0;
}

static int parse_norm(rd *r, size_t a, size_t b, sl_spm_normspec *ns, sl_err *err)
{
    rd s = {r->p, a, b, r->name};
    ns->present = 1;
    while (s.pos < s.end) {
        field f;
        if (next_field(&s, &f, err))
            return -1;
        if (f.num == 1) {
            if (want(&s, &f, 2, "normalizer_spec.name", err))
                return -1;
            free(ns->name);
            ns->name = dup_bytes(&s, &f);
        } else if (f.num == 2) {
            if (want(&s, &f, 2, "normalizer_spec.precompiled_charsmap", err))
                return -1;
            free(ns->charsmap);
            ns->charsmap = NULL;
            ns->charsmap_len = f.b - f.a;
            ns->charsmap_off = f.a;
            if (ns->charsmap_len) {
                ns->charsmap = sl_xmalloc(ns->charsmap_len);
                memcpy(ns->charsmap, s.p + f.a, ns->charsmap_len);
            }
        } else if (f.num >= 3 && f.num <= 5) {
            if (want(&s, &f, 0, "normalizer_spec flag", err))
                return -1;
            int *flag = f.num == 3   ? &ns->add_dummy_prefix
                        : f.num == 4 ? &ns->remove_extra_whitespaces
                                     : &ns->escape_whitespaces;
            *flag = f.v != 0;
        }
    }
    return 0;
}

static void norm_defaults(sl_spm_normspec *ns)
{
    ns->add_dummy_prefix = ns->remove_extra_whitespaces = ns->escape_whitespaces = 1;
}

int sl_spm_proto_parse(const uint8_t *p, size_t n, const char *name, sl_spm_proto *m, sl_err *err)
{
    memset(m, 0, sizeof *m);
    m->model_type = SL_SPM_UNIGRAM;
    m->unk_id = 0, m->bos_id = 1, m->eos_id = 2, m->pad_id = -1;
    norm_defaults(&m->norm);
    norm_defaults(&m->denorm);
    rd r = {p, 0, n, name};
    size_t cap = 0;
    while (r.pos < r.end) {
        field f;
        if (next_field(&r, &f, err))
            goto fail;
        if (f.num == 1) {
            if (want(&r, &f, 2, "pieces", err))
                goto fail;
            if (m->n_pieces == cap) {
                cap = cap ? 2 * cap : 1024;
                m->pieces = sl_xrealloc(m->pieces, cap * sizeof *m->pieces);
            }
            sl_spm_piece *pc = &m->pieces[m->n_pieces++];
            memset(pc, 0, sizeof *pc);
            if (!m->piece_bytes)
                m->piece_bytes = sl_xmalloc(n + 1);
            if (parse_piece(&r, f.a, f.b, m, pc, err))
                goto fail;
        } else if (f.num == 2) {
            if (want(&r, &f, 2, "trainer_spec", err) || parse_trainer(&r, f.a, f.b, m, err))
                goto fail;
        } else if (f.num == 3 || f.num == 5) {
            if (want(&r, &f, 2, "normalizer_spec", err) ||
                parse_norm(&r, f.a, f.b, f.num == 3 ? &m->norm : &m->denorm, err))
                goto fail;
        }
    }
    if (!m->n_pieces) {
        sl_errf(err, "%s: not a SentencePiece model (no pieces)", name);
        goto fail;
    }
    return 0;
fail:
    sl_spm_proto_free(m);
    return -1;
}

static void free_norm(sl_spm_normspec *ns)
{
    free(ns->name);
    free(ns->charsmap);
}

void sl_spm_proto_free(sl_spm_proto *m)
{
    free(m->pieces);
    free(m->piece_bytes);
    free(m->unk_surface);
    free_norm(&m->norm);
    free_norm(&m->denorm);
    memset(m, 0, sizeof *m);
}

static int same_norm(const sl_spm_normspec *a, const sl_spm_normspec *b)
{
    return !a->name == !b->name && (!a->name || !strcmp(a->name, b->name)) && a->charsmap_len == b->charsmap_len &&
           !a->charsmap == !b->charsmap && (!a->charsmap || !memcmp(a->charsmap, b->charsmap, a->charsmap_len)) &&
           a->charsmap_off == b->charsmap_off && a->add_dummy_prefix == b->add_dummy_prefix &&
           a->remove_extra_whitespaces == b->remove_extra_whitespaces &&
           a->escape_whitespaces == b->escape_whitespaces && a->present == b->present;
}

int sl_spm_proto_same(const sl_spm_proto *a, const sl_spm_proto *b)
{
    if (a->n_pieces != b->n_pieces || a->model_type != b->model_type || a->byte_fallback != b->byte_fallback ||
        a->treat_whitespace_as_suffix != b->treat_whitespace_as_suffix || a->unk_id != b->unk_id ||
        a->bos_id != b->bos_id || a->eos_id != b->eos_id || a->pad_id != b->pad_id ||
        !a->unk_surface != !b->unk_surface || (a->unk_surface && strcmp(a->unk_surface, b->unk_surface)) ||
        !same_norm(&a->norm, &b->norm) || !same_norm(&a->denorm, &b->denorm))
        return 0;
    for (size_t i = 0; i < a->n_pieces; i++) {
        const sl_spm_piece *x = &a->pieces[i], *y = &b->pieces[i];
        if (x->len != y->len || x->type != y->type || memcmp(&x->score, &y->score, sizeof x->score) ||
            memcmp(x->s, y->s, x->len + 1))
            return 0;
    }
    return 1;
}
