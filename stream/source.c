/* Sources: the byte streams inside a list of input paths (see source.h).
 *
 * Each path is opened as an sl_input, which already undoes a single layer of
 * compression (zstd, gzip, xz, bzip2) chosen by magic bytes. The first
 * decoded bytes then decide whether the stream is an archive: only a
 * positive signature (a valid tar header checksum, "PK\3\4", "7z\xBC\xAF",
 * ...) makes it one. We do not let libarchive guess from arbitrary bytes:
 * with its "raw"/"mtree" readers enabled it happily takes plain text for an
 * archive, and plain text must stay plain text.
 *
 * An archive is read by libarchive, by file name when the file is regular
 * and uncompressed (libarchive may then seek: 7z, zip central directory),
 * else through callbacks that pull decoded bytes from the sl_input, so "-"
 * (stdin), tar.zst, tar.gz and friends work too. Every regular member becomes one source named
 * "<archive>:<member>"; members may themselves be compressed (a tar of
 * .jsonl.gz files), which the member's sl_input detects. Members are
 * streamed (sl_input_callbacks), so memory does not grow with their size. */
#include "stream/source.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/arrow_ipc.h"
#include "stream/parquet.h"
#include "base/buf.h"

/* Largest archive member held in memory (see the note above). */
#define SNIFF_BYTES 4096
#define ARCHIVE_BLOCK (256 * 1024)

struct sl_sources {
    char **paths;
    int n, next;        /* paths[next] is the next path to open */
    sl_input *in;       /* the open path: a plain source, or the archive's bytes */
    struct archive *ar; /* open archive reading from `in`, or NULL */
    char *ar_name;      /* name used for the archive in messages */
    char *member_prev;  /* name of the last member (for error positions) */
    sl_input *member;   /* current member source */
    /* libarchive read callback state */
    char *block;
    sl_err io_err;
    int io_failed;
    /* sl_sources_open_slices: piece[i] for paths[i]; a range is read through `range` */
    sl_slice *pieces;
    sl_range *range;
    const sl_slice *cur; /* the piece of the current plain source when it is a range */
    /* progress: each path's size and their sum (-1: some size is unknown) */
    int64_t *sizes, total;
};

/* ---- archive signatures ------------------------------------------------ */

