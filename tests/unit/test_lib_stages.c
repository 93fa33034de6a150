/* The stages moved out of the CLI, called as a library: tokenize
 * ids (tokenize/ids.h), export and import megatron (shard/megatron_stage.h),
 * cat of streams and shard directories (stream/cat.h, shard/cat.h) and
 * detokenize audio (audio/detokenize.h). Evidence: the Megatron files that
 * megatron-core's own writer made (tests/data/shard, SOURCES.md), the
 * documents of the JSON Lines inputs, documents reassembled from shard
 * pieces, and torchaudio's mu-law decoding formula; messages name option
 * fields, not flags. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/support.h"

#include "audio/detokenize.h"
#include "audio/quantize.h"
#include "shard/cat.h"
#include "shard/megatron_stage.h"
#include "stream/cat.h"
#include "stream/io.h"
#include "base/json.h"
#include "stream/tokstream.h"
#include "tokenize/ids.h"

static char tmpdir[64];
static char pathbuf[8][4200];
static int pathi;

/* A path in the scratch directory (8 live at a time). */
static const char *tmp(const char *name)
{
    char *p = pathbuf[pathi++ & 7];
    snprintf(p, 4200, "%s/%s", tmpdir, name);
    return p;
}

static const char *data(const char *name)
{
    return sl_test_path("tests/data/%s", name);
}

