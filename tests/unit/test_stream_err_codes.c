/* The error model (base/err.h) and the log callback (base/log.h):
 * real failures of library calls carry the code and option field their
 * documentation gives (a bad part spec, a missing file, malformed JSON, a
 * line over max_doc_bytes); sl_errf and sl_err_prefix keep the older
 * contract; and the library writes nothing to stderr: with no callback its
 * warnings and progress are dropped (checked on the real file descriptor 2,
 * redirected to a file), with one they arrive there whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernels/backend.h"
#include "shard/warmup.h"
#include "stream/docreader.h"
#include "base/err.h"
#include "stream/io.h"
#include "base/json.h"
#include "base/log.h"
#include "stream/parts.h"
#include "stream/progress.h"
#include "tests/unit/support.h"

static char *tmpdir;

static int setup(void **st)
{
    (void)st;
    tmpdir = sl_test_tmpdir("sluice-err-unit-");
    return tmpdir ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    sl_test_rmtree(tmpdir);
    free(tmpdir);
    return 0;
}

static const char *put(const char *name, const char *text)
{
    static char paths[4][160];
    static int k;
    char *p = paths[k++ % 4];
    snprintf(p, 160, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
    return p;
}

static void test_part_spec(void **st)
{
    (void)st;
    sl_part p;
    sl_err err = {{0}};
    assert_int_equal(err.code, SL_E_NONE);
    assert_int_equal(sl_part_parse("3/2", &p, &err), -1);
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "part");
    /* the field in backquotes, never a command-line flag */
    assert_string_equal(err.msg, "`part` '3/2': needs 0 <= R < N");
    assert_null(strstr(err.msg, "--part"));
    assert_int_equal(sl_part_parse("x/2", &p, &err), -1);
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "part");
    assert_null(strstr(err.msg, "--part"));
    /* another option parser: the warmup schedule */
    sl_warmup w;
    assert_int_equal(sl_warmup_parse("double:1024..100", &w, &err), -1);
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "warmup");
    assert_memory_equal(err.msg, "`warmup` 'double:1024..100': ", 29);
    unsetenv("SLURM_ARRAY_TASK_ID");
    assert_int_equal(sl_part_parse("slurm", &p, &err), -1);
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "part");
    assert_null(strstr(err.msg, "--part"));
    assert_int_equal(sl_part_parse("1/2", &p, &err), 0);
    assert_true(p.r == 1 && p.n == 2);
}

static void test_missing_file(void **st)
{
    (void)st;
    char path[200];
    snprintf(path, sizeof path, "%s/no-such-file.jsonl", tmpdir);
    sl_err err = {{0}};
    assert_null(sl_input_open(path, &err));
    assert_int_equal(err.code, SL_E_IO);
    assert_string_equal(err.field, "");
    assert_non_null(strstr(err.msg, "No such file or directory"));
    char *data = NULL;
    size_t len;
    assert_int_equal(sl_read_file(path, &data, &len, &err), -1);
    assert_int_equal(err.code, SL_E_IO);
    /* an existing output directory without force */
    char out[200];
    snprintf(out, sizeof out, "%s/exists", tmpdir);
    assert_int_equal(mkdir(out, 0755), 0);
    assert_int_equal(sl_output_check(out, 1, 0, &err), -1);
    assert_int_equal(err.code, SL_E_EXISTS);
    assert_string_equal(err.field, "force");
}

static void test_bad_json(void **st)
{
    (void)st;
    sl_err err = {{0}};
    const char *text = "{\"a\": [1, 2,}";
    assert_null(sl_json_parse(text, strlen(text), NULL, &err));
    assert_int_equal(err.code, SL_E_FORMAT);
    assert_string_equal(err.field, "");
    /* through the document reader: the position is added, the code kept */
    const char *path = put("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": \"cut\n");
    sl_docreader_opts o = {0};
    o.quiet = 1;
    const char *paths[] = {path};
    sl_docreader *r = sl_docreader_open(paths, 1, &o, &err);
    assert_non_null(r);
    sl_textdoc d = {0};
    assert_int_equal(sl_docreader_next(r, &d, &err), 1);
    assert_int_equal(sl_docreader_next(r, &d, &err), -1);
    assert_int_equal(err.code, SL_E_FORMAT);
    assert_non_null(strstr(err.msg, "bad.jsonl:2:"));
    sl_docreader_close(r);
    sl_textdoc_free(&d);
    /* a line over max_doc_bytes names the field */
    path = put("long.jsonl", "{\"text\": \"0123456789012345678901234567890123456789\"}\n");
    o.max_doc_bytes = 16;
    paths[0] = path;
    r = sl_docreader_open(paths, 1, &o, &err);
    int rc = r ? sl_docreader_next(r, &d, &err) : -1;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, SL_E_LIMIT);
    assert_string_equal(err.field, "max_doc_bytes");
    sl_docreader_close(r);
    sl_textdoc_free(&d);
}

