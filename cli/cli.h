/* The command-line layer: the subcommand table and the options every
 * subcommand shares. A subcommand lives in cli/cmd_<name>.c and defines one
 * `const sl_command sl_cmd_<name>`; cli/main.c lists them.
 *
 * Conventions (see docs/cli.md):
 *   -o FILE / --output FILE   output (default "-" = stdout)
 *   -@ N / --threads N        worker threads (default: all cores; one for a
 *                             command marked serial)
 *   -q / --quiet              no progress, no warnings
 *   --progress                progress line even when stderr is not a terminal
 *   -h / --help               help for the subcommand
 *   "-" as an input means stdin.
 * Errors: "sluice: <stage>: <file>:<position>: message" on one line, exit 1;
 * usage errors (unknown option, missing argument) print the message and the
 * usage line and exit 2. */
#ifndef SLUICE_CLI_CLI_H
#define SLUICE_CLI_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "base/err.h"

typedef struct sl_cli sl_cli;
typedef struct sl_command sl_command;

struct sl_command {
    const char *name;                               /* "read", "tokenize bpe", ... */
    const char *summary;                            /* one line for `sluice --help` */
    const char *usage;                              /* "sluice read [options] [FILES...]" */
    const char *help;                               /* the rest of the help text (options, examples) */
    int (*run)(sl_cli *cli, int argc, char **argv); /* argv[0] is the command name */
    const sl_command *const *subs;                  /* NULL-terminated sub-subcommands, or NULL */
    /* 1: one thread unless -@ asks for more, and no re-execution to set
     * OMP_WAIT_POLICY (cli/main.c). For a command with no parallel work, and
     * for one whose reading and writing are serial and whose parallel part
     * is light (`read`): more threads only add hand-offs between cores, and
     * the run is slower (docs/cli.md, "-@"). */
    int serial;
};

struct sl_cli {
    const sl_command *cmd;
    const char *output; /* -o, default "-" */
    int threads;        /* 0 = default (all cores, or one for a serial command) */
    int quiet;
    int progress; /* -1 auto, 1 forced, 0 off */
};

/* Long options every subcommand accepts. Append SL_CLI_COMMON_LONG to the
 * command's own `struct option` array (before the terminator) and
 * SL_CLI_COMMON_SHORT to its short-option string; pass each option that
 * the command does not handle to sl_cli_common(). */
enum { SL_OPT_PROGRESS = 0x1000, SL_OPT_VERSION, SL_OPT_FIRST_FREE = 0x1100 };
#define SL_CLI_COMMON_SHORT "o:@:qh"
#define SL_CLI_COMMON_LONG                                                                                             \
    {"output", required_argument, 0, 'o'}, {"threads", required_argument, 0, '@'}, {"quiet", no_argument, 0, 'q'},     \
        {"progress", no_argument, 0, SL_OPT_PROGRESS}, {"help", no_argument, 0, 'h'},                                  \
    {                                                                                                                  \
        "version", no_argument, 0, SL_OPT_VERSION                                                                      \
    }

/* Handles a common option or a getopt error ('?' / ':'); exits for --help
 * (0) and usage errors (2). Returns normally only for handled options. */
void sl_cli_common(sl_cli *cli, int opt, const char *arg);
/* The command's arguments as getopt sees them (set by main), so that an
 * unknown option can be named and a near one suggested. */
extern int sl_cli_argc;
extern char **sl_cli_argv;
/* Prints "sluice: <cmd>: <msg>" and the usage line to stderr; exits 2. */
_Noreturn void sl_cli_usage_error(const sl_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "sluice: <cmd>: <err->msg>", removes unfinished outputs; returns 1
 * (the exit status), so a command can `return sl_cli_fail(cli, &err);`. */
int sl_cli_fail(const sl_cli *cli, const sl_err *err);
/* Ends a stage that wrote `out` (and, when w is not NULL, a token stream
 * through w): on rc != 0 discards both and reports err (returns 1); else
 * writes the trailer, commits the file and returns 0 (or 1 when that fails). */
struct sl_output;
struct sl_ts_writer;
int sl_cli_finish(const sl_cli *cli, struct sl_output *out, struct sl_ts_writer *w, int rc, sl_err *err);
/* Checks an output before the stage reads its first input byte:
 * not a URL; kind SL_OUT_FILE: not a directory; SL_OUT_DIR: a new directory
 * (an existing one only with force); SL_OUT_INTO: a directory that may exist;
 * SL_OUT_PREFIX: PREFIX.bin and PREFIX.idx as files; and the nearest
 * existing parent is writable. "-" passes. On failure prints one line and
 * exits 1 (sluice: <cmd>: <path>: what is wrong). */
enum { SL_OUT_FILE, SL_OUT_DIR, SL_OUT_INTO, SL_OUT_PREFIX };
void sl_cli_check_output(const sl_cli *cli, const char *path, int kind, int force);
/* Prints a warning line unless --quiet. */
void sl_cli_warn(const sl_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Library messages name the option field that is wrong in backquotes, not a
 * flag ("`seq_len` 12: must be a positive multiple of 8"); a command says
 * them as its flags: each `field` found in the map (the list ends with
 * {NULL, NULL}) becomes its flag ("--seq-len 12: ..."); others keep their
 * quotes. */
typedef struct {
    const char *field, *flag;
} sl_cli_field;
void sl_cli_map_fields(sl_err *err, const sl_cli_field *map);
/* The word of words (n of them; NULL entries skipped) closest to w by edit
 * distance (insertions, deletions, substitutions, adjacent swaps), or NULL
 * when none is close (at most 2 edits, 3 for words of 7 letters or more):
 * for "did you mean" hints. */
const char *sl_cli_closest(const char *w, const char *const *words, size_t n);
/* Prints the full help of a command to f. */
void sl_cli_print_help(const sl_command *cmd, FILE *f);

/* Option value parsers: on a bad value they call sl_cli_usage_error. */
long long sl_cli_int(const sl_cli *cli, const char *opt, const char *arg, long long min, long long max);
double sl_cli_double(const sl_cli *cli, const char *opt, const char *arg, double min, double max);
/* Picks one of a NULL-terminated list of words; returns its index. */
int sl_cli_choice(const sl_cli *cli, const char *opt, const char *arg, const char *const *words);

/* Number of threads to use (cli->threads or all cores); also applied to
 * OpenMP (omp_set_num_threads) by main before the command runs. */
int sl_cli_threads(const sl_cli *cli);

#endif
