/* Part files and the part spec (stream/parts.h). */
#include "stream/parts.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int digits_at(const char *s, size_t i)
{
    return s[i] >= '0' && s[i] <= '9';
}

static int parse_u64(const char *s, size_t a, size_t b, uint64_t *v)
{
    uint64_t x = 0;
    if (b - a > 18)
        return 0;
    for (size_t i = a; i < b; i++)
        x = x * 10 + (uint64_t)(s[i] - '0');
    *v = x;
    return 1;
}

int sl_parts_parse_name(const char *name, uint64_t *r, uint64_t *n, size_t *pre, size_t *post)
{
    size_t len = strlen(name);
    for (size_t at = len; at-- > 0;) {
        if (strncmp(name + at, "-of-", 4))
            continue;
        size_t a = at, b = at + 4;
        while (a > 0 && digits_at(name, a - 1))
            a--;
        while (b < len && digits_at(name, b))
            b++;
        if (a == at || b == at + 4)
            continue;
        if (!parse_u64(name, a, at, r) || !parse_u64(name, at + 4, b, n))
            return 0;
        *pre = a;
        *post = b;
        return 1;
    }
    return 0;
}

/* NAME.tmp.<digits>...: the temporary of an output being written (or of a
 * process that died: firstcontact's stale-temporary cleanup handles those). */
static int is_temporary(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    return t && digits_at(t, 5);
}

typedef struct {
    uint64_t r;
    char *name;
} part_ent;

static int cmp_part(const void *a, const void *b)
{
    const part_ent *x = a, *y = b;
    return x->r < y->r ? -1 : x->r > y->r;
}

int sl_parts_list(const char *path, char ***out, size_t *n_out, sl_err *err)
{
    struct stat st;
    *out = NULL;
    *n_out = 0;
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISDIR(st.st_mode))
        return 0;
    DIR *d = opendir(path);
    if (!d)
        return sl_errf(err, "%s: cannot list the directory: %s", path, strerror(errno));
    part_ent *e = NULL;
    size_t n = 0, cap = 0;
    uint64_t N = 0;
    char *first = NULL;
    size_t first_pre = 0, first_post = 0;
    int rc = -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (nm[0] == '.' || is_temporary(nm))
            continue;
        uint64_t r, nn;
        size_t pre, post;
        if (!sl_parts_parse_name(nm, &r, &nn, &pre, &post)) {
            sl_errf(err,
                    "%s: '%s' is not a part file (a name with <R>-of-<N>, e.g. part-3-of-8.tok): move it "
                    "out or name the files to read one by one",
                    path, nm);
            goto done;
        }
        if (!first) {
            first = sl_xstrdup(nm);
            first_pre = pre;
            first_post = post;
            N = nn;
        } else if (pre != first_pre || strncmp(nm, first, pre) || strcmp(nm + post, first + first_post)) {
            sl_errf(err, "%s: '%s' and '%s' are parts of different outputs (the names differ around <R>-of-<N>)", path,
                    first, nm);
            goto done;
        } else if (nn != N) {
            sl_errf(err, "%s: parts of different N: '%s' is one of %llu, '%s' one of %llu", path, first,
                    (unsigned long long)N, nm, (unsigned long long)nn);
            goto done;
        }
        if (N == 0 || r >= N) {
            sl_errf(err, "%s: '%s': part %llu of %llu is out of range (parts are numbered 0..N-1)", path, nm,
                    (unsigned long long)r, (unsigned long long)N);
            goto done;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            e = sl_xrealloc(e, cap * sizeof *e);
        }
        e[n].r = r;
        e[n].name = sl_xstrdup(nm);
        n++;
    }
    if (!n) {
        sl_errf(err, "%s: the directory holds no part files (names with <R>-of-<N>)", path);
        goto done;
    }
    qsort(e, n, sizeof *e, cmp_part);
    for (size_t i = 1; i < n; i++)
        if (e[i].r == e[i - 1].r) {
            sl_errf(err, "%s: part %llu of %llu is there twice: '%s' and '%s'", path, (unsigned long long)e[i].r,
                    (unsigned long long)N, e[i - 1].name, e[i].name);
            goto done;
        }
    for (uint64_t r = 0, i = 0; r < N; r++, i++)
        if (i >= n || e[i].r != r) {
            sl_errf(err, "%s: part %llu of %llu is missing (%zu of %llu parts present, e.g. '%s')", path,
                    (unsigned long long)r, (unsigned long long)N, n, (unsigned long long)N, first);
            goto done;
        }
    *out = sl_xcalloc(n, sizeof **out);
    size_t pl = strlen(path);
    int slash = pl && path[pl - 1] == '/';
    for (size_t i = 0; i < n; i++) {
        size_t k = pl + 1 + strlen(e[i].name) + 1;
        (*out)[i] = sl_xmalloc(k);
        snprintf((*out)[i], k, "%s%s%s", path, slash ? "" : "/", e[i].name);
    }
    *n_out = n;
    rc = 1;
done:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(e[i].name);
    free(e);
    free(first);
    return rc;
}

static int env_u64(const char *name, uint64_t *v, sl_err *err)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return sl_err_set(err, SL_E_OPTION, "part",
                          "`part` slurm: %s is not set: not inside a Slurm job array (submit with sbatch "
                          "--array, or give `part` R/N)",
                          name);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end || *s == '-') {
        char q[SL_QUOTE_MAX];
        return sl_err_set(err, SL_E_OPTION, "part", "`part` slurm: %s='%s' is not a number", name,
                          sl_err_quote(s, strlen(s), q, sizeof q));
    }
    *v = x;
    return 0;
}

int sl_part_parse(const char *spec, sl_part *p, sl_err *err)
{
    if (!strcmp(spec, "slurm")) {
        uint64_t id, min, count;
        if (env_u64("SLURM_ARRAY_TASK_ID", &id, err) || env_u64("SLURM_ARRAY_TASK_MIN", &min, err) ||
            env_u64("SLURM_ARRAY_TASK_COUNT", &count, err))
            return -1;
        const char *mx = getenv("SLURM_ARRAY_TASK_MAX");
        uint64_t max = 0;
        if (mx && *mx && env_u64("SLURM_ARRAY_TASK_MAX", &max, err))
            return -1;
        if (count == 0 || id < min || id - min >= count)
            return sl_err_set(err, SL_E_OPTION, "part", "`part` slurm: task %llu is not in the array %llu..%llu+%llu",
                              (unsigned long long)id, (unsigned long long)min, (unsigned long long)min,
                              (unsigned long long)count);
        if (mx && *mx && max - min + 1 != count)
            return sl_err_set(err, SL_E_OPTION, "part",
                              "`part` slurm: the array %llu-%llu has %llu tasks, not a contiguous range with "
                              "step 1 (submit --array=0-%llu)",
                              (unsigned long long)min, (unsigned long long)max, (unsigned long long)count,
                              (unsigned long long)(count - 1));
        p->r = id - min;
        p->n = count;
        return 0;
    }
    const char *sl = strchr(spec, '/');
    char *end;
    char qs[SL_QUOTE_MAX]; /* the spec in messages: one line whatever it holds */
    const char *q = sl_err_quote(spec, strlen(spec), qs, sizeof qs);
    if (!sl || sl == spec || !sl[1])
        return sl_err_set(err, SL_E_OPTION, "part", "`part` '%s': expected R/N (part R of N, 0 <= R < N) or 'slurm'",
                          q);
    errno = 0;
    unsigned long long r = strtoull(spec, &end, 10);
    if (errno || end != sl || *spec == '-')
        return sl_err_set(err, SL_E_OPTION, "part", "`part` '%s': R is not a number", q);
    unsigned long long n = strtoull(sl + 1, &end, 10);
    if (errno || *end || sl[1] == '-')
        return sl_err_set(err, SL_E_OPTION, "part", "`part` '%s': N is not a number", q);
    if (n == 0 || r >= n)
        return sl_err_set(err, SL_E_OPTION, "part", "`part` '%s': needs 0 <= R < N", q);
    p->r = r;
    p->n = n;
    return 0;
}
