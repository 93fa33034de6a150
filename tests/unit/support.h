/* Helpers the unit tests share (tests/unit/support.c, linked into every
 * test program): where the fixtures are, reading a file whole, temporary
 * directories. */
#ifndef SLUICE_TESTS_SUPPORT_H
#define SLUICE_TESTS_SUPPORT_H

#include <stddef.h>

/* The source tree: $SLUICE_SRC (make test sets it), else ".". */
const char *sl_test_src(void);
/* The source tree's path of printf(fmt, ...), e.g.
 * sl_test_path("tests/data/dna/%s", name). The result lives in one of 16
 * static buffers used in turn: good for the next 15 calls. */
char *sl_test_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The whole file, NUL-terminated (malloc'd; *len its length without the NUL
 * when len is not NULL), or NULL when it cannot be read. */
char *sl_test_slurp(const char *path, size_t *len);
/* Writes p[0..n) to path (created or truncated): 0, or -1 when it cannot. */
int sl_test_write(const char *path, const void *p, size_t n);
/* A new empty directory under $TMPDIR (or /tmp) whose name starts with tag
 * (malloc'd), or NULL. */
char *sl_test_tmpdir(const char *tag);
/* Removes dir and everything under it (not following symbolic links). */
void sl_test_rmtree(const char *dir);
/* Writes a new directory made by sl_test_tmpdir(tag) into buf (cap bytes):
 * 0, or -1 when it cannot be made or does not fit (a cmocka setup's
 * return value). */
int sl_test_tmpdir_into(char *buf, size_t cap, const char *tag);
/* Runs printf(fmt, ...) with system(); returns what system() returns. */
int sl_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
