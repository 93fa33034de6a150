/* `sluice merge`: concatenates shard directories (into a shard directory) or
 * Megatron datasets (as Megatron's IndexedDatasetBuilder.add_index does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "shard/megatron.h"
#include "shard/meta.h"
#include "shard/shard.h"
#include "shard/util.h"
#include "stream/buf.h"
#include "stream/io.h"

static const char help[] = "Shard directories: every SRC must have the same seq_len, dtype, vocab,\n"
                           "tokenizer fingerprint, special ids, layout, memory slots and warmup SPEC.\n"
                           "Rows of each split are concatenated in argument order, document ordinals are\n"
                           "renumbered after the previous sources, warmup stages are resolved again for the\n"
                           "merged size; documents.jsonl keeps every line's metadata and documents.idx is\n"
                           "rebuilt.\n"
                           "Each SRC is verified (checksums) first. DST is written atomically. Document\n"
                           "ids are not checked for duplicates here (shard and pack check them).\n\n"
                           "Megatron datasets (SRC = a prefix with SRC.idx and SRC.bin): the .bin files\n"
                           "are concatenated and sizes/pointers/document indices rebased, as Megatron's\n"
                           "add_index / tools/merge_datasets.py do; dtypes must match. When every SRC\n"
                           "has a sidecar SRC.documents.jsonl (from `sluice export megatron`), DST gets\n"
                           "their lines with documents renumbered.\n\n"
                           "options:\n"
                           "  -o DST              output directory or prefix (required)\n"
                           "  --force             replace an existing DST directory\n"
                           "  --max-file-bytes N  cap token files of a merged shard directory\n\n"
                           "example:\n"
                           "  sluice merge part-0/ part-1/ part-2/ -o shards/\n"
                           "  sluice merge data/a_text_document data/b_text_document -o data/ab_text_document\n";

static int same_str(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int merge_shards(sl_cli *cli, char **srcs, int n, int force, uint64_t maxb, sl_err *err)
{
    sl_shard **s = sl_xcalloc((size_t)n, sizeof *s);
    sl_shard_writer *w = NULL;
    sl_buf meta = {0};
    int rc = -1;
    for (int i = 0; i < n; i++)
        if (!(s[i] = sl_shard_open(srcs[i], 1, err)))
            goto done;
    const sl_shard_info *a = sl_shard_get_info(s[0]);
    for (int i = 1; i < n; i++) {
        const sl_shard_info *b = sl_shard_get_info(s[i]);
        if (a->seq_len != b->seq_len || a->dtype_bytes != b->dtype_bytes || a->vocab_size != b->vocab_size ||
            strcmp(a->fingerprint, b->fingerprint) || a->eos != b->eos || a->bos != b->bos || a->pad != b->pad ||
            a->layout != b->layout || a->batch != b->batch || !same_str(a->warmup, b->warmup) ||
            a->mem_tokens != b->mem_tokens || a->mem_id != b->mem_id || a->mem_write != b->mem_write) {
            sl_errf(err,
                    "%s: does not match %s (seq_len, dtype, vocab, fingerprint, special ids, layout, warmup "
                    "and memory slots must be equal)",
                    srcs[i], srcs[0]);
            goto done;
        }
    }
    sl_shard_info info = *a;
    info.shuffle = 0; /* concatenation: rows keep the order each source has */
    if (!(w = sl_shard_writer_open(cli->output, &info, maxb, force, err)))
        goto done;
    uint64_t base = 0;
    for (int i = 0; i < n; i++) {
        uint64_t top = 0;
        for (size_t k = 0; k < sl_shard_n_docs(s[i]); k++) {
            const char *id;
            const sl_shard_docref *dr = sl_shard_doc(s[i], k, &id);
            sl_buf_clear(&meta);
            if (sl_shard_doc_meta(s[i], k, &meta, err) ||
                sl_shard_writer_doc_meta(w, base + dr->ordinal, id, dr->id_len, dr->split, dr->long_status, meta.data,
                                         meta.len, err))
                goto done;
            top = dr->ordinal + 1;
        }
        for (int k = 0; k < SL_SPLIT_N; k++) {
            if (!sl_shard_get_split(s[i], k)->present)
                continue;
            sl_shard_iter *it = sl_shard_iter_open(s[i], k, err);
            if (!it)
                goto done;
            sl_row row;
            int m;
            while ((m = sl_shard_iter_next(it, &row, err)) == 1) {
                /* the iterator's piece buffer is ours until the next call */
                for (size_t p = 0; p < row.n_pieces; p++)
                    ((sl_piece *)row.pieces)[p].doc += base;
                if (sl_shard_writer_row(w, k, &row, err)) {
                    m = -1;
                    break;
                }
            }
            sl_shard_iter_close(it);
            if (m < 0)
                goto done;
        }
        base += top;
    }
    rc = sl_shard_writer_finish(w, err);
    w = NULL;
