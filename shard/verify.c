/* Existing outputs read back (shard/verify.h). */
#include "shard/verify.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "shard/shard.h"
#include "stream/io.h"
#include "stream/tokstream.h"

/* A token stream that reads to its end: trailer, counts and checksums. */
static int tokens_verify(const char *path, sl_err *err)
{
    sl_input *in = sl_input_open(path, err);
    if (!in)
        return -1;
    sl_ts_reader *r = sl_ts_reader_open(in, err);
    if (!r) {
        sl_input_close(in);
        return -1;
    }
    sl_doc d = {0};
    int rc;
    while ((rc = sl_ts_read_doc(r, &d, err)) == 1)
        ;
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_input_close(in);
    return rc < 0 ? -1 : 0;
}

/* JSON Lines: empty, or ending with a newline (outputs are renamed into
 * place complete; this catches a file cut short by other means). */
static int lines_verify(const char *path, uint64_t size, sl_err *err)
{
    if (size == 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sl_errf(err, "%s: %s", path, strerror(errno));
    int last = fseek(f, -1, SEEK_END) == 0 ? fgetc(f) : EOF;
    fclose(f);
    return last == '\n' ? 0 : sl_errf(err, "%s: the last line is not complete", path);
}

/* A shard directory: manifest, documents and file sizes, and every file's
 * checksum. */
static int shards_verify(const char *dir, sl_err *err)
{
    sl_shard *s = sl_shard_open(dir, 1, err);
    if (!s)
        return -1;
    sl_shard_close(s);
    return 0;
}

/* stat(path) into *st: SL_EXISTING_OK, or what it says when it fails. */
static int look(const char *path, struct stat *st, sl_err *err)
{
    if (stat(path, st) == 0)
        return SL_EXISTING_OK;
    if (errno == ENOENT)
        return SL_EXISTING_NONE;
    sl_errf(err, "%s: %s", path, strerror(errno));
    return SL_EXISTING_UNKNOWN;
}

int sl_output_verify_existing_with(const char *path, sl_verify_fn verify, sl_err *err)
{
    struct stat st;
    int v = look(path, &st, err);
    if (v != SL_EXISTING_OK)
        return v;
    return verify(path, err) < 0 ? SL_EXISTING_BAD : SL_EXISTING_OK;
}

int sl_output_verify_existing(const char *path, int kind, sl_err *err)
{
    struct stat st;
    int v = look(path, &st, err);
    if (v != SL_EXISTING_OK)
        return v;
    int rc;
    if (kind == SL_VERIFY_SHARDS ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        rc = sl_errf(err, "%s: not a %s", path, kind == SL_VERIFY_SHARDS ? "directory" : "regular file");
    else if (kind == SL_VERIFY_SHARDS)
        rc = shards_verify(path, err);
    else if (kind == SL_VERIFY_TOKENS)
        rc = tokens_verify(path, err);
    else if (kind == SL_VERIFY_LINES)
        rc = lines_verify(path, (uint64_t)st.st_size, err);
    else
        rc = sl_errf(err, "%s: unknown output kind %d", path, kind);
    return rc < 0 ? SL_EXISTING_BAD : SL_EXISTING_OK;
}
