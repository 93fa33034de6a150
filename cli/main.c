/* sluice: entry point and subcommand dispatch. */
#include <getopt.h>
#include <malloc.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "stream/source.h"
#include "kernels/backend.h"
#include "stream/io.h"
#include "base/log.h"

static const sl_command *const top[] = {
    &sl_cmd_read,  &sl_cmd_tokenize, &sl_cmd_detokenize, &sl_cmd_cat,    &sl_cmd_head,   &sl_cmd_stats,
    &sl_cmd_pack,  &sl_cmd_shard,    &sl_cmd_mix,        &sl_cmd_export, &sl_cmd_import, &sl_cmd_merge,
    &sl_cmd_score, &sl_cmd_filter,   &sl_cmd_classify,   &sl_cmd_dna,    &sl_cmd_dedup,  NULL,
};

static void print_main_help(FILE *f)
{
    fprintf(f,
            "sluice %s: prepare long-context pretraining data (text, DNA, audio)\n\n"
            "usage: sluice [--version] [--help] SUBCOMMAND [options] [FILES...]\n"
            "       sluice help SUBCOMMAND\n\n"
            "subcommands:\n",
            SLUICE_VERSION);
    for (int i = 0; top[i]; i++) {
        fprintf(f, "  %-12s %s\n", top[i]->name, top[i]->summary);
        if (top[i]->subs)
            for (int j = 0; top[i]->subs[j]; j++)
                fprintf(f, "    %-18s %s\n", top[i]->subs[j]->name, top[i]->subs[j]->summary);
    }
    fprintf(f, "\ncommon options: -o FILE (output, '-' = stdout), -@ N (threads), -q (quiet),\n"
               "  --progress, -h (help). '-' as an input is stdin.\n"
               "See README.md and docs/ for formats and examples.\n");
}

static const sl_command *find(const sl_command *const *list, const char *name)
{
    for (int i = 0; list && list[i]; i++) {
        const char *n = list[i]->name;
        const char *sp = strrchr(n, ' '); /* "tokenize bpe" -> "bpe" */
        if (strcmp(sp ? sp + 1 : n, name) == 0)
            return list[i];
    }
    return NULL;
}

/* "unknown subcommand 'X'" with "; did you mean 'Y'?" when one is near. */
static void unknown(const char *where, const sl_command *const *list, const char *name, const char *see)
{
    const char *words[64];
    size_t n = 0;
    for (int i = 0; list[i] && n < 64; i++) {
        const char *sp = strrchr(list[i]->name, ' ');
        words[n++] = sp ? sp + 1 : list[i]->name;
    }
    const char *near = sl_cli_closest(name, words, n);
    fprintf(stderr, "sluice: %sunknown subcommand '%s'", where, name);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, " (see '%s')\n", see);
}

static void on_signal(int sig)
{
    if (sl_io_defer_signal(sig))
        return; /* raised again once the temporary or the replaced directory is whole */
    sl_output_abort_all();
    signal(sig, SIG_DFL);
    raise(sig);
    /* still here: we are pid 1 of a pid namespace (a container), which the
     * kernel does not let its own signals end */
    _exit(128 + sig);
}

/* OpenMP's idle workers spin before they sleep unless OMP_WAIT_POLICY says
 * otherwise, and every stage of a pipeline is its own process with its own
 * workers: on a small machine the stages steal each other's cores. libgomp
 * reads its environment when it is loaded, before main, so the default is set
 * by running this program again with OMP_WAIT_POLICY=passive (about 5 ms:
 * a second start). A user who sets OMP_WAIT_POLICY or GOMP_SPINCOUNT keeps
 * their choice; a command on one thread has no workers to wait
 * (one_thread); SLUICE_NO_REEXEC=1 turns this off. docs/cli.md, "Threads
 * in pipelines". */
/* Whether the command runs on one thread: -@ 1, -@1, --threads 1 or
 * --threads=1 (the last one given counts, as for getopt), or no -@ at all
 * for a serial command (one, its default). Every parallel region then runs
 * on the calling thread alone (cli/common.c sets the count), OpenMP starts
 * no workers, nothing waits, and the re-execution (about 5 ms of a start)
 * is not needed. A form this does not see (-q@1) re-executes as before. */
static int one_thread(char **argv, int one)
{
    for (int i = 1; argv[i]; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "-@") || !strcmp(a, "--threads"))
            v = argv[i + 1];
        else if (!strncmp(a, "-@", 2))
            v = a + 2;
        else if (!strncmp(a, "--threads=", 10))
            v = a + 10;
        else
            continue;
        one = v && !strcmp(v, "1");
    }
    return one;
}

static void default_passive_waiting(char **argv, int serial)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("SLUICE_NO_REEXEC") || one_thread(argv, serial))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* no /proc: run on with the library's default */
}

/* The library's warnings, notes and progress (base/log.h) on stderr:
 * "sluice: [STAGE: ][warning: |note: ]MSG"; a progress line redrawn in place
 * on a terminal, one line each otherwise. One fprintf per message: stderr is
 * unbuffered, and glibc writes such a call in one piece. */
