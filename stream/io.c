/* Byte input with content-detected decompression, and atomic file output. */
#include "stream/io.h"

#include <bzlib.h>
#include <lzma.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "base/log.h"

#define IN_BUF (1u << 20)
#define PEEK_MAX 4096u

struct sl_input {
    char *name;
    int fd, own_fd;
    const unsigned char *mem; /* memory source, or NULL */
    sl_read_fn cb;            /* callback source, or NULL */
    void *cb_ctx;
    size_t mem_len, mem_pos;
    unsigned char head[8]; /* raw bytes read for magic detection, replayed */
    size_t head_len, head_pos;
    lzma_stream xs; /* xz decompressor */
    int xs_live;
    bz_stream bs; /* bzip2 decompressor */
    int bs_live, bs_between;
    z_stream zs; /* gzip decompressor */
    int zs_live, zs_between, zs_padding;
    ZSTD_DStream *zd;          /* zstd decompressor */
    int zd_pending;            /* zstd: inside a frame */
    uint64_t zd_frame_at;      /* zstd: compressed offset of the current frame */
    uint64_t zd_frame_decoded; /* zstd: decoded bytes before it */
    unsigned char *rawbuf;     /* raw (compressed) bytes */
    size_t raw_len, raw_pos;
    int raw_eof;
    uint64_t decoded; /* decoded bytes produced so far */
    sl_compression comp;
    unsigned char *buf; /* decoded bytes */
    size_t buf_len, buf_pos;
    uint64_t offset, raw_off;
    int64_t raw_size;
    int eof, failed;
    int plain;    /* no decompression whatever the first bytes (sl_input_callbacks_plain) */
    sl_err saved; /* error of a failed refill, reported again */
};

/* ---- raw bytes ------------------------------------------------------ */

/* Reads from the underlying file or memory. */
static long src_read(sl_input *in, void *dst, size_t n, sl_err *err)
{
    if (in->cb) {
        long r = in->cb(in->cb_ctx, dst, n, err);
        if (r > 0)
            in->raw_off += (uint64_t)r;
        return r;
    }
    if (in->mem) {
        size_t k = in->mem_len - in->mem_pos;
        if (k > n)
            k = n;
        memcpy(dst, in->mem + in->mem_pos, k);
        in->mem_pos += k;
        in->raw_off += k;
        return (long)k;
    }
    for (;;) {
        ssize_t r = read(in->fd, dst, n);
        if (r >= 0) {
            in->raw_off += (uint64_t)r;
            return (long)r;
        }
        if (errno == EINTR)
            continue;
        return sl_err_set(err, SL_E_IO, NULL, "%s: read error: %s", in->name, strerror(errno));
    }
}

/* Reads raw bytes: first the magic bytes kept by setup(), then the source. */
static long raw_read(sl_input *in, void *dst, size_t n, sl_err *err)
{
    if (in->head_pos < in->head_len) {
        size_t k = in->head_len - in->head_pos;
        if (k > n)
            k = n;
        memcpy(dst, in->head + in->head_pos, k);
        in->head_pos += k;
        return (long)k;
    }
    return src_read(in, dst, n, err);
}

static sl_compression detect(const unsigned char *h, size_t n)
{
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
        return SL_COMP_GZIP;
    if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd)
        return SL_COMP_ZSTD;
    if (n >= 6 && !memcmp(h,
                          "\xfd"
                          "7zXZ\0",
                          6))
        return SL_COMP_XZ;
    if (n >= 3 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h')
        return SL_COMP_BZIP2;
    return SL_COMP_NONE;
}

static const char *comp_name(sl_compression c)
{
    switch (c) {
    case SL_COMP_GZIP: return "gzip";
    case SL_COMP_ZSTD: return "zstd";
    case SL_COMP_XZ: return "xz";
    case SL_COMP_BZIP2: return "bzip2";
    default: return "plain";
    }
}

