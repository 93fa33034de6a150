/* The score stage as a library call (model/score_stage.h): a program that
 * links libsluice scores token streams and shard directories without the
 * CLI. NLLs and per-token log-probabilities against the reference values of
 * tests/model/gen_fixtures.py (expected.jsonl), shard-directory scores
 * against the stream's, the scored token stream's metadata, and messages
 * that name option fields rather than flags. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/support.h"

#include "model/score_stage.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/tokstream.h"

static char tmpdir[64];
static const char *fixture(const char *name)
{
    return sl_test_path("tests/data/model/%s", name);
}

typedef struct ref {
    char id[32];
    uint32_t tok[512];
    int64_t n;
    double nll, logp[512];
} ref;
static ref refs[16];
static size_t nrefs;

/* expected.jsonl of hf_f32 -> refs; and the token stream PATH of those
 * documents (vocab 64, eos as given). */
static void write_stream(const char *path, int64_t eos)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/expected.jsonl", fixture("hf_f32"));
    char *text;
    size_t len;
    sl_err err;
    assert_int_equal(sl_read_file(p, &text, &len, &err), 0);
    nrefs = 0;
    for (char *line = text, *nl; line < text + len && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        assert_non_null(jd);
        const sl_json *r = sl_json_root(jd), *t = sl_json_get(r, "tokens"), *lp = sl_json_get(r, "logp");
        ref *d = &refs[nrefs++];
        snprintf(d->id, sizeof d->id, "%s", sl_json_get_str(r, "id"));
        d->n = (int64_t)t->n;
        assert_true(t->n <= 512);
        for (size_t i = 0; i < t->n; i++)
            d->tok[i] = (uint32_t)t->kids[i]->num;
        for (size_t i = 0; i < lp->n; i++)
            d->logp[i] = lp->kids[i]->num;
        assert_int_equal(sl_json_get_num(r, "nll", &d->nll), 0);
        sl_json_free(jd);
    }
    free(text);
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_IDS, 64);
    h.eos = eos;
    sl_output *out = sl_output_open(path, &err);
    assert_non_null(out);
    sl_ts_writer *w = sl_ts_writer_open(out, &h, &err);
    assert_non_null(w);
    sl_doc doc = {0};
    for (size_t i = 0; i < nrefs; i++) {
        sl_doc_clear(&doc);
        sl_doc_set_id(&doc, refs[i].id, strlen(refs[i].id));
        for (int64_t t = 0; t < refs[i].n; t++)
            sl_doc_push(&doc, refs[i].tok[t]);
        assert_int_equal(sl_ts_write_doc(w, &doc, &err), 0);
    }
    sl_doc_free(&doc);
    assert_int_equal(sl_ts_writer_finish(w, &err), 0);
    assert_int_equal(sl_output_commit(out, &err), 0);
    sl_ts_header_free(&h);
}

static void opts(sl_score_opts *o)
{
    sl_score_opts_default(o);
    o->model_dir = fixture("hf_f32");
    o->device = "cpu";
    o->threads = 2;
    o->progress = 0;
}

/* Runs the stage into PATH; returns the output text (caller frees), or NULL
 * with err set. */
static char *score_to(const sl_score_opts *o, const char *const *in, size_t n, const char *path, sl_err *err)
{
    sl_output *out = sl_output_open(path, err);
    assert_non_null(out);
    if (sl_score_run(o, in, n, out, err) < 0) {
        sl_output_abort(out);
        return NULL;
    }
    assert_int_equal(sl_output_commit(out, err), 0);
    char *text;
    size_t len;
    assert_int_equal(sl_read_file(path, &text, &len, err), 0);
    return text;
}

static int close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(1.0, fabs(b));
}

