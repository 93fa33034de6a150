/* RIFF/WAVE chunk walker; see wavscan.h for why it exists. */
#include "audio/wavscan.h"

#include <stdio.h>
#include <string.h>

#include "base/byteorder.h"

/* A chunk id for messages: printable ASCII or escaped bytes. */
static void show_id(const uint8_t *p, char out[20])
{
    char *o = out;
    for (int i = 0; i < 4; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\'')
            *o++ = (char)p[i];
        else
            o += sprintf(o, "\\x%02X", p[i]);
    }
    *o = 0;
}

int sl_wavscan(const uint8_t *p, size_t n, const char *name, sl_wavinfo *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    if (n < 4 || memcmp(p, "RIFF", 4) != 0)
        return 0; /* not RIFF (FLAC, Ogg, RF64, RIFX, ...): libsndfile decides */
    if (n < 12)
        return sl_errf(err, "%s:%zu: truncated RIFF header (%zu bytes)", name, n, n);
    if (memcmp(p + 8, "WAVE", 4) != 0)
        return 0;
    out->is_wav = 1;
    int have_fmt = 0, have_data = 0;
    size_t off = 12, fmt_off = 12;
    while (off < n) {
        if (n - off < 8) {
            if (have_data)
                break; /* a stray byte or two after the last chunk: harmless */
            return sl_errf(err, "%s:%zu: truncated chunk header (%zu bytes left, no 'data' chunk yet)", name, off,
                           n - off);
        }
        uint32_t size = sl_get_le32(p + off + 4);
        char id[20];
        show_id(p + off, id);
        if (!memcmp(p + off, "data", 4) && size == 0xFFFFFFFFu) {
            /* Streamed output (the writer could not seek back): data to EOF. */
            out->streamed = 1;
            out->data_off = off + 8;
            out->data_len = n - off - 8;
            have_data = 1;
            break;
        }
        if (size > n - off - 8)
            return sl_errf(err,
                           "%s:%zu: chunk '%s' declares %u bytes but only %zu remain in the file "
                           "(truncated file or wrong chunk size)",
                           name, off, id, size, n - off - 8);
        if (!memcmp(p + off, "fmt ", 4)) {
            if (size < 16)
                return sl_errf(err, "%s:%zu: 'fmt ' chunk is %u bytes, needs at least 16", name, off, size);
            const uint8_t *f = p + off + 8;
            out->format_tag = sl_get_le16(f);
            out->channels = sl_get_le16(f + 2);
            out->sample_rate = sl_get_le32(f + 4);
            out->bits = sl_get_le16(f + 14);
            if (out->format_tag == 0xFFFE && size >= 40) /* WAVE_FORMAT_EXTENSIBLE: the subformat GUID */
                out->format_tag = sl_get_le16(f + 24);
            have_fmt = 1;
            fmt_off = off;
        } else if (!memcmp(p + off, "data", 4) && !have_data) {
            out->data_off = off + 8;
            out->data_len = size;
            have_data = 1;
        }
        off += 8 + (size_t)size + (size & 1); /* chunks are word-aligned */
    }
    if (!have_fmt)
        return sl_errf(err, "%s:12: no 'fmt ' chunk in the WAV file", name);
    if (!have_data)
        return sl_errf(err, "%s:12: no 'data' chunk in the WAV file", name);
    if (out->channels == 0)
        return sl_errf(err, "%s:%zu: the 'fmt ' chunk declares 0 channels", name, fmt_off + 10);
    if (out->data_len == 0)
        return sl_errf(err, "%s:%llu: no audio: the 'data' chunk is empty", name, (unsigned long long)out->data_off);
    return 0;
}
