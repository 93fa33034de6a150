/* The WordPiece model (HF models/wordpiece), greedy longest match first: a
 * piece of more than max_input_chars_per_word characters is the unk token;
 * otherwise from its start the longest prefix that is a vocabulary entry is
 * taken, then from there the longest continuation that is an entry once the
 * continuing_subword_prefix ("##") is put before it, and so on; when some
 * position has no entry at all, the whole piece is the unk token. Matches
 * are tried from the longest down, as HF does, but never longer than the
 * longest entry (which changes nothing but the time). */
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tokenize/models/models.h"

int sl_vocab_model_unk(sl_vocab_model *m, const sl_json *model, const char *def, const char *name, sl_err *err);

int sl_wordpiece_load(sl_vocab_model *m, const sl_json *model, const char *name, sl_err *err)
{
    memset(m, 0, sizeof *m);
    m->kind = SL_MODEL_WORDPIECE;
    if (sl_vocab_load(&m->vocab, sl_json_get(model, "vocab"), name, err))
        return -1;
    const sl_json *p = sl_json_get(model, "continuing_subword_prefix");
    if (p && p->type != SL_JSON_STRING && p->type != SL_JSON_NULL)
        return sl_errf(err, "%s: model.continuing_subword_prefix is not a string", name);
    if (p && p->type == SL_JSON_STRING)
        m->prefix = sl_xstrndup(p->str, p->str_len), m->prefix_len = p->str_len;
    else
        m->prefix = sl_xstrdup("##"), m->prefix_len = 2;
    int64_t mc = 100;
    const sl_json *x = sl_json_get(model, "max_input_chars_per_word");
    if (x && x->type != SL_JSON_NULL && (!sl_json_is_int(x, &mc) || mc < 0))
        return sl_errf(err, "%s: model.max_input_chars_per_word is not a non-negative integer", name);
    m->max_chars = (size_t)mc;
    return sl_vocab_model_unk(m, model, "[UNK]", name, err);
}

static int push_unk(const sl_vocab_model *m, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    if (m->unk_id < 0)
        return sl_errf(err, "'%.*s' has no WordPiece tokens and the unk token '%s' is not in the vocabulary",
                       (int)(n > 60 ? 60 : n), p, m->unk);
    sl_ids_push(out, (uint32_t)m->unk_id);
    return 0;
}

int sl_wordpiece_encode(const sl_vocab_model *m, sl_buf *tmp, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        chars += ((uint8_t)p[i] & 0xC0) != 0x80;
    if (chars > m->max_chars)
        return push_unk(m, p, n, out, err);
    size_t mark = out->n;
    for (size_t start = 0; start < n;) {
        size_t pre = start > 0 ? m->prefix_len : 0;
        /* the longest candidate: not beyond the longest entry */
        size_t end = n;
        if (end - start + pre > m->vocab.max_len) {
            if (m->vocab.max_len < pre + 1)
                goto bad;
            end = start + (m->vocab.max_len - pre);
            while (end > start && ((uint8_t)p[end] & 0xC0) == 0x80) /* a character boundary */
                end--;
        }
        /* the candidates are prefixes of prefix + p[start..end): built once */
        const char *cand = p + start;
        if (pre) {
            sl_buf_clear(tmp);
            sl_buf_append(tmp, m->prefix, m->prefix_len);
            sl_buf_append(tmp, p + start, end - start);
            cand = tmp->data;
        }
        int64_t id = -1;
        while (end > start) {
            id = sl_vocab_find(&m->vocab, cand, pre + end - start);
            if (id >= 0)
                break;
            end--;
            while (end > start && ((uint8_t)p[end] & 0xC0) == 0x80)
                end--;
        }
        if (id < 0)
            goto bad;
        sl_ids_push(out, (uint32_t)id);
        start = end;
    }
    return 0;
bad:
    out->n = mark;
    return push_unk(m, p, n, out, err);
}
