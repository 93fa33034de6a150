/* Audio decoding through libsndfile (virtual I/O over memory) and libsoxr. */
#include "audio/decode.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/wavscan.h"

/* ---- libsndfile virtual I/O over a read-only memory block ---- */
typedef struct {
    const unsigned char *p;
    sf_count_t n, pos;
} memfile;

static sf_count_t vio_len(void *u)
{
    return ((memfile *)u)->n;
}

static sf_count_t vio_seek(sf_count_t off, int whence, void *u)
{
    memfile *m = u;
    sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->n;
    sf_count_t np = base + off;
    if (np < 0)
        return -1;
    m->pos = np; /* past the end is allowed, reads then return 0 */
    return np;
}

static sf_count_t vio_read(void *dst, sf_count_t count, void *u)
{
    memfile *m = u;
    if (count <= 0 || m->pos >= m->n)
        return 0;
    if (count > m->n - m->pos)
        count = m->n - m->pos;
    memcpy(dst, m->p + m->pos, (size_t)count);
    m->pos += count;
    return count;
}

static sf_count_t vio_write(const void *src, sf_count_t count, void *u)
{
    (void)src;
    (void)count;
    (void)u;
    return 0;
}

static sf_count_t vio_tell(void *u)
{
    return ((memfile *)u)->pos;
}

/* ---- growable float vector ---- */
static void push(sl_audio *a, size_t *cap, const float *x, size_t n)
{
    if (a->n + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < a->n + n)
            c *= 2;
        a->x = sl_xrealloc(a->x, c * sizeof *a->x);
        *cap = c;
    }
    memcpy(a->x + a->n, x, n * sizeof *x);
    a->n += n;
}

#define BLOCK 8192 /* frames per read */

static int has_suffix(const char *name, const char *suf)
{
    size_t n = strlen(name), k = strlen(suf);
    return n >= k && !strcasecmp(name + n - k, suf);
}

/* Which inputs reach libsndfile: the containers named in the docs, by their
 * magic bytes. Anything else is refused here with one clear line, because
 * libsndfile's guessing would hand arbitrary bytes to libmpg123, which prints
 * its own multi-line complaints on stderr. MPEG audio has no reliable magic,
 * so it is tried only for files named .mp3 or .mp2. */
static int known_container(const unsigned char *p, size_t n, const char *name)
{
    static const char *const magic[] = {
        "RIFF", "RIFX", "RF64", "BW64", "FORM", "fLaC", "OggS", ".snd", "caff", "riff" /* Sony Wave64 GUID */, NULL};
    for (int i = 0; magic[i]; i++)
        if (n >= 4 && !memcmp(p, magic[i], 4))
            return 1;
    if (has_suffix(name, ".mp3") || has_suffix(name, ".mp2"))
        return n >= 3 && (!memcmp(p, "ID3", 3) || (p[0] == 0xFF && (p[1] & 0xE0) == 0xE0));
    return 0;
}

