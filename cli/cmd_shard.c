/* `sluice shard`: a document token stream (packed here with the options of
 * `sluice pack`) or a packed stream in, a shard directory out
 * (docs/shards.md section 4). */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/scale_opts.h"
#include "cli/inputs.h"
#include "cli/pack_opts.h"
#include "shard/packed.h"
#include "shard/shard.h"
#include "stream/io.h"
#include "stream/progress.h"
#include "stream/tokstream.h"

static const char help[] = "Writes a shard directory: manifest.json; documents.jsonl, one line per\n"
                           "document (ordinal, id, split and its metadata under \"meta\": e.g. the label\n"
                           "of `sluice dna species` or the fields of a JSONL input) with its byte-offset\n"
                           "index documents.idx; and per split (train, val) token files that numpy.memmap\n"
                           "opens directly (uint16 when the vocab fits, else uint32; rows of --seq-len\n"
                           "tokens) with a boundary index (.bounds) beside each. The input is a document\n"
                           "token stream, packed with the options below, or a packed stream from\n"
                           "`sluice pack` (then no packing options).\n"
                           "Layout and manifest schema: docs/shards.md.\n\n"
                           "Several FILEs, or a directory of part files (NAME-<R>-of-<N>...), are read as\n"
                           "one stream: the output is that of their concatenation (docs/scale-out.md).\n\n"
                           "packing options (as `sluice pack`):\n"
                           "  --seq-len L, --eos ID, --no-eos, --bos ID, --pad ID, --no-split,\n"
                           "  --long truncate|drop|split, --layout sequential|recurrent, --batch B,\n"
                           "  --warmup SPEC       stages recorded in the manifest (steps resolved against the\n"
                           "                      train split's token count); the data is stored once at the\n"
                           "                      longest length and every stage is a view of it\n\n"
                           "shard options:\n"
                           "  -o DIR              the output directory (required); written as DIR.tmp.<pid>\n"
                           "                      and renamed at the end\n"
                           "  --force             replace an existing DIR (default: error)\n"
                           "  --skip-existing     do nothing when DIR exists and verifies (manifest, sizes,\n"
                           "                      checksums); replace it when it does not\n"
                           "  --dtype TYPE        auto (default: uint16 when vocab <= 65536), uint16 or uint32\n"
                           "  --max-file-bytes N  cap each token file at N bytes (whole rows; k/M/G suffixes;\n"
                           "                      default: one file per split)\n"
                           "  --shuffle           permute rows within windows (bounded memory)\n"
                           "  --seed S            shuffle seed (default 0)\n"
                           "  --shuffle-window W  rows per shuffle window (default: 256 MiB of rows)\n"
                           "  --val-fraction F    send a document to the val split when XXH64(id)/2^64 < F\n"
                           "                      (default 0: no val split)\n"
                           "  --keep-fields LIST  keep only these metadata fields (comma-separated)\n"
                           "  --drop-fields LIST  drop these metadata fields\n"
                           "  --unique-ids        a repeated document id is an error (default: a warning\n"
                           "                      naming the first one; ids are checked by shard and pack,\n"
                           "                      with a 128-bit hash per document, 32 bytes of memory each)\n\n"
                           "example:\n"
                           "  sluice shard --seq-len 2048 --warmup double:256..2048,epochs=1,batch=64 \\\n"
                           "      --shuffle --seed 1 --val-fraction 0.01 tokens.tok -o shards/\n";

enum { O_FORCE = SL_PO_END, O_DTYPE, O_MAXB, O_SHUF, O_SEED, O_WIN, O_VAL };

typedef struct {
    sl_shard_writer *w;
    int split;
} row_ctx;

static int on_row(void *vc, const sl_row *row, sl_err *err)
{
    row_ctx *c = vc;
    return sl_shard_writer_row(c->w, c->split, row, err);
}

