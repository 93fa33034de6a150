/* Helpers the unit tests share (support.h). */
#include "tests/unit/support.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sl_test_src(void)
{
    const char *s = getenv("SLUICE_SRC");
    return s && *s ? s : ".";
}

char *sl_test_path(const char *fmt, ...)
{
    static char buf[16][4096];
    static unsigned k;
    char *b = buf[k++ % 16];
    int n = snprintf(b, sizeof buf[0], "%s/", sl_test_src());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, sizeof buf[0] - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

int sl_test_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

char *sl_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *d = malloc(cap);
    while (d && (k = fread(d + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) {
            char *g = realloc(d, cap *= 2);
            if (!g)
                free(d);
            d = g;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!d || bad) {
        free(d);
        return NULL;
    }
    d[n] = 0;
    if (len)
        *len = n;
    return d;
}

char *sl_test_tmpdir(const char *tag)
{
    const char *t = getenv("TMPDIR");
    size_t n = strlen(t && *t ? t : "/tmp") + strlen(tag) + 16;
    char *d = malloc(n);
    if (!d)
        return NULL;
    snprintf(d, n, "%s/%s.XXXXXX", t && *t ? t : "/tmp", tag);
    if (!mkdtemp(d)) {
        free(d);
        return NULL;
    }
    return d;
}

void sl_test_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *p = malloc(n);
            if (!p)
                continue;
            snprintf(p, n, "%s/%s", dir, e->d_name);
            struct stat st;
            if (!lstat(p, &st) && S_ISDIR(st.st_mode))
                sl_test_rmtree(p);
            else
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

int sl_test_tmpdir_into(char *buf, size_t cap, const char *tag)
{
    char *d = sl_test_tmpdir(tag);
    int ok = d && (size_t)snprintf(buf, cap, "%s", d) < cap;
    free(d);
    return ok ? 0 : -1;
}

int sl_test_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}
