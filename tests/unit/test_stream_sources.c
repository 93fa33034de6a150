/* Sources (stream/source.c): archives written here with libarchive's
 * writers in every format the reader recognises (and plain files that only
 * look like one) must come back as the right sources, named
 * "<archive>:<member>", with their bytes intact and in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "tests/unit/support.h"

#include "stream/source.h"

static char tmpdir[64];

static int setup(void **st)
{
    (void)st;
    return sl_test_tmpdir_into(tmpdir, sizeof tmpdir, "sluice-read-src");
}

static int teardown(void **st)
{
    (void)st;
    sl_test_rmtree(tmpdir);
    return 0;
}

static const char *tpath(const char *name)
{
    static char p[8][200];
    static int k;
    char *s = p[k++ % 8];
    snprintf(s, 200, "%s/%s", tmpdir, name);
    return s;
}

typedef struct {
    const char *name; /* NULL: a directory entry named dir */
    const char *data;
} member;

static const member members[] = {
    {"a.jsonl", "{\"text\":\"first\"}\n"},
    {NULL, "sub/"},
    {"sub/b.txt", "second member\nwith two lines\n"},
    {"empty.txt", ""},
};

/* Writes members[] with libarchive's writer in `format` (a
 * archive_write_set_format_by_name name), optionally through `filter`. */
static const char *write_archive(const char *file, const char *format, const char *filter)
{
    const char *path = tpath(file);
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_by_name(a, format), ARCHIVE_OK);
    if (filter)
        assert_int_equal(archive_write_add_filter_by_name(a, filter), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
        struct archive_entry *e = archive_entry_new();
        int dir = members[i].name == NULL;
        if (dir && !strcmp(format, "ar")) {
            archive_entry_free(e);
            continue; /* ar has no directories */
        }
        archive_entry_set_pathname(e, dir ? members[i].data : members[i].name);
        archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
        archive_entry_set_perm(e, dir ? 0755 : 0644);
        archive_entry_set_size(e, dir ? 0 : (la_int64_t)strlen(members[i].data));
        archive_entry_set_mtime(e, 1700000000, 0);
        assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
        if (!dir)
            archive_write_data(a, members[i].data, strlen(members[i].data));
        archive_entry_free(e);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    return path;
}

static const char *write_file(const char *file, const void *data, size_t n)
{
    const char *path = tpath(file);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

/* Reads the next source: checks its name and its whole content. */
static void expect_source(sl_sources *s, const char *name, const char *data, size_t n)
{
    sl_input *in;
    sl_err err = {{0}};
    int rc = sl_sources_next(s, &in, &err);
    if (rc != 1)
        fail_msg("expected source %s, got %d (%s)", name, rc, err.msg);
    assert_string_equal(sl_input_name(in), name);
    char *buf = malloc(n + 2);
    long got = sl_input_read(in, buf, n + 1, &err);
    assert_int_equal(got, (long)n);
    assert_memory_equal(buf, data, n);
    free(buf);
}

static void expect_members(const char *path, const char *prefix)
{
    sl_err err = {{0}};
    const char *paths[] = {path};
    sl_sources *s = sl_sources_open(paths, 1, &err);
    assert_non_null(s);
    for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
        if (!members[i].name)
            continue; /* directories are not sources */
        char name[300];
        snprintf(name, sizeof name, "%s:%s%s", path, prefix, members[i].name);
        expect_source(s, name, members[i].data, strlen(members[i].data));
    }
    sl_input *in;
    assert_int_equal(sl_sources_next(s, &in, &err), 0);
    sl_sources_close(s);
}

static void test_archive_formats(void **st)
{
    (void)st;
    static const struct {
        const char *file, *format, *filter;
    } f[] = {
        {"t.ustar", "ustar", NULL},   {"t.gnutar", "gnutar", NULL},  {"t.pax", "pax", NULL},
        {"t.v7", "v7tar", NULL},      {"t.tar.gz", "pax", "gzip"},   {"t.tar.zst", "pax", "zstd"},
        {"t.tar.xz", "pax", "xz"},    {"t.tar.bz2", "pax", "bzip2"}, {"t.zip", "zip", NULL},
        {"t.7z", "7zip", NULL},       {"t.newc", "newc", NULL},      {"t.odc", "odc", NULL},
        {"t.zip.zst", "zip", "zstd"},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        const char *path = write_archive(f[i].file, f[i].format, f[i].filter);
        expect_members(path, "");
    }
}

static void test_ar(void **st)
{
    (void)st;
    /* ar member names are limited (no '/'), so a flat archive */
    const char *path = tpath("t.a");
    struct archive *a = archive_write_new();
    archive_write_set_format_ar_svr4(a);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    const char *names[] = {"x.txt", "y.jsonl"}, *data[] = {"ar text\n", "{\"text\":\"y\"}\n"};
    for (int i = 0; i < 2; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, names[i]);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)strlen(data[i]));
        assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
        archive_write_data(a, data[i], strlen(data[i]));
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    sl_err err;
    const char *paths[] = {path};
    sl_sources *s = sl_sources_open(paths, 1, &err);
    assert_non_null(s);
    char name[300];
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "%s:%s", path, names[i]);
        expect_source(s, name, data[i], strlen(data[i]));
    }
    sl_input *in;
    assert_int_equal(sl_sources_next(s, &in, &err), 0);
    sl_sources_close(s);
}

