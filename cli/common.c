/* Options and messages shared by every subcommand. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "stream/io.h"
#include "stream/source.h"
#include "stream/tokstream.h"

void sl_cli_print_help(const sl_command *cmd, FILE *f)
{
    fprintf(f, "usage: %s\n\n%s\n", cmd->usage, cmd->summary);
    if (cmd->subs) {
        fprintf(f, "\nsubcommands:\n");
        for (int i = 0; cmd->subs[i]; i++)
            fprintf(f, "  %-18s %s\n", cmd->subs[i]->name, cmd->subs[i]->summary);
    }
    if (cmd->help && cmd->help[0])
        fprintf(f, "\n%s", cmd->help);
    fprintf(f,
            "\ncommon options:\n"
            "  -o, --output FILE   write to FILE (default '-': standard output); files are\n"
            "                      written atomically (temporary name, fsync, rename)\n"
            "  -@, --threads N     worker threads (default: %s)\n"
            "  -q, --quiet         no progress line, no warnings\n"
            "      --progress      show progress even when stderr is not a terminal\n"
            "  -h, --help          this help\n"
            "      --version       print the version\n",
            cmd->serial ? "1 for this command, see docs/cli.md" : "all cores");
}

_Noreturn void sl_cli_usage_error(const sl_cli *cli, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sluice: %s: %s\nusage: %s\n", cli->cmd->name, msg, cli->cmd->usage);
    sl_output_abort_all();
    exit(2);
}

int sl_cli_argc;
char **sl_cli_argv;

/* Optimal string alignment distance, capped: 99 when far apart. */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    enum { MAXW = 64 };
    if (na >= MAXW || nb >= MAXW)
        return 99;
    int d[MAXW + 1][MAXW + 1];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int c = a[i - 1] != b[j - 1];
            int v = d[i - 1][j - 1] + c;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[na][nb];
}

const char *sl_cli_closest(const char *w, const char *const *words, size_t n)
{
    size_t nw = strlen(w), core = strspn(w, "-");
    const char *best = NULL;
    /* at most a third of the word's letters (the leading dashes not
     * counted), at least one: '--bogus' is not '--rows' (3 of 5) */
    core = nw - core;
    int bd = (core + 1) / 3 > 1 ? (int)(core + 1) / 3 + 1 : 2;
    for (size_t i = 0; i < n; i++) {
        if (!words[i])
            continue;
        int d = edit_distance(w, nw, words[i], strlen(words[i]));
        if (d < bd) {
            bd = d;
            best = words[i];
        }
    }
    return best;
}

/* The long option nearest to "--word[=value]" among those the command's help
 * names ("--seq-len", ...) and the common ones. */
static const char *closest_option(const sl_command *cmd, const char *w)
{
    static char names[256][40];
    const char *list[256];
    size_t n = 0;
    static const char *const common[] = {"--output", "--threads", "--quiet", "--progress", "--help", "--version"};
    for (size_t i = 0; i < sizeof common / sizeof *common; i++)
        list[n++] = common[i];
    for (const char *h = cmd->help ? cmd->help : ""; (h = strstr(h, "--")) && n < 256;) {
        size_t k = 2;
        while (h[k] && (isalnum((unsigned char)h[k]) || h[k] == '-'))
            k++;
        if (k > 3 && k < sizeof names[0] && (h == cmd->help || !isalnum((unsigned char)h[-1]))) {
            memcpy(names[n], h, k);
            names[n][k] = 0;
            list[n] = names[n];
            n++;
        }
        h += k;
    }
    size_t len = strcspn(w, "=");
    char word[64];
    if (len >= sizeof word)
        return NULL;
    memcpy(word, w, len);
    word[len] = 0;
    const char *c = sl_cli_closest(word, list, n);
    return c && strcmp(c, word) ? c : NULL;
}

void sl_cli_common(sl_cli *cli, int opt, const char *arg)
{
    /* Values come from getopt's optarg ("-@4", "-@ 4", "--threads=4" alike);
     * `arg` (the last argv word) is only used to name a bad option. */
    switch (opt) {
    case 'o':
        /* "-o=PATH" means PATH, as "--output=PATH" does (getopt would give
         * "=PATH"); "-o =x" (a separate word) keeps its '=' */
        cli->output = optarg && optarg[0] == '=' && arg && arg[0] == '-' && arg[1] != '-' && optarg > arg &&
                              optarg < arg + strlen(arg)
                          ? optarg + 1
                          : optarg;
        sl_sources_output(cli->output); /* a folder read must not hold it */
        return;
    case '@':
        cli->threads = (int)sl_cli_int(cli, "--threads", optarg, 1, 4096);
        omp_set_num_threads(cli->threads);
        return;
    case 'q':
        cli->quiet = 1;
        cli->progress = 0;
        return;
    case SL_OPT_PROGRESS:
        if (!cli->quiet)
            cli->progress = 1;
        return;
    case 'h': sl_cli_print_help(cli->cmd, stdout); exit(0);
    case SL_OPT_VERSION: printf("sluice %s\n", SLUICE_VERSION); exit(0);
    default: {
        /* getopt_long returns '?' for an unknown option and for a missing value */
        char hint[160] = "";
        const char *w = optind >= 1 && optind - 1 < sl_cli_argc ? sl_cli_argv[optind - 1] : arg;
        const char *near = w && w[0] == '-' && w[1] == '-' ? closest_option(cli->cmd, w) : NULL;
        if (near)
            snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
        sl_cli_usage_error(cli, "unknown option or missing value: '%s'%s (see 'sluice help %s')",
                           arg ? arg
                           : w ? w
                               : "",
                           hint, cli->cmd->name);
    }
    }
}