static void test_device(void **st)
{
    (void)st;
    sl_err err = {{0}};
    assert_null(sl_backend_open("gpu", 1, &err));
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "device");
    assert_non_null(strstr(err.msg, "unknown device 'gpu'"));
#ifndef SLUICE_CUDA
    assert_null(sl_backend_open("cuda", 1, &err));
    assert_int_equal(err.code, SL_E_UNSUPPORTED);
    assert_string_equal(err.field, "device");
#endif
}

static void test_errf_and_prefix(void **st)
{
    (void)st;
    sl_err err = {{0}};
    sl_err_set(&err, SL_E_OPTION, "seq_len", "`seq_len` %d: must be positive", 0);
    assert_int_equal(sl_err_prefix(&err, "%s", "opts"), -1);
    assert_string_equal(err.msg, "opts: `seq_len` 0: must be positive");
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "seq_len");
    /* sl_errf resets what an earlier error left */
    assert_int_equal(sl_errf(&err, "plain %s", "failure"), -1);
    assert_int_equal(err.code, SL_E_FAILED);
    assert_string_equal(err.field, "");
    assert_string_equal(err.msg, "plain failure");
    sl_err_tag(&err, SL_E_UNSUPPORTED, "device");
    assert_int_equal(err.code, SL_E_UNSUPPORTED);
    assert_string_equal(err.field, "device");
    assert_string_equal(err.msg, "plain failure");
    assert_string_equal(sl_errcode_name(SL_E_IO), "io");
    assert_string_equal(sl_errcode_name(SL_E_FORMAT), "format");
    assert_string_equal(sl_errcode_name((sl_errcode)99), "unknown");
    assert_int_equal(sl_errf(NULL, "x"), -1);
    assert_int_equal(sl_err_set(NULL, SL_E_IO, NULL, "x"), -1);
    /* one line whatever a name from a file holds (a Parquet schema name
     * "sche\nm" made a two-line error): control bytes as \xNN */
    sl_errf(&err, "%s: schema element %s has %d children", "f.parquet", "sche\nm\t", -49);
    assert_string_equal(err.msg, "f.parquet: schema element sche\\x0am\\x09 has -49 children");
    sl_err_set(&err, SL_E_FORMAT, NULL, "key %s", "a\rb\x7f");
    assert_string_equal(err.msg, "key a\\x0db\\x7f");
    sl_errf(&err, "column %s", "x");
    sl_err_prefix(&err, "%s", "dir\n/file");
    assert_string_equal(err.msg, "dir\\x0a/file: column x");
    sl_errf(&err, "caf\xc3\xa9 ok"); /* UTF-8 stays as it is */
    assert_string_equal(err.msg, "caf\xc3\xa9 ok");
}

/* ---- the log callback ----------------------------------------------------- */

typedef struct {
    int n;
    sl_log_level level[16];
    char stage[16][32];
    char msg[16][512];
} captured;

static void capture(sl_log_level level, const char *stage, const char *msg, void *user)
{
    captured *c = user;
    if (c->n >= 16)
        return;
    c->level[c->n] = level;
    snprintf(c->stage[c->n], sizeof c->stage[c->n], "%s", stage ? stage : "");
    snprintf(c->msg[c->n], sizeof c->msg[c->n], "%s", msg);
    c->n++;
}

/* Reads the documents of a file with one malformed line (skipped: a
 * warning), then an empty file (a warning), then runs a progress line with
 * progress forced on. */
