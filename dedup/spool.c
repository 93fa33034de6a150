/* Unnamed temporary files (dedup/spool.h). */
#include "dedup/spool.h"

#include <errno.h>
#include <pthread.h>
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

/* The spools' stdio buffers, which sl_spool_close frees: glibc's setvbuf
 * takes the size only with a buffer given (with NULL it keeps the file's
 * block size), and a 4 KiB buffer made `dedup exact` of 100 MB read and
 * write its spool in 25,800 calls each way. A spool past the table's room
 * keeps stdio's own buffer. */
#define SPOOL_BUF ((size_t)1 << 20)
static struct {
    FILE *f;
    char *buf;
} spool_bufs[16];
static pthread_mutex_t spool_mu = PTHREAD_MUTEX_INITIALIZER;

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
    pthread_mutex_lock(&spool_mu);
    for (size_t i = 0; i < sizeof spool_bufs / sizeof *spool_bufs; i++) {
        if (!spool_bufs[i].f) {
            char *buf = sl_xmalloc(SPOOL_BUF);
            if (setvbuf(f, buf, _IOFBF, SPOOL_BUF) == 0)
                spool_bufs[i].f = f, spool_bufs[i].buf = buf;
            else
                free(buf);
            break;
        }
    }
    pthread_mutex_unlock(&spool_mu);
    return f;
}

void sl_spool_close(FILE *f)
{
    if (!f)
        return;
    fclose(f);
    pthread_mutex_lock(&spool_mu);
    for (size_t i = 0; i < sizeof spool_bufs / sizeof *spool_bufs; i++) {
        if (spool_bufs[i].f == f) {
            free(spool_bufs[i].buf);
            spool_bufs[i].f = NULL, spool_bufs[i].buf = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&spool_mu);
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
