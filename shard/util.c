#include "shard/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sl_shard_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = sl_xmalloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

int sl_shard_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void sync_parent(const char *path)
{
    char *p = sl_xstrdup(path);
    char *slash = strrchr(p, '/');
    const char *parent = ".";
    if (slash) {
        *slash = 0;
        parent = slash == p ? "/" : p;
    }
    int fd = open(parent, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(p);
}

int sl_shard_dir_replace(const char *tmp, const char *dst, sl_err *err)
{
    int fd = open(tmp, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    char *old = NULL;
    struct stat st;
    if (lstat(dst, &st) == 0) {
        size_t n = strlen(dst) + 32;
        old = sl_xmalloc(n);
        snprintf(old, n, "%s.old.%ld", dst, (long)getpid());
        if (rename(dst, old)) {
            sl_errf(err, "%s: cannot move the existing directory aside: %s", dst, strerror(errno));
            free(old);
            return -1;
        }
    }
    if (rename(tmp, dst)) {
        sl_errf(err, "%s: cannot rename %s into place: %s", dst, tmp, strerror(errno));
        if (old)
            rename(old, dst);
        free(old);
        return -1;
    }
    sync_parent(dst);
    if (old) {
        if (S_ISDIR(st.st_mode))
            sl_shard_rmdir(old);
        else
            unlink(old);
        free(old);
    }
    return 0;
}