static int setup(sl_input *in, sl_err *err)
{
    in->buf = sl_xmalloc(IN_BUF + PEEK_MAX);
    /* read up to 8 bytes for the magic */
    while (in->head_len < sizeof in->head) {
        long r = src_read(in, in->head + in->head_len, sizeof in->head - in->head_len, err);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        in->head_len += (size_t)r;
    }
    in->comp = in->plain ? SL_COMP_NONE : detect(in->head, in->head_len);
    if (in->comp == SL_COMP_NONE)
        return 0;
    in->rawbuf = sl_xmalloc(IN_BUF);
    if (in->comp == SL_COMP_GZIP) {
        /* zlib directly: it checks every member's CRC-32 and length, which
         * libarchive's gzip filter does not */
        if (inflateInit2(&in->zs, 16 + MAX_WBITS) != Z_OK)
            return sl_errf(err, "%s: cannot initialise zlib", in->name);
        in->zs_live = 1;
        return 0;
    }
    if (in->comp == SL_COMP_ZSTD) {
        in->zd = ZSTD_createDStream();
        if (!in->zd || ZSTD_isError(ZSTD_initDStream(in->zd)))
            return sl_errf(err, "%s: cannot initialise zstd", in->name);
        return 0;
    }
    if (in->comp == SL_COMP_XZ) {
        /* concatenated .xz streams, with their integrity checks */
        if (lzma_stream_decoder(&in->xs, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            return sl_errf(err, "%s: cannot initialise liblzma", in->name);
        in->xs_live = 1;
        return 0;
    }
    if (BZ2_bzDecompressInit(&in->bs, 0, 0) != BZ_OK)
        return sl_errf(err, "%s: cannot initialise libbz2", in->name);
    in->bs_live = 1;
    return 0;
}

/* Makes raw input available in rawbuf; returns 0, or -1 on a read error. */
static int raw_fill(sl_input *in, sl_err *err)
{
    if (in->raw_pos < in->raw_len || in->raw_eof)
        return 0;
    long r = raw_read(in, in->rawbuf, IN_BUF, err);
    if (r < 0)
        return -1;
    in->raw_len = (size_t)r;
    in->raw_pos = 0;
    if (r == 0)
        in->raw_eof = 1;
    return 0;
}

/* got: bytes this call decoded before the failure (a CRC is checked after
 * the data it covers was decoded: the position is after those bytes). */
static long dec_fail(sl_input *in, size_t got, const char *what, const char *detail)
{
    sl_err_set(&in->saved, SL_E_FORMAT, NULL, "%s: %s %s data after %llu decoded bytes (compressed offset %llu)%s%s",
               in->name, what, comp_name(in->comp), (unsigned long long)(in->decoded + got),
               (unsigned long long)(in->raw_off - (in->raw_len - in->raw_pos)), detail ? ": " : "",
               detail ? detail : "");
    return -1;
}

/* gzip, including concatenated members (BGZF). Trailing NUL padding after
 * the last member is accepted (as gzip -d does), anything else is an error. */
static long gzip_decode(sl_input *in, unsigned char *dst, size_t cap, sl_err *err)
{
    for (;;) {
        if (raw_fill(in, err))
            return -1;
        if (in->zs_between) {
            /* at a member boundary: end of input, padding, or another member */
            while (in->raw_pos < in->raw_len && in->rawbuf[in->raw_pos] == 0) {
                in->raw_pos++;
                in->zs_padding = 1;
            }
            if (in->raw_pos == in->raw_len) {
                if (in->raw_eof)
                    return 0;
                continue;
            }
            if (in->zs_padding || in->rawbuf[in->raw_pos] != 0x1f)
                return dec_fail(in, 0, "unexpected data after", NULL);
            in->zs_between = 0;
        }
        /* at the end of the input, call inflate once more: it may still hold
         * output that did not fit last time; truncated only if it has none */
        int at_end = in->raw_pos == in->raw_len && in->raw_eof;
        in->zs.next_in = in->rawbuf + in->raw_pos;
        in->zs.avail_in = (uInt)(in->raw_len - in->raw_pos);
        in->zs.next_out = dst;
        in->zs.avail_out = (uInt)cap;
        int ret = inflate(&in->zs, Z_NO_FLUSH);
        in->raw_pos = in->raw_len - in->zs.avail_in;
        size_t got = cap - in->zs.avail_out;
        if (ret == Z_STREAM_END) {
            inflateReset(&in->zs);
            in->zs_between = 1;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            return dec_fail(in, got, "corrupt", in->zs.msg ? in->zs.msg : "inflate failed");
        }
        if (got)
            return (long)got;
        if (at_end && ret != Z_STREAM_END)
            return dec_fail(in, 0, "truncated", NULL);
    }
}

/* zstd: concatenated and skippable frames; content checksums are verified
 * when the frame has one (zstd's CLI writes them by default). */
static long zstd_decode(sl_input *in, unsigned char *dst, size_t cap, sl_err *err)
{
    for (;;) {
        if (raw_fill(in, err))
            return -1;
        int at_end = in->raw_pos == in->raw_len && in->raw_eof;
        if (at_end && !in->zd_pending)
            return 0;
        if (!in->zd_pending) { /* a frame starts here */
            in->zd_frame_at = in->raw_off - (in->raw_len - in->raw_pos);
            in->zd_frame_decoded = in->decoded;
        }
        ZSTD_inBuffer ib = {in->rawbuf, in->raw_len, in->raw_pos};
        ZSTD_outBuffer ob = {dst, cap, 0};
        size_t ret = ZSTD_decompressStream(in->zd, &ob, &ib);
        if (ZSTD_isError(ret)) {
            /* zstd leaves the buffer positions undefined on an error, and
             * a content checksum covers the whole frame: the frame is where
             * the damage is */
            sl_err_set(&in->saved, SL_E_FORMAT, NULL,
                       "%s: corrupt zstd data in the frame at compressed offset %llu (its data starts at decoded byte "
                       "%llu): %s",
                       in->name, (unsigned long long)in->zd_frame_at, (unsigned long long)in->zd_frame_decoded,
                       ZSTD_getErrorName(ret));
            return -1;
        }
        in->raw_pos = ib.pos;
        in->zd_pending = ret != 0;
        if (ob.pos)
            return (long)ob.pos;
        /* no output from all the input there is: the frame is cut short */
        if (at_end)
            return in->zd_pending ? dec_fail(in, 0, "truncated", NULL) : 0;
    }
}

static sl_input *new_input(const char *name)
{
    sl_input *in = sl_xcalloc(1, sizeof *in);
    in->xs = (lzma_stream)LZMA_STREAM_INIT;
    in->name = sl_xstrdup(name);
    in->fd = -1;
    in->raw_size = -1;
    return in;
}

sl_input *sl_input_open(const char *path, sl_err *err)
{
    int is_stdin = !strcmp(path, "-");
    if (sl_path_url_scheme(path)) {
        sl_path_url_error(path, err);
        return NULL;
    }
    sl_input *in = new_input(is_stdin ? "<stdin>" : path);
    if (is_stdin) {
        in->fd = 0;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot open: %s", path, strerror(errno));
            sl_input_close(in);
            return NULL;
        }
        in->own_fd = 1;
    }
    struct stat st;
    if (fstat(in->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            sl_err_set(err, SL_E_IO, NULL, "%s: is a directory", path);
            sl_input_close(in);
            return NULL;
        }
        if (S_ISREG(st.st_mode))
            in->raw_size = st.st_size;
    }
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    if (setup(in, err)) {
        sl_input_close(in);
        return NULL;
    }
    return in;
}

sl_input *sl_input_mem(const void *data, size_t len, const char *name, sl_err *err)
{
    sl_input *in = new_input(name);
    in->mem = data ? data : (const void *)"";
    in->mem_len = len;
    in->raw_size = (int64_t)len;
    if (setup(in, err)) {
        sl_input_close(in);
        return NULL;
    }
    return in;
}

/* xz (liblzma, LZMA_CONCATENATED: several streams and padding). */
static long xz_decode(sl_input *in, unsigned char *dst, size_t cap, sl_err *err)
{
    for (;;) {
        if (raw_fill(in, err))
            return -1;
        in->xs.next_in = in->rawbuf + in->raw_pos;
        in->xs.avail_in = in->raw_len - in->raw_pos;
        in->xs.next_out = dst;
        in->xs.avail_out = cap;
        lzma_ret ret = lzma_code(&in->xs, in->raw_eof ? LZMA_FINISH : LZMA_RUN);
        in->raw_pos = in->raw_len - in->xs.avail_in;
        size_t got = cap - in->xs.avail_out;
        if (ret == LZMA_STREAM_END)
            return (long)got; /* 0 when everything was delivered */
        if (ret != LZMA_OK && !(ret == LZMA_BUF_ERROR && got))
            return dec_fail(in, got, ret == LZMA_BUF_ERROR ? "truncated" : "corrupt",
                            ret == LZMA_DATA_ERROR     ? "data error"
                            : ret == LZMA_FORMAT_ERROR ? "not xz data"
                            : ret == LZMA_BUF_ERROR    ? NULL
                                                       : "integrity check failed or unsupported");
        if (got)
            return (long)got;
    }
}

/* bzip2 (libbz2), including concatenated streams (pbzip2 writes them). */
static long bz2_decode(sl_input *in, unsigned char *dst, size_t cap, sl_err *err)
{
    for (;;) {
        if (raw_fill(in, err))
            return -1;
        if (in->bs_between) {
            if (in->raw_pos == in->raw_len && in->raw_eof)
                return 0;
            if (in->raw_pos == in->raw_len)
                continue;
            BZ2_bzDecompressEnd(&in->bs);
            memset(&in->bs, 0, sizeof in->bs);
            if (BZ2_bzDecompressInit(&in->bs, 0, 0) != BZ_OK)
                return dec_fail(in, 0, "corrupt", "cannot restart libbz2");
            in->bs_between = 0;
        }
        int at_end = in->raw_pos == in->raw_len && in->raw_eof;
        in->bs.next_in = (char *)in->rawbuf + in->raw_pos;
        in->bs.avail_in = (unsigned)(in->raw_len - in->raw_pos);
        in->bs.next_out = (char *)dst;
        in->bs.avail_out = (unsigned)cap;
        int ret = BZ2_bzDecompress(&in->bs);
        in->raw_pos = in->raw_len - in->bs.avail_in;
        size_t got = cap - in->bs.avail_out;
        if (ret == BZ_STREAM_END)
            in->bs_between = 1;
        else if (ret != BZ_OK)
            return dec_fail(in, got, "corrupt", ret == BZ_DATA_ERROR_MAGIC ? "not bzip2 data" : "data error (CRC)");
        if (got)
            return (long)got;
        if (at_end && ret != BZ_STREAM_END)
            return dec_fail(in, 0, "truncated", NULL);
    }
}

sl_input *sl_input_callbacks(sl_read_fn read, void *ctx, const char *name, sl_err *err)
{
    sl_input *in = new_input(name);
    in->cb = read;
    in->cb_ctx = ctx;
    if (setup(in, err)) {
        sl_input_close(in);
        return NULL;
    }
    return in;
}

sl_compression sl_compression_sniff(const void *head, size_t n)
{
    return detect(head, n);
}

sl_input *sl_input_callbacks_plain(sl_read_fn read, void *ctx, const char *name, sl_err *err)
{
    sl_input *in = new_input(name);
    in->cb = read;
    in->cb_ctx = ctx;
    in->plain = 1;
    if (setup(in, err)) {
        sl_input_close(in);
        return NULL;
    }
    return in;
}

/* Decodes up to cap bytes into dst. Returns bytes (0 at end) or -1. */
static long decode_into(sl_input *in, unsigned char *dst, size_t cap, sl_err *err)
{
    if (in->failed) {
        if (err)
            *err = in->saved;
        return -1;
    }
    if (in->eof)
        return 0;
    long r;
    switch (in->comp) {
    case SL_COMP_GZIP: r = gzip_decode(in, dst, cap, &in->saved); break;
    case SL_COMP_ZSTD: r = zstd_decode(in, dst, cap, &in->saved); break;
    case SL_COMP_XZ: r = xz_decode(in, dst, cap, &in->saved); break;
    case SL_COMP_BZIP2: r = bz2_decode(in, dst, cap, &in->saved); break;
    default: r = raw_read(in, dst, cap, &in->saved);
    }
    if (r < 0) {
        in->failed = 1;
        if (err)
            *err = in->saved;
        return -1;
    }
    if (r == 0)
        in->eof = 1;
    in->decoded += (uint64_t)r;
    return r;
}

/* Refills the (empty) decoded buffer. Returns 1 with data, 0 at end, -1 error. */
static int refill(sl_input *in, sl_err *err)
{
    long r = decode_into(in, in->buf, IN_BUF, err);
    if (r <= 0)
        return (int)r;
    in->buf_len = (size_t)r;
    in->buf_pos = 0;
    return 1;
}

long sl_input_read(sl_input *in, void *dst, size_t n, sl_err *err)
{
    size_t got = 0;
    unsigned char *d = dst;
    while (got < n) {
        if (in->buf_pos == in->buf_len && n - got >= IN_BUF) {
            /* a buffer's worth or more: decoded straight into dst, not copied */
            long r = decode_into(in, d + got, n - got, err);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
            got += (size_t)r;
            continue;
        }
        if (in->buf_pos == in->buf_len) {
            int r = refill(in, err);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
        size_t k = in->buf_len - in->buf_pos;
        if (k > n - got)
            k = n - got;
        memcpy(d + got, in->buf + in->buf_pos, k);
        in->buf_pos += k;
        got += k;
    }
    in->offset += got;
    return (long)got;
}

int sl_input_read_full(sl_input *in, void *dst, size_t n, sl_err *err)
{
    uint64_t start = in->offset;
    long r = sl_input_read(in, dst, n, err);
    if (r < 0)
        return -1;
    if ((size_t)r == n)
        return 0;
    if (r == 0 && n > 0)
        return 1;
    return sl_err_set(err, SL_E_FORMAT, NULL, "%s: offset %llu: unexpected end of input (needed %zu bytes, got %ld)",
                      in->name, (unsigned long long)start, n, r);
}

long sl_input_peek(sl_input *in, void *dst, size_t n, sl_err *err)
{
    if (n > PEEK_MAX)
        n = PEEK_MAX;
    /* Move the unread bytes to the front and decode more behind them; the
     * buffer has PEEK_MAX bytes of slack so this never overflows. */
    while (in->buf_len - in->buf_pos < n && !in->eof) {
        size_t have = in->buf_len - in->buf_pos;
        memmove(in->buf, in->buf + in->buf_pos, have);
        in->buf_pos = 0;
        in->buf_len = have;
        long r = decode_into(in, in->buf + have, IN_BUF + PEEK_MAX - have, err);
        if (r < 0)
            return -1;
        in->buf_len += (size_t)r;
    }
    size_t k = in->buf_len - in->buf_pos;
    if (k > n)
        k = n;
    memcpy(dst, in->buf + in->buf_pos, k);
    return (long)k;
}

int sl_input_getline(sl_input *in, char **line, size_t *len, size_t *cap, size_t max_len, sl_err *err)
{
    size_t n = 0;
    int any = 0;
    for (;;) {
        if (in->buf_pos == in->buf_len) {
            int r = refill(in, err);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
        any = 1;
        unsigned char *s = in->buf + in->buf_pos;
        size_t avail = in->buf_len - in->buf_pos;
        unsigned char *nl = memchr(s, '\n', avail);
        size_t k = nl ? (size_t)(nl - s) : avail;
        if (max_len && n + k > max_len)
            return sl_err_set(err, SL_E_LIMIT, NULL, "%s: offset %llu: line longer than %zu bytes", in->name,
                              (unsigned long long)(in->offset - n), max_len);
        if (n + k + 1 > *cap) {
            size_t c = *cap ? *cap : 256;
            while (c < n + k + 1)
                c *= 2;
            *line = sl_xrealloc(*line, c);
            *cap = c;
        }
        memcpy(*line + n, s, k);
        n += k;
        in->buf_pos += k + (nl ? 1 : 0);
        in->offset += k + (nl ? 1 : 0);
        if (nl)
            break;
    }
    if (!any && n == 0)
        return 0;
    (*line)[n] = 0;
    *len = n;
    return 1;
}

const char *sl_input_name(const sl_input *in)
{
    return in->name;
}
uint64_t sl_input_offset(const sl_input *in)
{
    return in->offset;
}
uint64_t sl_input_raw_offset(const sl_input *in)
{
    return in->raw_off;
}
int64_t sl_input_raw_size(const sl_input *in)
{
    return in->raw_size;
}
sl_compression sl_input_compression(const sl_input *in)
{
    return in->comp;
}

void sl_input_close(sl_input *in)
{
    if (!in)
        return;
    if (in->xs_live)
        lzma_end(&in->xs);
    if (in->bs_live)
        BZ2_bzDecompressEnd(&in->bs);
    if (in->zs_live)
        inflateEnd(&in->zs);
    if (in->zd)
        ZSTD_freeDStream(in->zd);
    if (in->own_fd && in->fd >= 0)
        close(in->fd);
    free(in->rawbuf);
    free(in->buf);
    free(in->name);
    free(in);
}

/* All of in, decoded, into a NUL-terminated block; closes in. */
static int read_input(sl_input *in, char **data, size_t *len, sl_err *err)
{
    size_t cap = in->raw_size > 0 && in->comp == SL_COMP_NONE ? (size_t)in->raw_size + 1 : 1 << 16, n = 0;
    char *p = sl_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            p = sl_xrealloc(p, cap);
        }
        long r = sl_input_read(in, p + n, cap - n - 1, err);
        if (r < 0) {
            free(p);
            sl_input_close(in);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    p[n] = 0;
    *data = p;
    *len = n;
    sl_input_close(in);
    return 0;
}

int sl_read_file(const char *path, char **data, size_t *len, sl_err *err)
{
    sl_input *in = sl_input_open(path, err);
    return in ? read_input(in, data, len, err) : -1;
}

int sl_map_file(const char *path, sl_mapped *m, sl_err *err)
{
    memset(m, 0, sizeof *m);
    sl_input *in = sl_input_open(path, err);
    if (!in)
        return -1;
    /* a regular file opened by its path (raw_size: regular; not standard
     * input, whose offset need not be 0) */
    if (in->comp == SL_COMP_NONE && in->raw_size > 0 && in->own_fd) {
        void *p = mmap(NULL, (size_t)in->raw_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, in->fd, 0);
        if (p != MAP_FAILED) {
            m->data = p;
            m->len = (size_t)in->raw_size;
            m->mapped = 1;
            sl_input_close(in);
            return 0;
        }
    }
    char *d; /* anything else read on from where the magic test left it */
    if (read_input(in, &d, &m->len, err))
        return -1;
    m->data = d;
    return 0;
}

void sl_unmap_file(sl_mapped *m)
{
    if (m->mapped)
        munmap((void *)m->data, m->len);
    else
        free((void *)m->data);
    memset(m, 0, sizeof *m);
}

/* ---- output paths, temporaries and their cleanup --------------------------
 *
 * Every output is first written under a temporary name beside its target:
 * a file as NAME.tmp.<pid>.<n>, a directory as NAME.tmp.<pid>/ (or
 * NAME.tmp.<pid>.<n>/ when that name is taken); an existing directory that
 * --force replaces is moved aside as NAME.old.<pid>[.<n>] while the new one
 * is renamed in. The process holds an exclusive flock(2) on each of them
 * for as long as it exists, and keeps a registry of its temporaries and of
 * the parent directories it created for them, so that a failure, a signal
 * or the end of main removes all of it: no stage leaves an empty directory
 * or a temporary behind.
 *
 * A process killed with SIGKILL (or a machine that lost power) cannot clean
 * up; the next process writing NAME finds NAME.tmp.* or NAME.old.* whose
 * lock nobody holds, removes it and says so (base/log.h). The lock, not the
 * pid, tells a dead owner from a live one: pids repeat (in a container the
 * stage is often pid 1, run after run), and a writer on another host of a
 * shared file system has a pid that means nothing here. The pid in the name
 * only keeps the names of concurrent writers apart; a name that is taken is
 * skipped. Only where the file system has no flock (ENOLCK, EBADF) does the
 * pid decide: a temporary is stale when no process of that pid runs.
 *
 * Creating a temporary and locking it are two steps; a sweeper that locks
 * the file between them removes it. The creator sees that (its lock fails,
 * or the file has no link left) and takes the next name: a sweeper removes
 * only what it holds locked, so a file whose creator holds the lock is
 * never removed. */

#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <dirent.h>

typedef struct tmp_entry tmp_entry;
struct tmp_entry {
    char *path;     /* a temporary file or directory */
    char **parents; /* directories created for it, outermost first, NULL-terminated */
    int is_dir;
    tmp_entry *next, *prev;
};

static tmp_entry *tmp_list;
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *io_stage = "sluice";
static const int *io_quiet;

void sl_io_set_reporter(const char *stage, const int *quiet)
{
    io_stage = stage;
    io_quiet = quiet;
}

/* Creating a temporary (and the parents made for it) and registering it is
 * one step for the signal handlers: a signal that came between the two would
 * leave a file that nothing removes. Replacing a directory is one step too
 * (moving the old one aside, renaming the new one in, removing the old):
 * a signal in the middle would leave no directory at all, or the old one
 * under another name. The calling thread blocks the signals, and a signal
 * that reaches another thread (OpenMP workers do not block them) is held
 * back by sl_io_defer_signal until the step is complete. */
static _Atomic int io_critical;
static volatile sig_atomic_t io_deferred;

int sl_io_defer_signal(int sig)
{
    if (io_critical > 0) {
        io_deferred = sig;
        return 1;
    }
    return 0;
}

static void signals_hold(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, old);
    io_critical++;
}

static void signals_release(const sigset_t *old)
{
    if (--io_critical == 0 && io_deferred) {
        int sig = io_deferred;
        io_deferred = 0;
        raise(sig); /* pending for this thread until the mask below is restored */
    }
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void tmp_reg(tmp_entry *e)
{
    pthread_mutex_lock(&tmp_lock);
    e->prev = NULL;
    e->next = tmp_list;
    if (tmp_list)
        tmp_list->prev = e;
    tmp_list = e;
    pthread_mutex_unlock(&tmp_lock);
}

static void tmp_unreg(tmp_entry *e)
{
    pthread_mutex_lock(&tmp_lock);
    if (e->prev)
        e->prev->next = e->next;
    else if (tmp_list == e)
        tmp_list = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->next = e->prev = NULL;
    pthread_mutex_unlock(&tmp_lock);
}

static void free_parents(char **parents)
{
    for (size_t i = 0; parents && parents[i]; i++)
        free(parents[i]);
    free(parents);
}

/* Removes the directories in parents (innermost first) that are empty.
 * Async-signal-safe (rmdir only). */
static void remove_parents(char **parents)
{
    size_t n = 0;
    while (parents && parents[n])
        n++;
    while (n--)
        if (rmdir(parents[n]) != 0)
            break;
}

/* Removes a directory and the files in it (temporary directories hold only
 * files). Async-signal-safe: getdents64 and unlinkat, no allocation; an
 * entry that the deletions make getdents skip is caught by the next pass. */
struct sl_dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static void remove_tree(const char *dir)
{
    for (int pass = 0; pass < 8; pass++) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return;
        long buf[1024]; /* 8 KiB, aligned for the records */
        int removed = 0;
        for (;;) {
            long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n <= 0)
                break;
            for (long off = 0; off < n;) {
                struct sl_dirent64 *d = (struct sl_dirent64 *)((char *)buf + off);
                off += d->reclen;
                if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
                    continue;
                if (unlinkat(fd, d->name, 0) == 0 || unlinkat(fd, d->name, AT_REMOVEDIR) == 0)
                    removed = 1;
            }
        }
        close(fd);
        if (rmdir(dir) == 0 || !removed)
            return;
    }
}

/* Removes one registered temporary and the parents created for it. */
static void tmp_remove(const tmp_entry *e)
{
    if (e->is_dir)
        remove_tree(e->path);
    else
        unlink(e->path);
    remove_parents(e->parents);
}

size_t sl_path_url_scheme(const char *path)
{
    if (!path || !((path[0] >= 'a' && path[0] <= 'z') || (path[0] >= 'A' && path[0] <= 'Z')))
        return 0;
    size_t i = 1;
    while (isalnum((unsigned char)path[i]) || path[i] == '+' || path[i] == '-' || path[i] == '.')
        i++;
    return strncmp(path + i, "://", 3) ? 0 : i;
}

int sl_path_url_error(const char *path, sl_err *err)
{
    return sl_errf(err,
                   "%s: a URL (%.*s://): sluice reads and writes local paths only; copy the data to local disk "
                   "or mount the store (e.g. rclone mount, s3fs, gcsfuse) and give that path",
                   path, (int)sl_path_url_scheme(path), path);
}

int sl_output_check(const char *path, int dir, int force, sl_err *err)
{
    if (!strcmp(path, "-"))
        return 0;
    if (sl_path_url_scheme(path))
        return sl_path_url_error(path, err);
    if (!*path)
        return sl_errf(err, "'': a %s name is needed", dir ? "directory" : "file");
    char *p = sl_path_clean(path);
    struct stat st;
    int rc = 0;
    if (dir != 2) /* what a killed writer of this name left goes, also when the run stops here */
        sl_stale_temps_clean(p);
    if (stat(p, &st) == 0) {
        if (dir == 1 && !force)
            rc = sl_err_set(err, SL_E_EXISTS, "force", "%s: already exists (`force` replaces it)", p);
        else if (dir == 2 && !S_ISDIR(st.st_mode))
            rc = sl_err_set(err, SL_E_IO, NULL, "%s: not a directory", p);
        else if (dir == 2)
            rc = access(p, W_OK | X_OK)
                     ? sl_err_set(err, SL_E_IO, NULL, "%s: cannot write into it: %s", p, strerror(errno))
                     : 0;
        else if (!dir && S_ISDIR(st.st_mode))
            rc = sl_err_set(err, SL_E_IO, NULL, "%s: is a directory", p);
        else if (!dir && !S_ISREG(st.st_mode))
            rc = access(p, W_OK) ? sl_err_set(err, SL_E_IO, NULL, "%s: cannot open for writing: %s", p, strerror(errno))
                                 : 0;
        if (rc || dir == 2 || (!dir && !S_ISREG(st.st_mode)))
            goto done; /* written in place (a device, a FIFO, into a directory): the parent does not matter */
    }
    /* the nearest existing ancestor must be a directory we can write into */
    for (;;) {
        char *slash = strrchr(p, '/');
        if (!slash) {
            strcpy(p, ".");
        } else if (slash == p) {
            p[1] = 0;
        } else {
            *slash = 0;
        }
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                rc = sl_err_set(err, SL_E_IO, NULL, "%s: cannot create %s: %s is not a directory", path,
                                dir ? "the directory" : "the file", p);
            else if (access(p, W_OK | X_OK))
                rc = sl_err_set(err, SL_E_IO, NULL, "%s: cannot write into %s: %s", path, p, strerror(errno));
            break;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            rc = sl_err_set(err, SL_E_IO, NULL, "%s: %s: %s", path, p, strerror(errno));
            break;
        }
        if (!strcmp(p, ".") || !strcmp(p, "/"))
            break;
    }
done:
    free(p);
    return rc;
}

