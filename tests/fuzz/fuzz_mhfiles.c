/* libFuzzer target: the files of the `dedup minhash` steps (dedup/lsh.c).
 * The input is taken as a signature file (the buckets step reads it, then
 * the cluster step reads the pairs it wrote), as a pair file (the cluster
 * step), and as a clusters file (the filter step, over no documents), and
 * verified (--skip-existing). Any bytes either work or give a one-line
 * error; never a crash, a hang or a read out of bounds. The configuration
 * is small (2-grams, 2 x 2, --jaccard 0.5) so that seeds made with it
 * (tests/fuzz/corpus/mhfiles) reach the records and shingle sets. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dedup/lsh.h"
#include "stream/io.h"

static char dir[64];
static const char docs[] = "{\"id\":\"a\",\"text\":\"one two three four five six\"}\n"
                           "{\"id\":\"b\",\"text\":\"one two three four five seven\"}\n"
                           "{\"id\":\"c\",\"text\":\"x y\"}\n"
                           "{\"id\":\"d\",\"text\":\"one two three four five six\"}\n";

static void check(int rc, const sl_err *err)
{
    if (rc < 0 && (strchr(err->msg, '\n') || !err->msg[0]))
        abort();
}

static void put(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

static void opts(sl_dedup_opts *o)
{
    sl_dedup_opts d = SL_DEDUP_OPTS_INIT;
    *o = d;
    o->mode = SL_DEDUP_MINHASH;
    o->mh.ngram = 2, o->mh.buckets = 2, o->mh.rows = 2;
    o->jaccard_on = 1, o->jaccard = 0.5;
}

/* The signatures of the four documents above, in DIR/base/sigs (what the
 * seeds tests/fuzz/corpus/mhfiles/{pairs,clusters} were made from). */
static void init(void)
{
    snprintf(dir, sizeof dir, "%s/fuzz-mh-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        abort();
    char p[256];
    snprintf(p, sizeof p, "%s/docs.jsonl", dir);
    put(p, (const uint8_t *)docs, sizeof docs - 1);
    sl_dedup_opts o;
    opts(&o);
    sl_docreader_opts ro = {.field = "text"};
    const char *in[1] = {p};
    sl_err err = {{0}};
    sl_docreader *r = sl_docreader_open(in, 1, &ro, &err);
    char q[256];
    snprintf(q, sizeof q, "%s/base/sigs/sig-00000-of-00001.mhsig", dir);
    if (!r || sl_lsh_signatures(r, &o, 1 << 20, 0, 1, q, &err) < 0)
        abort();
    sl_docreader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        init();
    char p[400], s[256], q[256], c[256], k[256], bs[256], bq[256], in0[256];
    snprintf(s, sizeof s, "%s/sigs", dir);
    snprintf(q, sizeof q, "%s/pairs", dir);
    snprintf(bs, sizeof bs, "%s/base/sigs", dir);
    snprintf(bq, sizeof bq, "%s/base/pairs", dir);
    snprintf(c, sizeof c, "%s/clusters.mhclu", dir);
    snprintf(k, sizeof k, "%s/kept.jsonl", dir);
    snprintf(in0, sizeof in0, "%s/docs.jsonl", dir);
    mkdir(s, 0755);
    mkdir(q, 0755);
    mkdir(bq, 0755);
    sl_dedup_opts o;
    opts(&o);
    sl_err err = {{0}};
    sl_dedup_stats st;
    /* as a signature file */
    snprintf(p, sizeof p, "%s/sig-00000-of-00001.mhsig", s);
    put(p, data, size);
    check(sl_lsh_verify(p, &err), &err);
    snprintf(p, sizeof p, "%s/pairs-00000-of-00001.mhpair", q);
    unlink(p);
    int rc = sl_lsh_buckets(&o, 1 << 20, s, 0, 1, p, &err);
    check(rc, &err);
    if (rc == 0)
        check(sl_lsh_cluster(&o, 1 << 20, s, q, c, &st, &err), &err);
    /* as a pair file of the four documents' signatures */
    snprintf(p, sizeof p, "%s/pairs-00000-of-00001.mhpair", bq);
    put(p, data, size);
    check(sl_lsh_cluster(&o, 1 << 20, bs, bq, c, &st, &err), &err);
    /* as the clusters file of the four documents */
    put(c, data, size);
    const char *in[1] = {in0};
    sl_docreader_opts ro = {.field = "text"};
    sl_docreader *r = sl_docreader_open(in, 1, &ro, &err);
    sl_output *out = sl_output_open(k, &err);
    if (!r || !out)
        abort();
    check(sl_lsh_filter(r, &o, c, 0, 1, out, &st, &err), &err);
    sl_output_abort(out);
    sl_docreader_close(r);
    return 0;
}
