/* `sluice tokenize audio`: audio files to a token stream of quantized samples. */
#include <dirent.h>
#include <errno.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audio/clips.h"
#include "audio/decode.h"
#include "audio/quantize.h"
#include "cli/commands.h"
#include "stream/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char HELP[] =
    "Decodes each input (WAV PCM 8/16/24/32-bit, float, WAVE_FORMAT_EXTENSIBLE, G.711 WAV, FLAC,\n"
    "Ogg Vorbis, and whatever else libsndfile reads), averages the channels to mono, resamples to\n"
    "--rate with libsoxr, cuts clips and quantizes each clip to codes 0..2^bits-1. One document per\n"
    "clip, id '<file>@<first sample>', metadata {file, offset, samples, sample_rate[, split]}.\n"
    "A directory argument means every audio file below it (natural sort). No FILES: standard input.\n"
    "\n"
    "options:\n"
    "  --quantizer Q       mulaw-s4 (default): SaShiMi (state-spaces/s4) mu-law: each clip min-max\n"
    "                      scaled to [-1,1], mu=2^bits-1, floor(v*(2^bits-0.01)+0.005);\n"
    "                      mulaw: WaveNet/torchaudio mu-law on the raw amplitude;\n"
    "                      linear: SaShiMi linear (clip min-max scaled to [0,1]);\n"
    "                      g711: ITU-T G.711 mu-law bytes (not amplitude-ordered; interop only)\n"
    "  --bits B            bits per code, vocabulary 2^B (default 8; 2..16; g711: 8 only)\n"
    "  --rate HZ           output sample rate (default 16000); files at another rate are\n"
    "                      resampled with libsoxr\n"
    "  --resample-quality Q  libsoxr recipe: quick|low|medium|high|very-high (default high)\n"
    "  --clip-len N        clip length in samples at --rate (default 0: one clip per file);\n"
    "                      YouTubeMix in SaShiMi: 131072\n"
    "  --overlap M         samples shared by consecutive clips (default 0; < --clip-len)\n"
    "  --drop-last         drop each file's final clip when it is shorter than --clip-len\n"
    "                      (SaShiMi's drop_last; default keeps it)\n"
    "  --pad-to N          pad every clip to exactly N tokens with --pad-id (SC09: 16000); implies\n"
    "                      --clip-len N when --clip-len is not given\n"
    "  --pad-id K          padding token (default 2^(bits-1) = 128, SaShiMi's q_zero); recorded as\n"
    "                      the stream's pad id\n"
    "  --split A:B:C       assign whole files to train/valid/test with these weights (YouTubeMix:\n"
    "                      88:6:6); each document's metadata gets \"split\"\n"
    "  --split-by M        index (default): by position among all input files in natural order,\n"
    "                      train = [0, int(n*A/(A+B+C))), valid next, test the rest (SaShiMi);\n"
    "                      hash: by XXH64 of the file path with --seed\n"
    "  --seed S            seed for --split-by hash (default 0)\n"
    "  --valid-list F, --test-list F\n"
    "                      split by lists instead, as SC09 (Speech Commands) does: F has one path\n"
    "                      per line ('zero/0a2b400e_nohash_0.wav'), matched against the end of each\n"
    "                      input path; listed files are valid/test, all others train\n"
    "  --part P            keep only the files of one part: train|valid|test (needs a split)\n"
    "  --skip-bad          warn about undecodable files and go on (default: stop with an error)\n"
    "\n"
    "The stream header says modality audio, vocab 2^bits and, in 'extra', sample_rate, quantizer,\n"
    "bits and start_token (2^(bits-1): SaShiMi's autoregressive start code; not added to the data).\n"
    "Each document's source byte count is its sample count times the code size in bytes, so\n"
    "bits per byte from 'sluice score' is SaShiMi's bits per sample.\n"
    "\n"
    "examples:\n"
    "  sluice tokenize audio --clip-len 131072 --drop-last --split 88:6:6 --part train \\\n"
    "      youtube_mix/ -o ytmix-train.tok\n"
    "  sluice tokenize audio --pad-to 16000 sc09/ -o sc09.tok\n";

