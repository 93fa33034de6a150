/* Packer: see pack.h and docs/shards.md. One row buffer is filled at a time;
 * both layouts use the same "copy a span of a document sequence into the
 * row and record a piece" step, they differ only in where the next span
 * comes from (the next input document, or the slot's own document). */
#include "shard/pack.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* A piece while its row is being filled: the id lives in the row's arena,
 * whose buffer may move, so it is kept as an offset until the row is emitted. */
typedef struct {
    sl_piece p;
    size_t id_off;
} pending_piece;

/* A document sequence [BOS] tokens [EOS], without copying the tokens. */
typedef struct {
    const uint32_t *tok;
    size_t n; /* body tokens */
    int has_bos, has_eos;
    uint32_t bos, eos;
    size_t len; /* sequence length used (may be cut by truncation) */
} docseq;

typedef struct {
    int active;
    uint32_t *tok; /* owned copy of the body (recurrent layout) */
    docseq seq;
    size_t pos;
    uint64_t ordinal;
    char *id;
    size_t id_len;
} slot;

struct sl_packer {
    sl_pack_opts o;
    sl_row_fn fn;
    void *ctx;
    uint32_t *row;
    uint32_t fill;
    pending_piece *pend;
    size_t n_pend, cap_pend;
    sl_piece *out; /* pieces handed to the callback */
    sl_buf ids;    /* id arena of the current row */
    uint64_t row_index;
    sl_pack_stats st;
    /* recurrent layout */
    slot *slots;
    uint32_t cur;
};

static const char *const long_names[] = {"truncate", "drop", "split"};

const char *sl_long_mode_name(int long_mode)
{
    return long_mode >= 0 && long_mode <= SL_LONG_SPLIT ? long_names[long_mode] : "truncate";
}

int sl_long_mode_parse(const char *name)
{
    for (int i = 0; i <= SL_LONG_SPLIT; i++)
        if (!strcmp(name, long_names[i]))
            return i;
    return -1;
}

int sl_pack_check_seq_len(int64_t seq_len, sl_err *err)
{
    if (seq_len <= 0 || seq_len % 8 || seq_len > (1ll << 31))
        return sl_err_set(err, SL_E_OPTION, "seq_len", "`seq_len` %lld: must be a positive multiple of 8",
                          (long long)seq_len);
    return 0;
}

int sl_pack_opts_check(const sl_pack_opts *o, sl_err *err)
{
    if (sl_pack_check_seq_len(o->seq_len, err))
        return -1;
    if (o->mem_tokens) {
        if (o->layout != SL_LAYOUT_RECURRENT)
            return sl_err_set(err, SL_E_OPTION, "mem_tokens", "`mem_tokens` applies to `layout` recurrent");
        if (o->mem_id < 0 || o->mem_id > (int64_t)UINT32_MAX)
            return sl_err_set(err, SL_E_OPTION, "mem_tokens", "`mem_tokens` %u needs `mem_id`", o->mem_tokens);
        uint64_t m = (uint64_t)o->mem_tokens * (o->mem_write ? 2u : 1u);
        if (m >= o->seq_len)
            return sl_err_set(err, SL_E_OPTION, "mem_tokens",
                              "`mem_tokens` %u%s leaves no room for data in rows of `seq_len` %u", o->mem_tokens,
                              o->mem_write ? " (read and write)" : "", o->seq_len);
    } else if (o->mem_write) {
        return sl_err_set(err, SL_E_OPTION, "mem_write", "`mem_write` needs `mem_tokens` K");
    }
    if (o->layout == SL_LAYOUT_RECURRENT) {
        if (o->batch == 0)
            return sl_err_set(err, SL_E_OPTION, "layout", "`layout` recurrent needs `batch` B (B > 0)");
        if (o->no_split)
            return sl_err_set(err, SL_E_OPTION, "no_split", "`no_split` cannot be combined with `layout` recurrent");
    }
    const int64_t ids[3] = {o->eos, o->bos, o->pad};
    for (int i = 0; i < 3; i++)
        if (ids[i] != SL_NO_TOKEN && (ids[i] < 0 || ids[i] > (int64_t)UINT32_MAX))
            return sl_errf(err, "special token id %lld is out of range", (long long)ids[i]);
    return 0;
}

sl_packer *sl_packer_new(const sl_pack_opts *o, sl_row_fn fn, void *ctx, sl_err *err)
{
    if (sl_pack_opts_check(o, err))
        return NULL;
    sl_packer *p = sl_xcalloc(1, sizeof *p);
    p->o = *o;
    p->fn = fn;
    p->ctx = ctx;
    p->row = sl_xmalloc((size_t)o->seq_len * sizeof *p->row);
    if (o->layout == SL_LAYOUT_RECURRENT)
        p->slots = sl_xcalloc(o->batch, sizeof *p->slots);
    return p;
}

