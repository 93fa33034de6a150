/* SentencePiece's decoder (spm_bpe.h), as SentencePieceProcessor::Decode:
 * control pieces vanish, unk is unk_surface (" \u2047 "), runs of byte
 * pieces are decoded as UTF-8 with U+FFFD per invalid byte, U+2581 becomes a
 * space and the first one of the text is dropped. */
#include <string.h>

#include "tokenize/models/spm_bpe.h"

/* SentencePiece's DecodeUTF8 validity: the length of a valid character at
 * s[0..n), or 0; a genuine U+FFFD counts as valid. */
static size_t sp_char(const uint8_t *s, size_t n)
{
    uint32_t c;
    if (s[0] < 0x80)
        return 1;
    if (n >= 2 && (s[0] & 0xE0) == 0xC0) {
        c = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
        return (s[1] & 0xC0) == 0x80 && c >= 0x80 ? 2 : 0;
    }
    if (n >= 3 && (s[0] & 0xF0) == 0xE0) {
        c = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        return (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && c >= 0x800 && (c < 0xD800 || c >= 0xE000) ? 3 : 0;
    }
    if (n >= 4 && (s[0] & 0xF8) == 0xF0) {
        c = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 |
            (s[3] & 0x3F);
        return (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 && c >= 0x10000 && c <= 0x10FFFF
                   ? 4
                   : 0;
    }
    return 0;
}

static void flush_bytes(sl_buf *bytes, sl_buf *out)
{
    const uint8_t *b = (const uint8_t *)bytes->data;
    for (size_t i = 0; i < bytes->len;) {
        size_t k = sp_char(b + i, bytes->len - i);
        if (k)
            sl_buf_append(out, bytes->data + i, k), i += k;
        else
            sl_buf_append(out, "\xEF\xBF\xBD", 3), i++;
    }
    sl_buf_clear(bytes);
}

int sl_spm_decode(const sl_spm_proto *m, const sl_spm_vocab *v, const int16_t *byte_val, const char *name,
                  const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= m->n_pieces)
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s (%zu pieces)", i, ids[i], name,
                           m->n_pieces);
    sl_buf bytes = {0};
    size_t start = out->len;
    int is_bos_ws = 1, bos_ws_seen = 0;
    for (size_t i = 0; i < n; i++) {
        const sl_spm_piece *p0 = &m->pieces[ids[i]];
        int64_t id = sl_spm_piece_id(v, p0->s, p0->len, m->unk_id); /* Decode goes id -> piece -> id */
        const sl_spm_piece *p = &m->pieces[id];
        if (p->type == SL_SPM_BYTE) {
            sl_buf_putc(&bytes, (char)byte_val[id]);
            continue;
        }
        flush_bytes(&bytes, out);
        if (bos_ws_seen || out->len > start)
            is_bos_ws = 0;
        bos_ws_seen = 0;
        if (p->type == SL_SPM_CONTROL)
            continue;
        if (p->type == SL_SPM_UNKNOWN) {
            sl_buf_puts(out, m->unk_surface ? m->unk_surface : " \xE2\x81\x87 ");
            continue;
        }
        const char *q = p->s;
        size_t ql = p->len;
        if (is_bos_ws && (m->norm.add_dummy_prefix || m->norm.remove_extra_whitespaces)) {
            if (ql >= 3 && !memcmp(q, "\xE2\x96\x81", 3)) {
                q += 3, ql -= 3;
                bos_ws_seen = 1;
            }
            if (m->norm.remove_extra_whitespaces)
                bos_ws_seen = 0;
        }
        for (size_t k = 0; k < ql;) {
            if (ql - k >= 3 && !memcmp(q + k, "\xE2\x96\x81", 3)) {
                sl_buf_putc(out, ' ');
                k += 3;
            } else {
                sl_buf_putc(out, q[k++]);
            }
        }
    }
    flush_bytes(&bytes, out);
    sl_buf_free(&bytes);
    return 0;
}
