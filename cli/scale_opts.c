/* --part and --skip-existing (cli/scale_opts.h). */
#include "cli/scale_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shard/verify.h"
#include "base/buf.h"
#include "stream/source.h"

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
    static const sl_cli_field fields[] = {{"part", "--part"}, {NULL, NULL}};
    sl_err err = {{0}};
    if (sl_part_parse(s->part, p, &err) < 0) {
        sl_cli_map_fields(&err, fields);
        sl_cli_usage_error(cli, "%s", err.msg);
    }
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

int sl_cli_skip_existing(const sl_cli *cli, const sl_scale_opts *s, int kind)
{
    if (!s->skip_existing)
        return 0;
    const char *out = cli->output;
    if (!out || !strcmp(out, "-"))
        sl_cli_usage_error(cli, "--skip-existing needs an output file (-o FILE)");
    sl_err err = {{0}};
    int v = sl_output_verify_existing(out, kind, &err);
    if (v == SL_EXISTING_NONE)
        return 0;
    if (v == SL_EXISTING_UNKNOWN) {
        sl_cli_warn(cli, "%s; running the stage", err.msg);
        return 0;
    }
    int ok = v == SL_EXISTING_OK;
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
