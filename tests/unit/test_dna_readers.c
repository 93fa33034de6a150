/* DNA readers (FASTA, FASTQ, .2bit, .fai, BED, random access) against
 * independent evidence:
 *  - tests/data/dna/expected_records.tsv, written once by make_fixtures.py,
 *    which decodes every test file with plain Python (gzip module, its own
 *    FASTA/FASTQ/.2bit decoders): name, description, length, CRC-32, ends;
 *  - the .fai files made by samtools 1.16.1 (committed with the data);
 *  - the synthetic genome's FASTA vs its .2bit (written by another tool and
 *    read back with @gmod/twobit), per base;
 *  - HyenaDNA interval windows computed by make_fixtures.py;
 *  - randomized round trips: FASTA/FASTQ and .2bit files written here from
 *    random sequences with random layouts, read back.
 * Bad inputs must fail with one message naming the file and position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/unit/support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dna/bed.h"
#include "dna/bgzf.h"
#include "dna/faidx.h"
#include "dna/fastx.h"
#include "dna/seqfile.h"
#include "dna/twobit.h"
#include "dna/window.h"
#include "stream/io.h"
#include "base/rng.h"

static const char *path_of(const char *rel)
{
    return sl_test_path("tests/data/dna/%s", rel);
}

static char *slurp(const char *path, size_t *len)
{
    char *d;
    sl_err err;
    if (sl_read_file(path, &d, len, &err) < 0)
        fail_msg("%s", err.msg);
    return d;
}

/* ---- every record of every file vs the Python decoding ---------------- */

static void test_records_match_python(void **state)
{
    (void)state;
    size_t len;
    char *tsv = slurp(path_of("expected_records.tsv"), &len);
    char *save = NULL, *line = strtok_r(tsv, "\n", &save);
    char cur_file[256] = "";
    dna_reader *r = NULL;
    sl_buf seq = {0};
    sl_err err;
    int nrec = 0, nfiles = 0;
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[8];
        int nf = 0;
        for (char *p = line; nf < 8; nf++) {
            f[nf] = p;
            char *t = strchr(p, '\t');
            if (!t) {
                nf++;
                break;
            }
            *t = 0;
            p = t + 1;
        }
        assert_int_equal(nf, 8);
        if (strcmp(cur_file, f[0])) {
            if (r) {
                assert_int_equal(dna_reader_next(r, &err), 0); /* no extra records */
                dna_reader_close(r);
            }
            snprintf(cur_file, sizeof cur_file, "%s", f[0]);
            r = dna_reader_open(path_of(f[0]), &err);
            if (!r)
                fail_msg("%s", err.msg);
            nfiles++;
        }
        int rc = dna_reader_next(r, &err);
        if (rc != 1)
            fail_msg("%s record %s: rc %d %s", f[0], f[1], rc, rc < 0 ? err.msg : "");
        assert_string_equal(dna_reader_name(r), f[2]);
        assert_string_equal(dna_reader_desc(r), f[3]);
        sl_buf_clear(&seq);
        if (dna_reader_read_all(r, &seq, &err) < 0)
            fail_msg("%s", err.msg);
        assert_int_equal(seq.len, strtoull(f[4], NULL, 10));
        char crc[16];
        snprintf(crc, sizeof crc, "%08lx", crc32(0, (const Bytef *)(seq.data ? seq.data : ""), (uInt)seq.len));
        if (strcmp(crc, f[5]))
            fail_msg("%s record %s (%s): crc %s, expected %s", f[0], f[1], f[2], crc, f[5]);
        size_t k = seq.len < 40 ? seq.len : 40;
        if (seq.len) {
            assert_memory_equal(seq.data, f[6], k);
            assert_memory_equal(seq.data + seq.len - k, f[7], k);
        }
        nrec++;
    }
    if (r) {
        assert_int_equal(dna_reader_next(r, &err), 0);
        dna_reader_close(r);
    }
    assert_true(nfiles >= 18);
    assert_true(nrec > 2100);
    sl_buf_free(&seq);
    free(tsv);
}

/* ---- the .fai we build equals samtools' -------------------------------- */

static void check_fai(const char *fasta, const char *fai_file)
{
    sl_err err;
    sl_input *in = sl_input_open(path_of(fasta), &err);
    assert_non_null(in);
    dna_fx *fx = dna_fx_open((dna_read_fn)sl_input_read, in, fasta);
    dna_fai built = {0};
    if (dna_fai_build(fx, &built, &err) < 0)
        fail_msg("%s", err.msg);
    dna_fx_close(fx);
    sl_input_close(in);
    sl_buf text = {0};
    dna_fai_format(&built, &text);
    size_t len;
    char *want = slurp(path_of(fai_file), &len);
    assert_int_equal(text.len, len);
    assert_memory_equal(text.data, want, len);
    /* and it parses back to the same records */
    dna_fai parsed = {0};
    assert_int_equal(dna_fai_parse(want, len, fai_file, &parsed, &err), 0);
    assert_int_equal(parsed.n, built.n);
    for (size_t i = 0; i < parsed.n; i++) {
        assert_string_equal(parsed.rec[i].name, built.rec[i].name);
        assert_true(parsed.rec[i].offset == built.rec[i].offset);
    }
    dna_fai_free(&parsed);
    dna_fai_free(&built);
    sl_buf_free(&text);
    free(want);
}

