/* --part and --skip-existing (cli/scale_opts.h). */
#include "cli/scale_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/io.h"
#include "stream/source.h"
#include "shard/shard.h"
#include "stream/tokstream.h"

int sl_cli_scale_option(sl_scale_opts *s, int c, const char *arg)
{
    if (c == SL_OPT_PART) {
        s->part = arg;
        return 1;
    }
    if (c == SL_OPT_SKIP_EXISTING) {
        s->skip_existing = 1;
        return 1;
    }
    return 0;
}

int sl_cli_part(const sl_cli *cli, const sl_scale_opts *s, sl_part *p)
{
    if (!s->part)
        return 0;
    sl_err err = {{0}};
    if (sl_part_parse(s->part, p, &err) < 0)
        sl_cli_usage_error(cli, "%s", err.msg);
    return 1;
}

sl_slice *sl_cli_slices(const sl_cli *cli, const sl_part *p, const char *const *files, size_t n, sl_cut_fn cut,
                        void *ctx, size_t *np)
{
    sl_err err = {{0}};
    sl_slice *pieces = NULL;
    char **list;
    size_t k;
    /* a datasets.save_to_disk folder is its data files */
    if (sl_sources_expand(files, n, &list, &k, &err) < 0 ||
        sl_partition(p, (const char *const *)list, k, cut, ctx, &pieces, np, &err) < 0)
        exit(sl_cli_fail(cli, &err));
    sl_list_free(list, k);
    return pieces;
}

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

int sl_cli_skip_existing(const sl_cli *cli, const sl_scale_opts *s, int kind)
{
    if (!s->skip_existing)
        return 0;
    const char *out = cli->output;
    if (!out || !strcmp(out, "-"))
        sl_cli_usage_error(cli, "--skip-existing needs an output file (-o FILE)");
    struct stat st;
    if (stat(out, &st) != 0) {
        if (errno != ENOENT)
            sl_cli_warn(cli, "%s: %s; running the stage", out, strerror(errno));
        return 0;
    }
    sl_err err = {{0}};
    int ok = kind == SL_SKIP_SHARDS ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
    if (!ok)
        snprintf(err.msg, sizeof err.msg, "%s: not a %s", out, kind == SL_SKIP_SHARDS ? "directory" : "regular file");
    else if (kind == SL_SKIP_SHARDS)
        ok = shards_verify(out, &err) == 0;
    else if (kind == SL_SKIP_TOKENS)
        ok = tokens_verify(out, &err) == 0;
    else if (kind == SL_SKIP_LINES)
        ok = lines_verify(out, (uint64_t)st.st_size, &err) == 0;
    if (!ok) {
        /* not silenced by --quiet: the output is about to be replaced */
        fprintf(stderr, "sluice: %s: --skip-existing: %s does not verify (%s); running the stage again\n",
                cli->cmd->name, out, err.msg);
        return 0;
    }
    fprintf(stderr, "sluice: %s: --skip-existing: %s exists and verifies; nothing to do\n", cli->cmd->name, out);
    return 1;
}

int sl_cli_has_manifest(const char *dir)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