/* Plain files whose first bytes resemble a signature stay one source. */
static void test_lookalikes_stay_plain(void **st)
{
    (void)st;
    static const char *texts[] = {
        "PK is how this text starts, not a zip\n",
        "7z is a program; this line is text\n",
        "!<arch> without the newline is text\n",
        "070701 is a date, not a cpio header\n",
        "070707070707 still not cpio: the header must be 76 octal digits\n",
        "Rar! said the lion\n",
        /* a newc header claiming a 4 GiB name (libarchive would allocate it) */
        "070701"
        "00000001"
        "000081A4"
        "00000000"
        "00000000"
        "00000001"
        "00000000"
        "00000004"
        "00000000"
        "00000000"
        "00000000"
        "00000000"
        "FFFFFFFF"
        "00000000"
        "a\n",
    };
    sl_err err;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char file[32];
        snprintf(file, sizeof file, "look%zu.txt", i);
        const char *path = write_file(file, texts[i], strlen(texts[i]));
        const char *paths[] = {path};
        sl_sources *s = sl_sources_open(paths, 1, &err);
        assert_non_null(s);
        expect_source(s, path, texts[i], strlen(texts[i]));
        sl_input *in;
        assert_int_equal(sl_sources_next(s, &in, &err), 0);
        sl_sources_close(s);
    }
    /* 600 bytes of text: long enough for a tar header, whose checksum fails */
    char big[600];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    const char *path = write_file("long.txt", big, sizeof big);
    const char *paths[] = {path};
    sl_sources *s = sl_sources_open(paths, 1, &err);
    expect_source(s, path, big, sizeof big);
    sl_sources_close(s);
}

/* Several paths: plain, archive, plain, in the order given. */
static void test_mixed_paths_in_order(void **st)
{
    (void)st;
    const char *p1 = write_file("one.txt", "one\n", 4);
    const char *ar = write_archive("mix.tar", "ustar", NULL);
    const char *p2 = write_file("two.txt", "two two\n", 8);
    const char *paths[] = {p1, ar, p2};
    sl_err err;
    sl_sources *s = sl_sources_open(paths, 3, &err);
    assert_non_null(s);
    expect_source(s, p1, "one\n", 4);
    char name[300];
    snprintf(name, sizeof name, "%s:a.jsonl", ar);
    expect_source(s, name, members[0].data, strlen(members[0].data));
    snprintf(name, sizeof name, "%s:sub/b.txt", ar);
    expect_source(s, name, members[2].data, strlen(members[2].data));
    snprintf(name, sizeof name, "%s:empty.txt", ar);
    expect_source(s, name, "", 0);
    expect_source(s, p2, "two two\n", 8);
    sl_input *in;
    assert_int_equal(sl_sources_next(s, &in, &err), 0);
    assert_int_equal(sl_sources_next(s, &in, &err), 0); /* stays at the end */
    sl_sources_close(s);
}

static void test_errors(void **st)
{
    (void)st;
    sl_err err;
    char want[300];
    const char *missing = tpath("nope.jsonl");
    const char *paths[] = {missing};
    assert_null(sl_sources_open(paths, 1, &err));
    snprintf(want, sizeof want, "%s: No such file or directory", missing);
    assert_string_equal(err.msg, want);
    const char *empty = tpath("emptydir");
    assert_int_equal(mkdir(empty, 0755), 0);
    const char *dirs[] = {empty};
    assert_null(sl_sources_open(dirs, 1, &err));
    snprintf(want, sizeof want, "%s: a folder without files to read (names starting with '.' or '_' are left out)",
             empty);
    assert_string_equal(err.msg, want);
    rmdir(empty);

    /* a tar cut inside its second member: the first is fine, then an error
     * naming the archive and the member */
    const char *ar = write_archive("cut-src.tar", "ustar", NULL);
    FILE *f = fopen(ar, "rb");
    char buf[1100];
    assert_int_equal(fread(buf, 1, sizeof buf, f), sizeof buf);
    fclose(f);
    /* a.jsonl: header 0-511, data 512-1023; sub/ header 1024-1535: cut at 1100 */
    const char *cut = write_file("cut.tar", buf, sizeof buf);
    const char *cuts[] = {cut};
    sl_sources *s = sl_sources_open(cuts, 1, &err);
    assert_non_null(s);
    char name[300];
    snprintf(name, sizeof name, "%s:a.jsonl", cut);
    expect_source(s, name, members[0].data, strlen(members[0].data));
    sl_input *in;
    assert_int_equal(sl_sources_next(s, &in, &err), -1);
    snprintf(want, sizeof want, "%s: after member 'a.jsonl' (offset ", cut);
    if (strncmp(err.msg, want, strlen(want)))
        fail_msg("unexpected message: %s", err.msg);
    assert_null(strchr(err.msg, '\n'));
    sl_sources_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_archive_formats),
        cmocka_unit_test(test_ar),
        cmocka_unit_test(test_lookalikes_stay_plain),
        cmocka_unit_test(test_mixed_paths_in_order),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("read_sources", tests, setup, teardown);
}
