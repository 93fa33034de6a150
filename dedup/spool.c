/* Unnamed temporary files (dedup/spool.h). */
#include "dedup/spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sl_spool_fd(const char *what, sl_err *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = sl_xmalloc(n);
    snprintf(path, n, "%s/sluice-dedup-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        sl_errf(err, "%s: cannot create a temporary file for the %s: %s", dir, what, strerror(errno));
        free(path);
        return -1;
    }
    unlink(path);
    free(path);
    return fd;
}

FILE *sl_spool_new(const char *what, sl_err *err)
{
    int fd = sl_spool_fd(what, err);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        close(fd);
        sl_errf(err, "temporary file of the %s: %s", what, strerror(errno));
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

int sl_spool_write(FILE *f, const void *p, size_t n, sl_err *err)
{
    if (n && fwrite(p, 1, n, f) != n)
        return sl_errf(err, "temporary file: write error: %s (is $TMPDIR full?)", strerror(errno));
    return 0;
}

int sl_spool_read(FILE *f, void *p, size_t n, sl_err *err)
{
    if (!n)
        return 0;
    size_t got = fread(p, 1, n, f);
    if (got == n)
        return 0;
    if (got == 0 && feof(f))
        return 1;
    return sl_errf(err, "temporary file: read error or truncated");
}

int sl_spool_put_blob(FILE *f, const void *p, size_t n, sl_err *err)
{
    if (n > UINT32_MAX)
        return sl_errf(err, "document too large for the spool");
    uint32_t k = (uint32_t)n;
    if (sl_spool_write(f, &k, 4, err) < 0)
        return -1;
    return sl_spool_write(f, p, n, err);
}

int sl_spool_get_blob(FILE *f, sl_buf *b, sl_err *err)
{
    uint32_t n;
    int rc = sl_spool_read(f, &n, 4, err);
    if (rc)
        return rc < 0 ? -1 : sl_errf(err, "temporary file: truncated");
    sl_buf_clear(b);
    sl_buf_reserve(b, (size_t)n + 1);
    if (sl_spool_read(f, b->data, n, err) != 0)
        return sl_errf(err, "temporary file: truncated");
    b->len = n;
    b->data[n] = 0;
    return 0;
}