done:
    sl_shard_writer_abort(w);
    sl_buf_free(&meta);
    for (int i = 0; i < n; i++)
        sl_shard_close(s[i]);
    free(s);
    return rc;
}

/* The sidecars PREFIX.documents.jsonl: merged (documents renumbered) when
 * every source has one; otherwise the merged dataset gets none. */
static int merge_megatron(sl_cli *cli, char **srcs, int n, sl_err *err)
{
    sl_mega_writer *w = NULL;
    sl_output *side = NULL;
    sl_buf line = {0};
    int rc = -1, with = 0, without = -1;
    for (int i = 0; i < n; i++) {
        char *sp = sl_mega_docs_path(srcs[i]);
        if (!access(sp, F_OK))
            with++;
        else if (without < 0)
            without = i;
        free(sp);
    }
    if (with && without >= 0)
        sl_cli_warn(cli, "%s has no %s.documents.jsonl: the merged dataset gets no document ids or metadata",
                    srcs[without], srcs[without]);
    char *dp = sl_mega_docs_path(cli->output);
    if (with == n && !(side = sl_output_open(dp, err)))
        goto done;
    for (int i = 0; i < n; i++) {
        sl_mega_reader *r = sl_mega_open(srcs[i], err);
        if (!r)
            goto done;
        if (!w && !(w = sl_mega_writer_open(cli->output, sl_mega_index_of(r)->dtype_code, err))) {
            sl_mega_close(r);
            goto done;
        }
        sl_mega_docs *docs = NULL;
        uint64_t base = sl_mega_writer_docs(w);
        int bad = side && sl_mega_docs_open(srcs[i], sl_mega_n_docs(r), &docs, err) != 1;
        for (uint64_t k = 0; !bad && docs && k < sl_mega_n_docs(r); k++) {
            const char *id, *meta;
            size_t il, ml;
            sl_mega_docs_get(docs, k, &id, &il, &meta, &ml);
            sl_buf_clear(&line);
            sl_meta_doc_line(&line, base + k, id, il, "train", SL_DOC_PLACED, meta, ml);
            bad = sl_output_write(side, line.data, line.len, err);
        }
        sl_mega_docs_close(docs);
        bad = bad || sl_mega_add_index(w, r, err);
        sl_mega_close(r);
        if (bad)
            goto done;
    }
    rc = sl_mega_writer_finish(w, err);
    w = NULL;
    if (!rc && side) {
        rc = sl_output_commit(side, err);
        side = NULL;
    } else if (!rc) {
        unlink(dp); /* a sidecar of an earlier dataset at DST would describe other documents */
    }
done:
    sl_mega_writer_abort(w);
    sl_output_abort(side);
    sl_buf_free(&line);
    free(dp);
    return rc;
}

static int run(sl_cli *cli, int argc, char **argv)
{
    enum { O_FORCE = SL_OPT_FIRST_FREE, O_MAXB };
    static const struct option opts[] = {{"force", no_argument, 0, O_FORCE},
                                         {"max-file-bytes", required_argument, 0, O_MAXB},
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    int force = 0, c;
    long long maxb = 0;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case O_FORCE: force = 1; break;
        case O_MAXB: maxb = sl_cli_int(cli, "--max-file-bytes", optarg, 1, 1ll << 50); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    int n = argc - optind;
    if (n < 1)
        sl_cli_usage_error(cli, "needs at least one SRC");
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o DST");
    char **srcs = argv + optind;
    int dirs = 0;
    for (int i = 0; i < n; i++)
        dirs += sl_shard_is_dir(srcs[i]);
    sl_err err = {{0}};
    int rc;
    if (dirs == n) {
        rc = merge_shards(cli, srcs, n, force, (uint64_t)maxb, &err);
    } else if (dirs == 0) {
        if (force || maxb)
            sl_cli_usage_error(cli, "--force and --max-file-bytes apply to shard directories");
        rc = merge_megatron(cli, srcs, n, &err);
    } else {
        sl_cli_usage_error(cli, "cannot mix shard directories and Megatron prefixes");
    }
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_merge = {
    .name = "merge",
    .summary = "concatenate shard directories or Megatron datasets",
    .usage = "sluice merge [options] SRC... -o DST",
    .help = help,
    .run = run,
};