char *sl_path_clean(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return sl_xstrndup(path, n);
}

/* mkdir -p of the directory that holds `path`; the directories it created
 * are returned (outermost first, NULL-terminated; NULL when none). */
static int make_parents(const char *path, char ***created, sl_err *err)
{
    *created = NULL;
    char *p = sl_xstrdup(path);
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) {
        free(p);
        return 0;
    }
    *slash = 0;
    struct stat st;
    if (stat(p, &st) == 0) {
        free(p);
        return 0;
    }
    size_t n = 0;
    for (char *q = strchr(p + 1, '/');; q = strchr(q + 1, '/')) {
        if (q)
            *q = 0;
        if (mkdir(p, 0777) == 0) {
            *created = sl_xrealloc(*created, (n + 2) * sizeof **created);
            (*created)[n++] = sl_xstrdup(p);
            (*created)[n] = NULL;
        } else if (errno != EEXIST) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot create directory %s: %s", path, p, strerror(errno));
            free(p);
            remove_parents(*created);
            free_parents(*created);
            *created = NULL;
            return -1;
        }
        if (!q)
            break;
        *q = '/';
    }
    free(p);
    return 0;
}

/* ---- stale temporaries ---------------------------------------------------- */

/* Directories already searched by this process, with the temporary-looking
 * names found there: one directory listing per directory, however many
 * files (detokenize audio writes thousands) go into it. */
