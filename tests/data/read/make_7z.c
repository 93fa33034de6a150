/* Writes tests/data/read/docs.7z with libarchive's 7z writer (no 7z tool on
 * the build machine). Build and run from tests/data/read:
 *   printf '{"id":"z1","text":"from a 7z archive"}\n{"text":"second line"}\n' > a.jsonl
 *   printf 'seven zip text\n' > b.txt
 *   cc make_7z.c -larchive -o /tmp/make_7z && /tmp/make_7z docs.7z a.jsonl b.txt && rm a.jsonl b.txt */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_7zip(a);
    if (argc < 3 || archive_write_open_filename(a, argv[1]) != ARCHIVE_OK)
        return 1;
    for (int i = 2; i < argc; i++) {
        char buf[1 << 16];
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            return 1;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, argv[i]);
        archive_entry_set_size(e, (la_int64_t)n);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_write_header(a, e);
        archive_write_data(a, buf, n);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return 0;
}