static void seq_init(const sl_packer *p, docseq *s, const uint32_t *tok, size_t n)
{
    s->tok = tok;
    s->n = n;
    s->has_bos = p->o.bos != SL_NO_TOKEN;
    s->has_eos = sl_pack_appends_eos(&p->o, tok, n);
    s->bos = (uint32_t)p->o.bos;
    s->eos = (uint32_t)p->o.eos;
    s->len = n + (size_t)s->has_bos + (size_t)s->has_eos;
}

/* Copies sequence positions [pos, pos+take) to dst. */
static void seq_copy(const docseq *s, uint32_t *dst, size_t pos, size_t take)
{
    size_t i = 0;
    while (i < take) {
        size_t q = pos + i;
        if (s->has_bos && q == 0) {
            dst[i++] = s->bos;
            continue;
        }
        size_t b = q - (size_t)s->has_bos;
        if (b < s->n) {
            size_t k = s->n - b < take - i ? s->n - b : take - i;
            memcpy(dst + i, s->tok + b, k * sizeof *dst);
            i += k;
        } else {
            dst[i++] = s->eos;
        }
    }
}

static int emit_row(sl_packer *p, sl_err *err)
{
    uint32_t L = p->o.seq_len, mr = sl_pack_mem_read(&p->o), mw = sl_pack_mem_write(&p->o), end = L - mw;
    if (p->fill < mr)
        p->fill = mr; /* a row that received no data */
    if (p->fill < end) {
        if (p->o.pad == SL_NO_TOKEN)
            return sl_errf(err, "row %llu: offset %u: padding needed but there is no pad id (set `pad`)",
                           (unsigned long long)p->row_index, p->fill);
        for (uint32_t i = p->fill; i < end; i++)
            p->row[i] = (uint32_t)p->o.pad;
        p->st.pad_tokens += end - p->fill;
    }
    for (uint32_t i = 0; i < mr; i++)
        p->row[i] = (uint32_t)p->o.mem_id;
    for (uint32_t i = end; i < L; i++)
        p->row[i] = (uint32_t)p->o.mem_id;
    p->st.mem_tokens += mr + mw;
    p->out = sl_xrealloc(p->out, (p->n_pend ? p->n_pend : 1) * sizeof *p->out);
    for (size_t i = 0; i < p->n_pend; i++) {
        p->out[i] = p->pend[i].p;
        p->out[i].id = p->ids.data ? p->ids.data + p->pend[i].id_off : NULL;
    }
    sl_row r = {.index = p->row_index, .tokens = p->row, .n_pieces = p->n_pend, .pieces = p->out};
    p->st.rows++;
    p->st.pieces += p->n_pend;
    int rc = p->fn(p->ctx, &r, err);
    p->row_index++;
    p->fill = 0;
    p->n_pend = 0;
    sl_buf_clear(&p->ids);
    return rc;
}

/* Copies up to the rest of the row from s starting at *pos; records the piece.
 * Returns 1 when the row is now full. */
static int place(sl_packer *p, const docseq *s, size_t *pos, uint64_t ordinal, const char *id, size_t id_len)
{
    if (p->fill < sl_pack_mem_read(&p->o))
        p->fill = sl_pack_mem_read(&p->o); /* data starts after the read memory */
    uint32_t end = p->o.seq_len - sl_pack_mem_write(&p->o);
    uint32_t room = end - p->fill;
    size_t take = s->len - *pos < room ? s->len - *pos : room;
    seq_copy(s, p->row + p->fill, *pos, take);
    if (p->n_pend == p->cap_pend) {
        p->cap_pend = p->cap_pend ? 2 * p->cap_pend : 16;
        p->pend = sl_xrealloc(p->pend, p->cap_pend * sizeof *p->pend);
    }
    pending_piece *pp = &p->pend[p->n_pend++];
    pp->p = (sl_piece){.doc = ordinal,
                       .doc_offset = *pos,
                       .offset = p->fill,
                       .length = (uint32_t)take,
                       .id = NULL,
                       .id_len = (uint32_t)id_len};
    pp->id_off = p->ids.len;
    sl_buf_append(&p->ids, id ? id : "", id ? id_len : 0);
    p->fill += (uint32_t)take;
    *pos += take;
    p->st.doc_tokens += take;
    return p->fill == end;
}