static int is_octal_field(const unsigned char *p, size_t n, unsigned long *out)
{
    size_t i = 0;
    unsigned long v = 0;
    while (i < n && p[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++, digits++)
        v = v * 8 + (unsigned long)(p[i] - '0');
    if (!digits)
        return 0;
    for (; i < n; i++)
        if (p[i] != ' ' && p[i] != 0)
            return 0;
    *out = v;
    return 1;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A tar header block: the checksum field (octal, bytes 148..155) equals the
 * sum of the header bytes with that field counted as spaces. This holds for
 * every tar dialect (v7, ustar, GNU, pax). An all-zero block is the end
 * marker, i.e. an empty archive. */
static int is_tar(const unsigned char *p, size_t n)
{
    if (n < 512)
        return 0;
    int zero = 1;
    for (int i = 0; i < 512 && zero; i++)
        zero = p[i] == 0;
    if (zero) /* the end marker: an empty tar, if nothing but zeros follows (see zero_tar_check) */
        return all_zero(p, n);
    unsigned long want;
    if (!is_octal_field(p + 148, 8, &want))
        return 0;
    unsigned long sum = 0;
    for (int i = 0; i < 512; i++)
        sum += (i >= 148 && i < 156) ? ' ' : p[i];
    return sum == want;
}

static int starts(const unsigned char *p, size_t n, const char *magic, size_t m)
{
    return n >= m && memcmp(p, magic, m) == 0;
}

/* ASCII cpio headers are all digits ("070701" + 104 hex digits for newc,
 * "070707" + 70 octal digits for odc), so a text file that merely starts
 * with a date like 070701 is not taken for one. */
static int is_cpio(const unsigned char *p, size_t n)
{
    int newc = starts(p, n, "070701", 6) || starts(p, n, "070702", 6);
    int odc = starts(p, n, "070707", 6);
    size_t len = newc ? 110 : odc ? 76 : 0;
    if (!len || n < len)
        return starts(p, n, "\xC7\x71", 2) || starts(p, n, "\x71\xC7", 2); /* binary cpio */
    for (size_t i = 6; i < len; i++)
        if (newc ? !isxdigit(p[i]) : (p[i] < '0' || p[i] > '7'))
            return 0;
    /* newc's name size (hex at offset 94) goes straight to an allocation in
     * libarchive: a header claiming a name longer than PATH_MAX is not one. */
    if (newc) {
        unsigned long namesize = 0;
        for (size_t i = 94; i < 102; i++)
            namesize = namesize * 16 + (unsigned long)(isdigit(p[i]) ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
        if (namesize > 4096)
            return 0;
    }
    return 1;
}

static int is_archive(const unsigned char *p, size_t n)
{
    return is_tar(p, n) || is_cpio(p, n) || starts(p, n, "PK\3\4", 4) || starts(p, n, "PK\5\6", 4) ||
           starts(p, n, "PK\7\10PK", 6) || starts(p, n, "7z\xBC\xAF\x27\x1C", 6) || starts(p, n, "Rar!\x1A\x07", 6) ||
           starts(p, n, "!<arch>\n", 8);
}

/* ---- libarchive over an sl_input --------------------------------------- */

/* Member names and libarchive messages come from the data: control
 * characters become '?' so that names and error messages stay on one line. */
static char *printable(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
    return s;
}

static la_ssize_t ar_read(struct archive *a, void *ctx, const void **buf)
{
    sl_sources *s = ctx;
    long got = sl_input_read(s->in, s->block, ARCHIVE_BLOCK, &s->io_err);
    if (got < 0) {
        s->io_failed = 1;
        archive_set_error(a, EIO, "%s", s->io_err.msg);
        return -1;
    }
    *buf = s->block;
    return got;
}

/* The message for a libarchive failure: the sl_input's own message when the
 * bytes underneath failed (truncated zstd, I/O error), else libarchive's,
 * positioned at the member being read. */
static int ar_fail(sl_sources *s, sl_err *err, const char *member)
{
    if (s->io_failed)
        return sl_errf(err, "%s", s->io_err.msg);
    const char *why = archive_error_string(s->ar);
    unsigned long long off = (unsigned long long)archive_filter_bytes(s->ar, 0);
    if (member)
        sl_errf(err, "%s:%s: %s", s->ar_name, member, why ? why : "cannot read archive member");
    else if (s->member_prev)
        sl_errf(err, "%s: after member '%s' (offset %llu): %s", s->ar_name, s->member_prev, off,
                why ? why : "cannot read archive");
    else
        sl_errf(err, "%s: offset %llu: %s", s->ar_name, off, why ? why : "cannot read archive");
    printable(err->msg);
    return -1;
}

/* Opens the archive whose decoded bytes `in` holds. A regular, uncompressed
 * file is handed to libarchive by name so that it can seek: 7z needs that,
 * and zip is then read from its central directory (every zip, including the
 * few whose local headers lack the sizes). Anything else (stdin, pipes,
 * compressed files) is streamed through the sl_input. */
static int archive_start(sl_sources *s, const char *path, const unsigned char *head, size_t n, sl_err *err)
{
    s->ar = archive_read_new();
    if (!s->ar)
        return sl_errf(err, "%s: cannot create an archive reader", path);
    archive_read_support_format_tar(s->ar);
    archive_read_support_format_gnutar(s->ar);
    archive_read_support_format_zip(s->ar);
    archive_read_support_format_7zip(s->ar);
    archive_read_support_format_rar(s->ar);
    archive_read_support_format_rar5(s->ar);
    archive_read_support_format_cpio(s->ar);
    archive_read_support_format_ar(s->ar);
    if (!s->block)
        s->block = sl_xmalloc(ARCHIVE_BLOCK);
    s->io_failed = 0;
    free(s->ar_name);
    s->ar_name = sl_xstrdup(strcmp(path, "-") ? path : sl_input_name(s->in));
    free(s->member_prev);
    s->member_prev = NULL;
    int seekable =
        strcmp(path, "-") != 0 && sl_input_compression(s->in) == SL_COMP_NONE && sl_input_raw_size(s->in) >= 0;
    if (!seekable && starts(head, n, "7z\xBC\xAF\x27\x1C", 6))
        return sl_errf(err, "%s: a 7z archive can only be read from a regular, uncompressed file (7z needs to seek)",
                       s->ar_name);
    int r = seekable ? archive_read_open_filename(s->ar, path, ARCHIVE_BLOCK)
                     : archive_read_open(s->ar, s, NULL, ar_read, NULL);
    if (r != ARCHIVE_OK)
        return ar_fail(s, err, NULL);
    return 0;
}

/* An input whose first block is all zero would read as an empty tar (the
 * end marker) and libarchive would stop there. That is right only when
 * everything is zero: a file of 512 NUL bytes and then documents is not an
 * empty archive, and its documents must not vanish without a word. So such
 * an input is read here, not by libarchive: all zero, it has no members;
 * else it is an error at the first non-zero byte. */
static int zero_tar_check(sl_sources *s, const char *path, sl_err *err)
{
    const char *name = strcmp(path, "-") ? path : sl_input_name(s->in);
    unsigned char *b = (unsigned char *)s->block;
    if (!b)
        b = (unsigned char *)(s->block = sl_xmalloc(ARCHIVE_BLOCK));
    for (;;) {
        uint64_t at = sl_input_offset(s->in);
        long got = sl_input_read(s->in, b, ARCHIVE_BLOCK, err);
        if (got < 0)
            return -1;
        if (!got)
            return 0;
        for (long i = 0; i < got; i++)
            if (b[i])
                return sl_errf(err,
                               "%s: offset %llu: a non-zero byte after leading zero bytes (an empty tar archive is "
                               "all zero; this input is neither a tar nor text)",
                               name, (unsigned long long)(at + (uint64_t)i));
    }
}

static void member_close(sl_sources *s)
{
    sl_input_close(s->member);
    s->member = NULL;
}

/* Bytes of the current member, pulled from libarchive as the reader asks
 * for them (memory stays bounded whatever the member's size). */
static long member_read(void *ctx, void *buf, size_t n, sl_err *err)
{
    sl_sources *s = ctx;
    la_ssize_t got = archive_read_data(s->ar, buf, n);
    if (got < 0)
        return ar_fail(s, err, s->member_prev);
    return (long)got;
}

/* Opens the current member as a streaming sl_input: 1, or 0 for a member
 * that is skipped, -1 on error. AppleDouble files (macOS metadata:
 * "__MACOSX/._name" in zips, "._name" in tars) are recognised by their
 * magic and skipped: they are never text, and would otherwise stop the read
 * as binary data. */
static int member_open(sl_sources *s, struct archive_entry *e, sl_err *err)
{
    const char *raw = archive_entry_pathname(e);
    free(s->member_prev);
    s->member_prev = printable(sl_xstrdup(raw ? raw : "?"));
    sl_buf name = {0};
    sl_buf_printf(&name, "%s:%s", s->ar_name, s->member_prev);
    s->member = sl_input_callbacks(member_read, s, name.data, err);
    sl_buf_free(&name);
    if (!s->member)
        return -1;
    unsigned char magic[4];
    long k = sl_input_peek(s->member, magic, 4, err);
    if (k < 0) {
        member_close(s);
        return -1;
    }
    if (k == 4 && !memcmp(magic, "\0\5\26\7", 4)) {
        member_close(s);
        return 0;
    }
    return 1;
}

/* ---- public API -------------------------------------------------------- */

/* ---- plain folders ------------------------------------------------------ */

/* A plain folder (not a datasets save_to_disk folder) stands for the
 * regular files under it, in byte order of their paths (walk_sort), as
 * pyarrow.dataset finds a folder's
 * files: entries whose names start with '.' or '_' are left out (.cache,
 * .gitattributes, Spark's _SUCCESS and .crc files), a symbolic link is
 * followed, a datasets folder inside is its data files. Unless every name
 * says what its file holds (data_name), the files are then sniffed: a
 * plain-text file beside files of other kinds (a dataset card, README.md,
 * beside Parquet files) would become a document of its own without a
 * word, so that is an error. */
#define FOLDER_DEPTH 64

/* The files this process writes (sl_sources_output, sl_sources_output_also):
 * a folder read as its files must not hold one, or a second run would read
 * the first one's output. Slot 0 is -o's; set: the slot's file exists
 * (dev, ino) when a folder is walked. */
#define OUT_SLOTS 8
static struct {
    int to_stdout;
    size_t n; /* slots 1..n-1 in use (0 is always -o's) */
    struct {
        char *path;
        int set;
        dev_t dev;
        ino_t ino;
    } f[OUT_SLOTS];
} outs = {.n = 1};

void sl_sources_output(const char *path)
{
    free(outs.f[0].path);
    outs.to_stdout = path && !strcmp(path, "-");
    outs.f[0].path = path && *path && !outs.to_stdout ? sl_xstrdup(path) : NULL;
}

void sl_sources_output_also(const char *path)
{
    if (path && *path && strcmp(path, "-") && outs.n < OUT_SLOTS)
        outs.f[outs.n++].path = sl_xstrdup(path);
}

/* The output slot whose file is (name in the folder, st), or -1. A file is
 * stat'ed (st == NULL: not yet) only when its name is an output's. */
static int out_slot(const char *name, const struct stat *st)
{
    for (size_t i = 0; i < outs.n; i++) {
        if (!outs.f[i].set)
            continue;
        const char *b = strrchr(outs.f[i].path, '/');
        if (strcmp(name, b ? b + 1 : outs.f[i].path))
            continue;
        if (!st || (st->st_dev == outs.f[i].dev && st->st_ino == outs.f[i].ino))
            return (int)i;
    }
    return -1;
}

typedef struct folder_walk {
    const char *root; /* the folder named */
    char **files;
    char **keys; /* the order: pyarrow's, every path in byte order (NULL: the path) */
    size_t n, cap;
    dev_t dev[FOLDER_DEPTH];
    ino_t ino[FOLDER_DEPTH];
    int depth;
} folder_walk;

static void walk_push(folder_walk *w, char *path, char *key)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->files = sl_xrealloc(w->files, w->cap * sizeof *w->files);
        w->keys = sl_xrealloc(w->keys, w->cap * sizeof *w->keys);
    }
    w->keys[w->n] = key;
    w->files[w->n++] = path;
}

/* The files in order: by their paths' bytes, as pyarrow.dataset lists
 * them ("a-b/y" before "a/x": '-' is below '/'), which sorting each folder
 * by name would not give. */
typedef struct walk_item {
    const char *key;
    char *path;
    char *own_key;
} walk_item;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const walk_item *)a)->key, ((const walk_item *)b)->key);
}

