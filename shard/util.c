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