enum {
    O_QUANT = SL_OPT_FIRST_FREE,
    O_BITS,
    O_RATE,
    O_RQ,
    O_CLIP,
    O_OVERLAP,
    O_DROP,
    O_PADTO,
    O_PADID,
    O_SPLIT,
    O_SPLITBY,
    O_SEED,
    O_PART,
    O_SKIP,
    O_VLIST,
    O_TLIST,
};

typedef struct {
    char *path;
    int part; /* SL_SPLIT_* or -1 */
} input;

typedef struct {
    int quant, bits, rate, quality;
    size_t clip_len, overlap, pad_to;
    int drop_last, skip_bad;
    uint32_t pad_id;
    int split, split_by_hash, part;
    double w[3];
    uint64_t seed;
} topts;

static const char *const AUDIO_EXT[] = {"wav", "wave", "flac", "ogg", "oga", "opus", "aif", "aiff", "aifc",
                                        "au",  "snd",  "w64",  "caf", "rf64", "mp3", NULL};

static int has_audio_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return 0;
    for (int i = 0; AUDIO_EXT[i]; i++)
        if (!strcasecmp(dot + 1, AUDIO_EXT[i]))
            return 1;
    return 0;
}

static int cmp_nat(const void *a, const void *b)
{
    return sl_natcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A split list (Speech Commands' validation_list.txt / testing_list.txt): sorted lines. */
typedef struct {
    char **v;
    size_t n;
} pathlist;

static int load_list(const char *path, pathlist *l, sl_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sl_errf(err, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lc = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!len)
            continue;
        if (l->n == lc)
            l->v = sl_xrealloc(l->v, (lc = lc ? lc * 2 : 256) * sizeof *l->v);
        l->v[l->n++] = sl_xstrdup(line);
    }
    free(line);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return sl_errf(err, "%s: read error", path);
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, cmp_str);
    return 0;
}

/* True when the path, or its tail after some '/', is in the list. */
static int in_list(const pathlist *l, const char *path)
{
    for (const char *p = path; p; p = strchr(p, '/')) {
        if (*p == '/')
            p++;
        if (l->n && bsearch(&p, l->v, l->n, sizeof *l->v, cmp_str))
            return 1;
    }
    return 0;
}

