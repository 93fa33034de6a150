/* `sluice detokenize audio` as a library call (see detokenize.h). */
#include "audio/detokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/quantize.h"
#include "audio/wavwrite.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

/* Appends the file-name form of a document id: "dir/clip.wav@16000" ->
 * "dir_clip@16000" (the source's audio extension dropped, so the file ends
 * in one ".wav"), characters outside [A-Za-z0-9._@-] replaced by '_'. */
static void put_name(sl_buf *name, const char *id, size_t len)
{
    if (len > 200)
        len = 200;
    size_t at = len; /* "@<digits>" at the end: a clip offset */
    for (size_t i = len; i-- > 0;) {
        if (id[i] == '@') {
            at = i + 1 < len ? i : len;
            break;
        }
        if (id[i] < '0' || id[i] > '9')
            break;
    }
    size_t ext = at; /* ".<1-5 letters or digits>" just before it */
    for (size_t i = at; i-- > 0 && at - i <= 6;) {
        if (id[i] == '.') {
            if (at - i > 1 && i > 0)
                ext = i;
            break;
        }
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            break;
    }
    for (size_t i = 0; i < len; i++) {
        if (i >= ext && i < at)
            continue;
        char c = id[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-' || c == '@';
        sl_buf_putc(name, ok ? c : '_');
    }
}

/* Reads quantizer/bits/sample_rate from the header's extra JSON (when present). */
static void from_header(const sl_ts_header *h, int *quant, int *bits, int *rate)
{
    if (!h->extra_json || !h->extra_json[0])
        return;
    sl_err e;
    sl_json_doc *doc = sl_json_parse(h->extra_json, strlen(h->extra_json), NULL, &e);
    if (!doc)
        return;
    sl_json *root = sl_json_root(doc);
    const char *q = sl_json_get_str(root, "quantizer");
    int64_t v;
    if (*quant < 0 && q)
        *quant = sl_aq_parse(q);
    if (*bits < 0 && sl_json_get_int(root, "bits", &v) == 0 && v > 0 && v <= 32)
        *bits = (int)v;
    if (*rate < 0 && sl_json_get_int(root, "sample_rate", &v) == 0 && v > 0 && v <= 1000000000)
        *rate = (int)v;
    sl_json_free(doc);
}

static int64_t meta_samples(const sl_doc *d)
{
    if (!d->meta || !d->meta_len)
        return -1;
    sl_err e;
    sl_json_doc *doc = sl_json_parse(d->meta, d->meta_len, NULL, &e);
    if (!doc)
        return -1;
    int64_t v = -1;
    if (sl_json_get_int(sl_json_root(doc), "samples", &v) < 0)
        v = -1;
    sl_json_free(doc);
    return v;
}

int sl_audio_detok_run(const sl_audio_detok_opts *o, const char *input, const char *dir, uint64_t *files, sl_err *err)
{
    const char *inpath = input ? input : "-";
    int quant = o->quantizer, bits = o->bits, rate = o->rate;
    if (files)
        *files = 0;
    sl_input *in = sl_input_open(inpath, err);
    if (!in)
        return -1;
    sl_ts_reader *r = sl_ts_reader_open(in, err);
    if (!r) {
        sl_input_close(in);
        return -1;
    }
    const sl_ts_header *h = sl_ts_reader_header(r);
    from_header(h, &quant, &bits, &rate);
    int rc = 1;
    sl_doc d = {0};
    float *x = NULL;
    size_t xcap = 0;
    sl_buf wav = {0}, name = {0};
    char **written = NULL; /* removed again if the run fails: no partial output */
    size_t nwritten = 0;
    sl_outdir *od = NULL;
    sl_progress *pg = sl_progress_start(o->progress ? o->progress : "detokenize audio", "files", o->progress_mode);
    if (h->modality != SL_MOD_AUDIO && h->modality != SL_MOD_UNKNOWN && h->modality != SL_MOD_IDS) {
        sl_errf(err, "%s: the stream holds %s tokens, not audio", inpath, sl_modality_name(h->modality));
        goto done;
    }
    if (quant < 0 || bits < 0 || rate < 0) {
        sl_errf(err, "%s: the stream header does not name the %s; give `%s`", inpath,
                quant < 0  ? "quantizer"
                : bits < 0 ? "bits"
                           : "sample rate",
                quant < 0  ? "quantizer"
                : bits < 0 ? "bits"
                           : "rate");
        goto done;
    }
    if (sl_aq_bits_ok(quant, bits)) {
        sl_errf(err, "%s: %d bits is not valid for quantizer %s", inpath, bits, sl_aq_name(quant));
        goto done;
    }
    if (h->vocab_size > (1u << bits)) {
        sl_errf(err, "%s: vocabulary %u is larger than %d-bit codes allow", inpath, h->vocab_size, bits);
        goto done;
    }
    /* A new directory is written as a whole (DIR.tmp.<pid>/, renamed at the
     * end; removed on an error or a signal); into an existing one, each file
     * is atomic and the run's files are removed on an error. */
    struct stat dst;
    if (stat(dir, &dst) != 0) {
        if (!(od = sl_outdir_open(dir, 0, err)))
            goto done;
        dir = sl_outdir_tmp(od);
    } else if (!S_ISDIR(dst.st_mode)) {
        sl_errf(err, "%s: not a directory", dir);
        goto done;
    }
    int got;
    uint64_t index = 0;
    while ((got = sl_ts_read_doc(r, &d, err)) == 1) {
        size_t n = d.n_tokens;
        int64_t s = o->keep_pad ? -1 : meta_samples(&d);
        if (s >= 0 && (uint64_t)s < n)
            n = (size_t)s;
        if (n > xcap)
            x = sl_xrealloc(x, (xcap = n) * sizeof *x);
        sl_aq_decode(quant, bits, d.tokens, n, x);
        sl_buf_clear(&wav);
        if (sl_wav_encode(&wav, x, n, rate, o->float32) < 0) {
            sl_errf(err, "%s: document %llu is too long for a WAV file", inpath, (unsigned long long)index);
            goto done;
        }
        sl_buf_clear(&name);
        sl_buf_printf(&name, "%s/%06llu-", dir, (unsigned long long)index);
        put_name(&name, d.id, d.id_len);
        sl_buf_puts(&name, ".wav");
        sl_output *out = sl_output_open(name.data, err);
        if (!out || sl_output_write(out, wav.data, wav.len, err) < 0) {
            sl_output_abort(out);
            goto done;
        }
        if (sl_output_commit(out, err) < 0)
            goto done;
        written = sl_xrealloc(written, (nwritten + 1) * sizeof *written);
        written[nwritten++] = sl_xstrdup(name.data);
        sl_progress_add(pg, 1, wav.len);
        index++;
    }
    if (got < 0)
        goto done;
    rc = od && sl_outdir_commit(od, err) ? 1 : 0;
    if (files && !rc)
        *files = index;
    od = NULL;
done:
    sl_outdir_abort(od);
    sl_progress_done(pg);
    for (size_t i = 0; i < nwritten; i++) {
        if (rc)
            unlink(written[i]);
        free(written[i]);
    }
    free(written);
    sl_doc_free(&d);
    free(x);
    sl_buf_free(&wav);
    sl_buf_free(&name);
    sl_ts_reader_close(r);
    sl_input_close(in);
    return rc ? -1 : 0;
}
