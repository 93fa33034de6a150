/* Options for running a stage as one of many (docs/scale-out.md):
 *   --part R/N | --part slurm   do part R of N of the input (stream/partition.h)
 *   --skip-existing             do nothing when the output exists and verifies
 * A command appends SL_SCALE_LONG_OPTS (or only SL_PART_LONG_OPT) to its
 * option table and passes each option to sl_cli_scale_option first. */
#ifndef SLUICE_CLI_SCALE_OPTS_H
#define SLUICE_CLI_SCALE_OPTS_H

#include <stddef.h>

#include "cli/cli.h"
#include "shard/verify.h"
#include "stream/partition.h"

enum { SL_OPT_PART = 0x10f0, SL_OPT_SKIP_EXISTING = 0x10f1 };
#define SL_PART_LONG_OPT                                                                                               \
    {                                                                                                                  \
        "part", required_argument, 0, SL_OPT_PART                                                                      \
    }
#define SL_SKIP_LONG_OPT                                                                                               \
    {                                                                                                                  \
        "skip-existing", no_argument, 0, SL_OPT_SKIP_EXISTING                                                          \
    }

typedef struct sl_scale_opts {
    const char *part; /* the --part spec, or NULL */
    int skip_existing;
} sl_scale_opts;

/* 1 when c was --part or --skip-existing (recorded in *s), else 0. */
int sl_cli_scale_option(sl_scale_opts *s, int c, const char *arg);

/* 1 with *p set when --part was given (a bad spec or --part slurm outside an
 * array job: a usage error), 0 when not. */
int sl_cli_part(const sl_cli *cli, const sl_scale_opts *s, sl_part *p);

/* The pieces of part p of files[0..n) (see sl_partition); on error prints it
 * and exits 1. */
sl_slice *sl_cli_slices(const sl_cli *cli, const sl_part *p, const char *const *files, size_t n, sl_cut_fn cut,
                        void *ctx, size_t *np);

/* With --skip-existing: 1 when cli->output exists and verifies as what the
 * stage writes (kind: SL_VERIFY_*, checked by the library:
 * sl_output_verify_existing, shard/verify.h), after one line on stderr saying that the stage does
 * nothing; 0 when the stage must run (a line says why when the output exists
 * but does not verify). */
int sl_cli_skip_existing(const sl_cli *cli, const sl_scale_opts *s, int kind);

/* 1 when dir holds a manifest.json (what --skip-existing may replace). */
int sl_cli_has_manifest(const char *dir);

#endif