static void walk_sort(folder_walk *w)
{
    walk_item *it = sl_xmalloc((w->n ? w->n : 1) * sizeof *it);
    for (size_t i = 0; i < w->n; i++)
        it[i] = (walk_item){w->keys[i] ? w->keys[i] : w->files[i], w->files[i], w->keys[i]};
    if (w->n > 1)
        qsort(it, w->n, sizeof *it, by_key);
    for (size_t i = 0; i < w->n; i++) {
        w->files[i] = it[i].path;
        free(it[i].own_key);
        w->keys[i] = NULL;
    }
    free(it);
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    char *p = sl_xmalloc(n + strlen(name) + 2);
    memcpy(p, dir, n);
    p[n] = '/';
    strcpy(p + n + 1, name);
    return p;
}

/* A folder's entry: its name and, from readdir, whether it is a regular
 * file (no stat needed then: a folder of 25,000 files on a network file
 * system is read by every task of a job array). */
typedef struct dentry {
    char *name;
    int reg;
} dentry;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const dentry *)a)->name, ((const dentry *)b)->name);
}

static int folder_walk_dir(folder_walk *w, const char *dir, const struct stat *dst, sl_err *err)
{
    for (int i = 0; i < w->depth; i++)
        if (w->dev[i] == dst->st_dev && w->ino[i] == dst->st_ino)
            return sl_errf(err, "%s: a symbolic link loop (the folder is inside itself)", dir);
    if (w->depth == FOLDER_DEPTH)
        return sl_errf(err, "%s: folders nested more than %d deep", dir, FOLDER_DEPTH);
    char **files = NULL;
    size_t nf = 0;
    int rc = sl_arrow_dataset_files(dir, &files, &nf, err);
    if (rc) { /* a datasets save_to_disk folder inside: its data files, in their order, where the folder is */
        for (size_t i = 0; i < nf; i++) {
            char key[32];
            snprintf(key, sizeof key, "\x01%012zu", i);
            walk_push(w, files[i], path_join(dir, key));
        }
        free(files);
        return rc < 0 ? -1 : 0;
    }
    DIR *d = opendir(dir);
    if (!d)
        return sl_errf(err, "%s: %s", dir, strerror(errno));
    dentry *sub = NULL;
    size_t ns = 0, cap = 0;
    for (struct dirent *e; (errno = 0, e = readdir(d));) {
        if (e->d_name[0] == '.' || e->d_name[0] == '_')
            continue;
        if (ns == cap) {
            cap = cap ? 2 * cap : 64;
            sub = sl_xrealloc(sub, cap * sizeof *sub);
        }
        sub[ns++] = (dentry){sl_xstrdup(e->d_name), e->d_type == DT_REG};
    }
    int read_errno = errno;
    closedir(d);
    if (read_errno) {
        for (size_t i = 0; i < ns; i++)
            free(sub[i].name);
        free(sub);
        return sl_errf(err, "%s: %s", dir, strerror(read_errno));
    }
    /* (the files' order is walk_sort's: this sort only makes the bad entry
     * named first not depend on readdir's order) */
    if (ns > 1)
        qsort(sub, ns, sizeof *sub, by_name);
    w->dev[w->depth] = dst->st_dev;
    w->ino[w->depth] = dst->st_ino;
    w->depth++;
    rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++) {
        char *p = path_join(dir, sub[i].name);
        struct stat st;
        /* a regular file is stat'ed only when it may be an output of this run */
        int reg = sub[i].reg && out_slot(sub[i].name, NULL) < 0;
        if (!reg && stat(p, &st) != 0) {
            rc = sl_errf(err, "%s: %s", p, strerror(errno));
            free(p);
        } else if (!reg && S_ISDIR(st.st_mode)) {
            rc = folder_walk_dir(w, p, &st, err);
            free(p);
        } else if (reg || S_ISREG(st.st_mode)) {
            if (!reg && out_slot(sub[i].name, &st) >= 0) {
                rc = sl_errf(err,
                             "%s: the folder holds %s, an output of this run (an earlier run's?); write it "
                             "elsewhere or name the files to read",
                             w->root, p);
                free(p);
                continue;
            }
            walk_push(w, p, NULL);
        } else {
            rc = sl_errf(err, "%s: not a regular file or a folder", p);
            free(p);
        }
    }
    w->depth--;
    for (size_t i = 0; i < ns; i++)
        free(sub[i].name);
    free(sub);
    return rc;
}