static char *slurp(const char *path, size_t *len)
{
    char *text;
    size_t n;
    sl_err err;
    assert_int_equal(sl_read_file(path, &text, &n, &err), 0);
    if (len)
        *len = n;
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The documents of a JSON Lines file with "ids" arrays. */
typedef struct {
    char id[64];
    uint32_t tok[512];
    size_t n;
} jdoc;

static size_t read_jsonl(const char *path, jdoc *docs, size_t max)
{
    size_t len, n = 0;
    char *text = slurp(path, &len);
    sl_err err;
    for (char *line = text, *nl; line < text + len && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        assert_non_null(jd);
        const sl_json *r = sl_json_root(jd), *ids = sl_json_get(r, "ids");
        assert_true(n < max);
        jdoc *d = &docs[n++];
        const char *id = sl_json_get_str(r, "id");
        snprintf(d->id, sizeof d->id, "%s", id ? id : "");
        d->n = ids->n;
        for (size_t i = 0; i < ids->n; i++) {
            int64_t v;
            assert_true(sl_json_is_int(ids->kids[i], &v));
            d->tok[i] = (uint32_t)v;
        }
        sl_json_free(jd);
    }
    free(text);
    return n;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

/* tokenize ids -> export megatron: byte-identical to megatron-core's
 * IndexedDatasetBuilder (uint16 and int32); import gives the documents back. */
static void test_megatron(void **state)
{
    (void)state;
    const char *names[] = {"u16", "i32"};
    const uint32_t vocab[] = {50277, 100000};
    for (int k = 0; k < 2; k++) {
        char src[64], ref[64], tok[64], pre[64];
        snprintf(src, sizeof src, "shard/mega_%s.jsonl", names[k]);
        snprintf(ref, sizeof ref, "shard/mega_%s", names[k]);
        snprintf(tok, sizeof tok, "%s.tok", names[k]);
        snprintf(pre, sizeof pre, "%s", tmp(names[k]));
        sl_ids_opts io = SL_IDS_OPTS_INIT;
        io.vocab_size = vocab[k];
        io.eos = 0;
        const char *in[] = {data(src)};
        sl_err err = {{0}};
        char tokpath[4200];
        snprintf(tokpath, sizeof tokpath, "%s", tmp(tok));
        assert_int_equal(sl_ids_run(&io, in, 1, tokpath, &err), 0);
        sl_export_megatron_opts eo = SL_EXPORT_MEGATRON_OPTS_INIT;
        const char *tin[] = {tokpath};
        assert_int_equal(sl_export_megatron_run(&eo, tin, 1, pre, &err), 0);
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s.idx", pre);
        snprintf(b, sizeof b, "%s.idx", data(ref));
        assert_same_file(a, b);
        snprintf(a, sizeof a, "%s.bin", pre);
        snprintf(b, sizeof b, "%s.bin", data(ref));
        assert_same_file(a, b);
    }
    /* import of megatron-core's dataset: the non-empty documents of the
     * source, EOD removed, ids from the document numbers */
    static jdoc want[64];
    size_t nw = read_jsonl(data("shard/mega_u16.jsonl"), want, 64);
    sl_import_megatron_opts im = SL_IMPORT_MEGATRON_OPTS_INIT;
    im.eos = 0;
    im.vocab_size = 50277;
    sl_err err = {{0}};
    char back[4200];
    snprintf(back, sizeof back, "%s", tmp("back.tok"));
    assert_int_equal(sl_import_megatron_run(&im, data("shard/mega_u16"), back, &err), 0);
    sl_input *in = sl_input_open(back, &err);
    assert_non_null(in);
    sl_ts_reader *r = sl_ts_reader_open(in, &err);
    assert_non_null(r);
    assert_int_equal(sl_ts_reader_header(r)->eos, 0);
    assert_int_equal(sl_ts_reader_header(r)->vocab_size, 50277);
    sl_doc d = {0};
    size_t got = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!want[i].n)
            continue; /* Megatron drops empty documents */
        assert_int_equal(sl_ts_read_doc(r, &d, &err), 1);
        char id[24];
        snprintf(id, sizeof id, "%zu", got++);
        assert_string_equal(d.id, id);
        assert_int_equal(d.n_tokens, want[i].n);
        assert_memory_equal(d.tokens, want[i].tok, want[i].n * sizeof *d.tokens);
    }
    assert_int_equal(sl_ts_read_doc(r, &d, &err), 0);
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_input_close(in);

    /* messages name the fields; nothing is left behind */
    im.vocab_size = 5;
    assert_int_equal(sl_import_megatron_run(&im, data("shard/mega_u16"), tmp("bad.tok"), &err), -1);
    assert_non_null(strstr(err.msg, "is not below `vocab_size` 5"));
    assert_false(exists(tmp("bad.tok")));
    sl_ids_opts io = SL_IDS_OPTS_INIT;
    io.vocab_size = 50277;
    const char *src[] = {data("shard/mega_u16.jsonl")};
    char noeos[4200];
    snprintf(noeos, sizeof noeos, "%s", tmp("noeos.tok"));
    assert_int_equal(sl_ids_run(&io, src, 1, noeos, &err), 0);
    sl_export_megatron_opts eo = SL_EXPORT_MEGATRON_OPTS_INIT;
    const char *nin[] = {noeos};
    assert_int_equal(sl_export_megatron_run(&eo, nin, 1, tmp("bad"), &err), -1);
    assert_non_null(strstr(err.msg, "the stream has no eos: give `eos` ID (or `no_eos`)"));
    assert_null(strstr(err.msg, "--"));
    assert_false(exists(tmp("bad.idx")));
    assert_false(exists(tmp("bad.bin")));
    eo.no_eos = 1; /* without an eos: the sidecar has the ids */
    assert_int_equal(sl_export_megatron_run(&eo, nin, 1, tmp("ne"), &err), 0);
    char *side = slurp(tmp("ne.documents.jsonl"), NULL);
    assert_non_null(strstr(side, "{\"doc\":0,\"id\":\""));
    free(side);
}

/* tokenize ids and cat: the lines a reader of the format expects, written
 * out by hand here; a decoder callback adds "text"; the header. */
static int letters(void *ctx, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    (void)err;
    for (size_t i = 0; i < n; i++)
        sl_buf_putc(out, (char)(*(const char *)ctx + (char)ids[i]));
    return 0;
}