int sl_audio_decode_mem(const void *data, size_t len, const char *name, const sl_audio_opts *o, sl_audio *a,
                        sl_err *err)
{
    memset(a, 0, sizeof *a);
    if (len == 0)
        return sl_errf(err, "%s:0: empty file, no audio", name);
    if (!known_container(data, len, name))
        return sl_errf(
            err, "%s:0: not a recognised audio file (WAV, FLAC, Ogg, AIFF, AU, CAF, W64, or MP3 named *.mp3)", name);
    sl_wavinfo ws;
    if (sl_wavscan(data, len, name, &ws, err) < 0)
        return -1;

    memfile mf = {data, (sf_count_t)len, 0};
    SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open_virtual(&vio, SFM_READ, &info, &mf);
    if (!sf)
        return sl_errf(err, "%s:0: cannot decode audio: %s", name, sf_strerror(NULL));
    int rc = -1;
    soxr_t rs = NULL;
    float *buf = NULL, *mono = NULL, *rbuf = NULL;
    size_t cap = 0;
    int ch = info.channels;
    if (ch <= 0) {
        sl_errf(err, "%s:0: the file declares %d channels", name, ch);
        goto out;
    }
    if (info.samplerate < SL_AUDIO_MIN_RATE || info.samplerate > SL_AUDIO_MAX_RATE) {
        sl_errf(err, "%s:0: sample rate %d Hz is outside the supported range %d..%d Hz", name, info.samplerate,
                SL_AUDIO_MIN_RATE, SL_AUDIO_MAX_RATE);
        goto out;
    }
    a->src_rate = info.samplerate;
    a->src_channels = ch;
    a->src_format = info.format;
    a->rate = o->rate > 0 ? o->rate : info.samplerate;
    double ratio = (double)a->rate / info.samplerate;
    if (a->rate != info.samplerate) {
        soxr_error_t se = NULL;
        soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
        soxr_quality_spec_t q = soxr_quality_spec(o->quality ? (unsigned long)o->quality : SOXR_HQ, 0);
        rs = soxr_create(info.samplerate, a->rate, 1, &se, &io, &q, NULL);
        if (!rs) {
            sl_errf(err, "%s: cannot resample %d Hz to %d Hz: %s", name, info.samplerate, a->rate, se);
            goto out;
        }
    }
    /* Pre-size the output when the header tells the length (not for streamed sizes),
     * but never beyond what the input's size can plausibly hold: a lying header
     * must not make us allocate gigabytes (found by fuzz_wav). */
    if (info.frames > 0) {
        double frames_hint = (double)info.frames, plausible = 4.0 * (double)len + 4096;
        cap = (size_t)((frames_hint < plausible ? frames_hint : plausible) * ratio) + 64;
        a->x = sl_xmalloc(cap * sizeof *a->x);
    }
    buf = sl_xmalloc((size_t)BLOCK * ch * sizeof *buf);
    mono = sl_xmalloc(BLOCK * sizeof *mono);
    size_t rcap = (size_t)(BLOCK * ratio) + 256;
    rbuf = rs ? sl_xmalloc(rcap * sizeof *rbuf) : NULL;
    uint64_t frames = 0;
    for (;;) {
        sf_count_t got = sf_readf_float(sf, buf, BLOCK);
        if (got <= 0)
            break;
        for (sf_count_t i = 0; i < got; i++) {
            const float *f = buf + (size_t)i * ch;
            float s = f[0];
            for (int c = 1; c < ch; c++)
                s += f[c];
            if (!isfinite(s)) {
                sl_errf(err, "%s: sample frame %llu is not a finite number", name,
                        (unsigned long long)(frames + (uint64_t)i));
                goto out;
            }
            mono[i] = ch == 1 ? s : s / (float)ch;
        }
        frames += (uint64_t)got;
        if (!rs) {
            push(a, &cap, mono, (size_t)got);
            continue;
        }
        size_t done_in = 0;
        while (done_in < (size_t)got) {
            size_t idone = 0, odone = 0;
            soxr_error_t se = soxr_process(rs, mono + done_in, (size_t)got - done_in, &idone, rbuf, rcap, &odone);
            if (se) {
                sl_errf(err, "%s: resampling failed: %s", name, se);
                goto out;
            }
            push(a, &cap, rbuf, odone);
            done_in += idone;
            if (!idone && !odone)
                break;
        }
    }
    if (sf_error(sf) != SF_ERR_NO_ERROR) {
        sl_errf(err, "%s: decoding failed after %llu frames: %s", name, (unsigned long long)frames, sf_strerror(sf));
        goto out;
    }
    if (frames == 0) {
        sl_errf(err, "%s:0: no audio: the file has no sample frames", name);
        goto out;
    }
    if (rs) { /* drain the filter's delay line */
        for (;;) {
            size_t odone = 0;
            soxr_error_t se = soxr_process(rs, NULL, 0, NULL, rbuf, rcap, &odone);
            if (se) {
                sl_errf(err, "%s: resampling failed: %s", name, se);
                goto out;
            }
            if (!odone)
                break;
            push(a, &cap, rbuf, odone);
        }
    }
    a->src_frames = frames;
    a->src_bytes = len;
    rc = 0;
out:
    if (rs)
        soxr_delete(rs);
    sf_close(sf);
    free(buf);
    free(mono);
    free(rbuf);
    if (rc < 0)
        sl_audio_free(a);
    return rc;
}

/* Reads a non-mappable input (stdin, a pipe) into memory. */
static int slurp_fd(int fd, const char *name, unsigned char **data, size_t *len, sl_err *err)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = sl_xmalloc(cap);
    for (;;) {
        if (n == cap)
            p = sl_xrealloc(p, cap *= 2);
        ssize_t r = read(fd, p + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(p);
            return sl_errf(err, "%s: read error: %s", name, strerror(errno));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *data = p;
    *len = n;
    return 0;
}

int sl_audio_decode_file(const char *path, const sl_audio_opts *o, sl_audio *a, sl_err *err)
{
    memset(a, 0, sizeof *a);
    int is_stdin = !strcmp(path, "-");
    const char *name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_errf(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        if (!is_stdin)
            close(fd);
        return sl_errf(err, "%s: cannot stat: %s", name, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        if (!is_stdin)
            close(fd);
        return sl_errf(err, "%s: is a directory", name);
    }
    int rc;
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        /* Map the file: the pages are read on demand and shared with the cache. */
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            if (!is_stdin)
                close(fd);
            return sl_errf(err, "%s: cannot map: %s", name, strerror(e));
        }
        madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
        rc = sl_audio_decode_mem(m, (size_t)st.st_size, name, o, a, err);
        munmap(m, (size_t)st.st_size);
    } else {
        unsigned char *data = NULL;
        size_t len = 0;
        rc = slurp_fd(fd, name, &data, &len, err);
        if (rc == 0)
            rc = sl_audio_decode_mem(data, len, name, o, a, err);
        free(data);
    }
    if (!is_stdin)
        close(fd);
    return rc;
}

void sl_audio_free(sl_audio *a)
{
    free(a->x);
    memset(a, 0, sizeof *a);
}