static void check_lines(const char *text, size_t ndocs, int split, int per_token)
{
    size_t i = 0;
    sl_err err;
    for (const char *line = text, *nl; *line; line = nl + 1, i++) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        assert_non_null(jd);
        const sl_json *r = sl_json_root(jd);
        assert_true(i < ndocs);
        assert_string_equal(sl_json_get_str(r, "id"), refs[i].id);
        if (split)
            assert_string_equal(sl_json_get_str(r, "split"), "train");
        int64_t tokens;
        double nll, ppl;
        assert_int_equal(sl_json_get_int(r, "tokens", &tokens), 0);
        assert_int_equal(tokens, refs[i].n > 1 ? refs[i].n - 1 : 0);
        assert_int_equal(sl_json_get_num(r, "nll", &nll), 0);
        if (!close_to(nll, refs[i].nll, 1e-4))
            fail_msg("%s: nll %.9g, reference %.9g", refs[i].id, nll, refs[i].nll);
        if (tokens) {
            assert_int_equal(sl_json_get_num(r, "ppl", &ppl), 0);
            assert_true(close_to(ppl, exp(nll / (double)tokens), 1e-12));
        }
        const sl_json *lp = sl_json_get(r, "logprobs");
        if (per_token) {
            assert_non_null(lp);
            assert_int_equal(lp->n, tokens);
            for (size_t t = 0; t < lp->n; t++)
                assert_true(close_to(lp->kids[t]->num, refs[i].logp[t], 1e-4));
        } else {
            assert_null(lp);
        }
        sl_json_free(jd);
    }
    assert_int_equal(i, ndocs);
}

static void test_streams(void **st)
{
    (void)st;
    char tok[128], out[128], out2[128];
    snprintf(tok, sizeof tok, "%s/in.tok", tmpdir);
    snprintf(out, sizeof out, "%s/scores.jsonl", tmpdir);
    snprintf(out2, sizeof out2, "%s/scores2.jsonl", tmpdir);
    write_stream(tok, -1);
    sl_score_opts o;
    opts(&o);
    o.per_token = 1;
    sl_err err;
    const char *in[] = {tok, tok};
    char *text = score_to(&o, in, 1, out, &err);
    if (!text)
        fail_msg("%s", err.msg);
    check_lines(text, nrefs, 0, 1);
    /* two inputs read as one stream: the documents twice */
    o.per_token = 0;
    o.chunk = 7;
    o.batch_tokens = 50;
    char *two = score_to(&o, in, 2, out2, &err);
    assert_non_null(two);
    memcpy(refs + nrefs, refs, nrefs * sizeof *refs);
    check_lines(two, 2 * nrefs, 0, 0);
    free(text);
    free(two);
}

/* A shard directory made by the CLI scores as the stream it came from. */
static void test_shard_dir(void **st)
{
    (void)st;
    const char *bin = getenv("SLUICE_BIN");
    if (!bin)
        fail_msg("SLUICE_BIN is not set");
    char tok[128], sh[128], out[128], cmd[1024];
    snprintf(tok, sizeof tok, "%s/sh.tok", tmpdir);
    snprintf(sh, sizeof sh, "%s/shards", tmpdir);
    snprintf(out, sizeof out, "%s/sh.jsonl", tmpdir);
    write_stream(tok, -1);
    snprintf(cmd, sizeof cmd, "'%s' shard -q --seq-len 16 --no-eos --pad 0 --layout recurrent --batch 3 '%s' -o '%s'",
             bin, tok, sh);
    assert_int_equal(system(cmd), 0);
    sl_score_opts o;
    opts(&o);
    o.batch_tokens = 7;
    sl_err err;
    const char *in[] = {sh};
    char *text = score_to(&o, in, 1, out, &err);
    if (!text)
        fail_msg("%s", err.msg);
    check_lines(text, nrefs, 1, 0);
    free(text);
    /* to_stream needs a token stream */
    o.to_stream = 1;
    assert_null(score_to(&o, in, 1, out, &err));
    assert_non_null(strstr(err.msg, "to_stream needs a token stream"));
}