static void test_ids_cat(void **state)
{
    (void)state;
    char in[4200], tok[4200], out[4200];
    snprintf(in, sizeof in, "%s", tmp("c.jsonl"));
    snprintf(tok, sizeof tok, "%s", tmp("c.tok"));
    snprintf(out, sizeof out, "%s", tmp("c.out"));
    write_text(in, "{\"id\":\"a\",\"ids\":[1,2,3],\"lang\":\"en\"}\n"
                   "\n"
                   "{\"ids\":[],\"src_bytes\":7}\n"
                   "{\"id\":5,\"toks\":[0],\"ids\":[4]}\r\n");
    sl_ids_opts io = SL_IDS_OPTS_INIT;
    io.vocab_size = 10;
    io.eos = 9;
    io.tokenizer = "handmade";
    const char *ins[] = {in};
    sl_err err = {{0}};
    assert_int_equal(sl_ids_run(&io, ins, 1, tok, &err), 0);
    sl_cat_opts co = SL_CAT_OPTS_INIT;
    const char *ts[] = {tok};
    assert_int_equal(sl_cat_run(&co, ts, 1, out, &err), 0);
    char *got = slurp(out, NULL);
    char want[8192];
    snprintf(want, sizeof want,
             "{\"id\":\"a\",\"ids\":[1,2,3],\"lang\":\"en\"}\n"
             "{\"id\":\"%s:3\",\"ids\":[],\"src_bytes\":7}\n"
             "{\"id\":\"5\",\"ids\":[4],\"toks\":[0]}\n",
             in);
    assert_string_equal(got, want);
    free(got);
    co.no_ids = 1;
    co.decode = letters;
    co.decode_ctx = "a";
    assert_int_equal(sl_cat_run(&co, ts, 1, out, &err), 0);
    got = slurp(out, NULL);
    snprintf(want, sizeof want,
             "{\"id\":\"a\",\"text\":\"bcd\",\"lang\":\"en\"}\n"
             "{\"id\":\"%s:3\",\"src_bytes\":7,\"text\":\"\"}\n"
             "{\"id\":\"5\",\"text\":\"e\",\"toks\":[0]}\n",
             in);
    assert_string_equal(got, want);
    free(got);
    co.header_only = 1;
    assert_int_equal(sl_cat_run(&co, ts, 1, out, &err), 0);
    got = slurp(out, NULL);
    assert_non_null(strstr(got, "\"modality\":\"ids\",\"vocab_size\":10,\"token_bytes\":1,\"eos\":9,\"bos\":null"));
    assert_non_null(strstr(got, "\"tokenizer\":\"handmade\""));
    free(got);

    /* errors: the option check names `vocab_size`; a bad line names file:line */
    io.eos = 10;
    assert_int_equal(sl_ids_opts_check(&io, &err), -1);
    assert_string_equal(err.msg, "special id 10 is not below `vocab_size` 10");
    io.eos = SL_TS_NO_ID;
    write_text(in, "{\"ids\":[1]}\n{\"ids\":[1,-1]}\n");
    assert_int_equal(sl_ids_run(&io, ins, 1, tmp("c2.tok"), &err), -1);
    assert_non_null(strstr(err.msg, "c.jsonl:2: \"ids\"[1] is not a token id"));
    assert_false(exists(tmp("c2.tok")));
    /* a truncated stream: an error naming it, no output file */
    size_t len;
    char *t = slurp(tok, &len);
    FILE *f = fopen(tmp("cut.tok"), "wb");
    fwrite(t, 1, len - 3, f);
    fclose(f);
    free(t);
    const char *cut[] = {tmp("cut.tok")};
    co = (sl_cat_opts)SL_CAT_OPTS_INIT;
    assert_int_equal(sl_cat_run(&co, cut, 1, tmp("cut.out"), &err), -1);
    assert_non_null(strstr(err.msg, "cut.tok"));
    assert_false(exists(tmp("cut.out")));
}

/* cat of a shard directory: the pieces of each document, in doc_offset
 * order, are its tokens and the EOS (the shard is made by the CLI). */