typedef struct scanned_dir {
    char *dir;
    char **names;
    size_t n;
    struct scanned_dir *next;
} scanned_dir;
static scanned_dir *scanned;
/* numbers the temporaries of this process */
static _Atomic unsigned tmp_counter;

/* "<base>.tmp.<digits>[.<digits>]" or "<base>.old.<digits>[.<digits>]": the
 * pid, else 0. */
static long tmp_pid(const char *name, const char *base)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) || (strncmp(name + bl, ".tmp.", 5) && strncmp(name + bl, ".old.", 5)))
        return 0;
    const char *s = name + bl + 5;
    char *end;
    if (*s < '1' || *s > '9')
        return 0;
    long pid = strtol(s, &end, 10);
    if (*end == '.') {
        const char *t = end + 1;
        if (*t < '0' || *t > '9')
            return 0;
        strtol(t, &end, 10);
    }
    return *end ? 0 : pid;
}

static scanned_dir *scan_dir(const char *dir)
{
    for (scanned_dir *s = scanned; s; s = s->next)
        if (!strcmp(s->dir, dir))
            return s;
    scanned_dir *s = sl_xcalloc(1, sizeof *s);
    s->dir = sl_xstrdup(dir);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *t = strstr(e->d_name, ".tmp."), *o = strstr(e->d_name, ".old.");
        if ((!t || t == e->d_name) && (!o || o == e->d_name))
            continue;
        s->names = sl_xrealloc(s->names, (s->n + 1) * sizeof *s->names);
        s->names[s->n++] = sl_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    s->next = scanned;
    scanned = s;
    return s;
}