static void log_to_stderr(sl_log_level level, const char *stage, const char *msg, void *user)
{
    (void)user;
    const char *sep = stage ? ": " : "";
    stage = stage ? stage : "";
    switch (level) {
    case SL_LOG_PROGRESS:
    case SL_LOG_PROGRESS_END:
        if (isatty(2))
            fprintf(stderr, "\r%s%s%s%s", stage, sep, msg, level == SL_LOG_PROGRESS_END ? "\n" : "\033[K");
        else
            fprintf(stderr, "%s%s%s\n", stage, sep, msg);
        break;
    case SL_LOG_WARNING: fprintf(stderr, "sluice: %s%swarning: %s\n", stage, sep, msg); break;
    case SL_LOG_NOTE: fprintf(stderr, "sluice: %s%snote: %s\n", stage, sep, msg); break;
    default: fprintf(stderr, "sluice: %s%s%s\n", stage, sep, msg); break;
    }
}

int main(int argc, char **argv)
{
    sl_log_set(log_to_stderr, NULL);
    /* Large buffers come from mmap and go back to the system when freed:
     * glibc's default threshold rises after each free of a large block, and
     * blocks of the size of the largest documents then stay in the heap,
     * where fragmentation makes the resident size creep up with the input
     * (docs/cli.md, Memory). */
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    /* Memory freed at the top of the heap stays for the next batch, up to
     * 16 MiB: given back at 128 KiB (the default), a 64 MB tokenize run
     * shrank and regrew its heap 460 times (921 brk calls), and faulted in
     * (zeroed) 35 MB of pages again; with two threads every shrink also
     * stops the other core to flush its TLB. */
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
    mallopt(M_TOP_PAD, 1 << 20);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    signal(SIGPIPE, on_signal); /* like cat: a closed pipe ends us quietly, temporaries removed */

    if (argc < 2) {
        print_main_help(stderr);
        return 2;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        print_main_help(stdout);
        return 0;
    }
    if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
        printf("sluice %s\n", SLUICE_VERSION);
        if (argc > 2 && (!strcmp(argv[2], "-v") || !strcmp(argv[2], "--verbose"))) {
            /* the code paths this machine runs, for benchmarks and bug reports */
            char line[512];
            sl_backend_cpu_describe(line, sizeof line);
            printf("%s\n", line);
            printf("cuda: %s\n",
                   sl_cuda_device_count() > 0 ? "a device is present" : "no device (or built without CUDA)");
        }
        return 0;
    }
    if (!strcmp(a, "help")) {
        if (argc < 3) {
            print_main_help(stdout);
            return 0;
        }
        const sl_command *c = find(top, argv[2]);
        if (c && argc >= 4 && c->subs) {
            const sl_command *s = find(c->subs, argv[3]);
            if (!s) {
                char where[64], see[80];
                snprintf(where, sizeof where, "help: %s: ", argv[2]);
                snprintf(see, sizeof see, "sluice help %s", argv[2]);
                unknown(where, c->subs, argv[3], see);
                return 2;
            }
            c = s;
        }
        if (!c) {
            unknown("help: ", top, argv[2], "sluice --help");
            return 2;
        }
        sl_cli_print_help(c, stdout);
        return 0;
    }
    const sl_command *c = find(top, a);
    if (!c) {
        unknown("", top, a, "sluice --help");
        return 2;
    }
    int off = 1;
    /* Commands with sub-subcommands: `sluice tokenize bpe ...`. A command may
     * also have its own run() for the case without a sub-subcommand. */
    if (c->subs && argc > 2 && argv[2][0] != '-') {
        const sl_command *s = find(c->subs, argv[2]);
        if (s) {
            c = s;
            off = 2;
        } else if (!c->run) {
            char where[64], see[80];
            snprintf(where, sizeof where, "%s: ", c->name);
            snprintf(see, sizeof see, "sluice help %s", c->name);
            unknown(where, c->subs, argv[2], see);
            return 2;
        }
    }
    if (!c->run) {
        if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            sl_cli_print_help(c, stdout);
            return 0;
        }
        if (argc > 2 && !strcmp(argv[2], "--version")) {
            printf("sluice %s\n", SLUICE_VERSION);
            return 0;
        }
        fprintf(stderr, "sluice: %s: missing subcommand\nusage: %s\n", c->name, c->usage);
        return 2;
    }
    /* A URL given as any path (input, -o, a model or tokenizer): refused up
     * front, in one line, instead of a local folder named "s3:" or "No such
     * file" (docs/cli.md, "Paths"). A word counts when it is "scheme://..."
     * or "--option=scheme://...". */
    for (int i = off + 1; i < argc; i++) {
        const char *w = argv[i], *eq = w[0] == '-' && w[1] == '-' ? strchr(w, '=') : NULL;
        const char *p = sl_path_url_scheme(w) ? w : eq && sl_path_url_scheme(eq + 1) ? eq + 1 : NULL;
        if (p) {
            sl_err e = {{0}};
            sl_path_url_error(p, &e);
            fprintf(stderr, "sluice: %s: %s\n", c->name, e.msg);
            return 1;
        }
    }
    /* (here, where the command is known: a serial one needs no workers) */
    default_passive_waiting(argv, c->serial);
    if (c->serial)
        omp_set_num_threads(1); /* -@ N, parsed by the command, sets N */
    sl_cli_argc = argc - off;
    sl_cli_argv = argv + off;
    opterr = 0; /* sl_cli_common reports unknown options in our own format */
    sl_cli cli = {.cmd = c, .output = "-", .threads = 0, .quiet = 0, .progress = -1};
    sl_io_set_reporter(c->name, &cli.quiet);
    sl_sources_output("-"); /* until -o names a file: what inputs may not be (stream/source.h) */
    int rc = c->run(&cli, argc - off, argv + off);
    sl_output_abort_all(); /* anything not committed is not complete */
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "sluice: %s: error writing to standard output\n", c->name);
        return 1;
    }
    return rc;
}