static int add_sequential(sl_packer *p, uint64_t ordinal, const char *id, size_t id_len, docseq *s, int *status,
                          sl_err *err)
{
    uint32_t L = p->o.seq_len;
    if (p->o.no_split) {
        if (s->len > L && p->o.long_mode == SL_LONG_DROP) {
            *status = SL_DOC_DROPPED;
            p->st.dropped++;
            p->st.cut_tokens += s->len;
            return 0;
        }
        if (s->len > L && p->o.long_mode == SL_LONG_TRUNCATE) {
            *status = SL_DOC_TRUNCATED;
            p->st.truncated++;
            p->st.cut_tokens += s->len - L;
            s->len = L;
        }
        if (p->fill > 0 && s->len > L - p->fill && emit_row(p, err))
            return -1;
    }
    size_t pos = 0;
    while (pos < s->len)
        if (place(p, s, &pos, ordinal, id, id_len) && emit_row(p, err))
            return -1;
    return 0;
}

/* Recurrent layout: fills rows slot by slot until a slot needs a document
 * (returns 0) or, when finishing, until every slot is empty at a step start. */
static int run_recurrent(sl_packer *p, int finishing, sl_err *err)
{
    for (;;) {
        slot *s = &p->slots[p->cur];
        if (!s->active) {
            if (!finishing)
                return 0;
            if (p->cur == 0 && p->fill == 0) {
                uint32_t b = 0;
                while (b < p->o.batch && !p->slots[b].active)
                    b++;
                if (b == p->o.batch)
                    return 0;
            }
            if (emit_row(p, err))
                return -1;
            p->cur = (p->cur + 1) % p->o.batch;
            continue;
        }
        int full = place(p, &s->seq, &s->pos, s->ordinal, s->id, s->id_len);
        if (s->pos == s->seq.len) {
            s->active = 0;
            free(s->tok);
            free(s->id);
            s->tok = NULL;
            s->id = NULL;
        }
        if (full) {
            if (emit_row(p, err))
                return -1;
            p->cur = (p->cur + 1) % p->o.batch;
        }
    }
}

int sl_pack_appends_eos(const sl_pack_opts *o, const uint32_t *tok, size_t n)
{
    if (o->eos == SL_NO_TOKEN || o->eos_mode == SL_EOS_KEEP)
        return 0;
    return o->eos_mode != SL_EOS_MISSING || !n || tok[n - 1] != (uint32_t)o->eos;
}

int sl_pack_doc_status(const sl_pack_opts *o, const uint32_t *tok, size_t n)
{
    size_t len = n + (o->bos != SL_NO_TOKEN) + (size_t)sl_pack_appends_eos(o, tok, n);
    if (len == 0)
        return SL_DOC_EMPTY;
    if (o->layout == SL_LAYOUT_SEQUENTIAL && o->no_split && len > o->seq_len)
        return o->long_mode == SL_LONG_DROP       ? SL_DOC_DROPPED
               : o->long_mode == SL_LONG_TRUNCATE ? SL_DOC_TRUNCATED
                                                  : SL_DOC_PLACED;
    return SL_DOC_PLACED;
}

int sl_packer_add(sl_packer *p, uint64_t ordinal, const char *id, size_t id_len, const uint32_t *tokens, size_t n,
                  int *status, sl_err *err)
{
    int st = SL_DOC_PLACED;
    docseq s;
    seq_init(p, &s, tokens, n);
    p->st.docs++;
    int rc = 0;
    if (s.len == 0) {
        st = SL_DOC_EMPTY;
    } else if (p->o.layout == SL_LAYOUT_RECURRENT) {
        slot *sl = &p->slots[p->cur];
        sl->active = 1;
        sl->tok = sl_xmalloc((n ? n : 1) * sizeof *sl->tok);
        if (n)
            memcpy(sl->tok, tokens, n * sizeof *tokens);
        sl->seq = s;
        sl->seq.tok = sl->tok;
        sl->pos = 0;
        sl->ordinal = ordinal;
        sl->id = sl_xstrndup(id ? id : "", id ? id_len : 0);
        sl->id_len = id ? id_len : 0;
        rc = run_recurrent(p, 0, err);
    } else {
        rc = add_sequential(p, ordinal, id, id_len, &s, &st, err);
    }
    if (status)
        *status = st;
    return rc;
}

int sl_packer_finish(sl_packer *p, sl_err *err)
{
    if (p->o.layout == SL_LAYOUT_RECURRENT)
        return run_recurrent(p, 1, err);
    if (p->fill > 0)
        return emit_row(p, err);
    return 0;
}

const sl_pack_stats *sl_packer_stats(const sl_packer *p)
{
    return &p->st;
}

void sl_packer_free(sl_packer *p)
{
    if (!p)
        return;
    if (p->slots) {
        for (uint32_t b = 0; b < p->o.batch; b++) {
            free(p->slots[b].tok);
            free(p->slots[b].id);
        }
        free(p->slots);
    }
    free(p->row);
    free(p->pend);
    free(p->out);
    sl_buf_free(&p->ids);
    free(p);
}