/* flock that tells "someone holds it" (1) from "taken" (0) and "this file
 * system has no locks" (-1). */
static int lock_try(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    return errno == EWOULDBLOCK || errno == EINTR ? 1 : -1;
}

/* Whether the temporary `full` (opened as fd, fstat st) is stale: its lock
 * is free (and now ours), or, without locks, no process `pid` runs. */
static int is_stale(int fd, const struct stat *st, const char *full, long pid)
{
    int k = lock_try(fd);
    if (k == 1)
        return 0;
    if (k < 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM))
        return 0;
    /* the name still leads to the file that was locked (not to a new
     * temporary that a writer of the same pid made after another sweeper
     * removed this one) */
    struct stat now;
    return lstat(full, &now) == 0 && now.st_ino == st->st_ino && now.st_dev == st->st_dev;
}

void sl_stale_temps_clean(const char *path)
{
    char *p = sl_path_clean(path);
    char *slash = strrchr(p, '/');
    const char *dir = ".", *base = p;
    if (slash) {
        *slash = 0;
        dir = slash == p ? "/" : p;
        base = slash + 1;
    }
    if (!*base) {
        free(p);
        return;
    }
    pthread_mutex_lock(&tmp_lock);
    scanned_dir *s = scan_dir(dir);
    for (size_t i = 0; i < s->n; i++) {
        long pid = tmp_pid(s->names[i], base);
        if (!pid)
            continue;
        size_t n = strlen(dir) + strlen(s->names[i]) + 2;
        char *full = sl_xmalloc(n);
        snprintf(full, n, "%s%s%s", slash ? dir : "", slash && strcmp(dir, "/") ? "/" : "", s->names[i]);
        int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat st;
        int removed = 0;
        if (fd >= 0 && fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
            is_stale(fd, &st, full, pid)) {
            if (S_ISDIR(st.st_mode))
                remove_tree(full);
            else
                unlink(full);
            removed = 1;
            if (!io_quiet || !*io_quiet)
                sl_log(SL_LOG_INFO, io_stage, "removed stale temporary %s%s (left by process %ld, which is gone)", full,
                       S_ISDIR(st.st_mode) ? "/" : "", pid);
        }
        if (fd >= 0)
            close(fd);
        free(full);
        if (removed || fd < 0) { /* else a live writer's: looked at again by the next call */
            free(s->names[i]);
            s->names[i] = s->names[--s->n];
            i--;
        }
    }
    pthread_mutex_unlock(&tmp_lock);
    free(p);
}

