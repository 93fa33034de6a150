/* Audio files to a token stream (see tokenize.h). */
#include "audio/tokenize.h"
#include "stream/partition.h"

#include <dirent.h>
#include <errno.h>
#include <omp.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "audio/clips.h"
#include "audio/decode.h"
#include "audio/quantize.h"
#include "stream/batch.h"
#include "base/json.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

void sl_audio_tok_opts_default(sl_audio_tok_opts *o)
{
    *o = (sl_audio_tok_opts){
        .quant = SL_AQ_MULAW_S4, .bits = 8, .rate = 16000, .quality = SOXR_HQ, .pad_id = -1, .part = -1};
}

static uint32_t pad_of(const sl_audio_tok_opts *o)
{
    return o->pad_id >= 0 ? (uint32_t)o->pad_id : sl_aq_zero(o->bits);
}

/* clip_len after pad_to's default */
static size_t clip_of(const sl_audio_tok_opts *o)
{
    return o->pad_to && !o->clip_len ? o->pad_to : o->clip_len;
}

int sl_audio_tok_check(const sl_audio_tok_opts *o, sl_err *err)
{
    size_t clip = clip_of(o);
    if (o->bits < SL_AQ_MIN_BITS || o->bits > SL_AQ_MAX_BITS || sl_aq_bits_ok(o->quant, o->bits))
        return sl_errf(err, "bits %d is not valid for quantizer %s", o->bits, sl_aq_name(o->quant));
    if (o->rate < SL_AUDIO_MIN_RATE || o->rate > SL_AUDIO_MAX_RATE)
        return sl_errf(err, "rate %d is outside %d..%d", o->rate, SL_AUDIO_MIN_RATE, SL_AUDIO_MAX_RATE);
    if (o->pad_to && clip > o->pad_to)
        return sl_errf(err, "clip_len %zu is longer than pad_to %zu", clip, o->pad_to);
    if (o->overlap && o->overlap >= clip)
        return sl_errf(err, "overlap must be smaller than clip_len");
    int by_list = o->valid_list || o->test_list;
    if (by_list && o->split)
        return sl_errf(err, "a weighted split and split lists exclude each other");
    if (o->part >= 0 && !o->split && !by_list)
        return sl_errf(err, "part needs a split (weights or lists)");
    if (pad_of(o) >= (1u << o->bits))
        return sl_errf(err, "pad_id %u is outside the vocabulary 0..%u", pad_of(o), (1u << o->bits) - 1);
    return 0;
}

typedef struct {
    char *path;
    int part; /* SL_SPLIT_* or -1 */
} input;

static const char *const AUDIO_EXT[] = {"wav",  "wave", "flac", "ogg", "oga", "opus", "aif", "aiff",
                                        "aifc", "au",   "snd",  "w64", "caf", "rf64", "mp3", NULL};

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

static void tokenize_file(const sl_audio_tok_opts *o, uint32_t pad_id, const input *in, result *r)
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
            d->tokens[k] = pad_id;
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

void sl_audio_paths_free(char **paths, size_t n)
{
    free_paths(paths, n);
}

int sl_audio_list_inputs(const char *const *args, size_t n, char ***paths_out, size_t *np_out, sl_err *err)
{
    char **paths = NULL;
    size_t np = 0, pc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(args[i], "-") && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (walk(args[i], &paths, &np, &pc, 0, err) < 0) {
                free_paths(paths, np);
                return -1;
            }
        } else {
            if (np == pc)
                paths = sl_xrealloc(paths, (pc = pc ? pc * 2 : 64) * sizeof *paths);
            paths[np++] = sl_xstrdup(args[i]);
        }
    }
    if (n == 0) {
        paths = sl_xmalloc(sizeof *paths);
        paths[np++] = sl_xstrdup("-");
    }
    if (np == 0) {
        free(paths);
        return sl_errf(err, "no audio files found in the given directories");
    }
    *paths_out = paths;
    *np_out = np;
    return 0;
}