static void chatty_calls(const char *bad, const char *empty)
{
    sl_docreader_opts o = {0};
    o.skip_bad_json = 1;
    sl_err err = {{0}};
    const char *paths[] = {bad, empty};
    sl_docreader *r = sl_docreader_open(paths, 2, &o, &err);
    assert_non_null(r);
    sl_textdoc d = {0};
    int n = 0, rc;
    while ((rc = sl_docreader_next(r, &d, &err)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 2);
    sl_docreader_close(r);
    sl_textdoc_free(&d);
    sl_progress *p = sl_progress_start("errtest", "docs", 1);
    sl_progress_add(p, 3, 100);
    sl_progress_done(p);
}

/* Runs chatty_calls with file descriptor 2 on a file; returns the number of
 * bytes written there. */
static long stderr_bytes_during(const char *bad, const char *empty)
{
    char path[200];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    close(fd);
    chatty_calls(bad, empty);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

static void test_log_silent_without_callback(void **st)
{
    (void)st;
    const char *bad = put("skip.jsonl", "{\"text\": \"a\"}\n{oops\n{\"text\": \"b\"}\n");
    const char *empty = put("empty.jsonl", "");
    sl_log_set(NULL, NULL);
    assert_null(sl_log_get(NULL));
    assert_int_equal(stderr_bytes_during(bad, empty), 0);

    captured c = {0};
    sl_log_set(capture, &c);
    void *user = NULL;
    assert_ptr_equal(sl_log_get(&user), capture);
    assert_ptr_equal(user, &c);
    assert_int_equal(stderr_bytes_during(bad, empty), 0); /* the callback has it, not stderr */
    sl_log_set(NULL, NULL);

    assert_true(c.n >= 3);
    assert_int_equal(c.level[0], SL_LOG_WARNING);
    assert_string_equal(c.stage[0], "");
    char want[300];
    snprintf(want, sizeof want, "%s:2: ", bad);
    assert_memory_equal(c.msg[0], want, strlen(want));
    assert_non_null(strstr(c.msg[0], "(line skipped)"));
    assert_int_equal(c.level[1], SL_LOG_WARNING);
    snprintf(want, sizeof want, "%s: empty, no documents", empty);
    assert_string_equal(c.msg[1], want);
    /* progress: the stage apart, the last line the summary */
    assert_int_equal(c.level[c.n - 1], SL_LOG_PROGRESS_END);
    assert_string_equal(c.stage[c.n - 1], "errtest");
    assert_memory_equal(c.msg[c.n - 1], "3 docs  100 B  ", 15);
    assert_non_null(strstr(c.msg[c.n - 1], " in "));
    for (int i = 0; i < c.n; i++)
        assert_null(strchr(c.msg[i], '\n'));
}

#if defined(__SANITIZE_ADDRESS__)
#define OOM_TEST 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_TEST 0
#endif
#endif
#ifndef OOM_TEST
#define OOM_TEST 1
#endif

#if OOM_TEST
/* Passes an SL_LOG_ERROR message on to the pipe *user: "LEVEL MSG". */
static void oom_writer(sl_log_level level, const char *stage, const char *msg, void *user)
{
    (void)stage;
    char b[200];
    int n = snprintf(b, sizeof b, "%d %s", (int)level, msg);
    if (write(*(int *)user, b, (size_t)n) < 0)
        _exit(3);
}
#endif

/* Out of memory in sl_xmalloc: the message goes to the callback, then the
 * process aborts (in a child; not under ASan, whose allocator stops first). */
static void test_oom_goes_to_callback(void **st)
{
    (void)st;
#if OOM_TEST
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        sl_log_set(oom_writer, &fds[1]);
        volatile size_t huge = SIZE_MAX / 2;
        void *p = sl_xmalloc(huge);
        free(p);
        _exit(0);
    }
    close(fds[1]);
    char buf[256] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    assert_true(n > 0);
    char want[100];
    snprintf(want, sizeof want, "0 out of memory (allocating %zu bytes)", SIZE_MAX / 2);
    assert_string_equal(buf, want);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_part_spec),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_errf_and_prefix),
        cmocka_unit_test(test_log_silent_without_callback),
        cmocka_unit_test(test_oom_goes_to_callback),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