static void test_fai_equals_samtools(void **state)
{
    (void)state;
    check_fai("lambda_virus.fa", "lambda_virus.fa.fai");
    check_fai("pysam_ex1.fa", "pysam_ex1.fa.fai");
    check_fai("htslib_ce.fa", "htslib_ce.fa.fai");
    check_fai("htslib_ce.fa.gz", "htslib_ce.fa.gz.fai"); /* BGZF: offsets are in decompressed bytes */
    check_fai("synthetic_softmasked_lambda.fa", "synthetic_softmasked_lambda.fa.fai");
    check_fai("synthetic_softmasked_lambda.fa.gz", "synthetic_softmasked_lambda.fa.gz.fai");
    check_fai("htslib_faidx_edgecases.fa", "htslib_faidx_edgecases.fa.fai.expected_samtools-1.16.1");
}

/* ---- random access: every backend returns what sequential reading does -- */

static void test_genome_random_access(void **state)
{
    (void)state;
    const char *files[] = {"synthetic_softmasked_lambda.fa", "synthetic_softmasked_lambda.fa.gz",
                           "synthetic_softmasked_lambda.2bit", "htslib_ce.fa", "htslib_faidx_edgecases.fa"};
    sl_err err;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        dna_genome *g = dna_genome_open(path_of(files[f]), 1, &err);
        if (!g)
            fail_msg("%s", err.msg);
        dna_reader *r = dna_reader_open(path_of(files[f]), &err);
        assert_non_null(r);
        sl_buf seq = {0};
        uint64_t st = 42 + f;
        for (size_t i = 0; dna_reader_next(r, &err) == 1; i++) {
            sl_buf_clear(&seq);
            assert_int_equal(dna_reader_read_all(r, &seq, &err), 0);
            assert_string_equal(dna_genome_name(g, i), dna_reader_name(r));
            assert_int_equal(dna_genome_length(g, i), seq.len);
            for (int k = 0; k < 200; k++) {
                uint64_t a = sl_rng_below(&st, seq.len + 1), b = a + sl_rng_below(&st, seq.len - a + 1);
                char *out = malloc(b - a + 1);
                if (dna_genome_fetch(g, i, a, b, out, &err) < 0)
                    fail_msg("%s", err.msg);
                assert_memory_equal(out, seq.data + a, b - a);
                free(out);
            }
            char c;
            assert_int_equal(dna_genome_fetch(g, i, 0, seq.len + 1, &c, &err), -1); /* past the end */
        }
        sl_buf_free(&seq);
        dna_reader_close(r);
        dna_genome_close(g);
    }
}

/* Which backend each file gets, and BGZF block access vs the whole
 * decompressed file (Python's gzip module decoded the same files for
 * expected_records.tsv). */