/* Fields every command's library calls may name, as the common flags. */
static const sl_cli_field common_fields[] = {{"force", "--force"}, {NULL, NULL}};

int sl_cli_fail(const sl_cli *cli, const sl_err *err)
{
    sl_output_abort_all();
    sl_err e = {{0}};
    if (err)
        e = *err;
    sl_cli_map_fields(&e, common_fields);
    fprintf(stderr, "sluice: %s: %s\n", cli->cmd->name, e.msg[0] ? e.msg : "failed");
    return 1;
}

int sl_cli_finish(const sl_cli *cli, sl_output *out, sl_ts_writer *w, int rc, sl_err *err)
{
    if (rc) {
        sl_ts_writer_abort(w);
        sl_output_abort(out);
        return sl_cli_fail(cli, err);
    }
    if ((w && sl_ts_writer_finish(w, err)) || sl_output_commit(out, err))
        return sl_cli_fail(cli, err);
    return 0;
}

void sl_cli_check_output(const sl_cli *cli, const char *path, int kind, int force)
{
    sl_err err = {{0}};
    int rc;
    if (!path)
        return;
    if (kind == SL_OUT_PREFIX && strcmp(path, "-") && !sl_path_url_scheme(path)) {
        size_t n = strlen(path) + 8;
        char *p = sl_xmalloc(n);
        snprintf(p, n, "%s.bin", path);
        rc = sl_output_check(p, 0, 0, &err);
        snprintf(p, n, "%s.idx", path);
        rc = rc || sl_output_check(p, 0, 0, &err);
        free(p);
    } else {
        rc = sl_output_check(path, kind == SL_OUT_PREFIX ? 0 : kind, force, &err);
    }
    if (rc)
        exit(sl_cli_fail(cli, &err));
}

void sl_cli_warn(const sl_cli *cli, const char *fmt, ...)
{
    if (cli->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sluice: %s: warning: ", cli->cmd->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void sl_cli_map_fields(sl_err *err, const sl_cli_field *map)
{
    char out[sizeof err->msg];
    size_t o = 0;
    const char *s = err->msg;
    while (*s && o + 1 < sizeof out) {
        const char *end = *s == '`' ? strchr(s + 1, '`') : NULL;
        const sl_cli_field *hit = NULL;
        for (const sl_cli_field *f = map; end && f->field && !hit; f++)
            if (strlen(f->field) == (size_t)(end - s - 1) && !strncmp(s + 1, f->field, (size_t)(end - s - 1)))
                hit = f;
        if (hit) {
            size_t n = strlen(hit->flag);
            if (o + n >= sizeof out)
                break;
            memcpy(out + o, hit->flag, n);
            o += n;
            s = end + 1;
        } else {
            out[o++] = *s++;
        }
    }
    out[o] = 0;
    memcpy(err->msg, out, o + 1);
}

long long sl_cli_int(const sl_cli *cli, const char *opt, const char *arg, long long min, long long max)
{
    char *end;
    errno = 0;
    if (!arg || !*arg)
        sl_cli_usage_error(cli, "%s needs an integer", opt);
    long long v = strtoll(arg, &end, 0);
    /* accept k/M/G suffixes (powers of 1024) for sizes */
    if (end != arg && *end && !end[1]) {
        long long mul = *end == 'k' || *end == 'K' ? 1024LL
                        : *end == 'M'              ? 1024LL * 1024
                        : *end == 'G'              ? 1024LL * 1024 * 1024
                                                   : 0;
        if (mul && v <= max / mul && v >= min / mul) {
            v *= mul;
            end++;
        }
    }
    if (errno || *end || end == arg)
        sl_cli_usage_error(cli, "%s: '%s' is not an integer", opt, arg);
    if (v < min || v > max)
        sl_cli_usage_error(cli, "%s: %lld is out of range [%lld, %lld]", opt, v, min, max);
    return v;
}

double sl_cli_double(const sl_cli *cli, const char *opt, const char *arg, double min, double max)
{
    char *end;
    errno = 0;
    if (!arg || !*arg)
        sl_cli_usage_error(cli, "%s needs a number", opt);
    double v = strtod(arg, &end);
    if (errno || *end || end == arg || isnan(v))
        sl_cli_usage_error(cli, "%s: '%s' is not a number", opt, arg);
    if (v < min || v > max)
        sl_cli_usage_error(cli, "%s: %g is out of range [%g, %g]", opt, v, min, max);
    return v;
}

int sl_cli_choice(const sl_cli *cli, const char *opt, const char *arg, const char *const *words)
{
    char list[512] = "";
    for (int i = 0; words[i]; i++) {
        if (arg && !strcmp(arg, words[i]))
            return i;
        strncat(list, i ? "|" : "", sizeof list - strlen(list) - 1);
        strncat(list, words[i], sizeof list - strlen(list) - 1);
    }
    sl_cli_usage_error(cli, "%s: '%s' is not one of %s", opt, arg ? arg : "", list);
}

int sl_cli_threads(const sl_cli *cli)
{
    return cli->threads > 0 ? cli->threads : omp_get_max_threads();
}