/* White space as JSON and the document reader take it. */
static int json_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* What a file's first bytes make it, as the readers decide: "plain text"
 * for what nothing else claims, NULL for an empty file. */
static const char *file_kind(const char *path, sl_err *err, int *failed)
{
    unsigned char h[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof h);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (n < 0) {
        *failed = 1;
        sl_errf(err, "%s: %s", path, strerror(e));
        return NULL;
    }
    size_t k = (size_t)n, i = k >= 3 && !memcmp(h, "\xEF\xBB\xBF", 3) ? 3 : 0; /* a UTF-8 BOM, as the reader skips */
    if (k == 0)
        return NULL;
    if (sl_pq_sniff(h, k))
        return "Parquet";
    if (sl_arrow_sniff(h, k))
        return "Arrow";
    if (sl_compression_sniff(h, k) != SL_COMP_NONE)
        return "compressed";
    if (is_archive(h, k))
        return "archive";
    while (i < k && json_ws(h[i]))
        i++;
    if (sl_sources_json_array(h + i, k - i) == 1) /* a JSON array of objects (docreader.c) */
        return "JSON";
    return i < k && h[i] == '{' ? "JSON Lines" : "plain text";
}

/* 1 when a file's name says what data it holds (.parquet, .jsonl.zst, ...):
 * the folder check needs its first bytes only when some file is named
 * otherwise, so that a folder of 25,000 Parquet files read by each task of
 * a job array is not opened 25,000 times more. */