/* to_stream: the same records with the scores merged into the metadata. */
static void test_to_stream(void **st)
{
    (void)st;
    char tok[128], out[128];
    snprintf(tok, sizeof tok, "%s/ts.tok", tmpdir);
    snprintf(out, sizeof out, "%s/ts-out.tok", tmpdir);
    write_stream(tok, 0);
    sl_score_opts o;
    opts(&o);
    o.to_stream = 1;
    o.prepend_eos = 1; /* eos 0 in front: every token predicted */
    sl_err err;
    const char *in[] = {tok};
    sl_output *out_ = sl_output_open(out, &err);
    assert_int_equal(sl_score_run(&o, in, 1, out_, &err), 0);
    assert_int_equal(sl_output_commit(out_, &err), 0);
    sl_input *inp = sl_input_open(out, &err);
    assert_non_null(inp);
    sl_ts_reader *r = sl_ts_reader_open(inp, &err);
    assert_non_null(r);
    assert_int_equal(sl_ts_reader_header(r)->eos, 0);
    sl_doc d = {0};
    size_t i = 0;
    while (sl_ts_read_doc(r, &d, &err) == 1) {
        assert_int_equal(d.n_tokens, refs[i].n);
        assert_memory_equal(d.tokens, refs[i].tok, (size_t)refs[i].n * sizeof(uint32_t));
        sl_json_doc *jd = sl_json_parse(d.meta, d.meta_len, NULL, &err);
        assert_non_null(jd);
        int64_t scored;
        double nll;
        assert_int_equal(sl_json_get_int(sl_json_root(jd), "scored_tokens", &scored), 0);
        assert_int_equal(scored, refs[i].n);
        assert_int_equal(sl_json_get_num(sl_json_root(jd), "nll", &nll), 0);
        assert_true(nll > refs[i].nll); /* one prediction more, each -log p > 0 */
        sl_json_free(jd);
        i++;
    }
    assert_int_equal(i, nrefs);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_input_close(inp);
}

/* Messages name option fields, not command-line flags. */
static void test_messages(void **st)
{
    (void)st;
    char tok[128], out[128];
    snprintf(tok, sizeof tok, "%s/msg.tok", tmpdir);
    snprintf(out, sizeof out, "%s/msg.out", tmpdir);
    write_stream(tok, -1);
    sl_score_opts o;
    opts(&o);
    sl_err err;
    const char *in[] = {tok};
    o.prepend_eos = 1;
    assert_null(score_to(&o, in, 1, out, &err));
    assert_non_null(strstr(err.msg, "msg.tok: `prepend_eos`, but the stream has no eos id"));
    assert_int_equal(err.code, SL_E_OPTION);
    assert_string_equal(err.field, "prepend_eos");
    assert_null(strstr(err.msg, "--"));
    opts(&o);
    o.per_token = o.to_stream = 1;
    assert_int_equal(sl_score_check(&o, &err), -1);
    assert_non_null(strstr(err.msg, "per_token"));
    assert_null(strstr(err.msg, "--"));
    opts(&o);
    o.model_dir = fixture("ssm_f32"); /* vocab 77 (80 padded): the stream's 64 does not fit */
    assert_null(score_to(&o, in, 1, out, &err));
    assert_non_null(strstr(err.msg, "does not match the model's (77, padded 80)"));
    assert_non_null(strstr(err.msg, "or `force`"));
    assert_int_equal(err.code, SL_E_MISMATCH);
    assert_string_equal(err.field, "force");
    assert_null(strstr(err.msg, "--"));
    o.force = 1;
    char *text = score_to(&o, in, 1, out, &err);
    assert_non_null(text);
    free(text);
    assert_int_equal(access(out, F_OK), 0);
}

static int setup(void **st)
{
    (void)st;
    char *d = sl_test_tmpdir("sluice-score-unit");
    int ok = d && (size_t)snprintf(tmpdir, sizeof tmpdir, "%s", d) < sizeof tmpdir;
    free(d);
    return ok ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    sl_test_rmtree(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_shard_dir),
        cmocka_unit_test(test_to_stream),
        cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