static int run(sl_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {SL_PACK_LONG_OPTS,
                                         SL_META_LONG_OPTS,
                                         SL_IDS_LONG_OPTS,
                                         {"force", no_argument, 0, O_FORCE},
                                         {"dtype", required_argument, 0, O_DTYPE},
                                         {"max-file-bytes", required_argument, 0, O_MAXB},
                                         {"shuffle", no_argument, 0, O_SHUF},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"shuffle-window", required_argument, 0, O_WIN},
                                         {"val-fraction", required_argument, 0, O_VAL},
                                         SL_SKIP_LONG_OPT,
                                         SL_CLI_COMMON_LONG,
                                         {0, 0, 0, 0}};
    static const char *const dtypes[] = {"auto", "uint16", "uint32", NULL};
    sl_pack_user u = SL_PACK_USER_INIT;
    int force = 0, dtype = 0, shuffle = 0;
    long long maxb = 0, window = 0;
    unsigned long long seed = 0;
    double valf = 0;
    sl_cli_meta meta = {0};
    sl_scale_opts so = {0};
    int c;
    while ((c = getopt_long(argc, argv, SL_CLI_COMMON_SHORT, opts, NULL)) != -1) {
        if (sl_cli_pack_option(cli, c, &u) || sl_cli_meta_option(cli, c, &meta) || sl_cli_scale_option(&so, c, optarg))
            continue;
        switch (c) {
        case O_FORCE: force = 1; break;
        case O_DTYPE: dtype = sl_cli_choice(cli, "--dtype", optarg, dtypes); break;
        case O_MAXB: maxb = sl_cli_int(cli, "--max-file-bytes", optarg, 1, 1ll << 50); break;
        case O_SHUF: shuffle = 1; break;
        case O_SEED: seed = (unsigned long long)sl_cli_int(cli, "--seed", optarg, 0, INT64_MAX); break;
        case O_WIN: window = sl_cli_int(cli, "--shuffle-window", optarg, 1, 1ll << 32); break;
        case O_VAL: valf = sl_cli_double(cli, "--val-fraction", optarg, 0, 1); break;
        default: sl_cli_common(cli, c, argv[optind - 1]);
        }
    }
    if (!strcmp(cli->output, "-"))
        sl_cli_usage_error(cli, "needs -o DIR (a shard directory cannot go to standard output)");
    sl_cli_pack_check(cli, &u);
    if (shuffle && u.layout == SL_LAYOUT_RECURRENT)
        sl_cli_usage_error(cli, "--shuffle would break the row continuity of --layout recurrent");
    if (window && !shuffle)
        sl_cli_usage_error(cli, "--shuffle-window needs --shuffle");
    if (sl_cli_skip_existing(cli, &so, SL_SKIP_SHARDS))
        return 0;
    if (so.skip_existing && sl_cli_has_manifest(cli->output))
        force = 1; /* a shard directory that does not verify: it is replaced */
    const char *path = optind < argc ? argv[optind] : "-";

    sl_err err = {{0}};
    sl_ts_reader *r = sl_ts_reader_open_paths(argv + optind, (size_t)(argc - optind), &err);
    sl_shard_writer *w = NULL;
    sl_packer *pk[SL_SPLIT_N] = {0};
    row_ctx rc_[SL_SPLIT_N];
    sl_doc d = {0};
    sl_packed_row prow = {0};
    sl_packed_docs pdocs = {0};
    sl_progress *pg = NULL;
    char *warmup = NULL;
    int rc = -1;
    if (!r)
        goto done;
    const sl_ts_header *h = sl_ts_reader_header(r);
    sl_pack_opts po;
    int packed = sl_packed_detect(h, &po, &warmup, &err);
    if (packed < 0) {
        sl_err_prefix(&err, "%s", sl_cli_src(r, path));
        goto done;
    }
    if (packed) {
        if (sl_pack_user_any(&u)) {
            sl_errf(&err, "%s: the input is already packed (rows of %u tokens): packing options do not apply",
                    sl_cli_src(r, path), po.seq_len);
            goto done;
        }
        if (valf > 0) {
            sl_errf(&err, "%s: --val-fraction splits documents, so it needs a document stream, not packed rows",
                    sl_cli_src(r, path));
            goto done;
        }
        if (shuffle && po.layout == SL_LAYOUT_RECURRENT) {
            sl_errf(&err, "%s: --shuffle would break the row continuity of the recurrent layout", sl_cli_src(r, path));
            goto done;
        }
    } else {
        sl_cli_pack_need_len(cli, &u);
        if (sl_pack_resolve(&u, h, &po, &err))
            goto done;
        warmup = u.warmup ? sl_xstrdup(u.warmup) : NULL;
    }
    sl_shard_info info;
    memset(&info, 0, sizeof info);
    info.seq_len = po.seq_len;
    info.vocab_size = h->vocab_size;
    info.dtype_bytes = dtype == 1 ? 2 : dtype == 2 ? 4 : h->vocab_size <= 65536 ? 2 : 4;
    if (info.dtype_bytes == 2 && h->vocab_size > 65536) {
        sl_errf(&err, "%s: vocab size %u does not fit --dtype uint16 (ids up to 65535)", sl_cli_src(r, path),
                h->vocab_size);
        goto done;
    }
    info.modality = h->modality;
    memcpy(info.fingerprint, h->fingerprint, sizeof info.fingerprint);
    memcpy(info.tokenizer, h->tokenizer, sizeof info.tokenizer);
    info.eos = po.eos;
    info.bos = po.bos;
    info.pad = po.pad;
    info.layout = po.layout;
    info.batch = po.batch;
    info.warmup = warmup;
    info.shuffle = shuffle;
    info.seed = seed;
    info.shuffle_window = window ? (uint64_t)window : (256ull << 20) / ((uint64_t)po.seq_len * 4) + 1;
    info.val_fraction = valf;
    w = sl_shard_writer_open(cli->output, &info, (uint64_t)maxb, force, &err);
    if (!w)
        goto done;
    pg = sl_progress_start("shard", packed ? "rows" : "docs", cli->progress);
    sl_cli_track(pg, r);
    int k;
    if (packed) {
        /* documents.jsonl from the rows' document records (every document,
         * with its metadata); a stream of an older packer has none: then a
         * document is new when its ordinal is beyond every ordinal seen so far
         * (first pieces come in order). */
        uint64_t next = 0;
        while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
            sl_row row;
            const char *src = sl_cli_src(r, path);
            if (sl_ts_reader_streams(r) > 1) {
                /* each packed stream numbers its documents from 0 */
                sl_errf(&err,
                        "%s: several packed streams: their document numbers restart, so they cannot be "
                        "sharded as one; shard the document streams (or merge shard directories)",
                        src);
                goto done;
            }
            if (sl_packed_decode(&d, po.seq_len, &prow, &row, src, &err) ||
                sl_packed_decode_docs(&d, &pdocs, src, &err))
                goto done;
            for (size_t i = 0; i < pdocs.n; i++) {
                const sl_packed_docrec *pr = &pdocs.recs[i];
                const char *id = pdocs.text.data + pr->id_off;
                if (pr->doc < next) {
                    sl_errf(&err, "%s: row '%s': document %llu is recorded twice or out of order", src, d.id,
                            (unsigned long long)pr->doc);
                    goto done;
                }
                if (sl_cli_meta_id(&meta, id, pr->id_len, pr->doc, src, &err) ||
                    sl_cli_meta_select(&meta, pr->meta_len ? pdocs.text.data + pr->meta_off : NULL, pr->meta_len, src,
                                       id, pr->id_len, &err) ||
                    sl_shard_writer_doc_meta(w, pr->doc, id, pr->id_len, SL_SPLIT_TRAIN, pr->long_status, meta.buf.data,
                                             meta.buf.len, &err))
                    goto done;
                next = pr->doc + 1;
            }
            for (size_t i = 0; i < row.n_pieces; i++) {
                const sl_piece *p = &row.pieces[i];
                if (p->doc >= next) {
                    if (pdocs.present) {
                        sl_errf(&err, "%s: row '%s': document %llu has a piece but no record before it", src, d.id,
                                (unsigned long long)p->doc);
                        goto done;
                    }
                    if (p->doc_offset != 0) {
                        sl_errf(&err, "%s: row '%s': document %llu first appears at document offset %llu", src, d.id,
                                (unsigned long long)p->doc, (unsigned long long)p->doc_offset);
                        goto done;
                    }
                    if (sl_cli_meta_id(&meta, p->id, p->id_len, p->doc, src, &err) ||
                        sl_shard_writer_doc(w, p->doc, p->id, p->id_len, SL_SPLIT_TRAIN, SL_DOC_PLACED, &err))
                        goto done;
                    next = p->doc + 1;
                }
            }
            if (sl_shard_writer_row(w, SL_SPLIT_TRAIN, &row, &err))
                goto done;
            sl_progress_add(pg, 1, 0);
            sl_progress_add_tokens(pg, d.n_tokens);
        }
        if (k < 0)
            goto done;
    } else {
        for (int s = 0; s < SL_SPLIT_N; s++) {
            rc_[s] = (row_ctx){w, s};
            if (!(pk[s] = sl_packer_new(&po, on_row, &rc_[s], &err)))
                goto done;
        }
        uint64_t ord = 0;
        while ((k = sl_ts_read_doc(r, &d, &err)) == 1) {
            int split = sl_split_of(d.id, d.id_len, valf), st;
            const char *src = sl_cli_src(r, path);
            if (sl_cli_meta_id(&meta, d.id, d.id_len, ord, src, &err) ||
                sl_cli_meta_select(&meta, d.meta, d.meta_len, src, d.id, d.id_len, &err))
                goto done;
            if (sl_packer_add(pk[split], ord, d.id, d.id_len, d.tokens, d.n_tokens, &st, &err)) {
                sl_err_prefix(&err, "%s: document '%s'", src, d.id);
                goto done;
            }
            /* every document gets its line, also an empty one (no tokens in any row) */
            if (sl_shard_writer_doc_meta(w, ord, d.id, d.id_len, split, st == SL_DOC_EMPTY ? SL_DOC_PLACED : st,
                                         meta.buf.data, meta.buf.len, &err))
                goto done;
            ord++;
            sl_progress_add(pg, 1, 0);
            sl_progress_add_tokens(pg, d.n_tokens);
        }
        if (k < 0)
            goto done;
        for (int s = 0; s < SL_SPLIT_N; s++)
            if (sl_packer_finish(pk[s], &err))
                goto done;
        uint64_t trunc = 0, drop = 0;
        for (int s = 0; s < SL_SPLIT_N; s++) {
            trunc += sl_packer_stats(pk[s])->truncated;
            drop += sl_packer_stats(pk[s])->dropped;
        }
        if (trunc || drop)
            sl_cli_warn(cli, "%llu document(s) truncated, %llu dropped", (unsigned long long)trunc,
                        (unsigned long long)drop);
    }
    rc = sl_shard_writer_finish(w, &err);
    w = NULL;
    if (!rc)
        sl_cli_meta_report(cli, &meta);
done:
    sl_progress_done(pg);
    for (int s = 0; s < SL_SPLIT_N; s++)
        sl_packer_free(pk[s]);
    sl_shard_writer_abort(w);
    sl_packed_row_free(&prow);
    sl_packed_docs_free(&pdocs);
    sl_cli_meta_free(&meta);
    sl_doc_free(&d);
    free(warmup);
    sl_ts_reader_close(r);
    if (rc)
        sl_cli_map_fields(&err, sl_cli_pack_fields);
    return rc ? sl_cli_fail(cli, &err) : 0;
}

const sl_command sl_cmd_shard = {
    .name = "shard",
    .summary = "write a shard directory (manifest, token files, boundary index), with warmup",
    .usage = "sluice shard [options] [FILE...] -o DIR",
    .help = help,
    .run = run,
};