static int data_name(const char *path)
{
    static const char *const ext[] = {".parquet", ".arrow", ".feather", ".ipc",  ".jsonl", ".ndjson",
                                      ".json",    ".gz",    ".zst",     ".zstd", ".xz",    ".bz2",
                                      ".tar",     ".tgz",   ".zip",     ".7z",   ".cpio",  ".lzma"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t m = strlen(ext[i]);
        if (n > m && !strcmp(path + n - m, ext[i]) && path[n - m - 1] != '/')
            return 1;
    }
    return 0;
}

/* The files of the plain folder dir, appended to list (a datasets folder
 * was ruled out by the caller). */
static int folder_files(const char *dir, const struct stat *st, char ***list, size_t *k, size_t *cap, sl_err *err)
{
    folder_walk w = {.root = dir};
    for (size_t i = 0; i < outs.n; i++) {
        struct stat ost;
        outs.f[i].set = outs.f[i].path && stat(outs.f[i].path, &ost) == 0 && S_ISREG(ost.st_mode);
        if (outs.f[i].set) {
            outs.f[i].dev = ost.st_dev;
            outs.f[i].ino = ost.st_ino;
        }
    }
    int wrc = folder_walk_dir(&w, dir, st, err);
    walk_sort(&w); /* (frees the keys) */
    free(w.keys);
    if (wrc < 0) {
        sl_list_free(w.files, w.n);
        return -1;
    }
    if (w.n == 0) {
        free(w.files);
        return sl_errf(err, "%s: a folder without files to read (names starting with '.' or '_' are left out)", dir);
    }
    /* a plain-text file beside files of other kinds (none when every name
     * says what the file holds) */
    const char *other = NULL, *text = NULL;
    size_t n_other = 0;
    int mixed = 0, named = 1;
    for (size_t i = 0; i < w.n && named; i++)
        named = data_name(w.files[i]);
    for (size_t i = 0; i < w.n && !named; i++) {
        int failed = 0;
        const char *kind = file_kind(w.files[i], err, &failed);
        if (failed) {
            sl_list_free(w.files, w.n);
            return -1;
        }
        if (!kind)
            continue;
        if (strcmp(kind, "plain text")) {
            mixed |= other && strcmp(other, kind);
            other = other ? other : kind;
            n_other++;
        } else if (!text)
            text = w.files[i];
    }
    if (text && n_other) {
        sl_errf(err, "%s: %s would be read as a plain-text document beside %zu %s file(s)%s; name the files to read",
                dir, text, n_other, other, mixed ? " and others" : "");
        sl_list_free(w.files, w.n);
        return -1;
    }
    if (*k + w.n > *cap) {
        *cap = 2 * *cap + w.n + 8;
        *list = sl_xrealloc(*list, *cap * sizeof **list);
    }
    memcpy(*list + *k, w.files, w.n * sizeof *w.files);
    *k += w.n;
    free(w.files);
    return 0;
}