/* Each input's part of the split (-1 without a split). */
static int assign_parts(const sl_audio_tok_opts *o, char *const *paths, size_t np, input *ins, sl_err *err)
{
    for (size_t i = 0; i < np; i++) {
        ins[i].path = paths[i];
        ins[i].part = -1;
    }
    if (o->valid_list || o->test_list) {
        pathlist lists[2] = {{0}};
        const char *list_path[2] = {o->valid_list, o->test_list};
        for (int k = 0; k < 2; k++)
            if (list_path[k] && load_list(list_path[k], &lists[k], err) < 0) {
                list_free(&lists[0]);
                list_free(&lists[1]);
                return -1;
            }
        for (size_t i = 0; i < np; i++)
            ins[i].part = in_list(&lists[1], paths[i])   ? SL_AUDIO_SPLIT_TEST
                          : in_list(&lists[0], paths[i]) ? SL_AUDIO_SPLIT_VALID
                                                         : SL_AUDIO_SPLIT_TRAIN;
        list_free(&lists[0]);
        list_free(&lists[1]);
    } else if (o->split) {
        /* The index split uses the natural-sorted order of all inputs, whatever the argument order. */
        char **sorted = sl_xmalloc(np * sizeof *sorted);
        memcpy(sorted, paths, np * sizeof *sorted);
        qsort(sorted, np, sizeof *sorted, cmp_nat);
        for (size_t i = 0; i < np; i++) {
            if (o->split_by_hash) {
                ins[i].part = sl_audio_split_by_hash(paths[i], o->seed, o->w);
            } else {
                size_t lo = 0, hi = np; /* position of paths[i] in sorted */
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (sl_natcmp(sorted[mid], paths[i]) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                ins[i].part = sl_audio_split_by_index(lo, np, o->w);
            }
        }
        free(sorted);
    }
    return 0;
}

/* The batch engine's slot: one input file and its clips. */
typedef struct slot {
    const input *in;
    result r;
} slot;

typedef struct run_ctx {
    const sl_audio_tok_opts *o;
    sl_audio_tok_opts eff; /* o with clip_len defaulted */
    uint32_t pad_id;
    sl_ts_writer *w;
    sl_progress *pg;
    size_t skipped;
} run_ctx;

static void encode_slot(void *ctx, int thread, void *p)
{
    (void)thread;
    run_ctx *c = ctx;
    slot *s = p;
    if (s->in->part == c->o->part || c->o->part < 0)
        tokenize_file(&c->eff, c->pad_id, s->in, &s->r);
}

static int write_slot(void *ctx, void *p, sl_err *err)
{
    run_ctx *c = ctx;
    result *r = &((slot *)p)->r;
    if (r->failed && c->o->skip_bad) {
        if (c->o->warn) {
            char msg[SL_ERR_MAX + 16];
            snprintf(msg, sizeof msg, "skipping %s", r->err.msg);
            c->o->warn(c->o->warn_ctx, msg);
        }
        c->skipped++;
    } else if (r->failed) {
        *err = r->err;
        return -1;
    }
    for (size_t k = 0; k < r->ndocs; k++)
        if (sl_ts_write_doc(c->w, &r->docs[k], err) < 0)
            return -1;
    sl_progress_add(c->pg, 1, r->bytes);
    result_free(r);
    return 0;
}

static void free_slot(void *ctx, void *p)
{
    (void)ctx;
    result_free(&((slot *)p)->r);
}

int sl_audio_tokenize_run(const sl_audio_tok_opts *o, char *const *paths, size_t np, sl_output *out, sl_err *err)
{
    if (sl_audio_tok_check(o, err) < 0)
        return -1;
    run_ctx c = {.o = o, .eff = *o, .pad_id = pad_of(o)};
    c.eff.clip_len = clip_of(o);
    input *ins = sl_xcalloc(np ? np : 1, sizeof *ins);
    if (assign_parts(o, paths, np, ins, err) < 0) {
        free(ins);
        return -1;
    }
    unsigned char *mine = NULL; /* a part: its files */
    if (o->scale.n && sl_partition_whole(&o->scale, (const char *const *)paths, np, &mine, err) < 0) {
        free(ins);
        return -1;
    }
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_AUDIO, 1u << o->bits);
    h.pad = o->pad_to ? (int64_t)c.pad_id : SL_TS_NO_ID;
    snprintf(h.tokenizer, sizeof h.tokenizer, "audio %s %d-bit %d Hz", sl_aq_name(o->quant), o->bits, o->rate);
    sl_buf ex = {0};
    sl_buf_printf(&ex,
                  "{\"sample_rate\":%d,\"quantizer\":\"%s\",\"bits\":%d,\"start_token\":%u,\"clip_len\":%zu,"
                  "\"overlap\":%zu,\"pad_to\":%zu,\"channels\":1}",
                  o->rate, sl_aq_name(o->quant), o->bits, sl_aq_zero(o->bits), c.eff.clip_len, o->overlap, o->pad_to);
    sl_ts_header_set_extra(&h, ex.data);
    sl_buf_free(&ex);

    c.w = sl_ts_writer_open(out, &h, err);
    sl_ts_header_free(&h);
    int rc = -1;
    if (c.w) {
        int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
        static const sl_batch_ops ops = {sizeof(slot), encode_slot, write_slot, free_slot};
        sl_batch_opts bo = {.max_items = (size_t)threads * 2, .threads = threads};
        c.pg = sl_progress_start("tokenize audio", "files", o->progress);
        sl_batcher *bt = sl_batcher_new(&ops, &c, &bo);
        rc = 0;
        size_t pushed = 0;
        for (size_t i = 0; i < np && !rc; i++) {
            if (mine && !mine[i])
                continue; /* another part's file */
            pushed++;
            ((slot *)sl_batcher_next(bt))->in = &ins[i];
            rc = sl_batcher_push(bt, 0, err);
        }
        if (!rc)
            rc = sl_batcher_flush(bt, err);
        sl_batcher_free(bt);
        sl_progress_done(c.pg);
        if (!rc && c.skipped == pushed && (pushed || !mine))
            rc = sl_errf(err, "none of the %zu input files could be decoded", pushed);
        if (!rc && o->part >= 0 && sl_ts_writer_count(c.w) == 0 && o->warn) {
            /* a selection that is empty is almost always a mistake (88:6:6 of
             * a few files gives no valid or test file): said, not silent */
            size_t in_part = 0;
            for (size_t i = 0; i < np; i++)
                in_part += ins[i].part == o->part;
            char msg[256];
            snprintf(msg, sizeof msg,
                     "--part %s: no documents written (%zu of the %zu input files are in %s%s); the output is an "
                     "empty stream",
                     sl_audio_split_names[o->part], in_part, np, sl_audio_split_names[o->part],
                     mine && in_part ? ", none of them in this part of the work" : "");
            o->warn(o->warn_ctx, msg);
        }
        if (rc)
            sl_ts_writer_abort(c.w);
        else
            rc = sl_ts_writer_finish(c.w, err);
    }
    free(ins);
    free(mine);
    return rc;
}