static void test_bgzf_random_access(void **state)
{
    (void)state;
    sl_err err;
    struct {
        const char *file, *backend;
    } want[] = {{"htslib_ce.fa", "fai"},
                {"htslib_ce.fa.gz", "bgzf+fai"},
                {"synthetic_softmasked_lambda.fa.gz", "bgzf+fai"},
                {"synthetic_softmasked_lambda.2bit", "2bit"},
                {"ce2_chrM.fa.gz", "memory"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        dna_genome *g = dna_genome_open(path_of(want[i].file), 1, &err);
        assert_non_null(g);
        assert_string_equal(dna_genome_backend(g), want[i].backend);
        dna_genome_close(g);
    }
    char *whole;
    size_t len;
    assert_int_equal(sl_read_file(path_of("htslib_ce.fa.gz"), &whole, &len, &err), 0);
    char gzi[4096];
    snprintf(gzi, sizeof gzi, "%s", path_of("htslib_ce.fa.gz.gzi"));
    dna_bgzf *z = dna_bgzf_open(path_of("htslib_ce.fa.gz"), gzi, &err);
    if (!z)
        fail_msg("%s", err.msg);
    uint64_t st = 77;
    char *buf = malloc(200000);
    for (int k = 0; k < 300; k++) {
        uint64_t a = sl_rng_below(&st, len), n = sl_rng_below(&st, len - a < 200000 ? len - a + 1 : 200000);
        if (dna_bgzf_read_at(z, a, buf, n, &err) < 0)
            fail_msg("%s", err.msg);
        assert_memory_equal(buf, whole + a, n);
    }
    assert_int_equal(dna_bgzf_read_at(z, len - 10, buf, 11, &err), -1); /* past the end */
    assert_non_null(strstr(err.msg, "past the end"));
    dna_bgzf_close(z);
    free(buf);
    free(whole);
}

/* Broken .gzi indexes and truncated BGZF data fail with the file and offset. */
static void test_bgzf_bad(void **state)
{
    (void)state;
    sl_err err;
    char dir[] = "/tmp/sluice-dna-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fa[4200], gzi[4200], cmd[9000];
    snprintf(fa, sizeof fa, "%s/ce.fa.gz", dir);
    snprintf(gzi, sizeof gzi, "%s/ce.fa.gz.gzi", dir);
    size_t len, glen;
    char *data, *idx;
    FILE *f = fopen(path_of("htslib_ce.fa.gz"), "rb");
    data = malloc(1 << 20);
    len = fread(data, 1, 1 << 20, f);
    fclose(f);
    f = fopen(path_of("htslib_ce.fa.gz.gzi"), "rb");
    idx = malloc(4096);
    glen = fread(idx, 1, 4096, f);
    fclose(f);
    /* count that does not match the size */
    f = fopen(fa, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    f = fopen(gzi, "wb");
    fwrite(idx, 1, glen - 3, f);
    fclose(f);
    assert_null(dna_bgzf_open(fa, gzi, &err));
    assert_non_null(strstr(err.msg, "ce.fa.gz.gzi: offset 0: 16 entries do not match"));
    /* entries out of order */
    char *bad = malloc(glen);
    memcpy(bad, idx, glen);
    memcpy(bad + 8 + 16 * 3, idx + 8 + 16 * 2, 16);
    f = fopen(gzi, "wb");
    fwrite(bad, 1, glen, f);
    fclose(f);
    assert_null(dna_bgzf_open(fa, gzi, &err));
    assert_non_null(strstr(err.msg, "ce.fa.gz.gzi: offset 56: entry 3"));
    /* a good index over truncated data: refused at open (entries outside the file) */
    f = fopen(gzi, "wb");
    fwrite(idx, 1, glen, f);
    fclose(f);
    f = fopen(fa, "wb");
    fwrite(data, 1, len / 2, f);
    fclose(f);
    assert_null(dna_bgzf_open(fa, gzi, &err));
    assert_non_null(strstr(err.msg, "is out of order or outside"));
    /* a corrupt byte inside a block: reading that block fails, others work */
    char *cor = malloc(len);
    memcpy(cor, data, len);
    cor[len / 2] ^= 0x55;
    f = fopen(fa, "wb");
    fwrite(cor, 1, len, f);
    fclose(f);
    dna_bgzf *z = dna_bgzf_open(fa, gzi, &err);
    assert_non_null(z);
    char buf[100];
    assert_int_equal(dna_bgzf_read_at(z, 0, buf, sizeof buf, &err), 0);
    int failed = 0;
    for (uint64_t off = 0; off < 1060000 && !failed; off += 30000)
        failed = dna_bgzf_read_at(z, off, buf, sizeof buf, &err) < 0;
    assert_true(failed);
    assert_non_null(strstr(err.msg, "ce.fa.gz: offset"));
    assert_non_null(strstr(err.msg, "corrupt BGZF block"));
    dna_bgzf_close(z);
    free(cor);
    f = fopen(fa, "wb");
    fwrite(data, 1, len / 2, f);
    fclose(f);
    /* the genome layer then falls back to reading the stream, which reports the truncation */
    assert_null(dna_genome_open(fa, 1, &err));
    assert_non_null(strstr(err.msg, "truncated"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(bad);
    free(data);
    free(idx);
}

/* The .2bit holds the FASTA with IUPAC codes as N, case per base. */
static void test_2bit_equals_fasta(void **state)
{
    (void)state;
    sl_err err;
    dna_reader *fa = dna_reader_open(path_of("synthetic_softmasked_lambda.fa"), &err);
    dna_reader *tb = dna_reader_open(path_of("synthetic_softmasked_lambda.2bit"), &err);
    assert_non_null(fa);
    assert_non_null(tb);
    assert_string_equal(dna_reader_format(tb), "2bit");
    sl_buf a = {0}, b = {0};
    int n = 0;
    while (dna_reader_next(fa, &err) == 1) {
        assert_int_equal(dna_reader_next(tb, &err), 1);
        sl_buf_clear(&a);
        sl_buf_clear(&b);
        assert_int_equal(dna_reader_read_all(fa, &a, &err), 0);
        assert_int_equal(dna_reader_read_all(tb, &b, &err), 0);
        assert_int_equal(a.len, b.len);
        for (size_t i = 0; i < a.len; i++) {
            char c = a.data[i];
            if (!strchr("ACGTacgt", c))
                c = (c >= 'a' && c <= 'z') ? 'n' : 'N';
            if (c != b.data[i])
                fail_msg("record %d base %zu: fasta %c, 2bit %c", n, i, a.data[i], b.data[i]);
        }
        n++;
    }
    assert_int_equal(n, 3);
    /* chrSynB 5005..5009 are N outside every mask block: upper case (per-base rule) */
    dna_genome *g = dna_genome_open(path_of("synthetic_softmasked_lambda.2bit"), 1, &err);
    char w[10];
    assert_int_equal(dna_genome_fetch(g, 1, 5000, 5010, w, &err), 0);
    assert_memory_equal(w, "nnnnnNNNNN", 10);
    dna_genome_close(g);
    sl_buf_free(&a);
    sl_buf_free(&b);
    dna_reader_close(fa);
    dna_reader_close(tb);
}

/* ---- chunked reads give the same bytes as whole reads ------------------ */

static void test_chunked_reads(void **state)
{
    (void)state;
    const char *files[] = {"htslib_faidx_edgecases.fa", "htslib_multiline.fq", "synthetic_softmasked_lambda.fa.gz",
                           "rtracklayer_test.2bit", "bowtie2_reads_1_first2000.fq"};
    sl_err err;
    uint64_t st = 7;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        dna_reader *a = dna_reader_open(path_of(files[f]), &err), *b = dna_reader_open(path_of(files[f]), &err);
        sl_buf whole = {0}, parts = {0};
        while (dna_reader_next(a, &err) == 1) {
            assert_int_equal(dna_reader_next(b, &err), 1);
            sl_buf_clear(&whole);
            sl_buf_clear(&parts);
            assert_int_equal(dna_reader_read_all(a, &whole, &err), 0);
            char buf[97];
            long n;
            while ((n = dna_reader_read(b, buf, 1 + sl_rng_below(&st, sizeof buf), &err)) > 0)
                sl_buf_append(&parts, buf, (size_t)n);
            assert_int_equal(n, 0);
            assert_int_equal(whole.len, parts.len);
            if (whole.len)
                assert_memory_equal(whole.data, parts.data, whole.len);
        }
        assert_int_equal(dna_reader_next(b, &err), 0);
        sl_buf_free(&whole);
        sl_buf_free(&parts);
        dna_reader_close(a);
        dna_reader_close(b);
    }
}

/* ---- randomized FASTA/FASTQ round trip --------------------------------- */

static void test_random_fastx_round_trip(void **state)
{
    (void)state;
    const char alpha[] = "ACGTNacgtnRYKM";
    uint64_t st = 2024;
    for (int iter = 0; iter < 300; iter++) {
        int fastq = iter % 3 == 2;
        int nrec = (int)sl_rng_below(&st, 6);
        sl_buf file = {0};
        char **seqs = calloc((size_t)nrec + 1, sizeof *seqs);
        char names[8][32];
        for (int r = 0; r < nrec; r++) {
            size_t len = sl_rng_below(&st, 4) == 0 ? 0 : sl_rng_below(&st, 500);
            seqs[r] = malloc(len + 1);
            for (size_t i = 0; i < len; i++)
                seqs[r][i] = alpha[sl_rng_below(&st, sizeof alpha - 1)];
            seqs[r][len] = 0;
            snprintf(names[r], sizeof names[r], "rec%d", r);
            const char *eol = sl_rng_below(&st, 3) == 0 ? "\r\n" : "\n";
            size_t width = 1 + sl_rng_below(&st, 80);
            sl_buf_printf(&file, "%c%s%s%s", fastq ? '@' : '>', sl_rng_below(&st, 2) ? " " : "", names[r],
                          sl_rng_below(&st, 2) ? " some description" : "");
            sl_buf_puts(&file, eol);
            for (size_t i = 0; i < len; i += width) {
                size_t k = len - i < width ? len - i : width;
                sl_buf_append(&file, seqs[r] + i, k);
                sl_buf_puts(&file, eol);
            }
            if (fastq) {
                sl_buf_puts(&file, "+");
                sl_buf_puts(&file, eol);
                /* quality lines that start with '@' and '+' on purpose */
                for (size_t i = 0; i < len; i += width) {
                    size_t k = len - i < width ? len - i : width;
                    for (size_t j = 0; j < k; j++)
                        sl_buf_putc(&file, "@+>I#"[sl_rng_below(&st, 5)]);
                    sl_buf_puts(&file, eol);
                }
                if (len == 0)
                    sl_buf_puts(&file, eol);
            } else if (sl_rng_below(&st, 4) == 0) {
                sl_buf_puts(&file, eol); /* blank line after a record */
            }
        }
        if (file.len && sl_rng_below(&st, 3) == 0 && file.data[file.len - 1] == '\n' && !fastq) {
            file.len--; /* no final newline */
            if (file.len && file.data[file.len - 1] == '\r')
                file.len--;
        }
        dna_fx *fx = dna_fx_open_mem(file.data ? file.data : "", file.len, "random");
        sl_err err;
        sl_buf got = {0};
        for (int r = 0; r < nrec; r++) {
            int rc = dna_fx_next(fx, &err);
            if (rc != 1)
                fail_msg("iter %d rec %d: rc %d %s\n%s", iter, r, rc, rc < 0 ? err.msg : "", file.data);
            assert_string_equal(dna_fx_name(fx), names[r]);
            sl_buf_clear(&got);
            if (dna_fx_read_all(fx, &got, &err) < 0)
                fail_msg("iter %d: %s", iter, err.msg);
            assert_int_equal(got.len, strlen(seqs[r]));
            if (got.len)
                assert_memory_equal(got.data, seqs[r], got.len);
        }
        int rc = dna_fx_next(fx, &err);
        if (rc != 0)
            fail_msg("iter %d: trailing rc %d %s", iter, rc, rc < 0 ? err.msg : "");
        dna_fx_close(fx);
        for (int r = 0; r < nrec; r++)
            free(seqs[r]);
        free(seqs);
        sl_buf_free(&file);
        sl_buf_free(&got);
    }
}

/* ---- randomized .2bit round trip (writer here, per the UCSC layout) ----- */

static int g_big_endian; /* the writer below writes either byte order */

static void put32(sl_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    if (g_big_endian) {
        unsigned char y[4] = {x[3], x[2], x[1], x[0]};
        memcpy(x, y, 4);
    }
    sl_buf_append(b, x, 4);
}

static void put64(sl_buf *b, uint64_t v)
{
    if (g_big_endian) {
        put32(b, (uint32_t)(v >> 32));
        put32(b, (uint32_t)v);
    } else {
        put32(b, (uint32_t)v);
        put32(b, (uint32_t)(v >> 32));
    }
}

static void blocks_of(const char *s, size_t n, int (*pred)(char), sl_buf *out, uint32_t *count)
{
    sl_buf st = {0}, sz = {0};
    *count = 0;
    for (size_t i = 0; i < n;) {
        if (!pred(s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && pred(s[j]))
            j++;
        put32(&st, (uint32_t)i);
        put32(&sz, (uint32_t)(j - i));
        (*count)++;
        i = j;
    }
    put32(out, *count);
    sl_buf_append(out, st.data ? st.data : "", st.len);
    sl_buf_append(out, sz.data ? sz.data : "", sz.len);
    sl_buf_free(&st);
    sl_buf_free(&sz);
}
static int is_n(char c)
{
    return c == 'N' || c == 'n';
}
static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static void test_random_2bit_round_trip(void **state)
{
    (void)state;
    uint64_t st = 99;
    const char alpha[] = "ACGTNacgtn";
    for (int iter = 0; iter < 100; iter++) {
        /* version 0 (32-bit offsets) and 1 (64-bit), little- and big-endian */
        int version = iter % 2;
        g_big_endian = (iter / 2) % 2;
        int nseq = 1 + (int)sl_rng_below(&st, 4);
        char *seqs[4];
        size_t lens[4];
        sl_buf body[4];
        for (int i = 0; i < nseq; i++) {
            lens[i] = sl_rng_below(&st, 300);
            seqs[i] = malloc(lens[i] + 1);
            /* runs, so blocks have some length */
            for (size_t k = 0; k < lens[i];) {
                char c = alpha[sl_rng_below(&st, sizeof alpha - 1)];
                size_t run = 1 + sl_rng_below(&st, 12);
                for (size_t m = 0; m < run && k < lens[i]; m++, k++)
                    seqs[i][k] = (c == 'N' || c == 'n') ? c : alpha[(sl_rng_below(&st, 4)) + (is_lower(c) ? 5 : 0)];
            }
            memset(&body[i], 0, sizeof body[i]);
            put32(&body[i], (uint32_t)lens[i]);
            uint32_t cnt;
            blocks_of(seqs[i], lens[i], is_n, &body[i], &cnt);
            blocks_of(seqs[i], lens[i], is_lower, &body[i], &cnt);
            put32(&body[i], 0);
            for (size_t k = 0; k < lens[i]; k += 4) {
                unsigned char v = 0;
                for (size_t m = 0; m < 4; m++) {
                    v <<= 2;
                    if (k + m < lens[i]) {
                        char c = (char)(seqs[i][k + m] & ~0x20);
                        v |= c == 'C' ? 1 : c == 'A' ? 2 : c == 'G' ? 3 : 0;
                    }
                }
                sl_buf_append(&body[i], &v, 1);
            }
        }
        sl_buf file = {0};
        put32(&file, 0x1A412743);
        put32(&file, (uint32_t)version);
        put32(&file, (uint32_t)nseq);
        put32(&file, 0);
        uint32_t off = 16;
        for (int i = 0; i < nseq; i++)
            off += 1 + 2 + (version ? 8 : 4);
        for (int i = 0; i < nseq; i++) {
            char nm[3] = {'s', (char)('0' + i), 0};
            unsigned char l = 2;
            sl_buf_append(&file, &l, 1);
            sl_buf_append(&file, nm, 2);
            if (version)
                put64(&file, off);
            else
                put32(&file, off);
            off += (uint32_t)body[i].len;
        }
        for (int i = 0; i < nseq; i++)
            sl_buf_append(&file, body[i].data, body[i].len);
        sl_err err;
        dna_2bit *t = dna_2bit_open_mem(file.data, file.len, "random.2bit", &err);
        if (!t)
            fail_msg("%s", err.msg);
        assert_int_equal(dna_2bit_count(t), nseq);
        for (int i = 0; i < nseq; i++) {
            assert_int_equal(dna_2bit_length(t, (size_t)i), lens[i]);
            char *out = malloc(lens[i] + 1);
            assert_int_equal(dna_2bit_fetch(t, (size_t)i, 0, lens[i], out, &err), 0);
            if (lens[i])
                assert_memory_equal(out, seqs[i], lens[i]);
            if (lens[i] > 2) {
                uint64_t a = sl_rng_below(&st, lens[i]), b = a + sl_rng_below(&st, lens[i] - a + 1);
                assert_int_equal(dna_2bit_fetch(t, (size_t)i, a, b, out, &err), 0);
                assert_memory_equal(out, seqs[i] + a, b - a);
            }
            free(out);
            free(seqs[i]);
            sl_buf_free(&body[i]);
        }
        /* any truncation of the file is an error at open or at fetch, never a crash */
        for (int k = 0; k < 5; k++) {
            size_t cut = sl_rng_below(&st, file.len);
            dna_2bit *u = dna_2bit_open_mem(file.data, cut, "cut.2bit", &err);
            if (u) {
                for (size_t i = 0; i < dna_2bit_count(u); i++) {
                    char *o = malloc(dna_2bit_length(u, i) + 1);
                    assert_int_equal(dna_2bit_fetch(u, i, 0, dna_2bit_length(u, i), o, &err), 0);
                    free(o);
                }
                dna_2bit_close(u);
            } else {
                assert_non_null(strstr(err.msg, "cut.2bit"));
            }
        }
        dna_2bit_close(t);
        sl_buf_free(&file);
    }
    g_big_endian = 0;
    /* an unknown version is refused */
    sl_buf file = {0};
    put32(&file, 0x1A412743);
    put32(&file, 2);
    put32(&file, 0);
    put32(&file, 0);
    sl_err err;
    assert_null(dna_2bit_open_mem(file.data, file.len, "v2.2bit", &err));
    assert_non_null(strstr(err.msg, "v2.2bit: offset 4: unsupported .2bit version 2"));
    sl_buf_free(&file);
}

/* ---- bad input ---------------------------------------------------------- */

static void expect_read_error(const char *file, const char *pattern)
{
    sl_err err = {{0}};
    dna_reader *r = dna_reader_open(path_of(file), &err);
    int failed = r == NULL;
    sl_buf seq = {0};
    if (r) {
        int rc;
        while ((rc = dna_reader_next(r, &err)) == 1)
            if (dna_reader_read_all(r, &seq, &err) < 0) {
                rc = -1;
                break;
            }
        failed = rc < 0;
        dna_reader_close(r);
    }
    sl_buf_free(&seq);
    if (!failed)
        fail_msg("%s: no error", file);
    if (!strstr(err.msg, file) || !strstr(err.msg, pattern) || strchr(err.msg, '\n'))
        fail_msg("%s: message '%s' lacks the file name or '%s'", file, err.msg, pattern);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    expect_read_error("bad/no_header.fa", ":1: no FASTA/FASTQ header");
    expect_read_error("bad/binary_in_sequence.fa", ":3: invalid byte 0x00");
    expect_read_error("bad/truncated_quality.fq", "truncated FASTQ record 'r1'");
    expect_read_error("bad/long_quality.fq", ":4: FASTQ record 'r1' has 6 quality characters for 4 bases");
    expect_read_error("bad/truncated_gzip.fa.gz", "");
    expect_read_error("bad/truncated_bgzf.fa.gz", "");
    expect_read_error("bad/lying_offset.2bit", "offset 141: sequence");
    expect_read_error("bad/huge_nblock_count.2bit", "claims 2147483647 N blocks");
    expect_read_error("bad/dna_size_past_end.2bit", "packed bytes, past the end");
    expect_read_error("bad/truncated_header.2bit", "offset 0: file too short");
    sl_err err;
    dna_bed bed = {0};
    assert_int_equal(dna_bed_load(path_of("bad/bad_interval.bed"), 4, &bed, &err), -1);
    assert_non_null(strstr(err.msg, "bad_interval.bed:1: BED start 100 is after end 50"));
    /* a stale .fai is detected, not trusted */
    dna_fai fai = {0};
    const char *stale = "chrSynA\t31537\t50\t60\t61\n";
    assert_int_equal(dna_fai_parse(stale, strlen(stale), "stale.fai", &fai, &err), 0);
    FILE *f = fopen(path_of("synthetic_softmasked_lambda.fa"), "rb");
    char out[200];
    assert_int_equal(dna_fai_fetch(fileno(f), "synthetic_softmasked_lambda.fa", &fai.rec[0], 0, 200, out, &err), -1);
    assert_non_null(strstr(err.msg, "does not match"));
    fclose(f);
    dna_fai_free(&fai);
    const char *badfai = "x\t10\tabc\t60\t61\n";
    assert_int_equal(dna_fai_parse(badfai, strlen(badfai), "bad.fai", &fai, &err), -1);
    assert_non_null(strstr(err.msg, "bad.fai:1:"));
}

/* ---- BED + HyenaDNA intervals vs make_fixtures.py ---------------------- */

static void test_hyena_intervals(void **state)
{
    (void)state;
    sl_err err;
    dna_bed bed = {0};
    assert_int_equal(dna_bed_load(path_of("synthetic_intervals.bed"), 4, &bed, &err), 0);
    dna_genome *g = dna_genome_open(path_of("synthetic_softmasked_lambda.fa"), 1, &err);
    assert_non_null(g);
    size_t len;
    char *tsv = slurp(path_of("synthetic_intervals_hyena256.tsv"), &len);
    char *save = NULL, *line = strtok_r(tsv, "\n", &save);
    size_t i = 0;
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char chrom[64], split[16], seq[300];
        unsigned long long a, b;
        seq[0] = 0;
        int nf = sscanf(line, "%63s\t%llu\t%llu\t%15s\t%299s", chrom, &a, &b, split, seq);
        assert_true(nf >= 4);
        assert_true(i < bed.n);
        const dna_bed_rec *r = &bed.rec[i++];
        assert_string_equal(r->chrom, chrom);
        assert_string_equal(r->split, split);
        long ci = dna_genome_find(g, chrom);
        assert_true(ci >= 0);
        uint64_t s, e;
        dna_hyena_interval(dna_genome_length(g, (size_t)ci), r->start, r->end, 256, &s, &e);
        assert_int_equal(s, a);
        assert_int_equal(e, b);
        char got[300];
        assert_int_equal(dna_genome_fetch(g, (size_t)ci, s, e, got, &err), 0);
        assert_memory_equal(got, seq, e - s);
    }
    assert_int_equal(i, bed.n);
    free(tsv);
    dna_genome_close(g);
    dna_bed_free(&bed);
}

/* Mamba-paper and Caduceus BED windows vs make_fixtures.py (bed_window_modes.tsv). */
static void test_bed_window_modes(void **state)
{
    (void)state;
    size_t len;
    char *tsv = slurp(path_of("bed_window_modes.tsv"), &len);
    char *save = NULL;
    int rows = 0;
    for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char mode[16];
        unsigned long long clen, a, b, L;
        int off = 0;
        assert_int_equal(sscanf(line, "%15s\t%llu\t%llu\t%llu\t%llu\t%n", mode, &clen, &a, &b, &L, &off), 5);
        int m = !strcmp(mode, "mamba") ? DNA_BED_MAMBA : DNA_BED_CADUCEUS;
        uint64_t n = dna_bed_window_count(m, a, b, L);
        const char *p = line + off;
        for (uint64_t k = 0; k < n; k++) {
            unsigned long long ws, we;
            int used = 0;
            assert_int_equal(sscanf(p, "%llu-%llu%n", &ws, &we, &used), 2);
            p += used + (p[used] == ',');
            uint64_t s, e;
            dna_bed_window(m, clen, a, b, L, k, &s, &e);
            if (s != ws || e != we)
                fail_msg("%s len %llu [%llu,%llu) L %llu piece %llu: got %llu-%llu, want %llu-%llu", mode, clen, a, b,
                         L, (unsigned long long)k, (unsigned long long)s, (unsigned long long)e, ws, we);
        }
        assert_int_equal(*p, 0); /* as many windows as expected */
        rows++;
    }
    assert_int_equal(rows, 120);
    free(tsv);
}

/* Regions read by pyfaidx, and the windows HyenaDNA's and Caduceus'
 * FastaInterval classes return, both executed by make_reference_vectors.py. */
static uint32_t crc_of_region(dna_genome *g, const char *chrom, uint64_t a, uint64_t b)
{
    sl_err err;
    long ci = dna_genome_find(g, chrom);
    assert_true(ci >= 0);
    char *buf = malloc(b - a + 1);
    if (dna_genome_fetch(g, (size_t)ci, a, b, buf, &err) < 0)
        fail_msg("%s", err.msg);
    uint32_t c = (uint32_t)crc32(0, (const Bytef *)buf, (uInt)(b - a));
    free(buf);
    return c;
}

static void test_reference_regions(void **state)
{
    (void)state;
    sl_err err;
    size_t len;
    char *tsv = slurp(path_of("pyfaidx_regions.tsv"), &len);
    char *save = NULL;
    int rows = 0;
    for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char file[128], rec[128];
        unsigned long long a, b;
        unsigned crc;
        assert_int_equal(sscanf(line, "%127[^\t]\t%127[^\t]\t%llu\t%llu\t%x", file, rec, &a, &b, &crc), 5);
        dna_genome *g = dna_genome_open(path_of(file), 1, &err);
        assert_non_null(g);
        if (crc_of_region(g, rec, a, b) != crc)
            fail_msg("%s %s:%llu-%llu differs from pyfaidx", file, rec, a, b);
        dna_genome_close(g);
        rows++;
    }
    assert_int_equal(rows, 160);
    free(tsv);

    dna_bed bed = {0};
    assert_int_equal(dna_bed_load(path_of("synthetic_intervals.bed"), 4, &bed, &err), 0);
    const char *genomes[] = {"synthetic_softmasked_lambda.fa", "synthetic_softmasked_lambda.fa.gz"};
    for (int gi = 0; gi < 2; gi++) {
        dna_genome *g = dna_genome_open(path_of(genomes[gi]), 1, &err);
        tsv = slurp(path_of("reference_intervals.tsv"), &len);
        save = NULL;
        rows = 0;
        for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] == '#')
                continue;
            char mode[16];
            unsigned long long bl, L, piece, n;
            unsigned crc;
            assert_int_equal(sscanf(line, "%15s\t%llu\t%llu\t%llu\t%llu\t%x", mode, &bl, &L, &piece, &n, &crc), 6);
            const dna_bed_rec *r = &bed.rec[bl - 1];
            uint64_t clen = dna_genome_length(g, (size_t)dna_genome_find(g, r->chrom)), s, e;
            dna_bed_window(!strcmp(mode, "hyena") ? DNA_BED_HYENA : DNA_BED_CADUCEUS, clen, r->start, r->end, L, piece,
                           &s, &e);
            if (e - s != n || crc_of_region(g, r->chrom, s, e) != crc)
                fail_msg("%s BED line %llu L %llu piece %llu: [%llu,%llu) differs from the reference", mode, bl, L,
                         piece, (unsigned long long)s, (unsigned long long)e);
            rows++;
        }
        assert_true(rows > 3800);
        free(tsv);
        dna_genome_close(g);
    }
    dna_bed_free(&bed);
}