static void free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static void list_free(pathlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Appends the audio files below dir, in natural order, to (*v, *n). */
static int walk(const char *dir, char ***v, size_t *n, size_t *cap, int depth, sl_err *err)
{
    if (depth > 64)
        return sl_errf(err, "%s: directories nested too deep", dir);
    DIR *d = opendir(dir);
    if (!d)
        return sl_errf(err, "%s: cannot open directory", dir);
    char **names = NULL;
    size_t nn = 0, nc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (nn == nc)
            names = sl_xrealloc(names, (nc = nc ? nc * 2 : 64) * sizeof *names);
        names[nn++] = sl_xstrdup(e->d_name);
    }
    closedir(d);
    if (nn) /* qsort(NULL, 0, ...) is undefined */
        qsort(names, nn, sizeof *names, cmp_nat);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *p = sl_xmalloc(len);
        snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (rc == 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = walk(p, v, n, cap, depth + 1, err);
            free(p);
        } else if (rc == 0 && has_audio_ext(names[i])) {
            if (*n == *cap)
                *v = sl_xrealloc(*v, (*cap = *cap ? *cap * 2 : 64) * sizeof **v);
            (*v)[(*n)++] = p;
        } else {
            free(p);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* The clips of one file, quantized: filled by a worker, written in order. */
typedef struct {
    sl_doc *docs;
    size_t ndocs;
    int failed;
    sl_err err;
    uint64_t bytes;
} result;

static void tokenize_file(const topts *o, const input *in, result *r)
{
    sl_audio a;
    sl_audio_opts ao = {.rate = o->rate, .quality = o->quality};
    if (sl_audio_decode_file(in->path, &ao, &a, &r->err) < 0) {
        r->failed = 1;
        return;
    }
    r->bytes = a.src_bytes;
    sl_clip *clips;
    size_t nc = sl_clips_plan(a.n, o->clip_len, o->overlap, o->drop_last, &clips);
    r->docs = sl_xcalloc(nc ? nc : 1, sizeof *r->docs);
    r->ndocs = nc;
    size_t code_bytes = (size_t)(o->bits + 7) / 8;
    sl_buf b = {0};
    for (size_t i = 0; i < nc; i++) {
        sl_doc *d = &r->docs[i];
        size_t len = clips[i].len, total = o->pad_to > len ? o->pad_to : len;
        sl_buf_clear(&b);
        sl_buf_printf(&b, "%s@%zu", in->path, clips[i].start);
        sl_doc_set_id(d, b.data, b.len);
        sl_doc_reserve(d, total);
        sl_aq_encode(o->quant, o->bits, a.x + clips[i].start, len, d->tokens);
        for (size_t k = len; k < total; k++)
            d->tokens[k] = o->pad_id;
        d->n_tokens = total;
        d->src_bytes = (uint64_t)len * code_bytes;
        sl_buf_clear(&b);
        sl_buf_puts(&b, "{\"file\":");
        sl_json_put_cstr(&b, in->path);
        sl_buf_printf(&b, ",\"offset\":%zu,\"samples\":%zu,\"sample_rate\":%d", clips[i].start, len, a.rate);
        if (in->part >= 0)
            sl_buf_printf(&b, ",\"split\":\"%s\"", sl_audio_split_names[in->part]);
        sl_buf_putc(&b, '}');
        sl_doc_set_meta(d, b.data, b.len);
    }
    sl_buf_free(&b);
    free(clips);
    sl_audio_free(&a);
}

static void result_free(result *r)
{
    for (size_t i = 0; i < r->ndocs; i++)
        sl_doc_free(&r->docs[i]);
    free(r->docs);
    memset(r, 0, sizeof *r);
}

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option longs[] = {
        {"quantizer", required_argument, 0, O_QUANT},
        {"bits", required_argument, 0, O_BITS},
        {"rate", required_argument, 0, O_RATE},
        {"resample-quality", required_argument, 0, O_RQ},
        {"clip-len", required_argument, 0, O_CLIP},
        {"overlap", required_argument, 0, O_OVERLAP},
        {"drop-last", no_argument, 0, O_DROP},
        {"pad-to", required_argument, 0, O_PADTO},
        {"pad-id", required_argument, 0, O_PADID},
        {"split", required_argument, 0, O_SPLIT},
        {"split-by", required_argument, 0, O_SPLITBY},
        {"seed", required_argument, 0, O_SEED},
        {"part", required_argument, 0, O_PART},
        {"skip-bad", no_argument, 0, O_SKIP},
        {"valid-list", required_argument, 0, O_VLIST},
        {"test-list", required_argument, 0, O_TLIST},
        SL_CLI_COMMON_LONG,
        {0, 0, 0, 0},
    };
    static const char *const rq_names[] = {"quick", "low", "medium", "high", "very-high", NULL};
    static const unsigned long rq_vals[] = {SOXR_QQ, SOXR_LQ, SOXR_MQ, SOXR_HQ, SOXR_VHQ};
    static const char *const split_by[] = {"index", "hash", NULL};
    topts o = {.quant = SL_AQ_MULAW_S4, .bits = 8, .rate = 16000, .quality = SOXR_HQ, .part = -1};
    long long pad_id = -1;
    const char *list_path[2] = {NULL, NULL}; /* valid, test */
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, longs, NULL)) != -1) {
        switch (opt) {
        case O_QUANT:
            o.quant = sl_cli_choice(cli, "--quantizer", optarg, sl_aq_names);
            break;
        case O_BITS:
            o.bits = (int)sl_cli_int(cli, "--bits", optarg, SL_AQ_MIN_BITS, SL_AQ_MAX_BITS);
            break;
        case O_RATE:
            o.rate = (int)sl_cli_int(cli, "--rate", optarg, SL_AUDIO_MIN_RATE, SL_AUDIO_MAX_RATE);
            break;
        case O_RQ:
            o.quality = (int)rq_vals[sl_cli_choice(cli, "--resample-quality", optarg, rq_names)];
            break;
        case O_CLIP:
            o.clip_len = (size_t)sl_cli_int(cli, "--clip-len", optarg, 0, 1LL << 31);
            break;
        case O_OVERLAP:
            o.overlap = (size_t)sl_cli_int(cli, "--overlap", optarg, 0, 1LL << 31);
            break;
        case O_DROP:
            o.drop_last = 1;
            break;
        case O_PADTO:
            o.pad_to = (size_t)sl_cli_int(cli, "--pad-to", optarg, 1, 1LL << 31);
            break;
        case O_PADID:
            pad_id = sl_cli_int(cli, "--pad-id", optarg, 0, (1LL << SL_AQ_MAX_BITS) - 1);
            break;
        case O_SPLIT:
            if (sl_audio_split_parse(optarg, o.w) < 0)
                sl_cli_usage_error(cli, "--split: '%s' is not A:B:C with non-negative weights", optarg);
            o.split = 1;
            break;
        case O_SPLITBY:
            o.split_by_hash = sl_cli_choice(cli, "--split-by", optarg, split_by);
            break;
        case O_SEED:
            o.seed = (uint64_t)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX);
            break;
        case O_PART:
            o.part = sl_cli_choice(cli, "--part", optarg, sl_audio_split_names);
            break;
        case O_SKIP:
            o.skip_bad = 1;
            break;
        case O_VLIST:
            list_path[0] = optarg;
            break;
        case O_TLIST:
            list_path[1] = optarg;
            break;
        default:
            sl_cli_common(cli, opt, optarg);
        }
    }
    if (sl_aq_bits_ok(o.quant, o.bits))
        sl_cli_usage_error(cli, "--bits %d is not valid for --quantizer %s", o.bits, sl_aq_name(o.quant));
    if (o.pad_to && !o.clip_len)
        o.clip_len = o.pad_to;
    if (o.pad_to && o.clip_len > o.pad_to)
        sl_cli_usage_error(cli, "--clip-len %zu is longer than --pad-to %zu", o.clip_len, o.pad_to);
    if (o.overlap && o.overlap >= o.clip_len)
        sl_cli_usage_error(cli, "--overlap must be smaller than --clip-len");
    int by_list = list_path[0] || list_path[1];
    if (by_list && o.split)
        sl_cli_usage_error(cli, "--split and --valid-list/--test-list exclude each other");
    if (o.part >= 0 && !o.split && !by_list)
        sl_cli_usage_error(cli, "--part needs --split or --valid-list/--test-list");
    o.pad_id = pad_id >= 0 ? (uint32_t)pad_id : sl_aq_zero(o.bits);
    if (o.pad_id >= (1u << o.bits))
        sl_cli_usage_error(cli, "--pad-id %u is outside the vocabulary 0..%u", o.pad_id, (1u << o.bits) - 1);

    /* Inputs: files as given, directories expanded. */
    sl_err err = {{0}};
    char **paths = NULL;
    size_t np = 0, pc = 0;
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "-") && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (walk(argv[i], &paths, &np, &pc, 0, &err) < 0) {
                free_paths(paths, np);
                return sl_cli_fail(cli, &err);
            }
        } else {
            if (np == pc)
                paths = sl_xrealloc(paths, (pc = pc ? pc * 2 : 64) * sizeof *paths);
            paths[np++] = sl_xstrdup(argv[i]);
        }
    }
    if (optind == argc) {
        paths = sl_xmalloc(sizeof *paths);
        paths[np++] = sl_xstrdup("-");
    }
    if (np == 0) {
        free(paths);
        sl_errf(&err, "no audio files found in the given directories");
        return sl_cli_fail(cli, &err);
    }
    input *ins = sl_xcalloc(np, sizeof *ins);
    for (size_t i = 0; i < np; i++) {
        ins[i].path = paths[i];
        ins[i].part = -1;
    }
    if (by_list) {
        pathlist lists[2] = {{0}};
        for (int k = 0; k < 2; k++)
            if (list_path[k] && load_list(list_path[k], &lists[k], &err) < 0) {
                list_free(&lists[0]);
                list_free(&lists[1]);
                free_paths(paths, np);
                free(ins);
                return sl_cli_fail(cli, &err);
            }
        for (size_t i = 0; i < np; i++)
            ins[i].part = in_list(&lists[1], paths[i])   ? SL_AUDIO_SPLIT_TEST
                          : in_list(&lists[0], paths[i]) ? SL_AUDIO_SPLIT_VALID
                                                         : SL_AUDIO_SPLIT_TRAIN;
        list_free(&lists[0]);
        list_free(&lists[1]);
    } else if (o.split) {
        /* The index split uses the natural-sorted order of all inputs, whatever the argument order. */
        char **sorted = sl_xmalloc(np * sizeof *sorted);
        memcpy(sorted, paths, np * sizeof *sorted);
        qsort(sorted, np, sizeof *sorted, cmp_nat);
        for (size_t i = 0; i < np; i++) {
            if (o.split_by_hash) {
                ins[i].part = sl_audio_split_by_hash(paths[i], o.seed, o.w);
            } else {
                size_t lo = 0, hi = np; /* position of paths[i] in sorted */
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (sl_natcmp(sorted[mid], paths[i]) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                ins[i].part = sl_audio_split_by_index(lo, np, o.w);
            }
        }
        free(sorted);
    }

    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_AUDIO, 1u << o.bits);
    h.pad = o.pad_to ? (int64_t)o.pad_id : SL_TS_NO_ID;
    snprintf(h.tokenizer, sizeof h.tokenizer, "audio %s %d-bit %d Hz", sl_aq_name(o.quant), o.bits, o.rate);
    sl_buf ex = {0};
    sl_buf_printf(&ex, "{\"sample_rate\":%d,\"quantizer\":\"%s\",\"bits\":%d,\"start_token\":%u,\"clip_len\":%zu,"
                       "\"overlap\":%zu,\"pad_to\":%zu,\"channels\":1}",
                  o.rate, sl_aq_name(o.quant), o.bits, sl_aq_zero(o.bits), o.clip_len, o.overlap, o.pad_to);
    sl_ts_header_set_extra(&h, ex.data);
    sl_buf_free(&ex);

    int rc = 1;
    sl_output *out = sl_output_open(cli->output, &err);
    sl_ts_writer *w = out ? sl_ts_writer_open(out, &h, &err) : NULL;
    sl_progress *pg = sl_progress_start("tokenize audio", "files", cli->progress);
    size_t batch = (size_t)sl_cli_threads(cli) * 2;
    result *res = sl_xcalloc(batch, sizeof *res);
    size_t skipped = 0;
    if (!w)
        goto done;
    for (size_t b0 = 0; b0 < np; b0 += batch) {
        size_t nb = np - b0 < batch ? np - b0 : batch;
        /* Decode and quantize a batch of files in parallel; write them in input order. */
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t i = 0; i < nb; i++)
            if (ins[b0 + i].part == o.part || o.part < 0)
                tokenize_file(&o, &ins[b0 + i], &res[i]);
        for (size_t i = 0; i < nb; i++) {
            result *r = &res[i];
            if (r->failed && o.skip_bad) {
                sl_cli_warn(cli, "skipping %s", r->err.msg);
                skipped++;
            } else if (r->failed) {
                err = r->err;
                goto done;
            }
            for (size_t k = 0; k < r->ndocs; k++)
                if (sl_ts_write_doc(w, &r->docs[k], &err) < 0)
                    goto done;
            sl_progress_add(pg, 1, r->bytes);
            result_free(r);
        }
    }
    if (skipped == np) {
        sl_errf(&err, "none of the %zu input files could be decoded", np);
        goto done;
    }
    if (sl_ts_writer_finish(w, &err) < 0) {
        w = NULL;
        goto done;
    }
    w = NULL;
    if (sl_output_commit(out, &err) < 0) {
        out = NULL;
        goto done;
    }
    out = NULL;
    rc = 0;
done:
    sl_progress_done(pg);
    for (size_t i = 0; i < batch; i++)
        result_free(&res[i]);
    free(res);
    if (w)
        sl_ts_writer_abort(w);
    if (out)
        sl_output_abort(out);
    free_paths(paths, np);
    free(ins);
    sl_ts_header_free(&h);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_tokenize_audio = {
    .name = "tokenize audio",
    .summary = "audio files to 8-bit mu-law (SaShiMi) or linear codes",
    .usage = "sluice tokenize audio [options] [FILES|DIRS...]",
    .help = HELP,
    .run = run,
};