static void test_shard_cat(void **state)
{
    (void)state;
    const char *bin = getenv("SLUICE_BIN");
    if (!bin)
        fail_msg("SLUICE_BIN is not set");
    char in[4200], dir[4200], out[4200], cmd[16000];
    snprintf(in, sizeof in, "%s", tmp("s.jsonl"));
    snprintf(dir, sizeof dir, "%s", tmp("shards"));
    snprintf(out, sizeof out, "%s", tmp("s.out"));
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    static jdoc docs[40];
    for (int i = 0; i < 40; i++) {
        fprintf(f, "{\"id\":\"d%d\",\"ids\":[", i);
        int n = (i * 7) % 23;
        for (int k = 0; k < n; k++)
            fprintf(f, "%s%d", k ? "," : "", 2 + (i * 31 + k * 5) % 97);
        fprintf(f, "]}\n");
    }
    fclose(f);
    size_t nd = read_jsonl(in, docs, 40);
    snprintf(cmd, sizeof cmd, "'%s' tokenize ids --vocab-size 100 --eos 1 '%s' | '%s' shard --seq-len 16 -o '%s'", bin,
             in, bin, dir);
    assert_int_equal(system(cmd), 0);
    sl_err err = {{0}};
    assert_int_equal(sl_cat_shard_run(dir, -1, out, &err), 0);
    static uint32_t got[40][64];
    static size_t ngot[40];
    memset(ngot, 0, sizeof ngot);
    size_t len;
    char *text = slurp(out, &len);
    for (char *line = text, *nl; line < text + len && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        sl_json_doc *jd = sl_json_parse(line, (size_t)(nl - line), NULL, &err);
        assert_non_null(jd);
        const sl_json *r = sl_json_root(jd), *ids = sl_json_get(r, "ids");
        int64_t doc, off, stage;
        assert_int_equal(sl_json_get_int(r, "doc", &doc), 0);
        assert_int_equal(sl_json_get_int(r, "doc_offset", &off), 0);
        assert_int_equal(sl_json_get_int(r, "stage", &stage), 0);
        assert_int_equal(stage, 0);
        assert_true(doc >= 0 && doc < 40);
        assert_int_equal((size_t)off, ngot[doc]); /* pieces come in order */
        char id[16];
        snprintf(id, sizeof id, "d%d", (int)doc);
        assert_string_equal(sl_json_get_str(r, "id"), id);
        for (size_t i = 0; i < ids->n; i++) {
            int64_t v;
            assert_true(sl_json_is_int(ids->kids[i], &v));
            got[doc][ngot[doc]++] = (uint32_t)v;
        }
        sl_json_free(jd);
    }
    free(text);
    for (size_t i = 0; i < nd; i++) {
        assert_int_equal(ngot[i], docs[i].n + 1);
        assert_memory_equal(got[i], docs[i].tok, docs[i].n * sizeof(uint32_t));
        assert_int_equal(got[i][docs[i].n], 1);
    }
    /* a stage the shard does not have */
    assert_int_equal(sl_cat_shard_run(dir, 3, tmp("s2.out"), &err), SL_SHARD_CAT_NO_STAGE);
    assert_string_equal(err.msg, "`stage` 3: the shard has 1 stage(s)");
    assert_false(exists(tmp("s2.out")));
}

/* detokenize audio: torchaudio's mu_law_decoding of the codes, 16-bit,
 * cut to the "samples" of the metadata (or not, with keep_pad). */
static double mulaw_decode(uint32_t k, int bits)
{
    double mu = (double)((1u << bits) - 1), y = 2.0 * k / mu - 1;
    return (y < 0 ? -1 : 1) * (pow(1 + mu, fabs(y)) - 1) / mu;
}