int sl_sources_expand(const char *const *paths, size_t n, char ***out, size_t *nout, sl_err *err)
{
    char **list = NULL;
    size_t k = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char **files = NULL;
        size_t nf = 0;
        int dir = strcmp(paths[i], "-") && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode);
        int rc = dir ? sl_arrow_dataset_files(paths[i], &files, &nf, err) : 0;
        if (rc == 0 && dir) /* a plain folder: its files */
            rc = folder_files(paths[i], &st, &list, &k, &cap, err) < 0 ? -1 : 2;
        if (rc < 0) {
            sl_list_free(list, k);
            return -1;
        }
        if (rc == 2)
            continue;
        if (k + (rc ? nf : 1) > cap) {
            cap = 2 * cap + nf + 8;
            list = sl_xrealloc(list, cap * sizeof *list);
        }
        if (rc) {
            memcpy(list + k, files, nf * sizeof *files);
            k += nf;
            free(files);
        } else
            list[k++] = sl_xstrdup(paths[i]);
    }
    *out = list;
    *nout = k;
    return 0;
}

static sl_sources *sources_open(const char *const *paths, int n, sl_err *err);

sl_sources *sl_sources_open(const char *const *paths, size_t n, sl_err *err)
{
    if (n == 0)
        return sources_open(paths, 0, err);
    char **list;
    size_t k;
    if (sl_sources_expand(paths, n, &list, &k, err) < 0)
        return NULL;
    sl_sources *s = k > 0 ? sources_open((const char *const *)list, (int)k, err)
                          : (sl_errf(err, "%s: a dataset folder without data files", paths[0]), NULL);
    sl_list_free(list, k);
    return s;
}