/* A temporary just created as fd: locks it, and says whether it is still
 * ours (0) or a sweeper of another process took it (-1: the next name). */
static int lock_new(int fd)
{
    if (lock_try(fd) == 1)
        return -1;
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_nlink == 0 ? -1 : 0;
}

/* ---- atomic output -------------------------------------------------- */

/* Small enough to stay in cache from one flush to the next (at 1 MiB, the
 * tokenizer's tables pushed it out in between: a miss per line written). */
#define OUT_BUF (1u << 17)

struct sl_output {
    char *path, *tmp;
    int fd;
    unsigned char *buf;
    size_t len;
    uint64_t bytes;
    int failed;
    int direct; /* written in place (a device or FIFO): no temporary, no rename */
    tmp_entry reg;
};

static void out_free(sl_output *o)
{
    free(o->buf);
    free(o->path);
    free(o->tmp);
    free_parents(o->reg.parents);
    free(o);
}

sl_output *sl_output_open(const char *path, sl_err *err)
{
    sl_output *o = sl_xcalloc(1, sizeof *o);
    o->buf = sl_xmalloc(OUT_BUF);
    if (!strcmp(path, "-")) {
        o->path = sl_xstrdup("<stdout>");
        o->fd = 1;
        return o;
    }
    if (sl_path_url_scheme(path)) {
        sl_path_url_error(path, err);
        out_free(o);
        return NULL;
    }
    o->path = sl_xstrdup(path);
    /* Devices, FIFOs and sockets (/dev/null, a named pipe) are written in
     * place: renaming a temporary over them would replace the device. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            sl_err_set(err, SL_E_IO, NULL, "%s: is a directory", path);
            out_free(o);
            return NULL;
        }
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot open for writing: %s", path, strerror(errno));
            out_free(o);
            return NULL;
        }
        o->direct = 1;
        return o;
    }
    if (!*path || path[strlen(path) - 1] == '/') {
        sl_errf(err, "%s: not a file name (a file is written here, not a directory)", path);
        out_free(o);
        return NULL;
    }
    sl_stale_temps_clean(path);
    sigset_t held;
    signals_hold(&held);
    if (make_parents(path, &o->reg.parents, err)) {
        signals_release(&held);
        out_free(o);
        return NULL;
    }
    size_t n = strlen(path) + 64;
    o->tmp = sl_xmalloc(n);
    /* the first free name that stays ours once locked (see above) */
    for (int tries = 0;; tries++) {
        snprintf(o->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), tmp_counter++);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0 && lock_new(o->fd) == 0)
            break;
        int e = o->fd >= 0 ? EEXIST : errno;
        if (o->fd >= 0)
            close(o->fd);
        if (e != EEXIST || tries == 1000) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot create: %s", path, strerror(e));
            remove_parents(o->reg.parents);
            signals_release(&held);
            out_free(o);
            return NULL;
        }
    }
    o->reg.path = o->tmp;
    tmp_reg(&o->reg);
    signals_release(&held);
    return o;
}