static void write_audio(const char *path, const char *extra)
{
    sl_err err = {{0}};
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_AUDIO, 256);
    if (extra)
        sl_ts_header_set_extra(&h, extra);
    sl_output *out = sl_output_open(path, &err);
    assert_non_null(out);
    sl_ts_writer *w = sl_ts_writer_open(out, &h, &err);
    assert_non_null(w);
    sl_doc d = {0};
    sl_doc_set_id(&d, "dir/clip one.flac@800", strlen("dir/clip one.flac@800"));
    sl_doc_set_meta(&d, "{\"samples\":3}", 13);
    const uint32_t codes[] = {0, 255, 200, 7, 7};
    for (int i = 0; i < 5; i++)
        sl_doc_push(&d, codes[i]);
    assert_int_equal(sl_ts_write_doc(w, &d, &err), 0);
    assert_int_equal(sl_ts_writer_finish(w, &err), 0);
    assert_int_equal(sl_output_commit(out, &err), 0);
    sl_doc_free(&d);
    sl_ts_header_free(&h);
}

static void test_audio_detok(void **state)
{
    (void)state;
    char tok[4200], dir[4200], wav[4300];
    snprintf(tok, sizeof tok, "%s", tmp("a.tok"));
    snprintf(dir, sizeof dir, "%s", tmp("wavs"));
    write_audio(tok, "{\"quantizer\":\"mulaw\",\"bits\":8,\"sample_rate\":8000}");
    sl_audio_detok_opts o = SL_AUDIO_DETOK_OPTS_INIT;
    sl_err err = {{0}};
    uint64_t files = 0;
    assert_int_equal(sl_audio_detok_run(&o, tok, dir, &files, &err), 0);
    assert_int_equal(files, 1);
    snprintf(wav, sizeof wav, "%s/000000-dir_clip_one@800.wav", dir);
    size_t len;
    unsigned char *b = (unsigned char *)slurp(wav, &len);
    assert_int_equal(len, 44 + 2 * 3);
    assert_memory_equal(b, "RIFF", 4);
    assert_int_equal(b[24] | b[25] << 8, 8000); /* the header's sample rate */
    const uint32_t codes[] = {0, 255, 200};
    for (int i = 0; i < 3; i++) {
        int16_t s = (int16_t)(b[44 + 2 * i] | b[45 + 2 * i] << 8);
        assert_true(fabs(s - mulaw_decode(codes[i], 8) * 32768.0) <= 1.0);
    }
    free(b);
    /* options override the header; keep_pad keeps all 5 codes */
    o.rate = 1000;
    o.keep_pad = 1;
    assert_int_equal(sl_audio_detok_run(&o, tok, dir, NULL, &err), 0);
    b = (unsigned char *)slurp(wav, &len);
    assert_int_equal(len, 44 + 2 * 5);
    assert_int_equal(b[24] | b[25] << 8, 1000);
    free(b);
    /* a header without a quantizer: the message names the field, no directory */
    write_audio(tok, NULL);
    o = (sl_audio_detok_opts)SL_AUDIO_DETOK_OPTS_INIT;
    assert_int_equal(sl_audio_detok_run(&o, tok, tmp("none"), NULL, &err), -1);
    assert_non_null(strstr(err.msg, "does not name the quantizer; give `quantizer`"));
    assert_false(exists(tmp("none")));
    o.quantizer = SL_AQ_MULAW;
    o.bits = 8;
    assert_int_equal(sl_audio_detok_run(&o, tok, tmp("none"), NULL, &err), -1);
    assert_non_null(strstr(err.msg, "does not name the sample rate; give `rate`"));
}

static int setup(void **state)
{
    (void)state;
    char *d = sl_test_tmpdir("sluice-stages-unit");
    int ok = d && (size_t)snprintf(tmpdir, sizeof tmpdir, "%s", d) < sizeof tmpdir;
    free(d);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sl_test_rmtree(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron),
        cmocka_unit_test(test_ids_cat),
        cmocka_unit_test(test_shard_cat),
        cmocka_unit_test(test_audio_detok),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