static sl_sources *sources_open(const char *const *paths, int n, sl_err *err)
{
    static const char *const stdin_path[] = {"-"};
    if (n <= 0) {
        paths = stdin_path;
        n = 1;
    }
    /* Fail before reading anything when a named file cannot be opened, so a
     * typo in the last argument does not surface after minutes of output. A
     * file that is also the standard output the run writes (`> FILE` or
     * `>> FILE` in the shell) would be read while it grows: refused, as cat
     * refuses it. */
    struct stat so;
    int so_file = outs.to_stdout && fstat(STDOUT_FILENO, &so) == 0 && S_ISREG(so.st_mode);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!strcmp(paths[i], "-"))
            continue;
        if (stat(paths[i], &st) != 0 || access(paths[i], R_OK) != 0)
            return sl_errf(err, "%s: %s", paths[i], strerror(errno)), NULL;
        if (so_file && st.st_dev == so.st_dev && st.st_ino == so.st_ino)
            return sl_errf(err, "%s: input file is the output file (the standard output)", paths[i]), NULL;
        if (S_ISDIR(st.st_mode))
            return sl_errf(err, "%s: is a directory", paths[i]), NULL;
    }
    sl_sources *s = sl_xcalloc(1, sizeof *s);
    s->paths = sl_xcalloc((size_t)n, sizeof *s->paths);
    s->sizes = sl_xcalloc((size_t)n, sizeof *s->sizes);
    for (int i = 0; i < n; i++) {
        struct stat st;
        s->paths[i] = sl_xstrdup(paths[i]);
        s->sizes[i] = strcmp(paths[i], "-") && !stat(paths[i], &st) && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
        s->total = s->total < 0 || s->sizes[i] < 0 ? -1 : s->total + s->sizes[i];
    }
    s->n = n;
    return s;
}

sl_sources *sl_sources_open_slices(const sl_slice *pieces, size_t n, sl_err *err)
{
    sl_sources *s = sl_xcalloc(1, sizeof *s);
    s->paths = sl_xcalloc(n ? n : 1, sizeof *s->paths);
    s->pieces = sl_xcalloc(n ? n : 1, sizeof *s->pieces);
    for (size_t i = 0; i < n; i++) {
        s->paths[i] = sl_xstrdup(pieces[i].path);
        s->pieces[i] = pieces[i];
        s->pieces[i].path = sl_xstrdup(pieces[i].path);
    }
    s->n = (int)n;
    (void)err;
    return s;
}

const sl_slice *sl_sources_slice(const sl_sources *s)
{
    return s->cur;
}

const char *sl_sources_plain_path(const sl_sources *s)
{
    if (!s->in || s->member || s->ar || s->range || s->next < 1)
        return NULL;
    const char *path = s->paths[s->next - 1];
    if (!strcmp(path, "-") || sl_input_compression(s->in) != SL_COMP_NONE || sl_input_raw_size(s->in) < 0)
        return NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    return path;
}