sl_output *sl_output_fd(int fd, const char *name)
{
    sl_output *o = sl_xcalloc(1, sizeof *o);
    o->buf = sl_xmalloc(OUT_BUF);
    o->path = sl_xstrdup(name);
    o->fd = fd;
    o->direct = 1;
    return o;
}

static int flush_out(sl_output *o, sl_err *err)
{
    size_t off = 0;
    while (off < o->len) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            o->failed = 1;
            return sl_err_set(err, SL_E_IO, NULL, "%s: write failed: %s", o->path, strerror(errno));
        }
        off += (size_t)w;
    }
    o->len = 0;
    return 0;
}

int sl_output_write(sl_output *o, const void *p, size_t n, sl_err *err)
{
    if (o->failed)
        return sl_err_set(err, SL_E_IO, NULL, "%s: write failed earlier", o->path);
    const unsigned char *s = p;
    while (n) {
        if (o->len == OUT_BUF && flush_out(o, err))
            return -1;
        size_t k = OUT_BUF - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
        o->bytes += k;
    }
    return 0;
}

int sl_output_printf(sl_output *o, sl_err *err, const char *fmt, ...)
{
    char small[512];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    int rc;
    if (n < (int)sizeof small) {
        rc = sl_output_write(o, small, (size_t)n, err);
    } else {
        char *big = sl_xmalloc((size_t)n + 1);
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        rc = sl_output_write(o, big, (size_t)n, err);
        free(big);
    }
    va_end(ap2);
    return rc;
}

/* fsync of the directory that holds path, so a rename into it is durable. */
static void sync_parent(const char *path)
{
    char *dcopy = sl_xstrdup(path);
    int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(dcopy);
}

int sl_output_commit(sl_output *o, sl_err *err)
{
    if (flush_out(o, err)) {
        sl_output_abort(o);
        return -1;
    }
    if (!o->tmp) { /* stdout, or a device/FIFO written in place */
        if (o->direct && close(o->fd) != 0) {
            sl_err_set(err, SL_E_IO, NULL, "%s: close failed: %s", o->path, strerror(errno));
            out_free(o);
            return -1;
        }
        out_free(o);
        return 0;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        sl_err_set(err, SL_E_IO, NULL, "%s: fsync failed: %s", o->path, strerror(errno));
        sl_output_abort(o);
        return -1;
    }
    /* rename while the lock is held: a stale-temporary sweep by another
     * process never sees this file unlocked */
    if (rename(o->tmp, o->path) != 0) {
        sl_err_set(err, SL_E_IO, NULL, "%s: cannot rename %s into place: %s", o->path, o->tmp, strerror(errno));
        sl_output_abort(o);
        return -1;
    }
    tmp_unreg(&o->reg);
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0) {
        sl_err_set(err, SL_E_IO, NULL, "%s: close failed: %s", o->path, strerror(errno));
        unlink(o->path);
        remove_parents(o->reg.parents);
        out_free(o);
        return -1;
    }
    sync_parent(o->path);
    out_free(o);
    return 0;
}

void sl_output_abort(sl_output *o)
{
    if (!o)
        return;
    if (o->direct)
        close(o->fd);
    if (o->tmp) {
        tmp_unreg(&o->reg);
        unlink(o->tmp);
        if (o->fd >= 0)
            close(o->fd);
        remove_parents(o->reg.parents);
    }
    out_free(o);
}

const char *sl_output_name(const sl_output *o)
{
    return o->path;
}
uint64_t sl_output_bytes(const sl_output *o)
{
    return o->bytes;
}

/* ---- atomic output directory ---------------------------------------- */

struct sl_outdir {
    char *path, *tmp;
    int lock_fd;
    tmp_entry reg;
};

static void outdir_free(sl_outdir *d)
{
    if (d->lock_fd >= 0)
        close(d->lock_fd);
    free(d->path);
    free(d->tmp);
    free_parents(d->reg.parents);
    free(d);
}