static void test_windows(void **state)
{
    (void)state;
    assert_int_equal(dna_window_count(10, 4, 4, 0), 3); /* 0-4 4-8 8-10 */
    assert_int_equal(dna_window_count(10, 4, 4, 1), 2);
    assert_int_equal(dna_window_count(8, 4, 4, 0), 2);
    assert_int_equal(dna_window_count(3, 4, 4, 0), 1);
    assert_int_equal(dna_window_count(3, 4, 4, 1), 0);
    assert_int_equal(dna_window_count(10, 8, 1, 0), 3); /* the tail is covered already */
    assert_int_equal(dna_window_count(11, 4, 6, 0), 2); /* next start 12 is past the end */
    assert_int_equal(dna_window_count(0, 4, 4, 0), 0);
    /* property: windows cover every base once the tail is kept (stride <= L) */
    uint64_t st = 5;
    for (int k = 0; k < 2000; k++) {
        uint64_t len = sl_rng_below(&st, 200), L = 1 + sl_rng_below(&st, 50), S = 1 + sl_rng_below(&st, L);
        uint64_t n = dna_window_count(len, L, S, 0);
        uint64_t covered = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t a = i * S, b = a + L < len ? a + L : len;
            assert_true(a < len && b <= len);
            if (b > covered)
                covered = b;
        }
        assert_int_equal(covered, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_match_python),
        cmocka_unit_test(test_fai_equals_samtools),
        cmocka_unit_test(test_genome_random_access),
        cmocka_unit_test(test_bgzf_random_access),
        cmocka_unit_test(test_bgzf_bad),
        cmocka_unit_test(test_2bit_equals_fasta),
        cmocka_unit_test(test_chunked_reads),
        cmocka_unit_test(test_random_fastx_round_trip),
        cmocka_unit_test(test_random_2bit_round_trip),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_hyena_intervals),
        cmocka_unit_test(test_bed_window_modes),
        cmocka_unit_test(test_reference_regions),
        cmocka_unit_test(test_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