int sl_sources_json_array(const void *head, size_t n)
{
    const unsigned char *p = head;
    if (n == 0 || p[0] != '[')
        return n == 0 ? -1 : 0;
    size_t j = 1;
    while (j < n && json_ws(p[j]))
        j++;
    return j == n ? -1 : p[j] == '{' ? 1 : p[j] == ']' ? 2 : 0;
}

int sl_sources_is_archive(const void *head, size_t n)
{
    return is_archive(head, n);
}

static void close_current(sl_sources *s)
{
    member_close(s);
    if (s->ar) {
        archive_read_free(s->ar);
        s->ar = NULL;
    }
    if (s->range)
        sl_range_close(s->range); /* closes s->in */
    else
        sl_input_close(s->in);
    s->range = NULL;
    s->cur = NULL;
    s->in = NULL;
}

int sl_sources_next(sl_sources *s, sl_input **in, sl_err *err)
{
    *in = NULL;
    for (;;) {
        member_close(s);
        if (s->ar) {
            struct archive_entry *e;
            int r = archive_read_next_header(s->ar, &e);
            if (r == ARCHIVE_EOF) {
                close_current(s);
                continue;
            }
            if (r < ARCHIVE_WARN)
                return ar_fail(s, err, NULL);
            /* directories, links, devices: no data of their own. (ar headers
             * carry permission bits only, hence type 0 counts as a file.) A
             * hard link without data repeats a file already read. */
            unsigned type = archive_entry_filetype(e);
            if ((type != AE_IFREG && type != 0) || (archive_entry_hardlink(e) && archive_entry_size(e) == 0))
                continue;
            int m = member_open(s, e, err);
            if (m <= 0) {
                if (m < 0)
                    return -1;
                continue;
            }
            *in = s->member;
            return 1;
        }
        if (s->in)
            close_current(s); /* a plain source that was handed out */
        if (s->next >= s->n)
            return 0;
        const char *path = s->paths[s->next++];
        if (s->pieces && !s->pieces[s->next - 1].whole) { /* a range of a plain file (--part) */
            const sl_slice *pc = &s->pieces[s->next - 1];
            s->range = sl_range_open(path, pc->begin, pc->end, err);
            if (!s->range)
                return -1;
            s->in = sl_range_input(s->range);
            s->cur = pc;
            *in = s->in;
            return 1;
        }
        s->in = sl_input_open(path, err);
        if (!s->in)
            return -1;
        unsigned char head[SNIFF_BYTES];
        long got = sl_input_peek(s->in, head, sizeof head, err);
        if (got < 0)
            return -1;
        if (is_archive(head, (size_t)got) && all_zero(head, (size_t)got)) {
            if (zero_tar_check(s, path, err) < 0)
                return -1;
            close_current(s); /* an empty tar: no members */
            continue;
        }
        if (is_archive(head, (size_t)got)) {
            if (archive_start(s, path, head, (size_t)got, err) < 0)
                return -1;
            continue;
        }
        *in = s->in;
        return 1;
    }
}

int sl_sources_position(void *sources, double *done, double *total)
{
    const sl_sources *s = sources;
    if (!s->sizes || s->total <= 0)
        return -1;
    int64_t d = 0;
    int complete = s->in ? s->next - 1 : s->next; /* paths before it are read */
    for (int i = 0; i < complete && i < s->n; i++)
        d += s->sizes[i];
    if (s->in)
        d += (int64_t)sl_input_raw_offset(s->in);
    *done = (double)d;
    *total = (double)s->total;
    return 0;
}

void sl_sources_close(sl_sources *s)
{
    if (!s)
        return;
    free(s->sizes);
    close_current(s);
    for (int i = 0; i < s->n; i++)
        free(s->paths[i]);
    free(s->paths);
    if (s->pieces)
        sl_slices_free(s->pieces, (size_t)s->n);
    free(s->ar_name);
    free(s->member_prev);
    free(s->block);
    free(s);
}