sl_outdir *sl_outdir_open(const char *dir, int force, sl_err *err)
{
    if (!*dir || !strcmp(dir, "-")) {
        sl_errf(err, "'%s': a directory name is needed", dir);
        return NULL;
    }
    if (sl_path_url_scheme(dir)) {
        sl_path_url_error(dir, err);
        return NULL;
    }
    sl_outdir *d = sl_xcalloc(1, sizeof *d);
    d->lock_fd = -1;
    d->path = sl_path_clean(dir);
    sl_stale_temps_clean(d->path); /* also when the run stops here: what a killed one left goes */
    struct stat st;
    if (stat(d->path, &st) == 0 && !force) {
        sl_err_set(err, SL_E_EXISTS, "force", "%s: already exists (`force` replaces it)", d->path);
        outdir_free(d);
        return NULL;
    }
    if (!strcmp(d->path, "/") || !strcmp(d->path, ".") || !strcmp(d->path, "..") ||
        (strlen(d->path) >= 3 && !strcmp(d->path + strlen(d->path) - 3, "/..")) ||
        (strlen(d->path) >= 2 && !strcmp(d->path + strlen(d->path) - 2, "/."))) {
        sl_errf(err, "%s: cannot be replaced (name a new directory)", d->path);
        outdir_free(d);
        return NULL;
    }
    size_t n = strlen(d->path) + 64;
    d->tmp = sl_xmalloc(n);
    sigset_t held;
    signals_hold(&held);
    if (make_parents(d->path, &d->reg.parents, err)) {
        signals_release(&held);
        outdir_free(d);
        return NULL;
    }
    /* DIR.tmp.<pid>, else the first free DIR.tmp.<pid>.<n> that stays ours
     * once locked (a writer of the same pid elsewhere, see above) */
    for (int tries = 0;; tries++) {
        if (tries == 0)
            snprintf(d->tmp, n, "%s.tmp.%ld", d->path, (long)getpid());
        else
            snprintf(d->tmp, n, "%s.tmp.%ld.%u", d->path, (long)getpid(), tmp_counter++);
        int e = 0;
        if (mkdir(d->tmp, 0777) != 0)
            e = errno;
        else if ((d->lock_fd = open(d->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            e = errno;
        else if (lock_new(d->lock_fd) == 0)
            break;
        else
            e = EEXIST;
        if (d->lock_fd >= 0)
            close(d->lock_fd);
        d->lock_fd = -1;
        if (e != EEXIST || tries == 1000) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot create directory: %s", d->tmp, strerror(e));
            remove_parents(d->reg.parents);
            signals_release(&held);
            outdir_free(d);
            return NULL;
        }
    }
    d->reg.path = d->tmp;
    d->reg.is_dir = 1;
    tmp_reg(&d->reg);
    signals_release(&held);
    return d;
}

const char *sl_outdir_tmp(const sl_outdir *d)
{
    return d->tmp;
}
const char *sl_outdir_name(const sl_outdir *d)
{
    return d->path;
}

/* Moves `path` (an existing file or directory) aside as path.old.<pid>[.<n>],
 * locked through *lock_fd so that no sweeper takes it while it is there. */
static char *move_aside(const char *path, int is_dir, int *lock_fd, sl_err *err)
{
    size_t n = strlen(path) + 64;
    char *old = sl_xmalloc(n);
    *lock_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (is_dir ? O_DIRECTORY : 0));
    if (*lock_fd >= 0 && lock_try(*lock_fd) == 1) {
        close(*lock_fd);
        *lock_fd = -1;
        sl_errf(err, "%s: another process holds it", path);
        free(old);
        return NULL;
    }
    for (int tries = 0;; tries++) {
        if (tries == 0)
            snprintf(old, n, "%s.old.%ld", path, (long)getpid());
        else
            snprintf(old, n, "%s.old.%ld.%u", path, (long)getpid(), tmp_counter++);
        /* never over a name that exists: rename() would replace an empty directory there */
        int rc = renameat2(AT_FDCWD, path, AT_FDCWD, old, RENAME_NOREPLACE);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) { /* a file system without RENAME_NOREPLACE */
            struct stat st;
            rc = lstat(old, &st) == 0 ? (errno = EEXIST, -1) : rename(path, old);
        }
        if (rc == 0)
            return old;
        if (errno != EEXIST || tries == 1000) {
            sl_err_set(err, SL_E_IO, NULL, "%s: cannot move the existing %s aside: %s", path,
                       is_dir ? "directory" : "file", strerror(errno));
            if (*lock_fd >= 0)
                close(*lock_fd);
            *lock_fd = -1;
            free(old);
            return NULL;
        }
    }
}

int sl_outdir_commit(sl_outdir *d, sl_err *err)
{
    if (d->lock_fd >= 0)
        fsync(d->lock_fd);
    /* one step for signals: DIR is the old tree or the new one, never
     * missing, and the old one is gone before a signal is acted on */
    sigset_t held;
    signals_hold(&held);
    char *old = NULL;
    int old_fd = -1;
    struct stat st;
    if (lstat(d->path, &st) == 0 && !(old = move_aside(d->path, S_ISDIR(st.st_mode), &old_fd, err))) {
        signals_release(&held);
        sl_outdir_abort(d);
        return -1;
    }
    if (rename(d->tmp, d->path)) {
        sl_err_set(err, SL_E_IO, NULL, "%s: cannot rename %s into place: %s", d->path, d->tmp, strerror(errno));
        if (old)
            rename(old, d->path);
        if (old_fd >= 0)
            close(old_fd);
        free(old);
        signals_release(&held);
        sl_outdir_abort(d);
        return -1;
    }
    tmp_unreg(&d->reg);
    sync_parent(d->path);
    if (old) {
        if (S_ISDIR(st.st_mode))
            remove_tree(old);
        else
            unlink(old);
        free(old);
    }
    if (old_fd >= 0)
        close(old_fd);
    outdir_free(d);
    signals_release(&held);
    return 0;
}

void sl_outdir_abort(sl_outdir *d)
{
    if (!d)
        return;
    tmp_unreg(&d->reg);
    remove_tree(d->tmp);
    remove_parents(d->reg.parents);
    outdir_free(d);
}

void sl_output_abort_all(void)
{
    /* From a signal handler too: unlink, rmdir and getdents only, no
     * allocation, no lock (a thread may hold it while the signal arrives). */
    for (tmp_entry *e = tmp_list; e; e = e->next)
        tmp_remove(e);
}
